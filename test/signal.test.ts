// The Signal channel end to end: the gateway as a real process (the bundle), a real SQLite file, the
// real Anthropic SDK against its stand-in, and a stand-in signal-cli daemon (test/support/signal-daemon.ts)
// speaking the daemon's HTTP wire format: DMs and groups, mentions, attachments, pairing, splitting,
// confirmations, keep-alives and a truncated stream, a daemon that is down, RPC errors, and SIGKILL
// while receiving and while sending.
import t, { type Test } from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { textReply, toolUseReply, type AnthropicStep } from './support/anthropic-server.js';
import { cleanEnv, runPinclawAsync, tempDir } from './support/proc.js';
import { startSignalDaemon, type SignalDaemon } from './support/signal-daemon.js';
import type { Step } from './support/stand-in.js';
import { dbRows, lastUser, startChannelGateway, type ChannelGateway } from './support/channel-gateway.js';

const OWNER = { number: '+15550001111', uuid: '0c7c6f0e-3f1a-4f57-8a3e-6a2b1c9d0e11', name: 'Ada' };
const STRANGER = { number: '+15550002222', uuid: '9d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6', name: 'Bob' };
const GROUP = 'Zm9vYmFyL2dyb3VwK2lkPT0xMjM0NTY3ODkwYWI=';

interface Fixture extends ChannelGateway {
  sd: SignalDaemon;
}

async function fixture(t: Test, o: { signal?: Record<string, unknown>; tools?: Record<string, unknown>; llm?: Step<AnthropicStep>; env?: Record<string, string>; daemonDown?: boolean } = {}): Promise<Fixture> {
  const sd = await startSignalDaemon();
  if (o.daemonDown) await sd.down();
  const g = await startChannelGateway(t, {
    config: () => ({
      channels: { signal: { url: sd.url, account: sd.account, allowFrom: [OWNER.number], attachmentsDir: sd.attachmentsDir, debounceMs: 0, ...o.signal } },
      ...(o.tools ? { tools: o.tools } : {}),
    }),
    llm: o.llm, env: o.env, close: () => sd.close().catch(() => {}),
  });
  // The daemon hands a new stream only what comes after it opened (and, with Last-Event-ID, what it missed).
  if (!o.daemonDown) await sd.waitFor(() => sd.streams === 1);
  return Object.assign(g, { sd });
}

const rows = dbRows;

const sends = (sd: SignalDaemon) => sd.sent.map((s) => s.params as { recipient?: string[]; groupId?: string; message: string; quoteTimestamp?: number; quoteAuthor?: string });

t.test('the owner writes, the agent answers: typing, read receipt, session per sender, the Signal timestamp on the outbound row', async (t) => {
  const { sd, llm, home } = await fixture(t);
  await sd.waitFor(() => sd.streams === 1);
  t.equal(sd.lastEventIds[0], '', 'a first connection asks for no replay');
  const m = sd.message({ from: OWNER, text: 'hello there' });
  await sd.waitFor(() => sd.sent.length === 1);
  t.match(sends(sd)[0], { recipient: [OWNER.number], message: 'echo: hello there', account: sd.account });
  t.ok(sd.calls.some((c) => c.method === 'sendTyping' && c.params.recipient?.[0] === OWNER.number && !c.params.stop), 'typing was shown');
  t.ok(sd.calls.some((c) => c.method === 'sendReceipt' && !c.fault && c.params.recipient === OWNER.number && c.params.targetTimestamp[0] === m.timestamp && c.params.type === 'read'), 'read receipt');
  t.match(rows(home, 'select session_key, chat_id, sender from inbound'), [{ session_key: `signal:${OWNER.number}`, chat_id: OWNER.number, sender: OWNER.number }]);
  await sd.waitFor(() => rows<{ state: string }>(home, 'select state from outbound')[0]?.state === 'sent');
  t.match(rows(home, 'select delivered_parts from outbound'), [{ delivered_parts: JSON.stringify([String(sd.sent[0]!.timestamp)]) }], 'the message timestamp is on the outbound row');
  // Receipts, typing and the account's own sync messages start nothing.
  sd.raw({ source: OWNER.number, sourceNumber: OWNER.number, sourceUuid: OWNER.uuid, sourceDevice: 1, timestamp: 1_700_000_100_000, typingMessage: { action: 'STARTED', timestamp: 1_700_000_100_000 } });
  sd.raw({ source: OWNER.number, sourceNumber: OWNER.number, sourceUuid: OWNER.uuid, sourceDevice: 1, timestamp: 1_700_000_100_001, receiptMessage: { when: 1_700_000_100_001, isDelivery: true, isRead: false, isViewed: false, timestamps: [sd.sent[0]!.timestamp] } });
  sd.message({ from: OWNER, text: 'again' });
  await sd.waitFor(() => sd.sent.length === 2);
  t.equal(sends(sd)[1]!.message, 'echo: again');
  t.equal(llm.requests.length, 2);
});

t.test('a stranger gets a pairing code once an hour and no turn; approved, they are answered', async (t) => {
  const { sd, llm, env, home } = await fixture(t);
  sd.message({ from: STRANGER, text: 'hi, who are you?' });
  await sd.waitFor(() => sd.sent.length === 1);
  const code = /pinclaw --home (\S+) pairing approve ([A-Z0-9]+)/.exec(sends(sd)[0]!.message)?.[2];
  t.ok(code, 'the prompt carries the code');
  t.same(sends(sd)[0]!.recipient, [STRANGER.number]);
  sd.message({ from: STRANGER, text: 'hello??' });
  await new Promise((r) => setTimeout(r, 800));
  t.equal(sd.sent.length, 1, 'no second prompt within the hour');
  t.equal(llm.requests.length, 0, 'a stranger starts no agent turn');
  t.notOk(sd.calls.some((c) => c.method === 'sendReceipt'), 'and gets no read receipt');
  const ok = await runPinclawAsync(['pairing', 'approve', code!], { env });
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.stdout, /approved signal/);
  sd.message({ from: STRANGER, text: 'now?' });
  await sd.waitFor(() => sd.sent.length === 2);
  t.equal(sends(sd)[1]!.message, 'echo: now?');
  t.equal(rows(home, `select id from inbound where sender = ?`, STRANGER.number).length, 1, 'only the approved message was queued');
});

t.test('groups: answered on a mention of the bot or a quote of its message, quoting the message; other talk ignored', async (t) => {
  const { sd, llm, home } = await fixture(t);
  const bot = { number: sd.account, uuid: '11111111-2222-4333-8444-555555555555' };
  sd.message({ from: OWNER, groupId: GROUP, text: 'just chatting' });
  sd.message({ from: OWNER, groupId: GROUP, text: '\uFFFC what do you think', mentions: [{ who: { number: '+15550003333', uuid: '21111111-2222-4333-8444-555555555555' }, at: 0 }] });
  const m = sd.message({ from: OWNER, groupId: GROUP, text: 'hey \uFFFC say hi', mentions: [{ who: bot, at: 4 }] });
  await sd.waitFor(() => sd.sent.length === 1);
  t.equal(llm.requests.length, 1, 'only the mention started a turn');
  t.match(sends(sd)[0], { groupId: GROUP, message: 'echo: hey say hi', quoteTimestamp: m.timestamp, quoteAuthor: OWNER.number });
  t.notOk(sends(sd)[0]!.recipient, 'sent to the group, not to a person');
  const chat = rows<{ session_key: string; chat_id: string }>(home, 'select session_key, chat_id from inbound')[0]!;
  t.equal(chat.session_key, `signal:${chat.chat_id}`);
  t.match(chat.chat_id, /^group\.[A-Za-z0-9_-]+$/, 'the group id is carried url-safe');
  sd.message({ from: OWNER, groupId: GROUP, text: 'and you?', quote: { author: sd.account, id: sd.sent[0]!.timestamp } });
  await sd.waitFor(() => sd.sent.length === 2);
  t.equal(sends(sd)[1]!.message, 'echo: and you?');
  // A stranger in the group is ignored quietly, mention or not.
  sd.message({ from: STRANGER, groupId: GROUP, text: '\uFFFC hi', mentions: [{ who: bot, at: 0 }] });
  await new Promise((r) => setTimeout(r, 800));
  t.equal(sd.sent.length, 2, 'no pairing prompt in a group');
});

t.test('a long reply is cut at 4000 characters on paragraph boundaries, each part sent once and recorded', async (t) => {
  const para = (c: string) => `${c.repeat(70)} `.repeat(25).trim();
  const long = [para('a'), para('b'), para('c'), para('d'), para('e'), para('f'), para('g')].join('\n\n');
  const { sd, home } = await fixture(t, { llm: () => textReply(long) });
  sd.message({ from: OWNER, text: 'long please' });
  await sd.waitFor(() => rows<{ state: string }>(home, 'select state from outbound')[0]?.state === 'sent');
  const parts = sends(sd).map((s) => s.message);
  t.ok(parts.length >= 4, `split into ${parts.length}`);
  for (const p of parts) t.ok(p.length <= 4000, `part of ${p.length}`);
  t.equal(parts.join('\n\n'), long, 'nothing lost, cut between paragraphs');
  t.same(JSON.parse(rows<{ delivered_parts: string }>(home, 'select delivered_parts from outbound')[0]!.delivered_parts), sd.sent.map((s) => String(s.timestamp)));
});

t.test('attachments are copied into the workspace and named in the turn; too large or binary: a clear reply', async (t) => {
  const { sd, llm, home } = await fixture(t, { signal: { maxFileBytes: 1000 } });
  const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
  sd.message({ from: OWNER, text: 'what is this?', attachments: [{ bytes: png, contentType: 'image/png', filename: 'dot.png' }] });
  await sd.waitFor(() => sd.sent.length === 1);
  const prompt = lastUser(llm.requests[0]!.body);
  const saved = /saved in the workspace as (inbox\/signal\/[^ ]+) \((\d+) bytes/.exec(prompt);
  t.ok(saved, 'the turn names the file');
  t.match(prompt, /what is this\?/);
  t.same(readFileSync(join(home, 'workspace', saved![1]!)), png, 'the bytes are in the workspace');
  sd.message({ from: OWNER, attachments: [{ bytes: Buffer.alloc(5000, 97), contentType: 'text/plain', filename: 'big.txt' }] });
  await sd.waitFor(() => sd.sent.length === 2);
  t.match(sends(sd)[1]!.message, /big\.txt is 5000 bytes, more than the 1000 bytes I accept \(channels\.signal\.maxFileBytes\)/);
  sd.message({ from: OWNER, text: 'and this one', attachments: [{ bytes: Buffer.from('\x7fELF'), contentType: 'application/octet-stream', filename: 'tool.bin' }] });
  await sd.waitFor(() => sd.sent.length === 4);
  t.match(sends(sd).slice(2).map((s) => s.message).sort(), [/I don't accept application\/octet-stream files \(tool\.bin\)/, /^echo: and this one/], 'the text goes on, the file is refused');
  t.equal(llm.requests.length, 2, 'a refused file alone starts no turn');
  t.notOk(existsSync(join(home, 'workspace', 'inbox', 'signal', 'big.txt')));
});

t.test('a tool that needs a yes asks "reply yes or no"; the owner answers yes', async (t) => {
  let step = 0;
  const { sd, llm, home } = await fixture(t, {
    tools: { confirm: ['current_time'] },
    llm: () => (step++ === 0 ? toolUseReply([{ name: 'current_time', input: {} }]) : textReply('It is time.')),
  });
  sd.message({ from: OWNER, text: 'what time is it?' });
  await sd.waitFor(() => sd.sent.length === 1);
  t.match(sends(sd)[0]!.message, /Allow current_time\?[\s\S]*Reply yes or no/);
  sd.message({ from: OWNER, text: 'Yes' });
  await sd.waitFor(() => sends(sd).some((s) => s.message === 'It is time.'));
  t.ok(sends(sd).some((s) => s.message === 'current_time: allowed'));
  t.match(rows(home, `select tool, outcome from audit`), [{ tool: 'current_time', outcome: 'ok' }]);
  t.equal(rows(home, 'select id from inbound').length, 1, 'the yes was an answer, not a message');
  t.equal(llm.requests.length, 2);
});

t.test('keep-alives hold the stream; a stream cut inside an event: reconnected with Last-Event-ID, the event taken once', async (t) => {
  const { sd, home } = await fixture(t);
  await sd.waitFor(() => sd.streams === 1);
  sd.message({ from: OWNER, text: 'first' });
  await sd.waitFor(() => sd.sent.length === 1);
  await new Promise((r) => setTimeout(r, 700)); // several keep-alives
  t.equal(sd.lastEventIds.length, 1, 'keep-alives alone: no reconnect');
  sd.truncateNext();
  sd.message({ from: OWNER, text: 'second' });
  await sd.waitFor(() => sd.sent.length === 2);
  t.equal(sends(sd)[1]!.message, 'echo: second');
  t.ok(sd.lastEventIds.length >= 2, 'reconnected');
  t.match(sd.lastEventIds[1], /^\d+-1$/, 'asking for what came after the first event');
  t.equal(rows(home, 'select id from inbound').length, 2, 'each message queued once');
});

t.test('a daemon that is down: a clear error, the gateway and the other channels go on; once it is up, the channel receives and delivers', async (t) => {
  const { sd, gw, env } = await fixture(t, { daemonDown: true, env: { PINCLAW_GATEWAY_TOKEN: 'tok' } });
  await gw.waitFor(/signal: nothing listens at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\): is the signal-cli daemon running\? Start it: signal-cli -a \+15550000001 daemon --http 127\.0\.0\.1:\d+/);
  t.equal((await fetch(`${gw.url}/healthz`)).status, 200, 'the gateway serves');
  const metrics = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer tok' } })).text();
  t.match(metrics, /pinclaw_channel_up\{channel="signal"\} 0/);
  t.match(metrics, /pinclaw_channel_up\{channel="http"\} 1/);
  const chat = await fetch(`${gw.url}/api/chat`, { method: 'POST', headers: { authorization: 'Bearer tok', 'content-type': 'application/json' }, body: JSON.stringify({ text: 'over http' }) });
  t.equal(chat.status, 200, 'the http channel answers');
  const doctor = await runPinclawAsync(['doctor'], { env });
  t.match(doctor.stdout, /signal.*no signal-cli daemon answers at http:\/\/127\.0\.0\.1:\d+: nothing listens at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\): is the signal-cli daemon running\? Start it: signal-cli -a \+15550000001 daemon --http 127\.0\.0\.1:\d+; the other channels are not affected/);
  t.match(doctor.stdout, /channels.*signal down \(nothing listens/);
  await sd.up();
  await sd.waitFor(() => sd.streams === 1, 40_000);
  sd.message({ from: OWNER, text: 'are you there?' });
  await sd.waitFor(() => sd.sent.length === 1);
  t.equal(sends(sd)[0]!.message, 'echo: are you there?');
  const after = await runPinclawAsync(['doctor'], { env });
  t.match(after.stdout, /signal-cli daemon at http:\/\/127\.0\.0\.1:\d+ answers/);
});

t.test('a send the daemon refuses is retried and arrives once', async (t) => {
  const { sd } = await fixture(t);
  sd.fail('send', { code: -1, message: 'Failed to send message due to network error' }, 2);
  sd.message({ from: OWNER, text: 'ping' });
  await sd.waitFor(() => sd.sent.length === 1, 30_000);
  await new Promise((r) => setTimeout(r, 500));
  t.equal(sd.sent.length, 1, 'once');
  t.equal(sends(sd)[0]!.message, 'echo: ping');
  t.equal(sd.calls.filter((c) => c.method === 'send' && c.fault).length, 2);
});

t.test('SIGKILL while receiving: restarted, and a restarted daemon replaying everything: every message handled once', async (t) => {
  const f = await fixture(t);
  const { sd, llm, home, gw, restart } = f;
  sd.message({ from: OWNER, text: 'm0' });
  // Killed once the reply is recorded as sent: a kill between the daemon's answer and that record
  // (a window of a write) would send it again, which is the after-send test's case.
  await sd.waitFor(() => rows<{ state: string }>(home, 'select state from outbound')[0]?.state === 'sent');
  gw.child.kill('SIGKILL');
  await gw.exited;
  for (const i of [1, 2, 3]) sd.message({ from: OWNER, text: `m${i}` });
  await restart();
  await sd.waitFor(() => rows(home, `select id from inbound where state = 'done'`).length === 4 && rows(home, `select id from outbound where state != 'sent'`).length === 0, 30_000);
  // The daemon restarts: it replays every event it kept, under ids pinclaw does not know.
  f.gw.child.kill('SIGKILL');
  await f.gw.exited;
  sd.forgetIds();
  await restart();
  sd.message({ from: OWNER, text: 'm4' });
  await sd.waitFor(() => rows(home, `select id from inbound where state = 'done'`).length === 5 && rows(home, `select id from outbound where state != 'sent'`).length === 0, 30_000);
  await new Promise((r) => setTimeout(r, 500));
  t.equal(rows(home, 'select id from inbound').length, 5, 'five messages stored, no duplicate');
  const replies = rows<{ inbound_id: number }>(home, `select inbound_id from outbound where kind = 'reply'`).length;
  t.equal(sd.sent.length, replies, 'each reply sent once');
  t.equal(new Set(sends(sd).map((s) => s.message)).size, sd.sent.length, 'no reply twice');
  t.equal(llm.requests.length, replies, 'one model call per burst');
});

t.test('SIGKILL in the middle of a stream of messages: after the restart each of them is queued exactly once', async (t) => {
  const f = await fixture(t);
  const { sd, home } = f;
  const texts = Array.from({ length: 20 }, (_, i) => `n${i}`);
  const sending = (async () => {
    for (const text of texts) {
      sd.message({ from: OWNER, text });
      await new Promise((r) => setTimeout(r, 40));
    }
  })();
  await sd.waitFor(() => rows(home, 'select id from inbound').length >= 4);
  f.gw.child.kill('SIGKILL');
  await f.gw.exited;
  await sending;
  const before = rows(home, 'select id from inbound').length;
  t.ok(before < texts.length, `killed while receiving (${before} of ${texts.length} stored)`);
  await f.restart();
  await sd.waitFor(() => rows(home, 'select id from inbound').length >= texts.length, 30_000);
  await new Promise((r) => setTimeout(r, 500));
  const stored = rows<{ text: string }>(home, 'select text from inbound order by id').map((r) => r.text);
  t.same(stored, texts, 'every message once, in order');
  t.equal(sd.lastEventIds.at(-1)?.length ? 1 : 0, 1, 'the restart asked for what came after the last event it took');
});

t.test('SIGKILL right after a reply was sent, before it was marked: not sent twice', async (t) => {
  const { sd, home, gw, restart } = await fixture(t, { env: { PINCLAW_CRASH_AT: 'after-send' } });
  sd.message({ from: OWNER, text: 'once please' });
  await gw.exited;
  t.equal(sd.sent.length, 1, 'the reply went out, then the process died');
  t.match(rows(home, `select state from outbound`), [{ state: 'pending' }], 'not marked');
  await restart({ PINCLAW_CRASH_AT: '' });
  await sd.waitFor(() => rows<{ state: string }>(home, 'select state from outbound')[0]!.state === 'sent');
  t.equal(sd.sent.length, 1, 'the restart saw the recorded timestamp and sent nothing again');
});

t.test('config: a url without an account, a number without its +: refused at load, naming the key', async (t) => {
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ channels: { signal: { url: 'http://127.0.0.1:8080', allowFrom: ['15550001111'] } } }));
  const r = await runPinclawAsync(['config', 'validate'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(r.code, 78, 'EX_CONFIG');
  const out = r.stdout + r.stderr;
  t.match(out, /channels\.signal\.account: expected the account the daemon runs, as E\.164/);
  t.match(out, /channels\.signal\.allowFrom\[0\]: expected an E\.164 number \(\+4915112345678\) or uuid:<ACI>, found "15550001111"/);
});
