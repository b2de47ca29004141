// A fleet of boards as one agent, against a real mosquitto: remote_tool on one node calls a tool
// exposed by another through the real MQTT links, the real registry, policy and SQLite audit table
// on both sides. Then two real gateway processes on one broker: the agent on one board reads the time
// and switches an MCU pin on the other.
import t, { type Test } from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { openMqttLink, type MqttLink, type MqttSettings } from '../src/mqtt/connection.js';
import { defaults } from '../src/config/schema.js';
import { sign, signRequest, verify, type FleetRequest, type FleetResponse } from '../src/fleet/fleet-sign.js';
import { REFUSALS_IN_DETAIL } from '../src/fleet/refusals.js';
import { remoteTool, startFleetServer } from '../src/fleet/remote.js';
import { counterSeries } from '../src/counters.js';
import { metricsText } from '../src/ops/metrics.js';
import { flushAuditSoon, queryAudit, type AuditRow } from '../src/store/audit.js';
import { openDatabase, type Db } from '../src/store/db.js';
import { rememberedFleetCalls } from '../src/store/fleet-seen.js';
import { flushWritesSoon } from '../src/store/write-soon.js';
import { createPolicy, type ToolsSettings } from '../src/tools/policy.js';
import { createRegistry, type Registry } from '../src/tools/registry.js';
import { dbAudit } from '../src/setup/registry.js';
import { currentTimeTool } from '../src/tools/time.js';
import type { Tool, ToolContext } from '../src/tools/types.js';
import { startAnthropicServer, textReply, toolUseReply, type AnthropicStep } from './support/anthropic-server.js';
import { fakeMcuOverTcp } from './support/fake-mcu.js';
import { startBroker, type Broker } from './support/mosquitto.js';
import { bundle, cleanEnv, runPinclawAsync, start, tempDir, type Started } from './support/proc.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const owner: ToolContext = { sessionKey: 'cli:local', channel: 'cli', chatId: 'local', caller: 'owner' };

type Fleet = MqttSettings['fleet'];

function settings(url: string, nodeId: string, fleet: Partial<Fleet> = {}): MqttSettings {
  const d = defaults().mqtt;
  return { ...d, url, nodeId, reconnect: { minMs: 100, maxMs: 400 }, fleet: { ...d.fleet, ...fleet } };
}

async function until<T>(what: string, get: () => T | undefined | false, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Records the calls it gets; `physical` like gpio_write (needs a control chat outside the CLI). */
function relayTool(): Tool & { calls: { input: unknown; ctx: ToolContext }[] } {
  const calls: { input: unknown; ctx: ToolContext }[] = [];
  return {
    calls,
    name: 'relay',
    description: 'switches the relay',
    inputSchema: { type: 'object', properties: { on: { type: 'boolean' } }, required: ['on'], additionalProperties: false },
    physical: true,
    async execute(input, ctx) {
      calls.push({ input, ctx });
      return { content: `relay ${(input as { on: boolean }).on ? 'on' : 'off'}`, physical: { device: 'relay', before: 0, after: 1 } };
    },
  };
}

interface Node {
  id: string;
  link: MqttLink;
  db: Db;
  registry: Registry;
  relay: ReturnType<typeof relayTool>;
  nodes(): ReadonlyMap<string, string>;
  audit(): AuditRow[];
  /** remote_tool through this node's registry, as the model would call it */
  call(node: string, tool: string, input?: unknown, ctx?: Partial<ToolContext>): ReturnType<Registry['call']>;
  close(): Promise<void>;
}

/** One board: its link, its SQLite audit, a registry with remote_tool, and its fleet server. */
async function node(t: Test, b: Broker, id: string, fleet: Partial<Fleet>, tools: Partial<ToolsSettings> = {}): Promise<Node> {
  const s = settings(b.url, id, fleet);
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  let link: MqttLink | undefined;
  const remote = remoteTool({ link: () => link ?? (() => { throw new Error('mqtt is not started yet'); })(), nodeId: id, settings: s, log: quiet });
  const relay = relayTool();
  const policy = createPolicy({ ...defaults().tools, allow: ['relay'], ...tools });
  const registry = createRegistry([currentTimeTool(), relay, remote.tool], { policy, audit: dbAudit(db) });
  link = openMqttLink({ settings: s, log: quiet });
  const stops = [remote.start(), startFleetServer({ link, db, settings: s, runTool: (c, ctx) => registry.run(c, ctx), readOnly: (tool) => registry.get(tool)?.readOnly === true, log: quiet })];
  await until(`${id} connected`, () => link!.connected());
  let closed = false;
  const n: Node = {
    id, link, db, registry, relay,
    nodes: () => remote.nodes(),
    // read-only calls (remote_tool, current_time) write their row just after: written now
    audit: () => (flushAuditSoon(db), queryAudit(db)),
    call: (to, tool, input = {}, ctx = {}) => registry.call({ name: 'remote_tool', input: { node: to, tool, input } }, { ...owner, ...ctx }),
    async close() {
      if (closed) return;
      closed = true;
      for (const stop of stops) stop();
      await link!.close();
      db.close();
    },
  };
  t.teardown(() => n.close());
  return n;
}

async function broker(t: Test): Promise<Broker> {
  const b = await startBroker();
  t.teardown(() => b.stop());
  return b;
}

/** A plain client that sees everything under pinclaw/ and can publish anything there (the broker is not trusted). */
async function spy(t: Test, b: Broker) {
  const c: MqttClient = await mqtt.connectAsync(b.url, { clientId: `spy-${Math.random().toString(16).slice(2)}` });
  t.teardown(() => c.endAsync());
  const got: { topic: string; text: string }[] = [];
  c.on('message', (topic, p) => got.push({ topic, text: p.toString() }));
  await c.subscribeAsync('pinclaw/+/fleet/#', { qos: 1 });
  return {
    client: c,
    got,
    requests: () => got.filter((m) => m.topic.endsWith('/fleet/req')).map((m) => JSON.parse(m.text) as FleetRequest),
    responses: () => got.filter((m) => m.topic.endsWith('/fleet/res')).map((m) => JSON.parse(m.text) as FleetResponse),
  };
}

// The signature is HMAC-SHA256 of the text in base64url, whatever form the key is held in: what a
// board of another pinclaw version, or a script, computes with any HMAC.
t.test('the signature is the plain HMAC-SHA256 of the text under each key', async (t) => {
  const { createHmac } = await import('node:crypto');
  for (const key of ['k', 'fleet-secret', 'k\u00e9y with spaces']) {
    for (const text of ['', 'a call', '{"v":1}']) t.equal(sign(key, text), createHmac('sha256', key).update(text).digest('base64url'), `${key} / ${text}`);
  }
  t.ok(verify('k', 'a call', sign('k', 'a call')));
  t.notOk(verify('other', 'a call', sign('k', 'a call')), 'another key does not verify');
});

t.test('a call: the exposed tool runs on the callee under its policy; audited on both sides; the answer is signed', async (t) => {
  const b = await broker(t);
  const watch = await spy(t, b);
  const shed = await node(t, b, 'shed', { key: 'fleet-secret', expose: ['current_time'] });
  const house = await node(t, b, 'house', { key: 'fleet-secret' });
  const r = await house.call('shed', 'current_time', { timezone: 'UTC' });
  t.equal(r.outcome, 'ok', r.result.content);
  t.match(r.result.content, /\(UTC\)\nISO 8601 UTC: \d{4}-/);
  t.notOk(r.result.isError);
  t.match(house.audit(), [{ tool: 'remote_tool', channel: 'cli', outcome: 'ok', input: '{"node":"shed","tool":"current_time","input":{"timezone":"UTC"}}' }], "the caller's registry audits remote_tool");
  t.match(shed.audit(), [{ tool: 'current_time', channel: 'fleet', chat_id: 'house', caller: 'house', session_key: 'fleet:house', outcome: 'ok', input: '{"timezone":"UTC"}' }], "the callee's registry audits the tool it ran");
  const [req] = watch.requests();
  t.match(req, { v: 1, from: 'house', to: 'shed', tool: 'current_time', input: { timezone: 'UTC' }, sig: /^[A-Za-z0-9_-]{43}$/ });
  t.ok(req!.exp > req!.at, 'the call carries when the caller stops waiting');
  await until('the answer seen', () => watch.responses().length === 1);
  t.match(watch.responses()[0], { id: req!.id, from: 'shed', to: 'house', ok: true, isError: false, sig: /^[A-Za-z0-9_-]{43}$/ });
  t.equal(watch.got.find((m) => m.topic.endsWith('/fleet/res'))!.topic, 'pinclaw/house/fleet/res');
});

t.test('a tool the callee does not expose is refused there, audited, and the caller is told why', async (t) => {
  const b = await broker(t);
  const shed = await node(t, b, 'shed', { key: 'k', expose: ['current_time'] });
  const house = await node(t, b, 'house', { key: 'k' });
  const r = await house.call('shed', 'relay', { on: true });
  t.same(r.result, { content: 'node shed refused relay: relay is not exposed to the fleet by shed (mqtt.fleet.expose: current_time)', isError: true });
  t.equal(shed.relay.calls.length, 0, 'the relay never ran');
  t.match(shed.audit(), [{ tool: 'remote:relay', channel: 'fleet', chat_id: 'house', caller: 'house', outcome: 'denied', rule: 'mqtt.fleet.expose', input: '{"on":true}' }]);
  t.match(house.audit(), [{ tool: 'remote_tool', outcome: 'error', detail: /not exposed/ }]);
  const hop = await house.call('shed', 'remote_tool', { node: 'x', tool: 'y' });
  t.match(hop.result, { isError: true, content: /do not hop from board to board/ });
});

t.test('a caller with the wrong shared key: refused and audited on the callee; the caller shows only the reason code', async (t) => {
  const b = await broker(t);
  const shed = await node(t, b, 'shed', { key: 'right', expose: ['current_time'] });
  const house = await node(t, b, 'house', { key: 'wrong' });
  const r = await house.call('shed', 'current_time');
  t.equal(r.result.content, "node shed refused current_time (bad-signature): the call's signature does not verify with the key it holds for this node (mqtt.fleet.key here and there, or its mqtt.fleet.callers entry, differ)");
  t.match(shed.audit(), [{ tool: 'remote:current_time', outcome: 'denied', rule: 'mqtt.fleet.key', detail: /signature of node house's call does not verify/ }]);
});

t.test('per-node keys: a listed caller with its own key is answered; an unlisted one is refused', async (t) => {
  const b = await broker(t);
  const shed = await node(t, b, 'shed', { key: 'shed-own', expose: ['current_time'], callers: [{ node: 'house', key: 'house-key' }] });
  const house = await node(t, b, 'house', { key: 'house-key' });
  const garage = await node(t, b, 'garage', { key: 'shed-own' });
  const ok = await house.call('shed', 'current_time');
  t.equal(ok.outcome, 'ok', ok.result.content);
  const no = await garage.call('shed', 'current_time');
  t.equal(no.result.content, 'node shed refused current_time (unknown-caller): this node is not in its mqtt.fleet.callers', "shed's own key is no pass: only listed callers");
  t.match(shed.audit(), [
    { tool: 'current_time', chat_id: 'house', outcome: 'ok' },
    { tool: 'remote:current_time', chat_id: 'garage', outcome: 'denied', rule: 'mqtt.fleet.callers' },
  ]);
});

// A read's replay record is written after its answer (off the round trip, with its audit row): the
// replay is refused meanwhile from memory, and the record is in fleet_seen once written; a call
// that may change something has its record before it runs.
t.test('a read\'s replay record comes just after the answer, a write\'s before it runs; replays of both refused', async (t) => {
  const b = await broker(t);
  const watch = await spy(t, b);
  const shed = await node(t, b, 'shed', { key: 'k', expose: ['relay', 'current_time'] }, { controlChats: ['fleet:house'] });
  const house = await node(t, b, 'house', { key: 'k' });
  let recordedBeforeRun: boolean | undefined;
  const realRun = shed.relay.execute.bind(shed.relay);
  shed.relay.execute = async (input, ctx) => {
    recordedBeforeRun = rememberedFleetCalls(shed.db) === 1;
    return realRun(input, ctx);
  };
  t.equal((await house.call('shed', 'relay', { on: true })).result.content, 'relay on');
  t.equal(recordedBeforeRun, true, 'the relay call was recorded before the relay switched');
  t.match((await house.call('shed', 'current_time', { timezone: 'UTC' })).result.content, /UTC/);
  const [relayReq, readReq] = watch.requests();
  // The replay of the read, published at once: refused whether or not its record is written yet.
  await watch.client.publishAsync('pinclaw/shed/fleet/req', JSON.stringify(readReq), { qos: 1 });
  await watch.client.publishAsync('pinclaw/shed/fleet/req', JSON.stringify(relayReq), { qos: 1 });
  const replays = await until('both replays refused', () => {
    const r = watch.responses().filter((x) => x.code === 'replay');
    return r.length === 2 ? r : undefined;
  });
  t.same(replays.map((x) => x.id).sort(), [readReq!.id, relayReq!.id].sort());
  flushWritesSoon(shed.db);
  t.equal(rememberedFleetCalls(shed.db), 2, 'both calls are in fleet_seen, the read\'s written after its answer');
  t.equal(shed.relay.calls.length, 1, 'the relay switched once');
});

t.test('a replayed call is refused; a stale, a future-dated and an expired one too', async (t) => {
  const b = await broker(t);
  const watch = await spy(t, b);
  const shed = await node(t, b, 'shed', { key: 'k', expose: ['relay'] }, { controlChats: ['fleet:house'] });
  const house = await node(t, b, 'house', { key: 'k' });
  const r = await house.call('shed', 'relay', { on: true });
  t.equal(r.result.content, 'relay on', 'allowed: fleet:house is a control chat on shed');
  t.equal(shed.relay.calls.length, 1);
  // Someone on the broker publishes the very same signed call again.
  const [req] = watch.requests();
  await watch.client.publishAsync('pinclaw/shed/fleet/req', JSON.stringify(req), { qos: 1 });
  const replay = await until('the replay refused', () => watch.responses().find((x) => x.code === 'replay'));
  t.match(replay, { id: req!.id, ok: false, to: 'house', content: /already received; a replay is not run/ });
  t.equal(shed.relay.calls.length, 1, 'the relay was not switched again');

  // Correctly signed with the shared key, but dated outside the window.
  const now = Date.now();
  const forged = (id: string, at: number, exp: number) => signRequest('k', { v: 1, id, from: 'house', to: 'shed', tool: 'relay', input: { on: false }, at, exp });
  await watch.client.publishAsync('pinclaw/shed/fleet/req', JSON.stringify(forged('old-call-0001', now - 180_000, now - 170_000)), { qos: 1 });
  await watch.client.publishAsync('pinclaw/shed/fleet/req', JSON.stringify(forged('future-call-01', now + 600_000, now + 610_000)), { qos: 1 });
  await watch.client.publishAsync('pinclaw/shed/fleet/req', JSON.stringify(forged('late-call-0001', now - 30_000, now - 20_000)), { qos: 1 });
  const codes = await until('three refusals', () => {
    const c = new Map(watch.responses().map((x) => [x.id, x.code]));
    return c.size >= 4 ? c : undefined;
  });
  t.equal(codes.get('old-call-0001'), 'stale');
  t.equal(codes.get('future-call-01'), 'clock');
  t.equal(codes.get('late-call-0001'), 'expired', 'the caller had stopped waiting: a queued call does not switch a relay late');
  t.equal(shed.relay.calls.length, 1, 'none of them ran');
  t.same(shed.audit().filter((a) => a.outcome === 'denied').map((a) => a.rule), ['mqtt.fleet replay', 'mqtt.fleet window', 'mqtt.fleet clock', 'mqtt.fleet window']);
  // A call that is not JSON: refused and recorded, nothing crashes, the next call is answered.
  await watch.client.publishAsync('pinclaw/shed/fleet/req', 'switch it on!', { qos: 1 });
  await until('the garbage recorded', () => shed.audit().some((a) => a.tool === 'remote:?'));
  t.match(shed.audit().at(-1), { tool: 'remote:?', outcome: 'denied', rule: 'mqtt.fleet request', detail: 'the call is malformed: the payload is not JSON' });
  const again = await house.call('shed', 'relay', { on: false });
  t.equal(again.result.content, 'relay off');
});

t.test('a late turn cannot act physically on another board: the callee holds the signed receipt time to tools.physicalMaxAgeSeconds', async (t) => {
  const b = await broker(t);
  const watch = await spy(t, b);
  const shed = await node(t, b, 'shed', { key: 'k', expose: ['relay', 'current_time'] }, { controlChats: ['fleet:house'], physicalMaxAgeSeconds: 120 });
  const house = await node(t, b, 'house', { key: 'k' });
  // The turn answers a message received 10 minutes ago (the gateway was down, the model slow...).
  const late = await house.call('shed', 'relay', { on: true }, { receivedAt: Date.now() - 600_000 });
  t.match(late.result, { isError: true, content: /^node shed: relay refused: the message asking for it is \d+ s old, more than tools\.physicalMaxAgeSeconds \(120 s\) allows for a physical action without a fresh confirmation, and channel fleet has no way to ask/ });
  t.equal(shed.relay.calls.length, 0, 'the relay was not switched');
  t.match(shed.audit().at(-1), { tool: 'relay', channel: 'fleet', chat_id: 'house', outcome: 'denied', rule: /tools\.physicalMaxAgeSeconds/ });
  // What is not physical still runs for a late turn; a fresh one switches the relay.
  const time = await house.call('shed', 'current_time', {}, { receivedAt: Date.now() - 600_000 });
  t.notOk(time.result.isError, 'a read-only tool is not held to the age');
  const fresh = await house.call('shed', 'relay', { on: true }, { receivedAt: Date.now() - 1_000 });
  t.equal(fresh.result.content, 'relay on');
  t.equal(shed.relay.calls.length, 1);
  // The receipt time is signed: a call whose rcv is changed on the broker does not verify.
  const sent = watch.requests().find((r) => r.tool === 'relay' && r.rcv !== undefined);
  t.ok(sent, 'the call carries rcv');
  await watch.client.publishAsync('pinclaw/shed/fleet/req', JSON.stringify({ ...sent, id: 'tampered-0001', rcv: Date.now() }), { qos: 1 });
  const tampered = await until('the tampered call refused', () => watch.responses().find((x) => x.id === 'tampered-0001'));
  t.equal(tampered.code, 'bad-signature');
  // A call signed without rcv (a caller that predates it) still verifies, and counts from its own time.
  const now = Date.now();
  await watch.client.publishAsync('pinclaw/shed/fleet/req', JSON.stringify(signRequest('k', { v: 1, id: 'old-caller-0001', from: 'house', to: 'shed', tool: 'relay', input: { on: false }, at: now, exp: now + 10_000 })), { qos: 1 });
  const old = await until('the old-style call answered', () => watch.responses().find((x) => x.id === 'old-caller-0001'));
  t.match(old, { ok: true, content: 'relay off', isError: false });
  t.equal(shed.relay.calls.length, 2);
});

t.test("the callee's policy decides: a denied tool and a physical tool outside its control chats are refused there", async (t) => {
  const b = await broker(t);
  const shed = await node(t, b, 'shed', { key: 'k', expose: ['current_time', 'relay'] }, { overrides: [{ channel: 'fleet', deny: ['current_time'], allow: [] }] });
  const house = await node(t, b, 'house', { key: 'k' });
  const denied = await house.call('shed', 'current_time');
  t.same(denied.result, { content: 'node shed: current_time refused: channel fleet override denies current_time (tools.overrides[0].deny)', isError: true });
  const physical = await house.call('shed', 'relay', { on: true });
  t.match(physical.result, { isError: true, content: /^node shed: relay refused: it needs the owner's confirmation \(physical action outside the owner's chats \(tools\.controlChats\)\) and channel fleet has no way to ask/ });
  t.equal(shed.relay.calls.length, 0);
  t.match(shed.audit(), [
    { tool: 'current_time', channel: 'fleet', chat_id: 'house', outcome: 'denied', rule: 'tools.overrides[0].deny' },
    { tool: 'relay', channel: 'fleet', chat_id: 'house', outcome: 'denied', rule: /tools\.controlChats/ },
  ]);
});

t.test('no answer: an offline node and one that never existed time out with what is known of them; an abort ends the wait', async (t) => {
  const b = await broker(t);
  const watch = await spy(t, b);
  const shed = await node(t, b, 'shed', { key: 'k', expose: ['current_time'] });
  await shed.close(); // retained status: offline
  const house = await node(t, b, 'house', { key: 'k', timeoutMs: 300 });
  await until('shed seen offline', () => house.nodes().get('shed') === 'offline');
  const off = await house.call('shed', 'current_time');
  t.same(off.result, { content: 'node shed did not answer within 0.3 s; its status is offline', isError: true });
  const ghost = await house.call('ghost', 'current_time');
  t.match(ghost.result, { isError: true, content: /^node ghost did not answer within 0\.3 s; no node ghost has published a status on this broker \(known: .*shed \(offline\)/ });
  t.match(house.audit(), [{ tool: 'remote_tool', outcome: 'error' }, { tool: 'remote_tool', outcome: 'error' }]);

  // Through the registry (which ends a call with the turn's abort reason) and the tool itself.
  const patient = await node(t, b, 'patient', { key: 'k', timeoutMs: 60_000 });
  const sent = (n: number) => until(`call ${n} sent`, () => watch.requests().filter((r) => r.from === 'patient').length === n);
  const ac = new AbortController();
  const call = patient.call('shed', 'current_time', {}, { signal: ac.signal });
  await sent(1);
  ac.abort(new Error('the owner stopped the turn'));
  t.match((await call).result, { isError: true, content: /the owner stopped the turn/ });
  const ac2 = new AbortController();
  const direct = patient.registry.get('remote_tool')!.execute({ node: 'shed', tool: 'current_time' }, { ...owner, signal: ac2.signal });
  await sent(2);
  ac2.abort(new Error('the owner stopped the turn'));
  t.same(await direct, { content: 'remote_tool: the call of current_time on node shed was abandoned: the owner stopped the turn', isError: true });
});

t.test('without a key: the caller cannot sign, the callee answers no calls; before MQTT runs, a clear error', async (t) => {
  const b = await broker(t);
  const shed = await node(t, b, 'shed', { expose: ['current_time'] });
  const house = await node(t, b, 'house', { key: 'k' });
  const keyless = await node(t, b, 'keyless', {});
  const r = await house.call('shed', 'current_time');
  t.equal(r.result.content, 'node shed refused current_time (no-key): it has no mqtt.fleet.key and answers no calls');
  t.match(shed.audit(), [{ tool: 'remote:current_time', outcome: 'denied', rule: 'mqtt.fleet.key' }]);
  const k = await keyless.call('house', 'current_time');
  t.match(k.result, { isError: true, content: /^remote_tool: this node has no mqtt\.fleet\.key, so it cannot sign calls/ });
  const early = remoteTool({ link: () => { throw new Error('mqtt is not started yet'); }, nodeId: 'x', settings: settings(b.url, 'x', { key: 'k' }), log: quiet });
  const e = await early.tool.execute({ node: 'shed', tool: 'current_time' }, owner);
  t.same(e, { content: 'remote_tool: MQTT is not running here (mqtt is not started yet); remote calls need the gateway with mqtt.url set', isError: true });
  const bad = await house.call('shed/#', 'current_time');
  t.match(bad.result, { isError: true, content: /is not a node id/ });
});

interface AuditView {
  tool: string;
  channel: string;
  chat: string;
  caller: string | null;
  input: string;
  outcome: string;
  rule: string | null;
  detail: string | null;
  physical: unknown;
}

async function auditOf(home: string): Promise<AuditView[]> {
  const r = await runPinclawAsync(['audit', '--json', '--home', home], { env: cleanEnv() });
  if (r.code !== 0) throw new Error(`pinclaw audit exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as AuditView[];
}

t.test('two gateway processes as a fleet: the agent on house reads the time on shed and switches a pin of its MCU', async (t) => {
  const b = await broker(t);
  const { board, url: mcuUrl } = await fakeMcuOverTcp(t);
  const llm = await startAnthropicServer(textReply('unused'));
  t.teardown(() => llm.close());
  const gateway = (config: object, extra: Record<string, string> = {}): Started & { home: string } => {
    const home = tempDir();
    writeFileSync(join(home, 'config.json'), JSON.stringify(config));
    const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: llm.url, ...extra }) });
    t.teardown(async () => {
      if (gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill('SIGKILL');
      await gw.exited;
    });
    return { ...gw, home };
  };
  const shed = gateway({
    mqtt: { url: b.url, nodeId: 'shed', fleet: { key: 'fleet-secret', expose: ['current_time', 'mcu_call'] } },
    // Physical tools (mcu_call) run for a remote caller only when its fleet chat is one of the owner's.
    tools: { controlChats: ['cli:local', 'fleet:house'] },
    hardware: { devices: [{ name: 'bench', port: mcuUrl, board: 'arduino-uno' }] },
  });
  const house = gateway({ mqtt: { url: b.url, nodeId: 'house', fleet: { key: 'fleet-secret', timeoutMs: 5_000 } } }, { PINCLAW_GATEWAY_TOKEN: 'house-token' });
  // Subscribed, not just connected: a request published before shed's subscription is taken is lost.
  await shed.waitFor(/mqtt: subscribed to .*shed\/fleet\/req/);
  const m = await house.waitFor(/gateway listening on (http:\/\/\S+)/);
  await house.waitFor(/mqtt: subscribed to .*house\/fleet\/res/);
  await shed.waitFor(/gateway listening/);

  llm.enqueue(
    toolUseReply([
      { name: 'remote_tool', input: { node: 'shed', tool: 'current_time', input: { timezone: 'UTC' } } },
      { name: 'remote_tool', input: { node: 'shed', tool: 'mcu_call', input: { device: 'bench', command: 'gpio_write', args: { pin: 'D13', value: 1 } } } },
      { name: 'remote_tool', input: { node: 'shed', tool: 'exec', input: { command: 'reboot' } } },
    ]),
    textReply('The shed light is on.'),
  );
  const res = await fetch(`${m[1]}/api/chat`, { method: 'POST', headers: { authorization: 'Bearer house-token', 'content-type': 'application/json' }, body: JSON.stringify({ session: 'fleet', text: 'what time is it in the shed? then switch its light on' }) });
  t.same(await res.json(), { reply: 'The shed light is on.', kind: 'reply' });
  t.equal(board().pins.get(13), 1, "the pin of shed's MCU is high");
  // What the model was given back: the three results, in order.
  const results = (llm.requests[1]!.body as { messages: { role: string; content: unknown }[] }).messages.at(-1)!.content as { type: string; content: unknown; is_error?: boolean }[];
  const texts = results.filter((c) => c.type === 'tool_result').map((c) => JSON.stringify(c.content));
  t.equal(texts.length, 3);
  t.match(texts[0], /\(UTC\)\\nISO 8601 UTC: \d{4}-/);
  t.match(texts[1], /bench D13 \(pin 13\): 0 -> 1/);
  t.match(texts[2], /node shed refused exec: exec is not exposed to the fleet by shed \(mqtt\.fleet\.expose: current_time, mcu_call\)/);

  const onHouse = await auditOf(house.home);
  t.match(onHouse.filter((a) => a.tool === 'remote_tool'), [
    { channel: 'http', outcome: 'ok', input: /"tool":"current_time"/ },
    { channel: 'http', outcome: 'ok', input: /"tool":"mcu_call"/ },
    { channel: 'http', outcome: 'error', input: /"tool":"exec"/ },
  ], 'house audits each remote call');
  const onShed = await auditOf(shed.home);
  t.match(onShed, [
    { tool: 'current_time', channel: 'fleet', chat: 'house', caller: 'house', outcome: 'ok' },
    { tool: 'mcu_call', channel: 'fleet', chat: 'house', caller: 'house', outcome: 'ok', rule: /tools\.profile standard/, physical: { device: /bench/ } },
    { tool: 'remote:exec', channel: 'fleet', chat: 'house', outcome: 'denied', rule: 'mqtt.fleet.expose' },
  ], 'shed audits what it ran and what it refused');

  shed.child.kill('SIGTERM');
  t.equal((await shed.exited).code, 0, 'shed stopped cleanly');
  llm.enqueue(toolUseReply([{ name: 'remote_tool', input: { node: 'shed', tool: 'current_time', input: {} } }]), (req) => textReply(`told: ${JSON.stringify(req.body.messages.at(-1).content)}`));
  const later = await fetch(`${m[1]}/api/chat`, { method: 'POST', headers: { authorization: 'Bearer house-token', 'content-type': 'application/json' }, body: JSON.stringify({ session: 'fleet', text: 'and now?' }) });
  t.match(((await later.json()) as { reply: string }).reply, /node shed did not answer within 5 s; its status is offline/, 'a call to the stopped board times out, naming its status');
  house.child.kill('SIGTERM');
  t.equal((await house.exited).code, 0);
});

t.test('a captured call replayed after the callee gateway restarted is still a replay: the seen ids are in SQLite', async (t) => {
  const b = await broker(t);
  const watch = await spy(t, b);
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({
    mqtt: { url: b.url, nodeId: 'shed', homeAssistant: { enabled: false }, fleet: { key: 'fleet-secret', expose: ['current_time'] } },
  }));
  const env = cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' });
  const shed = async () => {
    const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env });
    t.teardown(async () => {
      if (gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill('SIGKILL');
      await gw.exited;
    });
    await gw.waitFor(/mqtt: subscribed to .*shed\/fleet\/req/, 20_000);
    return gw;
  };
  let gw = await shed();
  // A genuine call of node house, as it travels through the broker; the spy keeps its bytes.
  const at = Date.now();
  const call = signRequest('fleet-secret', { v: 1, id: 'captured-call-0001', from: 'house', to: 'shed', tool: 'current_time', input: { timezone: 'UTC' }, at, exp: at + 60_000 });
  await watch.client.publishAsync('pinclaw/shed/fleet/req', JSON.stringify(call), { qos: 1 });
  const captured = await until('the call on the wire', () => watch.got.find((m) => m.topic === 'pinclaw/shed/fleet/req'));
  const first = await until('the answer', () => watch.responses().find((x) => x.id === call.id), 20_000);
  t.match(first, { ok: true, isError: false, content: /ISO 8601 UTC/ }, 'the call ran once');
  // The callee restarts (an update, a power cut): what it remembered in memory would be gone.
  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0, gw.stderr());
  gw = await shed();
  await watch.client.publishAsync('pinclaw/shed/fleet/req', captured.text, { qos: 1 });
  const replay = await until('the replay refused', () => watch.responses().find((x) => x.id === call.id && x.code === 'replay'), 20_000);
  t.match(replay, { ok: false, content: /call id captured-call-0001 of node house was already received; a replay is not run/ });
  // The id signed again with another time (only a key holder could): the row's key is (at, caller,
  // id), and the id alone still makes it a replay.
  const again = signRequest('fleet-secret', { v: 1, id: call.id, from: 'house', to: 'shed', tool: 'current_time', input: { timezone: 'UTC' }, at: at + 1, exp: at + 60_001 });
  await watch.client.publishAsync('pinclaw/shed/fleet/req', JSON.stringify(again), { qos: 1 });
  await until('the id reused at another time refused', () => watch.responses().filter((x) => x.id === call.id && x.code === 'replay').length === 2, 20_000);
  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0, gw.stderr());
  const rows = await auditOf(home);
  t.same(rows.filter((a) => a.tool === 'current_time').map((a) => a.outcome), ['ok'], 'current_time ran once');
  t.match(rows.filter((a) => a.outcome === 'denied'), [{ tool: 'remote:current_time', channel: 'fleet', rule: 'mqtt.fleet replay' }, { tool: 'remote:current_time', channel: 'fleet', rule: 'mqtt.fleet replay' }]);
});

// A read's audit row and replay record are written after its answer, and reads back to back in
// batches held a moment (store/write-soon.ts): a gateway stopped right after them must write all of
// what it holds on its way out.
t.test('a stream of remote reads stopped by SIGTERM: every answered call has its audit row and its replay record', async (t) => {
  const b = await broker(t);
  const watch = await spy(t, b);
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({
    mqtt: { url: b.url, nodeId: 'shed', homeAssistant: { enabled: false }, fleet: { key: 'fleet-secret', expose: ['current_time'] } },
  }));
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' }) });
  t.teardown(async () => {
    if (gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill('SIGKILL');
    await gw.exited;
  });
  await gw.waitFor(/mqtt: subscribed to .*shed\/fleet\/req/, 20_000);
  // Calls one after the other as fast as the broker takes them, still coming when the SIGTERM does.
  let running = true;
  const pump = (async () => {
    for (let i = 0; running; i++) {
      const at = Date.now();
      const id = `stream-call-${String(i).padStart(6, '0')}`;
      await watch.client.publishAsync('pinclaw/shed/fleet/req', JSON.stringify(signRequest('fleet-secret', { v: 1, id, from: 'house', to: 'shed', tool: 'current_time', input: { timezone: 'UTC' }, at, exp: at + 60_000 })), { qos: 1 });
    }
  })();
  const answered = () => new Set(watch.responses().filter((x) => x.ok).map((x) => x.id));
  await until('a stream of answers', () => answered().size >= 300, 30_000);
  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0, gw.stderr());
  running = false;
  await pump;
  const db = openDatabase(join(home, 'pinclaw.db'));
  t.teardown(() => db.close());
  const rows = queryAudit(db, { tool: 'current_time' });
  const seen = new Set((db.prepare('select call_id from fleet_seen').all() as { call_id: string }[]).map((r) => r.call_id));
  const ids = [...answered()];
  t.ok(ids.length >= 300, `${ids.length} calls answered`);
  t.ok(rows.length >= ids.length, `an audit row for each answered call (${rows.length} rows, ${ids.length} answers)`);
  t.same(ids.filter((id) => !seen.has(id)), [], 'every answered call id is in fleet_seen: a replay after the restart is refused');
  t.ok(rows.every((r) => r.channel === 'fleet' && r.caller === 'house' && r.outcome === 'ok'), 'the rows are the fleet\'s calls');
});

t.test('a flood of refused calls from strangers: counted in /metrics, a few audit rows, one summary; a real call still runs', async (t) => {
  const b = await broker(t);
  const watch = await spy(t, b);
  const shed = await node(t, b, 'shed', { key: 'k', expose: ['current_time'] });
  const house = await node(t, b, 'house', { key: 'k' });
  const refused = () => counterSeries('fleet_refused').reduce((n, s) => n + s.value, 0);
  const before = refused();
  const N = 500;
  const at = Date.now();
  // Whoever may publish on the broker: calls signed with a guessed key, and garbage.
  for (let i = 0; i < N; i++) {
    const bogus = i % 2 ? signRequest('guessed', { v: 1, id: `bogus-call-${i}`, from: 'house', to: 'shed', tool: 'current_time', input: {}, at, exp: at + 10_000 }) : 'x'.repeat(200);
    void watch.client.publishAsync('pinclaw/shed/fleet/req', typeof bogus === 'string' ? bogus : JSON.stringify(bogus), { qos: 0 });
  }
  await until(`all ${N} counted`, () => refused() - before === N, 30_000);
  const denied = () => shed.audit().filter((a) => a.outcome === 'denied');
  t.equal(denied().length, REFUSALS_IN_DETAIL, 'only the first ones of the interval have their own audit row');
  const text = metricsText(shed.db, Date.now());
  t.match(text, /^pinclaw_fleet_refused_total\{code="bad-signature"\} \d+$/m);
  t.match(text, /^pinclaw_fleet_refused_total\{code="malformed"\} \d+$/m);
  // The owner's own board is not shut out by the flood.
  const r = await house.call('shed', 'current_time', {});
  t.equal(r.outcome, 'ok', r.result.content);
  const unsignedAnswers = watch.responses().filter((x) => !x.ok && x.sig === undefined).length;
  t.ok(unsignedAnswers <= REFUSALS_IN_DETAIL, `at most ${REFUSALS_IN_DETAIL} unsigned answers, not ${N} (${unsignedAnswers})`);
  // At the end of the interval (here: the stop) the rest is summed up in one row.
  const rowsBefore = shed.audit().length;
  await shed.close();
  const db = openDatabase(shed.db.name);
  t.teardown(() => db.close());
  const reopened = queryAudit(db);
  const summary = reopened.filter((a) => a.rule === 'mqtt.fleet refusals');
  t.equal(summary.length, 1, 'one summary row');
  t.match(summary[0], { tool: 'remote:*', channel: 'fleet', outcome: 'denied', detail: new RegExp(`^${N - REFUSALS_IN_DETAIL} more refused calls within \\d+ s were not recorded one by one`) });
  t.match(summary[0]!.detail, /bad-signature \d+/);
  t.match(summary[0]!.detail, /malformed \d+/);
  t.match(summary[0]!.detail, /callers: .*house \d+/);
  t.match(summary[0]!.detail, /\(unreadable\) \d+/);
  t.equal(JSON.parse(summary[0]!.input).refused, N - REFUSALS_IN_DETAIL);
  t.ok(reopened.length <= rowsBefore + 1);
});
