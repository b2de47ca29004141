// MQTT in a real gateway process (the bundle) against a real mosquitto, with the real Anthropic SDK
// talking to its stand-in: availability (online, offline on a clean stop, the last will after
// SIGKILL), the chat round trip, a broker that is down when the gateway starts, a broker restarted
// with messages in flight (each answered exactly once), and refused credentials.
import t, { type Test } from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IClientOptions } from 'mqtt';
import { openDatabase } from '../src/store/db.js';
import { startAnthropicServer, type AnthropicStep } from './support/anthropic-server.js';
import { recordingClient, startBroker, until as untilWithin, type Broker, type Received } from './support/mosquitto.js';
import { bundle, cleanEnv, runPinclawAsync, start, tempDir, type Started } from './support/proc.js';
import type { Step } from './support/stand-in.js';
import { echo, lastUser } from './support/channel-gateway.js';

const NODE = 'gw';
const TOKEN = 'gw-token-123';
const STATUS = `pinclaw/${NODE}/status`;
const IN = `pinclaw/${NODE}/chat/in`;
const OUT = `pinclaw/${NODE}/chat/out`;
/** The chat's one listed sender, and a payload from it. */
const PANEL_TOKEN = 'panel-token-0123456789abcdef';
const CHAT = { enabled: true, allowFrom: [{ name: 'panel', token: PANEL_TOKEN }] };
const msg = (o: Record<string, unknown>) => JSON.stringify({ from: 'panel', token: PANEL_TOKEN, ...o });

/** The user's text as the provider got it: the channel adds a bracketed header before it. */

type Msg = Received;

/** A gateway takes its time to start: 20 s unless told. */
const until = <T>(what: string, probe: () => T | undefined | false, ms = 20_000, stderr?: () => string) => untilWithin(what, probe, ms, stderr);

/** A plain mqtt client that records everything on its filters. */
async function client(t: Test, b: Broker, filters: string[], opts: IClientOptions = {}) {
  const { client: c, got } = await recordingClient(b, filters, opts);
  t.teardown(() => c.endAsync(true));
  return { c, got };
}

interface Gateway extends Started {
  url: string;
}

async function fixture(t: Test, b: Broker, mqttExtra: Record<string, unknown> = {}, llmStep: Step<AnthropicStep> = echo) {
  const llm = await startAnthropicServer(llmStep);
  t.teardown(() => llm.close());
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({
    mqtt: { url: b.url, nodeId: NODE, keepaliveSeconds: 5, reconnect: { minMs: 200, maxMs: 1000 }, homeAssistant: { enabled: false }, chat: CHAT, ...mqttExtra },
  }));
  const env = cleanEnv({ PINCLAW_HOME: home, PINCLAW_GATEWAY_TOKEN: TOKEN, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: llm.url, PINCLAW_AGENT_RETRY_BASE_MS: '10' });
  const running: Gateway[] = [];
  t.teardown(async () => {
    for (const g of running) {
      g.child.kill('SIGKILL');
      await g.exited;
    }
  });
  return {
    llm,
    home,
    env,
    async gateway(): Promise<Gateway> {
      const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env });
      running.push(gw as Gateway);
      const m = await gw.waitFor(/gateway listening on (http:\/\/[^\s]+)/);
      return Object.assign(gw, { url: m[1]! });
    },
    rows<T>(q: string): T[] {
      const db = openDatabase(join(home, 'pinclaw.db'), { readonly: true });
      try {
        return db.prepare(q).all() as T[];
      } finally {
        db.close();
      }
    },
  };
}

/** Index of the last message on the status topic with this text, -1 if none. */
function lastStatus(got: Msg[], text: string): number {
  for (let i = got.length - 1; i >= 0; i--) if (got[i]!.topic === STATUS && got[i]!.text === text) return i;
  return -1;
}

async function apiChat(gw: Gateway, session: string, text: string): Promise<{ status: number; reply?: string }> {
  const res = await fetch(`${gw.url}/api/chat`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ session, text }) });
  return { status: res.status, ...((await res.json()) as { reply?: string }) };
}

t.test('availability: online on connect, offline on SIGTERM, offline from the last will after SIGKILL', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.stop());
  const f = await fixture(t, b);
  const w = await client(t, b, [STATUS]);
  const gw = await f.gateway();
  await until('online', () => lastStatus(w.got, 'online') >= 0, 20_000, gw.stderr);
  await gw.waitFor(/info: mqtt: connected to mqtt:\/\/127\.0\.0\.1:\d+ as gw/);
  const retained = await client(t, b, [STATUS]);
  await until('the retained status for a newcomer', () => retained.got.some((m) => m.text === 'online'));
  gw.child.kill('SIGTERM');
  t.same(await gw.exited, { code: 0, signal: null }, 'a clean stop');
  await until('offline after the clean stop', () => lastStatus(w.got, 'offline') > lastStatus(w.got, 'online'), 20_000, gw.stderr);

  const again = await f.gateway();
  await until('online again', () => lastStatus(w.got, 'online') > lastStatus(w.got, 'offline'), 20_000, again.stderr);
  again.child.kill('SIGKILL');
  await again.exited;
  // Nobody said goodbye: the broker sees the connection drop and publishes the will.
  await until('offline from the will', () => lastStatus(w.got, 'offline') > lastStatus(w.got, 'online'), 20_000);
  const late = await client(t, b, [STATUS]);
  await until('the retained offline', () => late.got.some((m) => m.text === 'offline'));
  t.equal(late.got.filter((m) => m.topic === STATUS).at(-1)!.text, 'offline', 'a newcomer sees the node offline');
});

t.test('chat round trip: chat/in to the agent, the reply on chat/out with inReplyTo', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.stop());
  const f = await fixture(t, b);
  const p = await client(t, b, [OUT]);
  const gw = await f.gateway();
  const w = await client(t, b, [STATUS]);
  await until('online', () => w.got.some((m) => m.text === 'online'), 20_000, gw.stderr);
  // Online is said before the subscription is taken; a message published in between would be lost.
  await gw.waitFor(/mqtt: subscribed to .*chat\/in/, 20_000);
  await p.c.publishAsync(IN, msg({ session: 'kitchen', text: 'is the oven off', id: 'c1' }), { qos: 1 });
  const reply = await until('the reply', () => p.got.find((m) => m.json?.inReplyTo === 'c1'), 30_000, gw.stderr);
  t.match(reply.json, { session: 'kitchen', text: 'echo: is the oven off', inReplyTo: 'c1', kind: 'reply' });
  t.type(reply.json!.id, 'string', 'the reply carries its own id for dropping duplicates');
  await p.c.publishAsync(IN, msg({ text: 'lights on' }), { qos: 1 });
  const plain = await until('the plain reply', () => p.got.find((m) => m.json?.text === 'echo: lights on'), 30_000, gw.stderr);
  t.match(plain.json, { session: 'mqtt' }, 'a message without a session goes to mqtt.chat.session');
  await p.c.publishAsync(IN, '{"session":"kitchen",', { qos: 1 });
  const bad = await until('the error reply', () => p.got.find((m) => typeof m.json?.error === 'string'), 20_000, gw.stderr);
  t.match(bad.json, { session: 'mqtt', error: /^not JSON: / });
  // stderr is a pipe of its own: the line may arrive after the MQTT answer.
  await gw.waitFor(/error: mqtt chat: a message on pinclaw\/gw\/chat\/in was refused: not JSON: /, 20_000);
  t.same(f.rows<{ session_key: string; text: string }>("select session_key, text from inbound where channel = 'mqtt' order by id"), [
    { session_key: 'mqtt:kitchen', text: 'is the oven off' },
    { session_key: 'mqtt:mqtt', text: 'lights on' },
  ]);
});

t.test('the MQTT chat is off unless turned on: anyone on the broker publishing on chat/in starts no turn', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.stop());
  // An owner's config from before: mqtt.url set, the chat never mentioned.
  const f = await fixture(t, b, { chat: {} });
  const p = await client(t, b, [OUT]);
  const gw = await f.gateway();
  await gw.waitFor(/info: mqtt: the MQTT chat is off .*pinclaw config set mqtt\.chat\.enabled true.*mqtt\.chat\.allowFrom/, 20_000);
  const w = await client(t, b, [STATUS]);
  await until('online', () => w.got.some((m) => m.text === 'online'), 20_000, gw.stderr);
  // Something the gateway does subscribe to comes after chat/in would have: the fleet's answers.
  await gw.waitFor(/mqtt: subscribed to .*fleet\/res/, 20_000);
  await p.c.publishAsync(IN, JSON.stringify({ session: 'kitchen2', text: 'what do you remember about me', id: 'x1' }), { qos: 1 });
  // The HTTP turn after it is answered: had the MQTT message been taken, it would be in the queue by then.
  t.match(await apiChat(gw, 'web', 'ping'), { status: 200, reply: 'echo: ping' });
  t.same(f.rows("select id from inbound where channel = 'mqtt'"), [], 'nothing from the broker was queued');
  t.notOk(gw.stderr().includes('subscribed to pinclaw/gw/chat/in'), 'chat/in is not even subscribed');
});

t.test('with the chat on, only listed senders and paired ones get a turn; a stranger gets a pairing code', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.stop());
  const f = await fixture(t, b);
  const p = await client(t, b, [OUT]);
  const gw = await f.gateway();
  await gw.waitFor(/mqtt: subscribed to .*chat\/in/, 20_000);
  const reply = (id: string) => until(`the answer to ${id}`, () => p.got.find((m) => m.json?.inReplyTo === id), 30_000, gw.stderr);
  // No proof at all, the hostile review's message: refused.
  await p.c.publishAsync(IN, JSON.stringify({ session: 'kitchen2', text: 'list my memories', id: 'h1' }), { qos: 1 });
  t.match((await reply('h1')).json, { session: 'kitchen2', error: /answers only senders that say who they are/ });
  await p.c.publishAsync(IN, 'plain text', { qos: 1 });
  await until('the plain refusal', () => p.got.find((m) => typeof m.json?.error === 'string' && m.json.inReplyTo === null), 20_000, gw.stderr);
  // A listed name with a wrong token: refused, no pairing.
  await p.c.publishAsync(IN, JSON.stringify({ from: 'panel', token: 'x'.repeat(32), text: 'hi', id: 'h2' }), { qos: 1 });
  t.match((await reply('h2')).json, { error: 'the token of sender panel does not match its entry in mqtt.chat.allowFrom' });
  // A stranger with a token of its own: a pairing code, which the owner approves on the machine.
  const mine = 'stranger-token-abcdef0123456789';
  await p.c.publishAsync(IN, JSON.stringify({ from: 'tablet', token: mine, session: 'hall', text: 'hello?', id: 'h3' }), { qos: 1 });
  const asked = (await reply('h3')).json!;
  const code = /pairing approve ([A-Z0-9]{8})/.exec(String(asked.error))?.[1];
  t.ok(code, `a pairing code in ${String(asked.error)}`);
  // The same name with another token is not the one that asked: it cannot ride on the approval.
  const approved = await runPinclawAsync(['pairing', 'approve', code!], { env: f.env });
  t.equal(approved.code, 0, approved.stderr);
  t.match(approved.stdout, /approved mqtt tablet/);
  await p.c.publishAsync(IN, JSON.stringify({ from: 'tablet', token: 'another-token-abcdef0123456789', session: 'hall', text: 'me too', id: 'h4' }), { qos: 1 });
  t.match((await reply('h4')).json, { error: /sender tablet is not in mqtt\.chat\.allowFrom/ });
  await p.c.publishAsync(IN, JSON.stringify({ from: 'tablet', token: mine, session: 'hall', text: 'now?', id: 'h5' }), { qos: 1 });
  t.match((await reply('h5')).json, { session: 'hall', text: 'echo: now?' });
  await p.c.publishAsync(IN, msg({ session: 'kitchen', text: 'oven', id: 'h6' }), { qos: 1 });
  t.match((await reply('h6')).json, { session: 'kitchen', text: 'echo: oven' });
  // Even a listed sender cannot talk as Home Assistant's old chat, which tools.controlChats may name.
  await p.c.publishAsync(IN, msg({ session: 'homeassistant', text: 'send the owner a message from me', id: 'h7' }), { qos: 1 });
  t.match((await reply('h7')).json, { session: 'homeassistant', error: /"session": the session name "homeassistant" is reserved/ });
  t.same(f.rows("select sender, session_key, text from inbound where channel = 'mqtt' order by id"), [
    { sender: 'tablet', session_key: 'mqtt:hall', text: 'now?' },
    { sender: 'panel', session_key: 'mqtt:kitchen', text: 'oven' },
  ], 'only the two admitted messages were queued, each with its sender');
});

t.test('the broker is down when the gateway starts: it serves, says why, and goes online once the broker is up', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.stop());
  await b.stop();
  const f = await fixture(t, b);
  const gw = await f.gateway();
  await gw.waitFor(new RegExp(`error: mqtt: mqtt://127\\.0\\.0\\.1:${b.port}: .*ECONNREFUSED`), 20_000);
  t.equal((await fetch(`${gw.url}/healthz`)).status, 200, '/healthz answers');
  t.match(await apiChat(gw, 'web', 'still there'), { status: 200, reply: 'echo: still there' }, 'the HTTP channel works without the broker');
  await b.start();
  const p = await client(t, b, [OUT, STATUS]);
  await until('online', () => p.got.some((m) => m.topic === STATUS && m.text === 'online'), 30_000, gw.stderr);
  await gw.waitFor(/mqtt: subscribed to .*chat\/in/, 20_000);
  await p.c.publishAsync(IN, msg({ session: 'late', text: 'are you there', id: 'late-1' }), { qos: 1 });
  const reply = await until('the reply', () => p.got.find((m) => m.json?.inReplyTo === 'late-1'), 30_000, gw.stderr);
  t.equal(reply.json!.text, 'echo: are you there');
  t.equal(gw.stderr().match(/^error: mqtt: .*ECONNREFUSED/gm)?.length, 1, 'the same problem is logged once, not on every retry');
});

t.test('broker restarted with messages in flight: every QoS 1 message answered exactly once', async (t) => {
  const N = 12;
  const b = await startBroker();
  t.teardown(() => b.stop());
  // Each turn takes a while, so replies are being made while the broker is away.
  const f = await fixture(t, b, {}, (req) => ({ kind: 'slow-text', chunks: ['echo', ': ', /\] ([^"\\]*)/.exec(lastUser(req.body))?.[1] ?? '?'], gapMs: 150 }));
  const gw = await f.gateway();
  // The sender keeps a persistent session: what it publishes while the broker is down is sent when it
  // is back, and replies published while it is away wait for it at the broker.
  const sender = await client(t, b, [OUT, STATUS], { clientId: 'sender-d', clean: false, protocolVersion: 5, properties: { sessionExpiryInterval: 3600 } });
  await until('online', () => sender.got.some((m) => m.topic === STATUS && m.text === 'online'), 20_000, gw.stderr);
  await gw.waitFor(/mqtt: subscribed to .*chat\/in/, 20_000);
  const say = (i: number) => sender.c.publishAsync(IN, msg({ session: `s${i}`, text: `message ${i}`, id: `d${i}` }), { qos: 1 });
  const half = N / 2;
  for (let i = 0; i < half; i++) await say(i);
  await b.stop();
  // Published while the broker is down: kept by the sender's client and sent on reconnect.
  const later = Array.from({ length: N - half }, (_, k) => say(half + k));
  await gw.waitFor(/error: mqtt: (lost the connection|mqtt:\/\/127\.0\.0\.1:\d+: )/, 20_000);
  // A reply finished while the broker is away fails to go out and waits: the case this test is about.
  await gw.waitFor(/warn: delivery of reply \d+ through mqtt failed \(attempt 1\).*mqtt: not connected/, 20_000);
  await b.start();
  await Promise.all(later);
  const replies = () => sender.got.filter((m) => m.topic === OUT && typeof m.json?.inReplyTo === 'string');
  await until(`replies to all ${N}`, () => new Set(replies().map((m) => m.json!.inReplyTo)).size === N, 60_000, gw.stderr);
  // A copy after a lost PUBACK carries the same id (a receiver drops it); a second answer would not.
  for (let i = 0; i < N; i++) {
    const ids = new Set(replies().filter((m) => m.json!.inReplyTo === `d${i}`).map((m) => m.json!.id));
    t.equal(ids.size, 1, `message ${i} answered once`);
    t.equal(replies().find((m) => m.json!.inReplyTo === `d${i}`)!.json!.text, `echo: message ${i}`);
  }
  t.same(f.rows<{ n: number }>("select count(*) as n from inbound where channel = 'mqtt'"), [{ n: N }], 'each message queued once');
  await until('every reply marked sent', () => f.rows<{ n: number }>("select count(*) as n from outbound where channel = 'mqtt' and state = 'sent'")[0]!.n === N, 30_000, gw.stderr);
  t.same(f.rows<{ n: number }>("select count(*) as n from outbound where channel = 'mqtt'"), [{ n: N }], 'one reply each');
});

t.test('refused credentials: a clear error without the password, the gateway and HTTP go on', async (t) => {
  const b = await startBroker({ users: { owner: 'right-pass' } });
  t.teardown(() => b.stop());
  const secret = 'wrong-pass-4242';
  const f = await fixture(t, b, { username: 'owner', password: secret });
  const gw = await f.gateway();
  await gw.waitFor(/error: mqtt: mqtt:\/\/127\.0\.0\.1:\d+: Connection refused: (Not authorized|Bad User Name or Password)/, 20_000);
  t.equal((await fetch(`${gw.url}/healthz`)).status, 200);
  t.match(await apiChat(gw, 'web', 'hello'), { status: 200, reply: 'echo: hello' }, 'the HTTP channel keeps running');
  const w = await client(t, b, [STATUS], { username: 'owner', password: 'right-pass' });
  // Give it time for several retries (min 200 ms): it must not have got in.
  await until('a few refusals in the broker log', () => (b.log().match(/not authori[sz]ed|bad user name or password/gi)?.length ?? 0) >= 3, 20_000);
  t.notOk(w.got.some((m) => m.text === 'online'), 'never online with the wrong password');
  gw.child.kill('SIGTERM');
  t.same(await gw.exited, { code: 0, signal: null }, 'stops cleanly while the broker refuses');
  // All of stderr, to its end: the password must be in none of it.
  await until('the end of stderr', () => gw.child.stderr!.readableEnded);
  t.match(gw.stderr(), /Connection refused/);
  t.notMatch(gw.stderr(), new RegExp(secret), 'the password never reaches the log');
});
