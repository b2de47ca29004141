// The MQTT benchmark (bench/mqtt.mjs bundles and runs this), against a real mosquitto on loopback:
//  (a) a remote tool call between two nodes (remote_tool through the caller's registry → signed
//      request → the callee's fleet server, registry, policy and SQLite audit → signed answer) against
//      a bare request/response between two plain `mqtt` clients with payloads of the same sizes, at
//      the same QoS 1, in the same run; target ≤ 2×;
//  (b) messages per second through the MQTT chat channel of a real gateway process (chat/in → turn →
//      chat/out) with a provider that answers at once, against POST /api/chat turns per second of
//      the same gateway with the same number of sessions in flight.
// Printed, never asserted. `--provider` runs the stand-in provider instead (its own process, so its
// work is not counted as the gateway's).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import mqtt, { type MqttClient } from 'mqtt';
import { openMqttLink, type MqttLink, type MqttSettings } from '../../src/mqtt/connection.js';
import { defaults } from '../../src/config/schema.js';
import { remoteTool, startFleetServer } from '../../src/fleet/remote.js';
import { openDatabase } from '../../src/store/db.js';
import { createPolicy } from '../../src/tools/policy.js';
import { createRegistry, type AuditSink } from '../../src/tools/registry.js';
import { dbAudit } from '../../src/setup/registry.js';
import type { Tool, ToolContext } from '../../src/tools/types.js';
import { startAnthropicServer, textReply } from '../../test/support/anthropic-server.js';
import { freePort, MOSQUITTO } from '../../test/support/mosquitto.js';

interface Broker {
  url: string;
  stop(): void;
}

// Nagle's algorithm against delayed ACKs: a QoS 1 exchange makes two small writes in a row on one
// socket (a PUBACK, then the next PUBLISH), and the second waits for the peer's delayed ACK, about
// 44 ms on Linux, on the broker's side and again on the client's: a round trip measured 88 ms with
// Debian's defaults, 44 ms with TCP_NODELAY on one side and 0.55 ms with it on both. Both candidates
// run with it on both sides (the broker's set_tcp_nodelay, and every client socket of this process),
// or the fixed delay would hide what each path costs. The gateway of the chat part runs as built.
const createConnection = net.createConnection;
(net as { createConnection: typeof net.createConnection }).createConnection = ((...a: Parameters<typeof net.createConnection>) => createConnection(...a).setNoDelay(true)) as typeof net.createConnection;

async function startNoDelayBroker(dir: string, children: ChildProcess[]): Promise<Broker> {
  if (!MOSQUITTO) throw new Error('mosquitto is not installed (npm run setup installs it)');
  const port = await freePort();
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(conf, [`listener ${port} 127.0.0.1`, 'allow_anonymous true', 'persistence false', 'set_tcp_nodelay true', 'max_queued_messages 100000', 'log_type error'].join('\n') + '\n');
  const child = spawn(MOSQUITTO, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let log = '';
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const end = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`mosquitto exited ${child.exitCode}: ${log}`);
    const up = await new Promise<boolean>((res) => {
      const c = createConnection(port, '127.0.0.1');
      c.once('connect', () => (c.destroy(), res(true)));
      c.once('error', () => res(false));
    });
    if (up) break;
    if (Date.now() > end) throw new Error(`mosquitto did not listen on ${port}: ${log}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url: `mqtt://127.0.0.1:${port}`, stop: () => void child.kill('SIGTERM') };
}

if (process.argv[2] === '--provider') {
  const srv = await startAnthropicServer(() => textReply('pong', 40));
  process.stdout.write(`${srv.url}\n`);
  process.on('SIGTERM', () => void srv.close().then(() => process.exit(0)));
} else {
  await main();
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      calls: { type: 'string', default: '500' },
      rounds: { type: 'string', default: '3' },
      output: { type: 'string', default: '256' },
      duration: { type: 'string', default: '3' },
      sessions: { type: 'string', default: '8' },
      bundle: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const calls = positive(values.calls, '--calls');
  const rounds = positive(values.rounds, '--rounds');
  const outputBytes = positive(values.output, '--output');
  const durationMs = positive(values.duration, '--duration') * 1000;
  const sessions = positive(values.sessions, '--sessions');
  const note = (m: string) => process.stderr.write(`${m}\n`);
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  process.on('exit', () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const temp = (p: string) => {
    const d = mkdtempSync(join(tmpdir(), p));
    dirs.push(d);
    return d;
  };

  const broker = await startNoDelayBroker(temp('pinclaw-bench-mosquitto-'), children);
  note(`mosquitto (set_tcp_nodelay true) on ${broker.url}`);
  const rtt = await roundTrips(broker, { calls, rounds, outputBytes, temp, note });
  const chat = values.bundle ? await chatRate(broker, { bundle: values.bundle, durationMs, sessions, rounds, temp, note, children }) : undefined;
  broker.stop();

  const result = { date: new Date().toISOString(), node: process.version, roundTrip: rtt, chat };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } else {
    const ms = (x: number) => x.toFixed(3);
    console.log(`remote tool call round trip (${calls} sequential calls x ${rounds} rounds, QoS 1, request ${rtt.requestBytes} B, answer ${rtt.responseBytes} B):`);
    console.log(`  bare mqtt request/response  median ${ms(rtt.bare.p50)} ms  p95 ${ms(rtt.bare.p95)} ms  ${Math.round(rtt.bare.perSecond)} calls/s`);
    console.log(`  remote_tool (both sides)    median ${ms(rtt.fleet.p50)} ms  p95 ${ms(rtt.fleet.p95)} ms  ${Math.round(rtt.fleet.perSecond)} calls/s`);
    // The target holds on a busy machine too (issue 29): run it beside a load to see that case.
    console.log(`  ratio (median) ${rtt.ratio.toFixed(2)}x — target <= 2x, on a busy machine too: ${rtt.ratio <= 2 ? 'meets target' : 'MISSES target'}`);
    console.log(`  for comparison, without audit rows: median ${ms(rtt.unaudited.p50)} ms, ${rtt.unauditedRatio.toFixed(2)}x (a read's audit rows, one on each side, are written after the answer, in batches when calls come back to back)`);
    const c = rtt.cpuPerCallUs;
    console.log(`  CPU of this process per call (both ends): bare ${Math.round(c.bare)} µs, remote_tool ${Math.round(c.fleet)} µs, without audit rows ${Math.round(c.unaudited)} µs`);
    if (chat) {
      console.log(`chat through a gateway (${sessions} sessions in flight, ${durationMs / 1000} s x ${rounds} rounds, median of rounds):`);
      console.log(`  MQTT chat/in -> chat/out  ${Math.round(chat.mqtt.perSecond)} messages/s  p50 ${ms(chat.mqtt.p50)} ms  p95 ${ms(chat.mqtt.p95)} ms  (${chat.mqtt.errors} errors)`);
      console.log(`  POST /api/chat            ${Math.round(chat.http.perSecond)} turns/s  p50 ${ms(chat.http.p50)} ms  p95 ${ms(chat.http.p95)} ms  (${chat.http.errors} errors)`);
      console.log(`  ratio MQTT/HTTP ${(chat.mqtt.perSecond / chat.http.perSecond).toFixed(2)}x`);
    } else {
      console.log('chat: skipped (no --bundle)');
    }
  }
  process.exit(0);
}

function positive(text: string | undefined, flag: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) {
    process.stderr.write(`bench:mqtt: ${flag} wants a positive number, got '${text}'\n`);
    process.exit(1);
  }
  return n;
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

interface Figures {
  p50: number;
  p95: number;
  perSecond: number;
}

function figures(latencies: number[], wallMs: number): Figures {
  const s = [...latencies].sort((a, b) => a - b);
  return { p50: pct(s, 50), p95: pct(s, 95), perSecond: (latencies.length / wallMs) * 1000 };
}

async function until(what: string, ok: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

// --- (a) round trips ------------------------------------------------------------------------------

async function roundTrips(broker: Broker, o: { calls: number; rounds: number; outputBytes: number; temp: (p: string) => string; note: (m: string) => void }) {
  const d = defaults();
  const settings = (nodeId: string): MqttSettings => ({ ...d.mqtt, url: broker.url, nodeId, fleet: { ...d.mqtt.fleet, key: 'bench-fleet-key', expose: ['reading'], timeoutMs: 10_000 } });
  // The callee's tool answers at once with a fixed text: the figure is the fleet's path, not a tool.
  const text = 'x'.repeat(o.outputBytes);
  // A read, as sensor_read is (readOnly: one audit row when the call ends).
  const reading: Tool = { name: 'reading', readOnly: true, description: 'a sensor reading', inputSchema: { type: 'object', properties: { sensor: { type: 'string' } } }, execute: async () => ({ content: text }) };
  const policy = createPolicy({ ...d.tools, allow: ['reading'] });
  const calleeDb = openDatabase(join(o.temp('pinclaw-bench-mqtt-'), 'pinclaw.db'));
  const callerDb = openDatabase(join(o.temp('pinclaw-bench-mqtt-'), 'pinclaw.db'));
  // The audit rows can be switched off for a third, informative candidate: what the audit costs
  // the round trip (one row on each side for a read, written just after the answer).
  let auditing = true;
  const sink = (db: ReturnType<typeof openDatabase>): AuditSink => {
    const real = dbAudit(db);
    return { record: (e) => (auditing ? real.record(e) : -1), finish: (id, f) => (id >= 0 ? real.finish(id, f) : undefined), recordSoon: (e) => (auditing ? real.recordSoon!(e) : undefined) };
  };
  const calleeReg = createRegistry([reading], { policy, audit: sink(calleeDb) });
  let callerLink: MqttLink | undefined;
  const remote = remoteTool({ link: () => callerLink!, nodeId: 'caller', settings: settings('caller'), log: quiet });
  const callerReg = createRegistry([remote.tool], { policy: createPolicy(d.tools), audit: sink(callerDb) });
  const calleeLink = openMqttLink({ settings: settings('callee'), log: quiet });
  const stopServer = startFleetServer({ link: calleeLink, db: calleeDb, settings: settings('callee'), runTool: (c, ctx) => calleeReg.run(c, ctx), readOnly: (tool) => calleeReg.get(tool)?.readOnly === true, log: quiet });
  callerLink = openMqttLink({ settings: settings('caller'), log: quiet });
  const stopRemote = remote.start();
  await until('both nodes connected', () => calleeLink.connected() && callerLink!.connected());

  // The sizes of one call's messages, for the bare pair.
  const spy = await mqtt.connectAsync(broker.url, { clientId: 'bench-spy' });
  const sizes = { req: 0, res: 0 };
  spy.on('message', (t, p) => (t.endsWith('/fleet/req') ? (sizes.req = p.length) : (sizes.res = p.length)));
  await spy.subscribeAsync('pinclaw/+/fleet/#', { qos: 1 });
  const ctx: ToolContext = { sessionKey: 'bench', channel: 'cli', chatId: 'local', caller: 'owner' };
  const callOnce = async () => {
    const r = await callerReg.call({ name: 'remote_tool', input: { node: 'callee', tool: 'reading', input: { sensor: 'temperature' } } }, ctx);
    if (r.outcome !== 'ok' || r.result.content !== text) throw new Error(`the remote call failed: ${r.result.content.slice(0, 300)}`);
  };
  await callOnce();
  await until('the sizes seen', () => sizes.req > 0 && sizes.res > 0);
  await spy.endAsync();

  // The bare pair: same broker, same QoS, same protocol, payloads of the same sizes; the answer
  // carries the request's first 16 bytes as its correlation id.
  const bareOpts = { protocolVersion: 5 as const };
  const responder: MqttClient = await mqtt.connectAsync(broker.url, { ...bareOpts, clientId: 'bench-bare-responder' });
  const requester: MqttClient = await mqtt.connectAsync(broker.url, { ...bareOpts, clientId: 'bench-bare-requester' });
  const resBody = Buffer.alloc(sizes.res, 0x61);
  responder.on('message', (_t, p) => {
    const out = Buffer.from(resBody);
    p.copy(out, 0, 0, 16);
    responder.publish('bare/res', out, { qos: 1 });
  });
  await responder.subscribeAsync('bare/req', { qos: 1 });
  let waiting: { id: string; resolve: () => void } | undefined;
  requester.on('message', (_t, p) => {
    if (waiting && p.subarray(0, 16).toString('latin1') === waiting.id) waiting.resolve();
  });
  await requester.subscribeAsync('bare/res', { qos: 1 });
  const reqBody = Buffer.alloc(sizes.req, 0x62);
  const bareOnce = () =>
    new Promise<void>((resolve, reject) => {
      const id = randomBytes(8).toString('hex');
      const timer = setTimeout(() => reject(new Error('the bare answer did not come within 10 s')), 10_000);
      waiting = { id, resolve: () => (clearTimeout(timer), resolve()) };
      const body = Buffer.from(reqBody);
      body.write(id, 0, 'latin1');
      requester.publish('bare/req', body, { qos: 1 });
    });
  // Warm-up: the fleet path is much more JavaScript than the bare one, and a gateway that runs for
  // days has long since optimised it; 50 calls left it half-compiled (2.3x at 500 calls a round
  // against 1.7x at 3000).
  for (let i = 0; i < 1000; i++) {
    await bareOnce();
    await callOnce();
  }

  type Candidate = 'fleet' | 'bare' | 'unaudited';
  const lat: Record<Candidate, number[]> = { fleet: [], bare: [], unaudited: [] };
  const wall: Record<Candidate, number> = { fleet: 0, bare: 0, unaudited: 0 };
  // CPU of this process (both ends of each candidate; the broker is another process): steadier on a
  // busy machine than the latencies, which include waiting for a core.
  const cpu: Record<Candidate, number> = { fleet: 0, bare: 0, unaudited: 0 };
  const measure = async (which: Candidate) => {
    const once = which === 'bare' ? bareOnce : callOnce;
    auditing = which !== 'unaudited';
    const start = performance.now();
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < o.calls; i++) {
      const t0 = performance.now();
      await once();
      lat[which].push(performance.now() - t0);
    }
    wall[which] += performance.now() - start;
    const used = process.cpuUsage(cpu0);
    cpu[which] += (used.user + used.system) / 1000;
    auditing = true;
  };
  for (let r = 0; r < o.rounds; r++) {
    // The first candidate changes each round, so a slow stretch does not land on one only.
    const order: Candidate[] = (['bare', 'fleet', 'unaudited'] as Candidate[]).map((_, i, a) => a[(i + r) % a.length]!);
    for (const w of order) await measure(w);
    o.note(`round trips: round ${r + 1}/${o.rounds} done`);
  }
  await requester.endAsync();
  await responder.endAsync();
  stopRemote();
  stopServer();
  await callerLink.close();
  await calleeLink.close();
  calleeDb.close();
  callerDb.close();
  const fleet = figures(lat.fleet, wall.fleet);
  const bare = figures(lat.bare, wall.bare);
  const unaudited = figures(lat.unaudited, wall.unaudited);
  const n = o.calls * o.rounds;
  const cpuPerCall = { fleet: (cpu.fleet / n) * 1000, bare: (cpu.bare / n) * 1000, unaudited: (cpu.unaudited / n) * 1000 };
  return { requestBytes: sizes.req, responseBytes: sizes.res, calls: n, fleet, bare, unaudited, ratio: fleet.p50 / bare.p50, unauditedRatio: unaudited.p50 / bare.p50, cpuPerCallUs: cpuPerCall };
}

// --- (b) chat -------------------------------------------------------------------------------------

interface ChatFigures extends Figures {
  errors: number;
}

async function chatRate(broker: Broker, o: { bundle: string; durationMs: number; sessions: number; rounds: number; temp: (p: string) => string; note: (m: string) => void; children: ChildProcess[] }) {
  const provider = spawn(process.execPath, [process.argv[1]!, '--provider'], { stdio: ['ignore', 'pipe', 'inherit'] });
  o.children.push(provider);
  const providerUrl = await new Promise<string>((res, rej) => {
    provider.stdout!.once('data', (d: Buffer) => res(d.toString().trim()));
    provider.once('exit', (c) => rej(new Error(`the provider exited ${c}`)));
  });
  const home = o.temp('pinclaw-bench-mqtt-gw-');
  const token = randomBytes(16).toString('hex');
  // The chat is off by default and admits named senders only: the bench is one, with its own token.
  const chatToken = randomBytes(16).toString('hex');
  writeFileSync(join(home, 'config.json'), JSON.stringify({
    mqtt: { url: broker.url, nodeId: 'bench-gw', homeAssistant: { enabled: false }, chat: { enabled: true, allowFrom: [{ name: 'bench', token: chatToken }] } },
    // Every load client is 127.0.0.1: the per-client limit would measure the limiter.
    gateway: { rateLimit: { perSecond: 1_000_000, burst: 1_000_000 } },
  }));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PINCLAW_') && !k.startsWith('ANTHROPIC_') && !k.startsWith('OPENAI_') && k !== 'NOTIFY_SOCKET'));
  const gw = spawn(process.execPath, [o.bundle, 'gateway', '--port', '0'], { env: { ...env, PINCLAW_HOME: home, PINCLAW_GATEWAY_TOKEN: token, ANTHROPIC_API_KEY: 'sk-bench', ANTHROPIC_BASE_URL: providerUrl }, stdio: ['ignore', 'ignore', 'pipe'] });
  o.children.push(gw);
  let err = '';
  gw.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-8000)));
  await until('the gateway listening and connected to the broker', () => /gateway listening on/.test(err) && /mqtt: connected/.test(err), 60_000).catch((e: unknown) => {
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n${err}`);
  });
  const url = /gateway listening on (http:\/\/\S+)/.exec(err)![1]!;

  const client = await mqtt.connectAsync(broker.url, { protocolVersion: 5, clientId: 'bench-chat' });
  const waiting = new Map<string, (ok: boolean) => void>();
  client.on('message', (_t, p) => {
    try {
      const m = JSON.parse(p.toString()) as { inReplyTo?: string; error?: string };
      if (typeof m.inReplyTo === 'string') waiting.get(m.inReplyTo)?.(m.error === undefined);
    } catch {
      // not for us
    }
  });
  await client.subscribeAsync('pinclaw/bench-gw/chat/out', { qos: 1 });
  let seq = 0;
  const mqttTurn = (session: string) =>
    new Promise<boolean>((resolve) => {
      const id = `m${++seq}`;
      const timer = setTimeout(() => (waiting.delete(id), resolve(false)), 30_000);
      waiting.set(id, (ok) => (clearTimeout(timer), waiting.delete(id), resolve(ok)));
      client.publish('pinclaw/bench-gw/chat/in', JSON.stringify({ from: 'bench', token: chatToken, session, text: 'ping', id }), { qos: 1 });
    });
  const httpTurn = async (session: string) => {
    const r = await fetch(`${url}/api/chat`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ session, text: 'ping' }) });
    const body = (await r.json()) as { reply?: string };
    return r.ok && body.reply === 'pong';
  };

  /** `o.sessions` loops, each sending its next message when the last one's answer is in. */
  const load = async (turn: (s: string) => Promise<boolean>, prefix: string, ms: number): Promise<ChatFigures> => {
    const lat: number[] = [];
    let errors = 0;
    const start = performance.now();
    const end = start + ms;
    await Promise.all(Array.from({ length: o.sessions }, async (_, k) => {
      // A new session name per loop and round: history does not grow across rounds.
      const session = `${prefix}-${k}`;
      while (performance.now() < end) {
        const t0 = performance.now();
        if (await turn(session)) lat.push(performance.now() - t0);
        else errors++;
      }
    }));
    return { ...figures(lat, performance.now() - start), errors };
  };
  await load(mqttTurn, 'warm-m', 1000);
  await load(httpTurn, 'warm-h', 1000);
  const results = { mqtt: [] as ChatFigures[], http: [] as ChatFigures[] };
  for (let r = 0; r < o.rounds; r++) {
    const order: ('mqtt' | 'http')[] = r % 2 ? ['http', 'mqtt'] : ['mqtt', 'http'];
    for (const w of order) results[w].push(await load(w === 'mqtt' ? mqttTurn : httpTurn, `${w}-${r}`, o.durationMs));
    o.note(`chat: round ${r + 1}/${o.rounds} done`);
  }
  await client.endAsync();
  gw.kill('SIGTERM');
  provider.kill('SIGTERM');
  await new Promise((r) => gw.once('exit', r));
  const median = (xs: ChatFigures[]) => [...xs].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(xs.length / 2)]!;
  return { sessions: o.sessions, mqtt: median(results.mqtt), http: median(results.http) };
}
