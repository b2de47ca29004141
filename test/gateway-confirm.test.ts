// The tools' ways back to an http chat, for real: the gateway process (the bundle), the real
// Anthropic SDK against the stand-in. Confirmation: the question on GET /api/events, the answer
// through POST /api/confirm. send_message: the message on the chat's own SSE stream.
import t, { type Test } from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../src/store/db.js';
import { enqueue } from '../src/store/queue.js';
import { fakeMcuOverTcp } from './support/fake-mcu.js';
import { startAnthropicServer, textReply, toolUseReply } from './support/anthropic-server.js';
import { bundle, cleanEnv, start, tempDir } from './support/proc.js';

const TOKEN = 'tok-confirm';
const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

interface SseEvent {
  name: string;
  data: Record<string, unknown>;
}

/** GET /api/events, parsed; `next(name)` resolves with the next event of that name. */
async function events(url: string) {
  const ac = new AbortController();
  const res = await fetch(`${url}/api/events`, { headers: auth, signal: ac.signal });
  const seen: SseEvent[] = [];
  const waiters: { name: string; from: number; resolve: (e: SseEvent) => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      const e = seen.slice(w.from).find((x) => x.name === w.name);
      if (e) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(e);
      }
    }
  };
  void (async () => {
    let buf = '';
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body!) {
        buf += decoder.decode(chunk as Uint8Array, { stream: true });
        let end;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const name = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (name && data) seen.push({ name, data: JSON.parse(data) as Record<string, unknown> });
        }
        check();
      }
    } catch {
      // aborted at teardown
    }
  })();
  return {
    seen,
    next(name: string): Promise<SseEvent> {
      return new Promise((resolve) => {
        waiters.push({ name, from: seen.length, resolve });
        check();
      });
    },
    close: () => ac.abort(),
  };
}

async function gateway(t: Test, confirmTimeoutMs = 60_000) {
  const srv = await startAnthropicServer(textReply('unused'));
  t.teardown(() => srv.close());
  const home = tempDir();
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, 'config.json'), JSON.stringify({ tools: { confirm: ['current_time'], confirmTimeoutMs }, gateway: { token: TOKEN } }));
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: srv.url }) });
  const url = (await gw.waitFor(/listening on (http:\/\/\S+)/))[1]!;
  const ev = await events(url);
  t.teardown(async () => {
    ev.close();
    gw.child.kill('SIGTERM');
    await gw.exited;
  });
  const chat = (text: string) => fetch(`${url}/api/chat`, { method: 'POST', headers: auth, body: JSON.stringify({ session: 'web', text }) }).then((r) => r.json() as Promise<{ reply: string }>);
  const confirm = (body: unknown) => fetch(`${url}/api/confirm`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
  const toolResult = (i: number) => (srv.requests[i]!.body.messages.at(-1).content as { content: string; is_error?: boolean }[])[0]!;
  return { srv, home, url, ev, chat, confirm, toolResult };
}

function auditRows(home: string): { tool: string; outcome: string; rule: string | null }[] {
  const db = openDatabase(join(home, 'pinclaw.db'), { readonly: true });
  try {
    return db.prepare(`select tool, outcome, rule from audit order by id`).all() as { tool: string; outcome: string; rule: string | null }[];
  } finally {
    db.close();
  }
}

t.test('yes: the question reaches /api/events, the answer runs the tool', async (t) => {
  const g = await gateway(t);
  g.srv.enqueue(toolUseReply([{ name: 'current_time', input: { timezone: 'UTC' } }]), textReply('It is noon.'));
  const asked = g.ev.next('confirm_request');
  const reply = g.chat('what time is it?');
  const q = await asked;
  t.match(q.data, { sessionKey: 'web', tool: 'current_time', input: { timezone: 'UTC' }, summary: /current_time/ });
  const pending = (await (await fetch(`${g.url}/api/confirm`, { headers: auth })).json()) as { pending: { id: string }[] };
  t.same(pending.pending.map((p) => p.id), [q.data.id], 'GET /api/confirm lists the waiting question');
  const answered = g.ev.next('confirm_answer');
  const res = await g.confirm({ id: q.data.id, allow: true });
  t.equal(res.status, 200);
  t.same(await res.json(), { id: q.data.id, allowed: true });
  t.match((await answered).data, { id: q.data.id, allowed: true, by: 'api' });
  t.equal((await reply).reply, 'It is noon.');
  t.match(g.toolResult(1), { content: /UTC/ });
  t.notOk(g.toolResult(1).is_error);
  t.equal((await g.confirm({ id: q.data.id, allow: true })).status, 404, 'a question is answered once');
  t.match(auditRows(g.home), [{ tool: 'current_time', outcome: 'ok', rule: /confirmed \(tools\.confirm\)/ }]);
});

t.test('no, and bad answers', async (t) => {
  const g = await gateway(t);
  g.srv.enqueue(toolUseReply([{ name: 'current_time', input: {} }]), textReply('Understood.'));
  const asked = g.ev.next('confirm_request');
  const reply = g.chat('time?');
  const q = await asked;
  const bad = await g.confirm({ id: q.data.id, allow: 'yes' });
  t.equal(bad.status, 400);
  t.match(await bad.json(), { error: 'allow: expected true or false' });
  t.equal((await g.confirm({ allow: true })).status, 400);
  const unknown = await g.confirm({ id: 'not-a-question', allow: true });
  t.equal(unknown.status, 404);
  t.match(await unknown.json(), { error: /no confirmation not-a-question is waiting/ });
  t.equal((await g.confirm({ id: q.data.id, allow: false })).status, 200);
  t.equal((await reply).reply, 'Understood.');
  t.match(g.toolResult(1), { is_error: true, content: 'current_time refused: the owner said no (tools.confirm)' });
  t.match(auditRows(g.home), [{ tool: 'current_time', outcome: 'denied' }]);
});

t.test('no answer in time counts as no, naming the setting', async (t) => {
  const g = await gateway(t, 1000);
  g.srv.enqueue(toolUseReply([{ name: 'current_time', input: {} }]), textReply('Nobody answered.'));
  const expired = g.ev.next('confirm_answer');
  t.equal((await g.chat('time?')).reply, 'Nobody answered.');
  t.match((await expired).data, { allowed: false, by: 'timeout' });
  t.match(g.toolResult(1), { is_error: true, content: /no answer within 1 s \(tools\.confirmTimeoutMs\)/ });
});

t.test("send_message in an http chat arrives on that chat's SSE stream before the reply", async (t) => {
  const g = await gateway(t);
  g.srv.enqueue(toolUseReply([{ name: 'send_message', input: { text: 'working on it' } }]), textReply('All done.'));
  const res = await fetch(`${g.url}/api/chat`, { method: 'POST', headers: { ...auth, accept: 'text/event-stream' }, body: JSON.stringify({ session: 'web', text: 'do it' }) });
  const body = await res.text();
  const replies = [...body.matchAll(/event: reply\ndata: (.*)\n/g)].map((m) => JSON.parse(m[1]!) as { text?: string; reply?: string; inboundId?: number | null });
  t.match(replies, [{ text: 'working on it', inboundId: null }, { reply: 'All done.' }]);
  t.match(g.toolResult(1), { content: /^sent to http:web \(message id \d+\)$/ });
});

t.test('a message left pending an hour ago: at the next start its physical action asks again, saying why; no leaves the pin alone', async (t) => {
  const srv = await startAnthropicServer(textReply('unused'));
  t.teardown(() => srv.close());
  const { board, url: port } = await fakeMcuOverTcp(t);
  const home = tempDir();
  // http:web is a control chat: a fresh message there would switch the pin without a question.
  writeFileSync(join(home, 'config.json'), JSON.stringify({
    gateway: { token: TOKEN },
    tools: { controlChats: ['cli:local', 'http:web'] },
    hardware: { devices: [{ name: 'bench', port, board: 'arduino-uno' }] },
  }));
  // The row a stopped gateway left behind, received an hour ago.
  const db = openDatabase(join(home, 'pinclaw.db'));
  enqueue(db, { sessionKey: 'web', channel: 'http', chatId: 'web', sender: 'api', text: 'turn on the heater' }, 0, Date.now() - 3600_000);
  db.close();
  const heaterOn = { device: 'bench', command: 'gpio_write', args: { pin: 'D13', value: 1 } };
  srv.enqueue(toolUseReply([{ name: 'mcu_call', input: heaterOn }]), textReply('I left the heater off.'));
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: srv.url }) });
  t.teardown(async () => {
    gw.child.kill('SIGTERM');
    await gw.exited;
  });
  const url = (await gw.waitFor(/listening on (http:\/\/\S+)/))[1]!;

  let pending: { id: string; tool: string; reason?: string }[] = [];
  // Until the question comes, or the model hears the result of a call that was never asked about.
  while (pending.length === 0 && srv.requests.length < 2) {
    pending = ((await (await fetch(`${url}/api/confirm`, { headers: auth })).json()) as { pending: typeof pending }).pending;
    if (pending.length === 0) await new Promise((r) => setTimeout(r, 50));
  }
  t.match(pending, [{ tool: 'mcu_call', reason: /^your message asking for this is \d+ s old \(more than tools\.physicalMaxAgeSeconds, 120 s\): is it still wanted now\?$/ }]);
  if (pending[0]) t.equal((await fetch(`${url}/api/confirm`, { method: 'POST', headers: auth, body: JSON.stringify({ id: pending[0].id, allow: false }) })).status, 200);
  await srv.received(2);
  const result = (srv.requests[1]!.body.messages.at(-1).content as { content: string }[])[0]!.content;
  t.match(result, /^mcu_call refused: the owner said no \(tools\.physicalMaxAgeSeconds \(the message is \d+ s old, more than 120 s\)\)$/);
  t.not(board().pins.get(13), 1, 'the pin was not driven');
  t.match(auditRows(home), [{ tool: 'mcu_call', outcome: 'denied', rule: /^tools\.physicalMaxAgeSeconds/ }]);
});
