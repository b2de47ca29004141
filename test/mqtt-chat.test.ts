// The MQTT chat channel against a real mosquitto, a real link and a real SQLite store: JSON and plain
// input, bad input answered with an error on chat/out, retained messages ignored, a repeated id and a
// real QoS 1 redelivery (dup) queued once, replies with inReplyTo, long replies in parts, and a send
// that fails while the broker is down and succeeds once it is back.
import t, { type Test } from 'tap';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { admit, MAX_PENDING_MQTT_PAIRINGS, pairingSubject } from '../src/channels/mqtt/access.js';
import { CHAT_REFUSALS_PER_MINUTE, chatParts, createMqttChat, parseChatPayload, type ChatRights } from '../src/channels/mqtt/chat.js';
import { approvePairing, listPairings, PAIRING_CODE_TTL_MS } from '../src/store/pairing.js';
import { openMqttLink, type MqttLink, type MqttSettings } from '../src/mqtt/connection.js';
import { defaults } from '../src/config/schema.js';
import { setLogLevel, setLogSink } from '../src/log.js';
import { openDatabase, type Db } from '../src/store/db.js';
import { deliveredParts, enqueue, recordDeliveredPart, recordOutbound, type InboundRow, type NewInbound, type OutboundRow } from '../src/store/queue.js';
import { recordingClient, startBroker, until, type Broker, type Received } from './support/mosquitto.js';
import { tempDir } from './support/proc.js';

const logged: string[] = [];
setLogSink((line) => logged.push(line));
// Debug too: a retained message that is ignored says so only at debug level.
setLogLevel('debug');

const NODE = 'kit';
const IN = `pinclaw/${NODE}/chat/in`;
const OUT = `pinclaw/${NODE}/chat/out`;

const TOKEN = 'panel-token-0123456789abcdef';
function settings(url: string, chat: Partial<MqttSettings['chat']> = {}): MqttSettings {
  const d = defaults().mqtt;
  return { ...d, url, nodeId: NODE, reconnect: { minMs: 100, maxMs: 400 }, chat: { ...d.chat, enabled: true, session: 'house', allowFrom: [{ name: 'panel', token: TOKEN }], ...chat } };
}

/** A chat/in payload of the listed sender "panel". */
const msg = (o: Record<string, unknown>) => JSON.stringify({ from: 'panel', token: TOKEN, ...o });

type Seen = Received;

/** A plain mqtt client: publishes on chat/in and records what arrives on chat/out. */
async function peer(t: Test, b: Broker) {
  const { client: c, got } = await recordingClient(b, [OUT]);
  t.teardown(() => c.endAsync());
  return {
    client: c,
    got,
    say: (payload: string | Buffer, opts: { retain?: boolean } = {}) => c.publishAsync(IN, payload, { qos: 1, ...opts }),
    next: (pred: (m: Seen) => boolean, what: string) => until(what, () => got.find(pred)),
  };
}

interface Setup {
  b: Broker;
  db: Db;
  link: MqttLink;
  chat: ReturnType<typeof createMqttChat>;
  rows(): InboundRow[];
}

/** Tool settings that give no MQTT session rights of its own. */
const NO_RIGHTS: ChatRights = { controlChats: ['cli:local'], overrides: [] };

async function setup(t: Test, o: { broker?: Broker; clientId?: string; chat?: Partial<MqttSettings['chat']>; tools?: ChatRights; beforeStart?: (b: Broker) => Promise<void>; submit?: (db: Db, m: NewInbound) => InboundRow } = {}): Promise<Setup> {
  const b = o.broker ?? (await startBroker());
  if (!o.broker) t.teardown(() => b.stop());
  await o.beforeStart?.(b);
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  const s = settings(b.url, o.chat);
  const link = openMqttLink({ settings: s, ...(o.clientId ? { clientId: o.clientId } : {}) });
  t.teardown(() => link.close());
  const chat = createMqttChat({ link: () => link, db, settings: s, tools: o.tools ?? NO_RIGHTS });
  // The gateway's submit is the conductor's, which enqueues the same way (debounce 0 here).
  const stop = chat.start((m) => (o.submit ? o.submit(db, m) : enqueue(db, m, 0)));
  t.teardown(stop);
  await until('the link to connect', () => link.connected());
  return { b, db, link, chat, rows: () => db.prepare('select * from inbound order by id').all() as InboundRow[] };
}

const metaOf = (r: InboundRow) => JSON.parse(r.meta ?? '{}') as Record<string, unknown>;

t.test('payload parsing: what is a message and what is refused', async (t) => {
  const p = (s: string | Buffer) => parseChatPayload(Buffer.isBuffer(s) ? s : Buffer.from(s), 'house');
  t.same(p('{"session":"kitchen","text":" hi ","id":"m1"}'), { session: 'kitchen', text: 'hi', id: 'm1' });
  t.same(p('{"text":"hi","id":7}'), { session: 'house', text: 'hi', id: 7 });
  t.same(p('lights on\n'), { session: 'house', text: 'lights on' });
  t.same(p('[1,2]'), { session: 'house', text: '[1,2]' }, 'text that is not an object is a plain message');
  t.match(p('{"text": "x",'), { error: /^not JSON: /, session: 'house' });
  t.match(p('{"session":"a"}'), { error: /no "text"/, session: 'a' });
  t.match(p('{"session":"a","text":3,"id":"q"}'), { error: /"text" must be a string, not number/, id: 'q' });
  t.match(p('{"text":"   "}'), { error: /"text" is empty/ });
  t.match(p('{"session":"a/b","text":"x"}'), { error: /"session" must be 1-64 letters/ });
  t.match(p(`{"session":"${'s'.repeat(65)}","text":"x"}`), { error: /"session" must be/ });
  t.match(p('{"text":"x","id":{"a":1}}'), { error: /"id" must be/ });
  t.match(p(''), { error: 'empty message' });
  t.match(p(Buffer.from([0xff, 0xfe, 0x41])), { error: /not UTF-8 text \(3 bytes of binary\)/ });
  t.match(p(Buffer.from('ab\u0000cd')), { error: /not UTF-8 text/ }, 'valid UTF-8 with NUL bytes is binary');
  t.same(chatParts('abc', 2), ['ab', 'c']);
  t.same(chatParts('a😀b', 2), ['a', '😀', 'b'], 'a surrogate pair is never cut');
  t.throws(() => createMqttChat({ link: () => { throw new Error('unused'); }, db: undefined as unknown as Db, settings: settings('mqtt://x', { session: 'a b' }), tools: NO_RIGHTS }), /mqtt\.chat\.session: "a b" must be/);
});

t.test('access: listed senders by constant-time token, strangers by pairing bound to their token, a cap on waiting strangers', async (t) => {
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  const allow = [{ name: 'panel', token: TOKEN }];
  t.same(admit(db, allow, 'panel', TOKEN), { ok: true, sender: 'panel', rule: 'mqtt.chat.allowFrom' });
  t.match(admit(db, allow, 'panel', `${TOKEN}x`), { ok: false, error: /token of sender panel does not match/ });
  t.match(admit(db, allow, undefined, undefined), { ok: false, error: /only senders that say who they are/ });
  t.match(admit(db, allow, 'a/b', TOKEN), { ok: false, error: /"from" must be/ });
  t.match(admit(db, allow, 'tab', 'short'), { ok: false, error: /"token" must be 16-512 characters/ });
  t.equal(listPairings(db).length, 0, 'none of these asked for pairing');
  const first = admit(db, allow, 'tab', 'tab-token-0123456789abcdef', 1000);
  t.match(first, { ok: false, pairing: { channel: 'mqtt', label: 'tab', subject: pairingSubject('tab', 'tab-token-0123456789abcdef') } });
  t.notOk(JSON.stringify(listPairings(db)).includes('tab-token-0123456789abcdef'), 'the token itself is not stored');
  t.match(admit(db, allow, 'tab2', 'tab2-token-0123456789abcdef', 1000, '/srv/pinclaw-home'), { ok: false, error: /runs on the gateway's machine: pinclaw --home \/srv\/pinclaw-home pairing approve [A-HJ-NP-Z2-9]{8} / }, 'the approval command names a home that is not the default');
  t.match(admit(db, allow, 'tab', 'tab-token-0123456789abcdef', 2000), { ok: false, error: /waits for the owner/ }, 'asked again: told once an hour');
  t.ok(approvePairing(db, (first as { pairing: { code: string } }).pairing.code, 3000).ok);
  t.match(admit(db, allow, 'tab', 'tab-token-0123456789abcdef', 4000), { ok: true, sender: 'tab', rule: 'pairing' });
  t.match(admit(db, allow, 'tab', 'tab-token-0123456789abcdefX', 4000), { ok: false }, 'the approval admits that token only');
  // Strangers fill the waiting list; the next is refused until they expire, when room is made.
  for (let i = 1; i < MAX_PENDING_MQTT_PAIRINGS; i++) admit(db, allow, `s${i}`, `stranger-token-0123456789-${i}`, 5000);
  t.match(admit(db, allow, 'late', 'late-token-0123456789abcdef', 6000), { ok: false, error: /16 MQTT pairing requests already wait/ });
  t.equal(listPairings(db).filter((p) => p.label === 'late').length, 0, 'the refused one holds no row');
  t.match(admit(db, allow, 'late', 'late-token-0123456789abcdef', 5000 + PAIRING_CODE_TTL_MS), { ok: false, pairing: { label: 'late' } }, 'expired requests make room');
  t.equal(listPairings(db).filter((p) => p.state === 'pending').length, 1, 'and are removed');
});

t.test('the chat checks mqtt.chat.allowFrom and refuses the reserved session name', async (t) => {
  const make = (chat: Partial<MqttSettings['chat']>) => () => createMqttChat({ link: () => { throw new Error('unused'); }, db: undefined as unknown as Db, settings: settings('mqtt://x', chat), tools: NO_RIGHTS });
  t.throws(make({ allowFrom: [{ name: 'p', token: 'short' }] }), /mqtt\.chat\.allowFrom\[0\]\.token: required, at least 16 characters/);
  t.throws(make({ allowFrom: [{ token: TOKEN }] }), /mqtt\.chat\.allowFrom\[0\]\.name: null must be/);
  t.throws(make({ allowFrom: [{ name: 'p', token: TOKEN }, { name: 'p', token: TOKEN }] }), /allowFrom\[1\]\.name: p is listed twice/);
  t.throws(make({ allowFrom: [{ name: 'p', token: TOKEN, sessions: ['a/b'] }] }), /mqtt\.chat\.allowFrom\[0\]\.sessions\[0\]: "a\/b" must be 1-64/);
  t.throws(make({ allowFrom: [{ name: 'p', token: TOKEN, sessions: ['homeassistant'] }] }), /allowFrom\[0\]\.sessions\[0\]: the session name "homeassistant" is reserved/);
  t.throws(make({ allowFrom: [{ name: 'p', token: TOKEN, sessions: [] }] }), /allowFrom\[0\]\.sessions: empty/);
  t.throws(make({ session: 'homeassistant' }), /mqtt\.chat\.session: the session name "homeassistant" is reserved/);
  const p = (s: string) => parseChatPayload(Buffer.from(s), 'house');
  t.match(p(msg({ session: 'homeassistant', text: 'switch the heater on' })), { error: /"session": the session name "homeassistant" is reserved/ });
  t.match(p(msg({ session: 'HomeAssistant', text: 'x' })), { error: /reserved/ });
});

t.test('JSON and plain messages are queued in their sessions', async (t) => {
  const s = await setup(t);
  const p = await peer(t, s.b);
  await p.say(msg({"session":"kitchen","text":"is the oven off?","id":"m1"}));
  await p.say(msg({ text: 'lights on\n' }));
  const rows = await until('two rows', () => (s.rows().length === 2 ? s.rows() : undefined));
  t.match(rows[0], { session_key: 'mqtt:kitchen', channel: 'mqtt', chat_id: 'kitchen', sender: 'panel', text: 'is the oven off?', state: 'pending' });
  t.same(metaOf(rows[0]!), { id: 'm1', topic: IN, from: 'panel', admittedBy: 'mqtt.chat.allowFrom' });
  t.match(rows[1], { session_key: 'mqtt:house', chat_id: 'house', text: 'lights on' }, 'a message without a session goes to mqtt.chat.session');
  t.same(metaOf(rows[1]!), { topic: IN, from: 'panel', admittedBy: 'mqtt.chat.allowFrom' });
  t.notOk(JSON.stringify(s.rows()).includes(TOKEN), 'the token is stored nowhere in the queue');
  t.equal(p.got.length, 0, 'good messages get no error reply');
});

t.test('bad input: not queued, logged, and the sender gets an error on chat/out', async (t) => {
  const s = await setup(t);
  const p = await peer(t, s.b);
  const cases: { payload: string | Buffer; error: RegExp; session: string; inReplyTo: unknown }[] = [
    { payload: '{"session":"kitchen","text":"oops",', error: /^not JSON: /, session: 'house', inReplyTo: null },
    { payload: '{"session":"kitchen","id":"q2"}', error: /no "text"/, session: 'kitchen', inReplyTo: 'q2' },
    { payload: '{"session":"kitchen","text":"","id":5}', error: /"text" is empty/, session: 'kitchen', inReplyTo: 5 },
    { payload: '{"session":"../etc","text":"x"}', error: /"session" must be/, session: '../etc', inReplyTo: null },
    { payload: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]), error: /not UTF-8 text \(6 bytes of binary\)/, session: 'house', inReplyTo: null },
  ];
  for (const c of cases) {
    const before = p.got.length;
    await p.say(c.payload);
    const m = await until(`the error for ${String(c.error)}`, () => p.got[before]);
    t.equal(m.topic, OUT);
    t.match(m.json, { session: c.session, error: c.error, inReplyTo: c.inReplyTo });
    t.ok(logged.some((l) => /^error: mqtt chat: a message on pinclaw\/kit\/chat\/in was refused: /.test(l) && c.error.test(l.replace(/^.*was refused: /, ''))), `logged: ${String(c.error)}`);
  }
  t.equal(s.rows().length, 0, 'nothing bad was queued');
  // A good message afterwards still goes through: bad input breaks nothing.
  await p.say(msg({ text: 'still there?' }));
  await until('the good row', () => s.rows().length === 1);
});

t.test('a message the queue refuses (too long, the database failing): the sender is told', async (t) => {
  const s = await setup(t, {
    submit: (db, m) => {
      if (m.text.length > 20) throw new Error(`message refused: ${m.text.length} characters is more than the limit of 20 (agent.maxMessageChars)`);
      return enqueue(db, m, 0);
    },
  });
  const p = await peer(t, s.b);
  await p.say(msg({ session: 'k', text: 'x'.repeat(21), id: 'big' }));
  const m = await p.next((x) => x.json?.inReplyTo === 'big', 'the refusal');
  t.same(m.json, { session: 'k', error: 'message refused: 21 characters is more than the limit of 20 (agent.maxMessageChars)', inReplyTo: 'big' });
  t.equal(s.rows().length, 0);
});

t.test('a retained message on chat/in is old state: ignored', async (t) => {
  const s = await setup(t, {
    // Left on the broker before the channel subscribes, as a misconfigured publisher would.
    beforeStart: async (b) => {
      const c = await mqtt.connectAsync(b.url, { clientId: 'old' });
      await c.publishAsync(IN, 'left here long ago', { qos: 1, retain: true });
      await c.endAsync();
    },
  });
  const p = await peer(t, s.b);
  await p.say(msg({ text: 'now' }));
  await until('the retained one to be seen', () => logged.some((l) => l === `debug: mqtt chat: ignored a retained message on ${IN}`));
  const rows = await until('the live row', () => (s.rows().length ? s.rows() : undefined));
  t.same(rows.map((r) => r.text), ['now'], 'only the live message is queued');
  t.equal(p.got.length, 0, 'and no error reply for the retained one');
});

t.test('a flood of refused messages: the first 10 a minute are logged and answered, then one warning', async (t) => {
  const s = await setup(t);
  const p = await peer(t, s.b);
  const before = logged.length;
  for (let i = 0; i < 25; i++) await p.say(JSON.stringify({ session: 'k', text: `let me in ${i}`, id: `f${i}` }));
  await p.say(msg({ session: 'k', text: 'the owner', id: 'ok1' }));
  await until('the good row', () => s.rows().length === 1);
  // Answers come back through the broker: wait for the ten, then make sure no more followed the good one.
  await until('ten answers', () => p.got.filter((m) => typeof m.json?.error === 'string').length >= CHAT_REFUSALS_PER_MINUTE);
  const probe = recordOutbound(s.db, { idempotencyKey: 'probe:1', inboundId: null, sessionKey: 'mqtt:k', channel: 'mqtt', chatId: 'k', text: 'probe', kind: 'notice' });
  await s.chat.channel.send(probe, delivery(s.db, probe));
  await p.next((x) => x.json?.id === 'probe:1', 'the probe published after everything else');
  const answers = p.got.filter((m) => typeof m.json?.error === 'string');
  t.equal(answers.length, CHAT_REFUSALS_PER_MINUTE, 'ten answers, not 25');
  const lines = logged.slice(before);
  t.equal(lines.filter((l) => l.startsWith('error: mqtt chat: a message on')).length, CHAT_REFUSALS_PER_MINUTE);
  t.equal(lines.filter((l) => /^warn: mqtt chat: more than 10 refused messages on .* within a minute/.test(l)).length, 1);
});

t.test('ids are per sender: another sender\'s message with the same id in the same session is queued', async (t) => {
  const other = 'kitchen-token-0123456789abcdef';
  const s = await setup(t, { chat: { allowFrom: [{ name: 'panel', token: TOKEN }, { name: 'kitchen', token: other }] } });
  const p = await peer(t, s.b);
  await p.say(msg({ session: 'a', text: 'from the panel', id: 'same' }));
  await p.say(JSON.stringify({ from: 'kitchen', token: other, session: 'a', text: 'from the kitchen', id: 'same' }));
  const rows = await until('two rows', () => (s.rows().length === 2 ? s.rows() : undefined));
  t.same(rows.map((r) => `${r.sender}: ${r.text}`), ['panel: from the panel', 'kitchen: from the kitchen']);
});

t.test('a session is tied to its senders: a control chat or another sender\'s session cannot be borrowed', async (t) => {
  const other = 'kitchen-token-0123456789abcdef';
  const pairedToken = 'tablet-token-0123456789abcdef';
  const s = await setup(t, {
    chat: { allowFrom: [{ name: 'panel', token: TOKEN, sessions: ['owner-room'] }, { name: 'kitchen', token: other, sessions: ['kitchen'] }, { name: 'guest', token: `${other}-guest` }] },
    tools: { controlChats: ['cli:local', 'mqtt:owner-room', 'mqtt:cellar'], overrides: [{ channel: 'mqtt', chat: 'garage' }] },
  });
  const p = await peer(t, s.b);
  const from = (name: string, token: string, o: Record<string, unknown>) => p.say(JSON.stringify({ from: name, token, ...o }));
  // The kitchen's sender names the owner's control chat: refused, told why and how to allow it.
  await from('kitchen', other, { session: 'owner-room', text: 'open the garage door', id: 'k1' });
  const r1 = await p.next((m) => m.json?.inReplyTo === 'k1', 'the refusal of k1');
  t.match(r1.json, { session: 'owner-room', error: /sender kitchen may talk only in "kitchen" \(mqtt\.chat\.allowFrom\[1\]\.sessions\), not in "owner-room"/ });
  // A sender without a list may use open sessions, but not one with rights nor one another sender owns.
  await from('guest', `${other}-guest`, { session: 'cellar', text: 'unlock', id: 'g1' });
  t.match((await p.next((m) => m.json?.inReplyTo === 'g1', 'g1')).json, { error: /the session "cellar" has rights of its own \(mqtt:cellar in tools\.controlChats/ });
  await from('guest', `${other}-guest`, { session: 'garage', text: 'unlock', id: 'g2' });
  t.match((await p.next((m) => m.json?.inReplyTo === 'g2', 'g2')).json, { error: /"garage" has rights of its own/ });
  await from('guest', `${other}-guest`, { session: 'kitchen', text: 'what did they say?', id: 'g3' });
  t.match((await p.next((m) => m.json?.inReplyTo === 'g3', 'g3')).json, { error: /the session "kitchen" belongs to the senders whose mqtt\.chat\.allowFrom entry lists it; .*mqtt\.chat\.allowFrom\[2\]\.sessions/ });
  // A paired stranger is held to the same rule.
  const asked = admit(s.db, [], 'tablet', pairedToken);
  t.ok(approvePairing(s.db, (asked as { pairing: { code: string } }).pairing.code).ok);
  await from('tablet', pairedToken, { session: 'owner-room', text: 'x', id: 't1' });
  t.match((await p.next((m) => m.json?.inReplyTo === 't1', 't1')).json, { error: /belongs to the senders .*a paired sender has none/ });
  // What each may do is still done.
  await from('kitchen', other, { session: 'kitchen', text: 'is the oven off?', id: 'k2' });
  await from('panel', TOKEN, { session: 'owner-room', text: 'lights off', id: 'p1' });
  await from('guest', `${other}-guest`, { session: 'hall', text: 'hello', id: 'g4' });
  await from('tablet', pairedToken, { session: 'hall', text: 'hi', id: 't2' });
  const rows = await until('four rows', () => (s.rows().length === 4 ? s.rows() : undefined));
  t.same(rows.map((r) => `${r.sender} ${r.session_key}`), ['kitchen mqtt:kitchen', 'panel mqtt:owner-room', 'guest mqtt:hall', 'tablet mqtt:hall']);
});

t.test('the same id again in a session is queued once; the same id in another session is new', async (t) => {
  const s = await setup(t);
  const p = await peer(t, s.b);
  await p.say(msg({"session":"a","text":"first","id":"x1"}));
  await p.say(msg({"session":"a","text":"first (sent again)","id":"x1"}));
  await p.say(msg({"session":"b","text":"other session","id":"x1"}));
  await p.say(msg({"session":"a","text":"numbered","id":7}));
  await p.say(msg({"session":"a","text":"numbered again","id":7}));
  await p.say(msg({"session":"a","text":"second","id":"x2"}));
  const rows = await until('four rows', () => (s.rows().some((r) => r.text === 'second') ? s.rows() : undefined));
  t.same(rows.map((r) => `${r.session_key} ${r.text}`), ['mqtt:a first', 'mqtt:b other session', 'mqtt:a numbered', 'mqtt:a second']);
  t.same(metaOf(rows[2]!).id, 7, 'a numeric id is kept as a number');
  t.ok(logged.some((l) => l.includes('a message to mqtt:a with id "x1" arrived again; queued once')));
});

t.test('a real QoS 1 redelivery (dup) after a lost PUBACK is queued once, with or without an id', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.stop());
  const clientId = 'pinclaw-redelivery';
  const dbFile = join(tempDir(), 'pinclaw.db');
  // First the node's session receives two messages, commits them and dies before its PUBACKs
  // (customHandleAcks fails each ack): the broker keeps them in flight for that session.
  const committed: string[] = [];
  const db0 = openDatabase(dbFile);
  const commit = (text: string) => {
    committed.push(text);
    // What the channel commits for them (a JSON message with an id, and a plain one).
    if (text.includes('"id"')) enqueue(db0, { sessionKey: 'mqtt:a', channel: 'mqtt', chatId: 'a', sender: 'panel', text: 'with id', meta: { id: 'r1', topic: IN } }, 0);
    else enqueue(db0, { sessionKey: 'mqtt:house', channel: 'mqtt', chatId: 'house', sender: 'panel', text: 'no id', meta: { topic: IN } }, 0);
  };
  const first = await mqtt.connectAsync(b.url, {
    clientId, clean: false, protocolVersion: 5, properties: { sessionExpiryInterval: 3600 }, reconnectPeriod: 0,
    customHandleAcks: (_topic, payload, _packet, done) => {
      commit(payload.toString());
      done(new Error('test: the PUBACK is lost'));
    },
  });
  t.teardown(() => first.end(true));
  first.on('error', () => {});
  await first.subscribeAsync(IN, { qos: 1 });
  const sender = await mqtt.connectAsync(b.url, { clientId: 'sender' });
  t.teardown(() => sender.endAsync());
  await sender.publishAsync(IN, msg({ session: 'a', text: 'with id', id: 'r1' }), { qos: 1 });
  await sender.publishAsync(IN, msg({ text: 'no id' }), { qos: 1 });
  await until('both to arrive unacknowledged', () => committed.length === 2);
  await first.endAsync(true);
  db0.close();
  // The node comes back with the same session: the broker sends both again, marked dup.
  const before = logged.length;
  const db = openDatabase(dbFile);
  t.teardown(() => db.close());
  const s = settings(b.url);
  const link = openMqttLink({ settings: s, clientId });
  t.teardown(() => link.close());
  const chat = createMqttChat({ link: () => link, db, settings: s, tools: NO_RIGHTS });
  t.teardown(chat.start((m) => enqueue(db, m, 0)));
  const again = () => logged.slice(before).filter((l) => l.includes('arrived again; queued once'));
  await until('both redeliveries', () => again().length === 2);
  t.match(again().join('\n'), /mqtt:a with id "r1"/);
  t.match(again().join('\n'), /a message to mqtt:house arrived again/, 'the one without an id is known by dup and its text');
  // A new message with the same text is not a redelivery (no dup): it is queued.
  await sender.publishAsync(IN, msg({ text: 'no id' }), { qos: 1 });
  const rows = await until('the new one', () => {
    const r = db.prepare('select session_key, text from inbound order by id').all() as { session_key: string; text: string }[];
    return r.length === 3 ? r : undefined;
  });
  t.same(rows, [{ session_key: 'mqtt:a', text: 'with id' }, { session_key: 'mqtt:house', text: 'no id' }, { session_key: 'mqtt:house', text: 'no id' }]);
});

function delivery(db: Db, row: OutboundRow) {
  const fresh = () => db.prepare('select * from outbound where id = ?').get(row.id) as OutboundRow;
  return { sentParts: deliveredParts(fresh()), partSent: (id: string) => recordDeliveredPart(db, row.id, id) };
}

t.test('send: the reply on chat/out with inReplyTo and the idempotency key; notices too', async (t) => {
  const s = await setup(t);
  const p = await peer(t, s.b);
  await p.say(msg({"session":"kitchen","text":"oven?","id":"m9"}));
  await p.say(msg({ text: 'plain question' }));
  const [withId, plain] = await until('two rows', () => (s.rows().length === 2 ? s.rows() : undefined));
  const reply = recordOutbound(s.db, { idempotencyKey: 'reply:1', inboundId: withId!.id, sessionKey: 'mqtt:kitchen', channel: 'mqtt', chatId: 'kitchen', text: 'The oven is off.', kind: 'reply' });
  await s.chat.channel.send(reply, delivery(s.db, reply));
  const m = await p.next((x) => x.json?.id === 'reply:1', 'the reply');
  t.equal(m.topic, OUT);
  t.same(m.json, { session: 'kitchen', text: 'The oven is off.', inReplyTo: 'm9', id: 'reply:1', kind: 'reply' });
  const second = recordOutbound(s.db, { idempotencyKey: 'reply:2', inboundId: plain!.id, sessionKey: 'mqtt:house', channel: 'mqtt', chatId: 'house', text: 'Yes.', kind: 'reply' });
  await s.chat.channel.send(second, delivery(s.db, second));
  t.same((await p.next((x) => x.json?.id === 'reply:2', 'the second reply')).json, { session: 'house', text: 'Yes.', inReplyTo: plain!.id, id: 'reply:2', kind: 'reply' }, 'without a sender id: the inbound row id');
  const notice = recordOutbound(s.db, { idempotencyKey: 'notice:1', inboundId: null, sessionKey: 'mqtt:house', channel: 'mqtt', chatId: 'house', text: 'The door opened.', kind: 'notice' });
  await s.chat.channel.send(notice, delivery(s.db, notice));
  t.same((await p.next((x) => x.json?.id === 'notice:1', 'the notice')).json, { session: 'house', text: 'The door opened.', inReplyTo: null, id: 'notice:1', kind: 'notice' });
  t.equal(s.chat.channel.name, 'mqtt');
  t.equal(s.chat.channel.debounceMs, 0);
});

t.test('send: a reply above 64 Ki characters goes out in parts, and a retry sends only the rest', async (t) => {
  const s = await setup(t);
  const p = await peer(t, s.b);
  const text = 'x'.repeat(64 * 1024) + 'y'.repeat(64 * 1024) + 'z'.repeat(10);
  const row = recordOutbound(s.db, { idempotencyKey: 'long:1', inboundId: null, sessionKey: 'mqtt:house', channel: 'mqtt', chatId: 'house', text, kind: 'reply' });
  // An earlier attempt delivered the first part (committed), then failed.
  recordDeliveredPart(s.db, row.id, '1');
  await s.chat.channel.send(row, delivery(s.db, row));
  const parts = await until('two parts', () => {
    const got = p.got.filter((m) => typeof m.json?.id === 'string' && (m.json.id as string).startsWith('long:1#'));
    return got.length === 2 ? got : undefined;
  });
  t.same(parts.map((m) => [m.json!.id, m.json!.part, m.json!.parts, (m.json!.text as string).length]), [['long:1#2', 2, 3, 64 * 1024], ['long:1#3', 3, 3, 10]], 'the delivered part is not sent again');
  t.same(deliveredParts(s.db.prepare('select * from outbound where id = ?').get(row.id) as OutboundRow), ['1', '2', '3']);
  t.equal(p.got.filter((m) => m.json?.id === 'long:1#1').length, 0);
});

t.test('send while the broker is down rejects (the reply stays pending); once it is back it goes out', async (t) => {
  const s = await setup(t);
  const row = recordOutbound(s.db, { idempotencyKey: 'down:1', inboundId: null, sessionKey: 'mqtt:house', channel: 'mqtt', chatId: 'house', text: 'after the outage', kind: 'reply' });
  await s.b.stop();
  await until('the link to notice', () => !s.link.connected());
  await t.rejects(s.chat.channel.send(row, delivery(s.db, row)), /mqtt: not connected to mqtt:\/\/127\.0\.0\.1:\d+/);
  await s.b.start();
  await until('the link to reconnect', () => s.link.connected());
  const p = await peer(t, s.b);
  await s.chat.channel.send(row, delivery(s.db, row));
  t.match((await p.next((x) => x.json?.id === 'down:1', 'the reply')).json, { text: 'after the outage' });
});
