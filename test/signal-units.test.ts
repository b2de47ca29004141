// The Signal channel's pure parts and its receiver on its own: the envelope rules (sender, chat,
// mentions, groups, the envelope's identity), the reply splitting, the SSE parser on split chunks
// and a cut-off event, and the receiver against a real node:http stream that goes silent.
import t from 'tap';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { signalParts } from '../src/channels/signal/chunks.js';
import { addressedText, chatIdOf, envelopeKey, senderKey, senderOf, targetOf, type SignalEnvelope } from '../src/channels/signal/envelope.js';
import { sseEvents } from '../src/channels/signal/events.js';
import { isAllowed } from '../src/channels/signal/inbound.js';
import { runReceiver } from '../src/channels/signal/receiver.js';
import { openSeen } from '../src/channels/signal/seen.js';
import { signalIssues } from '../src/config/signal.js';
import { chatProblem } from '../src/scheduler/targets.js';
import { openDatabase } from '../src/store/db.js';
import { tempDir } from './support/proc.js';

const ACCOUNT = '+15550000001';
const UUID = '0c7c6f0e-3f1a-4f57-8a3e-6a2b1c9d0e11';

t.test('sender, chat and identity of an envelope', async (t) => {
  const dm: SignalEnvelope = { source: '+15550001111', sourceNumber: '+15550001111', sourceUuid: UUID, sourceName: 'Ada', timestamp: 5, dataMessage: { timestamp: 5, message: 'hi' } };
  t.same(senderOf(dm), { number: '+15550001111', uuid: UUID, name: 'Ada' });
  t.equal(chatIdOf(dm), '+15550001111');
  t.equal(envelopeKey(dm), `${UUID}:5`);
  // A sender whose number Signal hides: known by the ACI only.
  const hidden: SignalEnvelope = { source: UUID, sourceNumber: null, sourceUuid: UUID, timestamp: 6, dataMessage: { timestamp: 6, message: 'x' } };
  t.equal(senderKey(senderOf(hidden)), `uuid:${UUID}`);
  t.equal(chatIdOf(hidden), `uuid:${UUID}`);
  t.same(targetOf(`uuid:${UUID}`), { recipient: [UUID] });
  const group: SignalEnvelope = { ...dm, dataMessage: { timestamp: 5, message: 'x', groupInfo: { groupId: 'ab+/cd==', type: 'DELIVER' } } };
  t.equal(chatIdOf(group), 'group.ab-_cd');
  t.same(targetOf('group.ab-_cd'), { groupId: 'ab+/cd==' }, 'the group id comes back as the daemon wrote it');
  t.equal(envelopeKey({ timestamp: 1 }), undefined, 'no sender, no identity');
});

t.test('mentions and addressing in groups', async (t) => {
  const bot = { number: ACCOUNT, uuid: UUID, start: 4, length: 1 };
  t.equal(addressedText({ timestamp: 1, message: 'hey \uFFFC how are you', mentions: [bot] }, ACCOUNT), 'hey how are you');
  t.equal(addressedText({ timestamp: 1, message: 'hey \uFFFC', mentions: [bot], groupInfo: { groupId: 'g' } }, ACCOUNT), 'hey');
  t.equal(addressedText({ timestamp: 1, message: '\uFFFC look', mentions: [{ number: '+15550003333', start: 0, length: 1 }], groupInfo: { groupId: 'g' } }, ACCOUNT), null, 'someone else mentioned: not for the bot');
  t.equal(addressedText({ timestamp: 1, message: '\uFFFC and \uFFFC', mentions: [{ number: '+15550003333', start: 0, length: 1 }, { ...bot, start: 6 }], groupInfo: { groupId: 'g' } }, ACCOUNT), '@+15550003333 and');
  t.equal(addressedText({ timestamp: 1, message: 'yes', quote: { authorNumber: ACCOUNT }, groupInfo: { groupId: 'g' } }, ACCOUNT), 'yes', 'a quote of the bot is addressed to it');
  t.equal(addressedText({ timestamp: 1, message: 'plain' }, ACCOUNT), 'plain', 'a direct message always is');
});

t.test('allow-list: numbers and uuid:<ACI>', async (t) => {
  t.ok(isAllowed(['+15550001111'], { number: '+15550001111', uuid: UUID }));
  t.ok(isAllowed([`uuid:${UUID.toUpperCase()}`], { uuid: UUID }));
  t.notOk(isAllowed(['+15550001111'], { uuid: UUID }));
  t.notOk(isAllowed([], { number: '+15550001111' }));
  t.same(signalIssues({ url: undefined, account: undefined, allowFrom: ['x'], maxFileBytes: 1, debounceMs: 0 }), [], 'no url: not checked');
  t.match(signalIssues({ url: 'http://127.0.0.1:8080', account: '+15550000001', allowFrom: ['+15550001111', `uuid:${UUID}`, 'bob'], maxFileBytes: 1, debounceMs: 0 }), [{ path: 'channels.signal.allowFrom[2]', found: '"bob"' }]);
});

t.test('replies are cut at 4000 at a paragraph, a line, a space, never inside a surrogate pair', async (t) => {
  t.same(signalParts('short'), ['short']);
  t.same(signalParts('  '), []);
  const words = Array.from({ length: 3000 }, (_, i) => `w${i}`).join(' ');
  const parts = signalParts(words);
  for (const p of parts) t.ok(p.length <= 4000);
  t.equal(parts.join(' '), words, 'cut at spaces, nothing lost');
  const emoji = '😀'.repeat(2500);
  const e = signalParts(emoji);
  t.equal(e.join(''), emoji);
  for (const p of e) t.notOk(/[\uD800-\uDBFF]$/.test(p), 'no half emoji at a cut');
});

t.test('SSE: events split anywhere, CRLF and CR, keep-alives, an event cut off is never yielded', async (t) => {
  const wire = 'id:1-1\nevent:receive\ndata:{"a":1}\n\n:\n:\r\nid: 1-2\r\nevent: receive\r\ndata: {"a":2}\r\n\r\ndata:x\rdata:y\r\revent:receive\ndata:{"cut"';
  for (const size of [1, 2, 3, 7, wire.length]) {
    const bytes = Buffer.from(wire);
    async function* body() {
      for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
    }
    let activity = 0;
    const out = [];
    for await (const e of sseEvents(body(), () => activity++)) out.push(e);
    t.same(out, [{ id: '1-1', event: 'receive', data: '{"a":1}' }, { id: '1-2', event: 'receive', data: '{"a":2}' }, { id: '1-2', event: 'message', data: 'x\ny' }], `chunks of ${size}`);
    t.ok(activity > 0);
  }
});

t.test('the receiver abandons a stream that goes silent (no keep-alive) and reconnects; an envelope seen before is dropped', async (t) => {
  const envelope = { envelope: { source: '+15550001111', sourceNumber: '+15550001111', sourceUuid: UUID, timestamp: 42, dataMessage: { timestamp: 42, message: 'hi' } }, account: ACCOUNT };
  let connections = 0;
  const open = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    connections++;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    // Every connection hands over the same envelope, then falls silent: a half-open connection.
    res.write(`event:receive\ndata:${JSON.stringify(envelope)}\n\n`);
    open.add(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const r of open) r.destroy();
    server.close();
  });
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  const seen = openSeen(db);
  const prepared: number[] = [];
  const statuses: string[] = [];
  const abort = new AbortController();
  const done = runReceiver({
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, account: ACCOUNT, db, seen, signal: abort.signal, graceMs: 300,
    prepare: (ev) => (prepared.push(ev.envelope.timestamp), () => {}),
    taken: () => {},
    onStatus: (state, detail) => statuses.push(`${state}: ${detail}`),
  });
  const until = Date.now() + 15_000;
  while (connections < 3 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  abort.abort();
  await done;
  t.ok(connections >= 3, `reconnected after silence (${connections} connections)`);
  t.same(prepared, [42], 'the envelope handed over on every connection was taken once');
  t.match(statuses, ['up: receiving', /down: the event stream went silent for 0\.3 s/]);
});

t.test('a Signal chat as a delivery target (owner.notify, --deliver): a number, uuid:<ACI> or group.<id>', async (t) => {
  t.equal(chatProblem({ channel: 'signal', chatId: '+15550001111' }), undefined);
  t.equal(chatProblem({ channel: 'signal', chatId: `uuid:${UUID}` }), undefined);
  t.equal(chatProblem({ channel: 'signal', chatId: 'group.ab-_cd' }), undefined);
  t.match(chatProblem({ channel: 'signal', chatId: '15550001111' }), /the Signal chat "15550001111" must be a number \(\+4915112345678\), uuid:<ACI> or group\.<id>/);
});
