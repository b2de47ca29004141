// The agent core end to end: real processes (the bundle), a real SQLite file, the real Anthropic SDK
// against the stand-in server. Includes the crash-recovery tests: SIGKILL mid-turn, restart, and the
// message is answered exactly once.
import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { openDatabase } from '../src/store/db.js';
import { startAnthropicServer, stall, textReply, toolUseReply } from './support/anthropic-server.js';
import { bundle, cleanEnv, runPinclawAsync, start, tempDir } from './support/proc.js';

async function fixture(t: Test) {
  const srv = await startAnthropicServer((req) => textReply(`echo: ${JSON.stringify(req.body.messages.at(-1).content).match(/\] ([^"]*)/)?.[1]}`));
  t.teardown(() => srv.close());
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: srv.url, PINCLAW_AGENT_RETRY_BASE_MS: '10' });
  return { srv, home, env };
}

function rows(home: string, sql: string): unknown[] {
  const db = openDatabase(join(home, 'pinclaw.db'), { readonly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

t.test('pinclaw agent -m: one turn through the queue; the session carries on', async (t) => {
  const { srv, home, env } = await fixture(t);
  const r1 = await runPinclawAsync(['agent', '-m', 'hello there', '--session', 's1'], { env });
  t.equal(r1.code, 0, r1.stderr);
  t.equal(r1.stdout, 'echo: hello there\n');
  const r2 = await runPinclawAsync(['agent', '-m', 'second', '--session', 's1'], { env });
  t.equal(r2.stdout, 'echo: second\n');
  const sent = srv.requests[1]!.body;
  t.equal(sent.messages.length, 3, 'the second turn carries the first');
  t.match(sent.system[0].text, /## AGENTS\.md\n# How you work/, 'starter workspace files are in the prompt');
  t.match(sent.system[0].text, /Today is .*time zone/);
  t.match(JSON.stringify(sent.messages.at(-1)), /\[\d\d:\d\d\] second/);
  t.same(rows(home, `select state, attempts from inbound order by id`), [{ state: 'done', attempts: 1 }, { state: 'done', attempts: 1 }]);
  const list = await runPinclawAsync(['sessions', 'list', '--json'], { env });
  t.match(JSON.parse(list.stdout), [{ key: 's1', messages: 4 }]);
  t.match((await runPinclawAsync(['sessions', 'show', 's1'], { env })).stdout, /user: \[\d\d:\d\d\] hello there\nassistant: echo: hello there/);
  t.equal((await runPinclawAsync(['sessions', 'reset', 's1'], { env })).code, 0);
  t.equal((await runPinclawAsync(['agent', '-m', '/reset', '--session', 's2'], { env })).stdout, 'Session reset: the conversation starts fresh.\n');
  t.equal((await runPinclawAsync(['sessions', 'show', 's1'], { env })).code, 1);
});

t.test('bad input: too long, empty, and no provider', async (t) => {
  const { env } = await fixture(t);
  const long = await runPinclawAsync(['agent', '-m', 'x'.repeat(50), '--session', 's'], { env: { ...env, PINCLAW_AGENT_MAX_MESSAGE_CHARS: '10' } });
  t.equal(long.code, 1);
  t.match(long.stderr, /message refused: 50 characters is more than the limit of 10 \(agent\.maxMessageChars\)/);
  t.equal((await runPinclawAsync(['agent', '-m', ''], { env })).code, 2);
  const none = await runPinclawAsync(['agent', '-m', 'hi'], { env: cleanEnv({ PINCLAW_HOME: tempDir() }) });
  t.equal(none.code, 78, 'no provider is a configuration error');
  t.match(none.stderr, /No model provider is configured\. Set ANTHROPIC_API_KEY/);
  t.match(none.stderr, /run `pinclaw onboard`/, 'the advice names onboard');
  const typo = await runPinclawAsync(['agent', '-m', 'hi'], { env: { ...env, PINCLAW_AGENT_MODEL: 'antropic/claude' } });
  t.equal(typo.code, 78);
  t.match(typo.stderr, /agent\.model: unknown provider 'antropic'/);
});

t.test('crash mid-turn (CLI): SIGKILL during the provider call, the next run answers it exactly once', async (t) => {
  const { srv, home, env } = await fixture(t);
  srv.enqueue(stall);
  const a = start(process.execPath, [bundle, 'agent', '-m', 'first question', '--session', 'c'], { env });
  await srv.received(1);
  a.child.kill('SIGKILL');
  await a.exited;
  t.same(rows(home, `select state from inbound`), [{ state: 'processing' }], 'committed before anything else happened');

  const b = await runPinclawAsync(['agent', '-m', 'second question', '--session', 'c'], { env });
  t.equal(b.code, 0, b.stderr);
  t.equal(b.stdout, '(reply to an earlier message)\necho: first question\necho: second question\n');
  const c = await runPinclawAsync(['agent', '-m', 'third', '--session', 'c'], { env });
  t.equal(c.stdout, 'echo: third\n', 'nothing is sent twice');
  t.equal(srv.requests.length, 4, 'the killed call, its retry, and one call each for the others');
  t.same(rows(home, `select inbound_id, count(*) as n from outbound group by inbound_id`), [{ inbound_id: 1, n: 1 }, { inbound_id: 2, n: 1 }, { inbound_id: 3, n: 1 }]);
});

t.test('crash after the reply was recorded, before it was sent: sent once after restart', async (t) => {
  const { srv, home, env } = await fixture(t);
  const a = await runPinclawAsync(['agent', '-m', 'ping', '--session', 'd'], { env: { ...env, PINCLAW_CRASH_AT: 'before-send' } });
  t.equal(a.signal, 'SIGKILL');
  t.equal(a.stdout, '', 'killed before printing');
  t.same(rows(home, `select state from outbound`), [{ state: 'pending' }]);
  const b = await runPinclawAsync(['agent', '-m', 'pong', '--session', 'd'], { env });
  t.equal(b.stdout, '(reply to an earlier message)\necho: ping\necho: pong\n');
  t.equal(srv.requests.length, 2, 'the recorded reply was not asked for again');
  t.same(rows(home, `select state from outbound`), [{ state: 'sent' }, { state: 'sent' }]);
});

t.test('gateway: POST /api/chat (JSON and SSE), and a crash mid-turn answered once after restart', async (t) => {
  const { srv, home, env } = await fixture(t);
  const token = 'tok-123';
  const gwEnv = { ...env, PINCLAW_GATEWAY_TOKEN: token };
  const startGw = async () => {
    const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: gwEnv });
    const url = (await gw.waitFor(/listening on (http:\/\/\S+)/))[1]!;
    return { gw, url };
  };
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  let { gw, url } = await startGw();
  const res = await fetch(`${url}/api/chat`, { method: 'POST', headers: auth, body: JSON.stringify({ session: 'web', text: 'hi gateway' }) });
  t.same(await res.json(), { reply: 'echo: hi gateway', kind: 'reply' });
  t.equal((await fetch(`${url}/api/chat`, { method: 'POST', body: '{}' })).status, 401);
  const bad = await fetch(`${url}/api/chat`, { method: 'POST', headers: auth, body: JSON.stringify({ session: 'web' }) });
  t.equal(bad.status, 400);
  t.match(await bad.json(), { error: 'text: expected a non-empty string' });

  const sse = await fetch(`${url}/api/chat`, { method: 'POST', headers: { ...auth, accept: 'text/event-stream' }, body: JSON.stringify({ session: 'web', text: 'stream it' }) });
  const body = await sse.text();
  t.match(body, /event: turn_start\n/);
  t.match(body, /event: text_delta\ndata: \{"type":"text_delta","text":"[^"]*","sessionKey":"web"\}/, "the loop's event plus the session, named by its type");
  t.match(body, /event: reply\ndata: \{"reply":"echo: stream it","kind":"reply"\}/);

  srv.enqueue(stall);
  const before = srv.requests.length;
  const pending = fetch(`${url}/api/chat`, { method: 'POST', headers: auth, body: JSON.stringify({ session: 'web', text: 'during the crash' }) }).catch(() => 'connection lost');
  await srv.received(before + 1);
  gw.child.kill('SIGKILL');
  t.equal(await pending, 'connection lost');
  ({ gw, url } = await startGw());
  await srv.received(before + 2); // the pending row, picked up at start
  await new Promise<void>((resolve) => {
    const check = () => ((rows(home, `select state from inbound where text = 'during the crash'`)[0] as { state: string }).state === 'done' ? resolve() : setTimeout(check, 50));
    check();
  });
  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0);
  t.same(rows(home, `select o.text from outbound o join inbound i on i.id = o.inbound_id where i.text = 'during the crash'`), [{ text: 'echo: during the crash' }]);
  const session = JSON.parse((rows(home, `select messages from sessions where key = 'web'`)[0] as { messages: string }).messages) as unknown[];
  t.equal(session.length, 6, 'three turns, each once');
  ({ gw } = await startGw());
  await new Promise((r) => setTimeout(r, 300));
  gw.child.kill('SIGTERM');
  await gw.exited;
  t.equal(srv.requests.length, before + 2, 'a third start asks nothing again');
  t.notMatch(readFileSync(join(home, 'pinclaw.db')).toString('latin1'), /sk-test/, 'the API key is not stored');
});

t.test('gateway: SIGTERM during a turn lets it finish and answers the waiting request', async (t) => {
  const { srv, env } = await fixture(t);
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  srv.enqueue(async () => {
    await held;
    return textReply('finished while draining');
  });
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: { ...env, PINCLAW_GATEWAY_TOKEN: 't' } });
  const url = (await gw.waitFor(/listening on (http:\/\/\S+)/))[1]!;
  const answer = fetch(`${url}/api/chat`, { method: 'POST', headers: { authorization: 'Bearer t' }, body: JSON.stringify({ text: 'slow one' }) }).then((r) => r.json());
  await srv.received(1);
  gw.child.kill('SIGTERM');
  await gw.waitFor(/SIGTERM: draining/);
  release();
  t.same(await answer, { reply: 'finished while draining', kind: 'reply' });
  t.equal((await gw.exited).code, 0);
});

t.test('interactive chat: each line is a turn, in order, through the same queue', async (t) => {
  const { env, home } = await fixture(t);
  const r = await runPinclawAsync(['agent', '--session', 'chat'], { env, input: 'first line\n\nsecond line\n/reset\nthird\n' });
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout, 'echo: first line\necho: second line\nSession reset: the conversation starts fresh.\necho: third\n');
  t.equal(rows(home, `select * from inbound where session_key = 'chat'`).length, 4);
});

t.test('a turn that uses a tool: web_fetch through the whole path, the SSRF guard in force', async (t) => {
  const { srv, env } = await fixture(t);
  const site = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<title>Pi status</title><p>CPU 48 C</p>');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.4', r));
  t.teardown(() => site.close());
  const url = `http://127.0.0.4:${(site.address() as AddressInfo).port}/`;
  srv.enqueue(toolUseReply([{ name: 'web_fetch', input: { url } }, { name: 'web_fetch', input: { url: 'http://169.254.169.254/latest/meta-data/' } }]), textReply('The CPU is at 48 C.'));
  const r = await runPinclawAsync(['agent', '-m', 'how hot is the pi?'], { env: { ...env, PINCLAW_WEB_ALLOWED_HOSTS: '["127.0.0.4"]' } });
  t.equal(r.stdout, 'The CPU is at 48 C.\n', r.stderr);
  const results = srv.requests[1]!.body.messages.at(-1).content as { type: string; content: string; is_error?: boolean }[];
  t.match(results[0], { type: 'tool_result', content: /200 http:\/\/127\.0\.0\.4:\d+\/\n# Pi status\n\nCPU 48 C/ });
  t.match(results[1], { type: 'tool_result', is_error: true, content: /refused by the SSRF guard: 169\.254\.169\.254/ });
  t.ok(srv.requests[0]!.body.tools.some((tool: { name: string }) => tool.name === 'web_fetch'), 'the tool was offered');
});
