// `pinclaw gateway` as a real process: health on 127.0.0.1, auth on /api, sd_notify, graceful exits,
// one gateway per home.
import t from 'tap';
import { createServer } from 'node:net';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { bundle, cleanEnv, runPinclawAsync, start, tempDir } from './support/proc.js';
import { receiveDatagrams } from './support/dgram-receiver.js';
import { openDatabase } from '../src/store/db.js';
import { getState } from '../src/store/state.js';
import { errorReply, startAnthropicServer, textReply, toolUseReply } from './support/anthropic-server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function startGateway(env: Record<string, string>, args: string[] = ['--port', '0']) {
  const p = start(process.execPath, [bundle, 'gateway', ...args], { env: cleanEnv(env) });
  const m = await p.waitFor(/gateway listening on (http:\/\/[^\s]+)/);
  return { ...p, url: m[1]! };
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  t.test(`serves /healthz and exits 0 on ${signal}`, async (t) => {
    const home = tempDir();
    const gw = await startGateway({ PINCLAW_HOME: home });
    t.match(gw.url, /^http:\/\/127\.0\.0\.1:\d+$/, 'binds 127.0.0.1 by default');
    const res = await fetch(`${gw.url}/healthz`);
    t.equal(res.status, 200);
    t.same(await res.json(), { status: 'ok' });
    gw.child.kill(signal);
    const { code } = await gw.exited;
    t.equal(code, 0);
    t.match(gw.stderr(), new RegExp(`${signal}: draining[\\s\\S]*gateway stopped`));
    const db = openDatabase(join(home, 'pinclaw.db'), { readonly: true });
    t.match(getState(db, 'gateway.started_at'), /^\d{4}-\d\d-\d\dT/, 'the store was opened and written');
    db.close();
  });
}

t.test('/api needs the bearer token', async (t) => {
  const gw = await startGateway({ PINCLAW_HOME: tempDir(), PINCLAW_GATEWAY_TOKEN: 's3cret-token' });
  t.teardown(() => gw.child.kill());
  t.equal((await fetch(`${gw.url}/api/chat`)).status, 401);
  t.equal((await fetch(`${gw.url}/api/chat`, { headers: { authorization: 'Bearer wrong' } })).status, 401);
  t.equal((await fetch(`${gw.url}/metrics`)).status, 401);
  const ok = await fetch(`${gw.url}/api/nothing-here-yet`, { headers: { authorization: 'Bearer s3cret-token' } });
  t.equal(ok.status, 404, 'past auth, an unknown route is a 404');
  t.notMatch(gw.stderr(), /s3cret-token/, 'the token never reaches the log');
});

t.test('--port and gateway.port: the flag wins', async (t) => {
  const gw = await startGateway({ PINCLAW_HOME: tempDir(), PINCLAW_GATEWAY_PORT: '1' }, ['--port', '0', '--host', '127.0.0.1']);
  t.teardown(() => gw.child.kill());
  t.notMatch(gw.url, /:1$/);
});

t.test('a port in use: a clear error and exit 1', async (t) => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  t.teardown(() => blocker.close());
  const port = (blocker.address() as { port: number }).port;
  const p = start(process.execPath, [bundle, 'gateway', '--port', String(port)], { env: cleanEnv({ PINCLAW_HOME: tempDir() }) });
  const { code } = await p.exited;
  t.equal(code, 1);
  t.match(p.stderr(), `cannot listen on 127.0.0.1:${port}: address already in use`);
});

t.test('tells systemd when it is ready and when it stops', async (t) => {
  const socket = join(tempDir(), 'notify.sock');
  const rx = await receiveDatagrams(socket);
  t.teardown(() => rx.close());
  const gw = await startGateway({ PINCLAW_HOME: tempDir(), NOTIFY_SOCKET: socket });
  t.equal(await rx.next(), `READY=1\nSTATUS=listening on ${gw.url}`);
  gw.child.kill('SIGTERM');
  t.equal(await rx.next(), 'STOPPING=1');
  t.equal((await gw.exited).code, 0);
});

t.test('without the addon: the fallback is announced once and the gateway still runs', async (t) => {
  const socket = join(tempDir(), 'notify.sock');
  const rx = await receiveDatagrams(socket);
  t.teardown(() => rx.close());
  const gw = await startGateway({ PINCLAW_HOME: tempDir(), PINCLAW_NATIVE_ENABLED: 'false', NOTIFY_SOCKET: socket });
  t.equal(await rx.next(), `READY=1\nSTATUS=listening on ${gw.url}`, 'readiness goes through the systemd-notify fallback');
  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0);
  const warnings = gw.stderr().match(/running on the TypeScript fallbacks/g) ?? [];
  t.equal(warnings.length, 1);
});

t.test('/metrics: Prometheus text behind the token', async (t) => {
  const gw = await startGateway({ PINCLAW_HOME: tempDir(), PINCLAW_GATEWAY_TOKEN: 'm-token' });
  t.teardown(() => gw.child.kill());
  t.equal((await fetch(`${gw.url}/metrics`)).status, 401);
  const res = await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer m-token' } });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/plain/);
  const text = await res.text();
  t.match(text, /^# HELP pinclaw_info/m);
  t.match(text, /^pinclaw_resident_memory_bytes \d+$/m);
  t.match(text, /^pinclaw_inbound_messages\{state="pending"\} 0$/m);
});

t.test('/metrics counts turns, model calls and their failures, tool calls, deliveries', async (t) => {
  const srv = await startAnthropicServer(textReply('unused'));
  t.teardown(() => srv.close());
  const gw = await startGateway({ PINCLAW_HOME: tempDir(), PINCLAW_GATEWAY_TOKEN: 'm-token', ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: srv.url });
  t.teardown(() => gw.child.kill());
  const auth = { authorization: 'Bearer m-token', 'content-type': 'application/json' };
  // One turn of two model calls and one tool call; then one whose model call fails for good (a 400 is not retried).
  srv.enqueue(toolUseReply([{ name: 'current_time', input: { timezone: 'UTC' } }]), textReply('It is noon.'));
  const ok = await fetch(`${gw.url}/api/chat`, { method: 'POST', headers: auth, body: JSON.stringify({ session: 'm', text: 'time?' }) });
  t.same(await ok.json(), { reply: 'It is noon.', kind: 'reply' });
  srv.enqueue(errorReply(400));
  const failed = await fetch(`${gw.url}/api/chat`, { method: 'POST', headers: auth, body: JSON.stringify({ session: 'm2', text: 'again' }) });
  t.match(await failed.json(), { kind: 'notice' });
  const text = await (await fetch(`${gw.url}/metrics`, { headers: auth })).text();
  t.match(text, /^# TYPE pinclaw_turns_total counter$/m);
  t.match(text, /^pinclaw_messages_received_total\{channel="http"\} 2$/m);
  t.match(text, /^pinclaw_turns_total\{outcome="ok"\} 1$/m);
  t.match(text, /^pinclaw_turns_total\{outcome="failed"\} 1$/m);
  t.match(text, /^pinclaw_provider_calls_total\{provider="anthropic\/[^"]+"\} 3$/m);
  t.match(text, /^pinclaw_provider_errors_total\{provider="anthropic\/[^"]+",kind="failed"\} 1$/m);
  t.match(text, /^pinclaw_tool_calls_total\{tool="current_time",outcome="ok"\} 1$/m);
  t.match(text, /^pinclaw_deliveries_total\{channel="http",outcome="sent"\} 2$/m);
});

t.test('the idle release keeps the Anthropic SDK until the longer unload time', async (t) => {
  const srv = await startAnthropicServer(textReply('unused'));
  t.teardown(() => srv.close());
  const home = tempDir();
  const gw = await startGateway({
    PINCLAW_HOME: home,
    PINCLAW_GATEWAY_TOKEN: 'k-token',
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: srv.url,
    PINCLAW_CONDUCTOR_RELEASE_AFTER_IDLE_SECONDS: '1',
    PINCLAW_LOG_LEVEL: 'debug',
  });
  t.teardown(() => gw.child.kill());
  const auth = { authorization: 'Bearer k-token', 'content-type': 'application/json' };
  const chat = async (text: string) =>
    (await fetch(`${gw.url}/api/chat`, { method: 'POST', headers: auth, body: JSON.stringify({ session: 'k', text }) })).json() as Promise<{ reply: string; kind: string }>;
  srv.enqueue(textReply('first'));
  t.same(await chat('one'), { reply: 'first', kind: 'reply' });
  // The release after this turn (one ran a second after the start already).
  const after = gw.stderr().length;
  let released: RegExpMatchArray | null = null;
  for (const until = Date.now() + 30_000; !(released = gw.stderr().slice(after).match(/memory: released (.*) after the idle time/)) && Date.now() < until; ) await sleep(50);
  t.ok(released, 'the caches were released after the turn');
  t.notMatch(released?.[1] ?? '', /anthropic-sdk/, 'the SDK is not among the caches');
  // That release wrote the SDK chunk's code cache (the first turn compiled it from source).
  t.equal(readdirSync(join(home, 'cache', 'lazy')).filter((f) => /^anthropic-sdk-[0-9a-f]{8}\.v8c$/.test(f)).length, 1, 'its cache written');
  srv.enqueue(textReply('second'));
  t.same(await chat('two'), { reply: 'second', kind: 'reply' });
  // Loaded again, it would now be compiled from that cache, and say so.
  t.notMatch(gw.stderr(), /lazy chunk anthropic-sdk: (compiled from its code cache|unloaded)/, 'the second turn used the SDK still loaded');
  t.notMatch(gw.stderr(), /memory: unloaded/, 'nothing unloaded within the default 900 s');
});

t.test('the idle unload drops the Anthropic SDK; the next turn loads it again and tells its errors apart', async (t) => {
  const srv = await startAnthropicServer(textReply('unused'));
  t.teardown(() => srv.close());
  const gw = await startGateway({
    PINCLAW_HOME: tempDir(),
    PINCLAW_GATEWAY_TOKEN: 'r-token',
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: srv.url,
    PINCLAW_CONDUCTOR_RELEASE_AFTER_IDLE_SECONDS: '3600',
    PINCLAW_CONDUCTOR_UNLOAD_CODE_AFTER_IDLE_SECONDS: '1',
    PINCLAW_LOG_LEVEL: 'debug',
  });
  t.teardown(() => gw.child.kill());
  const auth = { authorization: 'Bearer r-token', 'content-type': 'application/json' };
  const chat = async (session: string, text: string) =>
    (await fetch(`${gw.url}/api/chat`, { method: 'POST', headers: auth, body: JSON.stringify({ session, text }) })).json() as Promise<{ reply: string; kind: string }>;
  srv.enqueue(textReply('first'));
  t.same(await chat('u', 'one'), { reply: 'first', kind: 'reply' });
  // The bundle's stub of the chunk holds no reference: V8 frees the SDK once the provider drops it.
  await gw.waitFor(/lazy chunk anthropic-sdk: unloaded and collected/);
  t.match(gw.stderr(), /memory: unloaded [^\n]*\banthropic-sdk\b/);
  t.notMatch(gw.stderr(), /memory: released/, 'the caches keep their own, longer time here');
  srv.enqueue(textReply('second'));
  t.same(await chat('u', 'two'), { reply: 'second', kind: 'reply' }, 'the SDK is loaded again');
  // The unload wrote the chunk's code cache first (the caches' release, which also does, had not run).
  t.match(gw.stderr(), /lazy chunk anthropic-sdk: compiled from its code cache/);
  // The error classes come from the SDK loaded now: a 400 is the API refusing, not a network error.
  srv.enqueue(errorReply(400, 'invalid_request_error', 'bad field'));
  const failed = await chat('u2', 'three');
  t.match(failed, { kind: 'notice' });
  t.match(failed.reply, /anthropic\/[^:]+: 400 bad field/, 'reported as the API status and message');
});

t.test('one gateway per home: a second exits 1 naming the first; a SIGKILLed one never blocks the next start', async (t) => {
  const home = tempDir();
  const first = await startGateway({ PINCLAW_HOME: home });
  t.teardown(() => first.child.kill('SIGKILL'));
  const second = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  const { code } = await second.exited;
  t.equal(code, 1);
  t.match(second.stderr(), `a gateway (pid ${first.child.pid}) is already running on ${home} (it holds ${join(home, 'gateway.lock')})`);
  t.match(second.stderr(), /Stop it first \(systemctl stop pinclaw, or kill \d+\), or run this one on another home/);
  t.notMatch(second.stderr(), /listening/, 'the second never served');
  t.equal((await fetch(`${first.url}/healthz`)).status, 200, 'the first goes on');

  first.child.kill('SIGKILL');
  t.equal((await first.exited).signal, 'SIGKILL');
  t.ok(existsSync(join(home, 'gateway.lock')), 'the killed gateway left its lock file behind');
  const third = await startGateway({ PINCLAW_HOME: home });
  t.equal((await fetch(`${third.url}/healthz`)).status, 200, 'and the next gateway starts anyway');
  third.child.kill('SIGTERM');
  t.equal((await third.exited).code, 0);
  // A clean stop leaves the home free too.
  const fourth = await startGateway({ PINCLAW_HOME: home });
  fourth.child.kill('SIGTERM');
  t.equal((await fourth.exited).code, 0);
});

t.test('pinclaw agent -m works while the gateway runs: it goes through the shared queue', async (t) => {
  const srv = await startAnthropicServer(textReply('from the agent'));
  t.teardown(() => srv.close());
  const home = tempDir();
  const env = { PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: srv.url };
  const gw = await startGateway(env);
  t.teardown(() => gw.child.kill());
  const r = await runPinclawAsync(['agent', '-m', 'hello'], { env: cleanEnv(env) });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, 'from the agent');
  t.equal((await fetch(`${gw.url}/healthz`)).status, 200);
});

t.test('three gateways started at once on one home: exactly one serves, the others exit 1 naming it', async (t) => {
  const home = tempDir();
  const all = [0, 1, 2].map(() => start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home }) }));
  t.teardown(() => all.forEach((p) => p.child.kill('SIGKILL')));
  // Each either listens or exits: whichever comes first.
  const outcomes = await Promise.all(all.map((p) => Promise.race([p.waitFor(/gateway listening/).then(() => 'serving' as const, () => 'exited' as const), p.exited.then(() => 'exited' as const)])));
  t.equal(outcomes.filter((o) => o === 'serving').length, 1, 'one serves');
  const winner = all[outcomes.indexOf('serving')]!;
  for (const p of all.filter((_, i) => outcomes[i] === 'exited')) {
    t.equal((await p.exited).code, 1);
    t.match(p.stderr(), `a gateway (pid ${winner.child.pid}) is already running on ${home}`);
  }
});
