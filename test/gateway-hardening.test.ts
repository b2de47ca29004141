// The gateway's defences as a real process: lockout after repeated wrong tokens (also through the
// dashboard login), the per-client rate limit, no listening beyond loopback without a token, CORS
// closed; the figures in /metrics.
import t, { type Test } from 'tap';
import { bundle, cleanEnv, runPinclawAsync, start, tempDir } from './support/proc.js';

async function gateway(t: Test, env: Record<string, string>) {
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: tempDir(), ...env }) });
  t.teardown(() => void gw.child.kill('SIGKILL'));
  const url = (await gw.waitFor(/gateway listening on (http:\/\/[^\s]+)/))[1]!;
  return { ...gw, url };
}

t.test('wrong tokens: the 11th within a minute is refused 429, and then even the right one', async (t) => {
  const gw = await gateway(t, { PINCLAW_GATEWAY_TOKEN: 'right-token' });
  const get = (token: string) => fetch(`${gw.url}/api/sessions`, { headers: { authorization: `Bearer ${token}` } });
  t.equal((await get('right-token')).status, 200);
  const statuses: number[] = [];
  for (let i = 0; i < 12; i++) statuses.push((await get(`guess-${i}`)).status);
  t.same(statuses, [401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 429, 429]);
  const locked = await get('right-token');
  t.equal(locked.status, 429, 'locked out: the right token too');
  t.ok(Number(locked.headers.get('retry-after')) > 200, 'Retry-After says how long (5 minutes)');
  t.match(await locked.json(), { error: /too many wrong tokens from this address; locked out/ });
  t.equal((await fetch(`${gw.url}/healthz`)).status, 429, 'a locked-out client gets nothing');
});

t.test('wrong dashboard logins count like wrong bearer tokens', async (t) => {
  const gw = await gateway(t, { PINCLAW_GATEWAY_TOKEN: 'right-token', PINCLAW_GATEWAY_RATE_LIMIT_MAX_BAD_TOKENS: '3' });
  const login = (token: string) => fetch(`${gw.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin: gw.url }, body: JSON.stringify({ token }) });
  t.same([(await login('a')).status, (await login('b')).status, (await login('c')).status, (await login('right-token')).status], [401, 401, 401, 429]);
});

t.test('the rate limit per client, and its figures in /metrics', async (t) => {
  const gw = await gateway(t, { PINCLAW_GATEWAY_TOKEN: 'tok', PINCLAW_GATEWAY_RATE_LIMIT_PER_SECOND: '5', PINCLAW_GATEWAY_RATE_LIMIT_BURST: '10' });
  const statuses = await Promise.all(Array.from({ length: 30 }, () => fetch(`${gw.url}/healthz`).then((r) => r.status)));
  const ok = statuses.filter((s) => s === 200).length;
  t.ok(ok >= 10 && ok <= 12, `the burst (10) passes, the rest is refused: ${ok} passed`);
  t.equal(statuses.filter((s) => s === 429).length, 30 - ok);
  await new Promise((r) => setTimeout(r, 1100));
  const metrics = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer tok' } })).text();
  t.match(metrics, new RegExp(`pinclaw_gateway_refused_requests\\{reason="rate"\\} ${30 - ok}`));
  t.match(metrics, /pinclaw_gateway_locked_clients 0/);
});

t.test('no listening beyond loopback without a token; CORS stays closed', async (t) => {
  const home = tempDir();
  const r = await runPinclawAsync(['gateway', '--host', '0.0.0.0', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(r.code, 78);
  t.match(r.stderr, /refusing to listen on 0\.0\.0\.0 without gateway\.token/);
  const gw = await gateway(t, { PINCLAW_GATEWAY_TOKEN: 'tok' });
  const pre = await fetch(`${gw.url}/api/chat`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
  t.equal(pre.headers.get('access-control-allow-origin'), null, 'no CORS preflight answer');
  const get = await fetch(`${gw.url}/api/sessions`, { headers: { authorization: 'Bearer tok', origin: 'https://evil.example' } });
  t.equal(get.headers.get('access-control-allow-origin'), null);
});
