// The gateway's defences as a real process: lockout after repeated wrong tokens (also through the
// dashboard login), per address and for everyone together, the per-client rate limit, dashboard
// pairing limited per address, no listening beyond loopback without a token, CORS closed, the
// cookie refused from another port of the same host; the figures in /metrics. Clients use several
// 127.0.0.x source addresses (every 127.0.0.0/8 address is local) and ::1.
import t, { type Test } from 'tap';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { openDatabase } from '../src/store/db.js';
import { listPairings, requestPairing } from '../src/store/pairing.js';
import { bundle, cleanEnv, runPinclawAsync, start, tempDir } from './support/proc.js';

async function gateway(t: Test, env: Record<string, string>, host = '127.0.0.1') {
  const home = tempDir();
  const gw = start(process.execPath, [bundle, 'gateway', '--host', host, '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home, ...env }) });
  t.teardown(() => void gw.child.kill('SIGKILL'));
  const url = (await gw.waitFor(/gateway listening on (http:\/\/[^\s]+)/))[1]!;
  return { ...gw, url, home };
}

interface Answer {
  status: number;
  body: { error?: string; [k: string]: unknown };
  headers: Headers;
}

/** A client on `localAddress` (a 127.0.0.x address): its requests come from there. */
function client(t: Test, localAddress: string) {
  const dispatcher = new Agent({ localAddress });
  t.teardown(() => dispatcher.close());
  return async (url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> => {
    const res = await undiciFetch(url, { ...init, dispatcher });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Answer['body']) : {}, headers: res.headers as unknown as Headers };
  };
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

t.test('wrong tokens count per address and for everyone: past the total, token logins pause, a logged-in dashboard goes on', async (t) => {
  const gw = await gateway(t, { PINCLAW_GATEWAY_TOKEN: 'right-token', PINCLAW_GATEWAY_RATE_LIMIT_MAX_BAD_TOKENS: '3', PINCLAW_GATEWAY_RATE_LIMIT_MAX_BAD_TOKENS_TOTAL: '5' });
  const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
  const owner = client(t, '127.0.0.1');
  t.equal((await owner(`${gw.url}/api/sessions`, bearer('right-token'))).status, 200, 'the owner gave the right token once');
  const browser = client(t, '127.0.0.5');
  const login = await undiciFetch(`${gw.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin: gw.url }, body: JSON.stringify({ token: 'right-token' }), dispatcher: new Agent({ localAddress: '127.0.0.5' }) });
  t.equal(login.status, 204, 'a browser logs in');
  const cookie = { cookie: login.headers.getSetCookie()[0]!.split(';')[0]! };

  const a = client(t, '127.0.0.2');
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) statuses.push((await a(`${gw.url}/api/sessions`, bearer(`guess-a${i}`))).status);
  t.same(statuses, [401, 401, 401, 429], 'one address: locked out after 3');
  const b = client(t, '127.0.0.3');
  t.same([(await b(`${gw.url}/api/sessions`, bearer('guess-b0'))).status, (await b(`${gw.url}/api/sessions`, bearer('guess-b1'))).status], [401, 401], 'another address: 5 wrong tokens in all now');

  const c = client(t, '127.0.0.4');
  const paused = await c(`${gw.url}/api/sessions`, bearer('right-token'));
  t.equal(paused.status, 429, 'a new address may not try even the right token');
  t.match(paused.body.error, /too many wrong tokens sent to this gateway from many addresses; token logins .* are paused for \d+ s/);
  t.ok(Number(paused.headers.get('retry-after')) > 200, 'Retry-After: about 5 minutes');
  const pausedLogin = await c(`${gw.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin: gw.url }, body: JSON.stringify({ token: 'right-token' }) });
  t.equal(pausedLogin.status, 429, 'nor log in to the dashboard by token');
  t.equal((await c(`${gw.url}/healthz`)).status, 200, '/healthz answers');
  t.equal((await browser(`${gw.url}/api/status`, { headers: cookie })).status, 200, 'the logged-in dashboard keeps working');
  t.equal((await c(`${gw.url}/api/status`, { headers: cookie })).status, 200, 'from any address: the cookie is no guess');
  t.equal((await owner(`${gw.url}/api/sessions`, bearer('right-token'))).status, 200, 'the owner, seen with the right token, goes on');
  t.equal((await browser(`${gw.url}/api/sessions`, bearer('right-token'))).status, 200, 'so does an address that logged in to the dashboard by token');
  t.match(gw.stderr(), /too many wrong tokens from many addresses; token logins are paused/, 'logged once');

  const text = await (await fetch(`${gw.url}/metrics`, bearer('right-token'))).text();
  t.match(text, /pinclaw_gateway_refused_requests\{reason="global"\} 2\n/);
  t.match(text, /pinclaw_gateway_token_attempts_paused_seconds [1-9]\d*\n/);
  t.match(text, /pinclaw_gateway_locked_clients 1\n/);
});

t.test('over IPv6 (::1) a client is its /64, locked out like an IPv4 address', async (t) => {
  const gw = await gateway(t, { PINCLAW_GATEWAY_TOKEN: 'right-token', PINCLAW_GATEWAY_RATE_LIMIT_MAX_BAD_TOKENS: '2' }, '::1');
  t.match(gw.url, /^http:\/\/\[::1\]:\d+$/);
  const get = (token: string) => fetch(`${gw.url}/api/sessions`, { headers: { authorization: `Bearer ${token}` } });
  t.same([(await get('x')).status, (await get('y')).status, (await get('right-token')).status], [401, 401, 429]);
});

t.test('dashboard pairing is limited per address: a flood from one does not block another', async (t) => {
  const gw = await gateway(t, { PINCLAW_GATEWAY_TOKEN: 'right-token' });
  // Telegram's strangers share the pairing table: they neither count here nor are pushed out.
  const db = openDatabase(join(gw.home, 'pinclaw.db'));
  t.teardown(() => db.close());
  for (let i = 0; i < 100; i++) requestPairing(db, 'telegram', String(1000 + i), `user ${i}`);

  const pair = (who: (url: string, init?: { method?: string }) => Promise<Answer>) => who(`${gw.url}/auth/pair`, { method: 'POST' });
  const flooder = client(t, '127.0.0.2');
  const flood: Answer[] = [];
  for (let i = 0; i < 20; i++) flood.push(await pair(flooder));
  t.same(flood.map((r) => r.status), [200, 200, 200, ...new Array<number>(17).fill(429)], 'three requests wait per address');
  t.match(flood[3]!.body.error, /3 pairing requests from this address are waiting already; approve one \(pinclaw pairing approve CODE on the machine\) or let them expire/);
  const other = await pair(client(t, '127.0.0.3'));
  t.equal(other.status, 200, 'another address still pairs');
  t.match(other.body, { request: /^[\w-]{32}$/, code: /^[A-HJ-NP-Z2-9]{8}$/ });

  // Many addresses: the table stays bounded by pushing out the oldest of the busiest, never by
  // refusing the next address.
  const first = flood[0]!.body.request as string;
  let last: Answer | undefined;
  for (let a = 1; a <= 21; a++) {
    const from = client(t, `127.0.2.${a}`);
    for (let i = 0; i < 3; i++) {
      last = await pair(from);
      t.equal(last.status, 200, `127.0.2.${a} request ${i + 1}`);
    }
  }
  const dashboard = listPairings(db).filter((p) => p.channel === 'dashboard' && p.state === 'pending');
  t.equal(dashboard.length, 64, 'at most 64 wait');
  t.equal((await fetch(`${gw.url}/auth/pair/${first}`)).status, 404, 'the flooder\'s oldest was pushed out');
  t.same(await (await fetch(`${gw.url}/auth/pair/${last!.body.request as string}`)).json(), { state: 'pending' }, 'the newest waits');
  t.same(await (await fetch(`${gw.url}/auth/pair/${other.body.request as string}`)).json(), { state: 'pending' }, 'the other address\'s request waits');
  t.equal(listPairings(db).filter((p) => p.channel === 'telegram').length, 100, 'Telegram\'s requests untouched');
});

t.test('the session cookie is refused from another port of the same host', async (t) => {
  // SameSite=Strict does not tell ports apart: a page served by another program on 127.0.0.1
  // is same-site, and its browser sends the cookie. The Origin check is what refuses it.
  const gw = await gateway(t, { PINCLAW_GATEWAY_TOKEN: 'right-token' });
  const other = createServer();
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  t.teardown(() => other.close());
  const otherOrigin = `http://127.0.0.1:${(other.address() as { port: number }).port}`;
  t.not(otherOrigin, gw.url);
  const post = (path: string, headers: Record<string, string>, body?: unknown) =>
    fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });

  t.equal((await post('/auth/login', { origin: otherOrigin }, { token: 'right-token' })).status, 403, 'no login from the other port');
  const login = await post('/auth/login', { origin: gw.url }, { token: 'right-token' });
  t.equal(login.status, 204);
  const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
  const cross = await post('/api/chat', { cookie, origin: otherOrigin }, { text: 'turn on the heater' });
  t.equal(cross.status, 403, 'a cookie POST from the other port is refused');
  t.same(await cross.json(), { error: 'cross-origin request refused' });
  t.equal((await post('/api/confirm', { cookie, origin: otherOrigin }, { id: 'x', allow: true })).status, 403);
  t.equal((await post('/auth/logout', { cookie, origin: otherOrigin })).status, 403, 'nor a logout');
  t.equal((await post('/api/confirm', { cookie, origin: gw.url }, { id: 'x', allow: true })).status, 404, 'the same origin reaches the route (no such confirmation)');
  t.equal((await fetch(`${gw.url}/api/status`, { headers: { cookie, origin: otherOrigin } })).status, 200, 'a GET only reads (CORS keeps the answer from the other page)');
});
