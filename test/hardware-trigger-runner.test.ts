// The trigger runner: hardware events in, at most a bounded handful of queued system messages out.
// Unit tests drive a fake edge watch and a scripted sensor (the GPIO and I2C layers are behind plain
// interfaces); the integration tests hand the runner the real conductor's submit on a real SQLite
// file with a scripted provider, and check the durable rows, the turns and the hardware channel.
import t, { type Test } from 'tap';
import { join } from 'node:path';
import { ensureWorkspace } from '../src/agent/workspace.js';
import type { Logger } from '../src/log.js';
import { heuristicCount } from '../src/agent/tokens.js';
import { defaults } from '../src/config/schema.js';
import { createBus } from '../src/conductor/bus.js';
import { createConductor, type ChannelAdapter } from '../src/conductor/conductor.js';
import { hardwareChannel } from '../src/hardware/triggers/hardware-channel.js';
import {
  routeSession, startTriggers, type GpioTriggerConfig, type SensorRegister, type SensorTriggerConfig, type TriggerDeps, type TriggerEdge, type WatchEdges,
} from '../src/hardware/triggers/runner.js';
import { setLogSink } from '../src/log.js';
import { openDatabase } from '../src/store/db.js';
import type { InboundRow, NewInbound, OutboundRow } from '../src/store/queue.js';
import { toolSet } from '../src/tools/types.js';
import { reply, scriptedProvider } from './support/scripted-provider.js';
import { tempDir } from './support/proc.js';

const T0 = Date.parse('2025-03-01T12:00:00.000Z');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
}

function gpioTrigger(over: Partial<GpioTriggerConfig> = {}): GpioTriggerConfig {
  return { line: 'doorbell', edge: 'both', debounceMs: 50, action: 'turn', session: 'home', message: 'the doorbell rang', rateLimit: { max: 6, perSeconds: 60 }, adc: { intervalMs: 100 }, ...over };
}

function sensorTrigger(over: Partial<SensorTriggerConfig> = {}): SensorTriggerConfig {
  return { bus: 1, address: 0x48, register: 0, length: 2, intervalMs: 1, hysteresis: 2, above: 30, action: 'turn', session: 'home', message: 'the greenhouse is too warm', ...over };
}

interface FakeWatch {
  line: string;
  onEdge: (e: TriggerEdge) => void;
  onError: (err: Error) => void;
  closed: number;
  /** an edge at `ms` in the kernel's clock */
  fire(edge: TriggerEdge['edge'], ms: number, seqno?: number): void;
}

/** A watchEdges that records what was opened; `behave` can make a line fail to open. */
function fakeGpio(behave: (line: string, w: FakeWatch) => void = () => {}) {
  const watches: FakeWatch[] = [];
  const watchEdges: WatchEdges = (line, onEdge, onError) => {
    const w: FakeWatch = {
      line, onEdge, onError, closed: 0,
      fire: (edge, ms, seqno) => onEdge({ edge, timestampNs: BigInt(Math.round(ms * 1e6)), value: edge === 'rising' ? 1 : 0, seqno }),
    };
    behave(line, w);
    watches.push(w);
    return { close: () => void w.closed++ };
  };
  return { watches, watchEdges, get: (line: string) => watches.find((w) => w.line === line)! };
}

function capture() {
  const lines: string[] = [];
  const log: Logger = {
    debug: (m) => void lines.push(`debug: ${m}`),
    info: (m) => void lines.push(`info: ${m}`),
    warn: (m) => void lines.push(`warn: ${m}`),
    error: (m) => void lines.push(`error: ${m}`),
  };
  return { lines, log, at: (level: string) => lines.filter((l) => l.startsWith(`${level}: `)) };
}

/** A runner over fakes, with a wall clock the test moves, stopped at the end of the test. */
function harness(t: Test, deps: Partial<TriggerDeps> & { gpio?: ReturnType<typeof fakeGpio> } = {}) {
  const gpio = deps.gpio ?? fakeGpio();
  const submitted: NewInbound[] = [];
  const logs = capture();
  const clock = { ms: T0 };
  const runner = startTriggers({
    triggers: [],
    sensorTriggers: [],
    watchEdges: gpio.watchEdges,
    readSensor: async () => {
      throw new Error('no sensor in this test');
    },
    submit: (m) => void submitted.push(m),
    now: () => clock.ms,
    log: logs.log,
    settleIntervalMs: 5,
    ...deps,
  });
  t.teardown(() => runner.stop());
  const notices = () => submitted.filter((m) => m.text.startsWith('Hardware notice'));
  const turns = () => submitted.filter((m) => !m.text.startsWith('Hardware notice'));
  return { gpio, runner, submitted, notices, turns, logs, clock };
}

t.test('routing: a channel:chat session answers in that chat, anything else on the hardware channel', async (t) => {
  t.same(routeSession('telegram:12345', ['telegram', 'http']), { channel: 'telegram', chatId: '12345' });
  t.same(routeSession('telegram:12345', ['http']), { channel: 'hardware', chatId: 'telegram:12345' }, 'a channel this process does not run');
  t.same(routeSession('home', ['telegram']), { channel: 'hardware', chatId: 'home' });
  t.same(routeSession('telegram:', ['telegram']), { channel: 'hardware', chatId: 'telegram:' }, 'no chat id');
  const h = harness(t, { triggers: [gpioTrigger({ session: 'ops' })], channelFor: (s) => ({ channel: 'mqtt', chatId: `room/${s}` }) });
  h.gpio.get('doorbell').fire('falling', 1);
  t.match(h.submitted, [{ sessionKey: 'ops', channel: 'mqtt', chatId: 'room/ops' }], 'channelFor wins over the default');
});

t.test('edge kind: only the configured edge starts a turn; the message says what happened', async (t) => {
  const h = harness(t, { triggers: [gpioTrigger({ edge: 'falling' })] });
  const w = h.gpio.get('doorbell');
  w.fire('rising', 0, 1);
  t.equal(h.submitted.length, 0, 'a rising edge on a falling trigger is ignored');
  w.fire('falling', 100, 2);
  w.fire('rising', 1000, 3);
  t.equal(h.submitted.length, 1);
  t.same(h.submitted[0], {
    sessionKey: 'home',
    channel: 'hardware',
    chatId: 'home',
    sender: 'hardware',
    text: 'the doorbell rang\n(hardware trigger: line doorbell, falling edge, value 0, at 2025-03-01T12:00:00.000Z)',
    meta: { trigger: { kind: 'gpio', line: 'doorbell', edge: 'falling', value: 0, timestampNs: '100000000', seqno: 2 } },
  });
  t.match(h.runner.status(), [{ kind: 'gpio', name: 'doorbell', session: 'home', state: 'watching', submitted: 1, suppressed: 0 }], 'the other kind is not counted as suppressed');
});

t.test('a bouncing contact is one message per press', async (t) => {
  const h = harness(t, { triggers: [gpioTrigger({ debounceMs: 50 })] });
  const w = h.gpio.get('doorbell');
  const press = (atMs: number) => {
    // The press, then a contact bouncing for 30 ms: an edge every 2 ms, alternating.
    w.fire('falling', atMs);
    for (let i = 1; i <= 15; i++) w.fire(i % 2 ? 'rising' : 'falling', atMs + i * 2);
  };
  press(1000);
  t.equal(h.submitted.length, 1, 'fifteen bounces, one message');
  press(5000);
  t.equal(h.submitted.length, 2, 'the next press is a new message');
  t.match(h.submitted.map((m) => (m.meta as { trigger: { timestampNs: string } }).trigger.timestampNs), ['1000000000', '5000000000'], 'each message is the first edge of its press');
  t.equal(h.notices().length, 0, 'a bouncing contact is no storm');
  t.match(h.runner.status(), [{ submitted: 2, suppressed: 30, state: 'watching' }]);
});

t.test('the rate limit caps turns per window; the first edge over it is one notice', async (t) => {
  const h = harness(t, { triggers: [gpioTrigger({ debounceMs: 0, rateLimit: { max: 3, perSeconds: 60 } })] });
  const w = h.gpio.get('doorbell');
  for (let s = 0; s < 10; s++) w.fire('falling', 1000 + s * 1000);
  t.equal(h.turns().length, 3, 'three turns within the minute');
  t.equal(h.notices().length, 1, 'the rest is one notice');
  t.match(h.notices()[0], { sessionKey: 'home', sender: 'hardware', meta: { trigger: { kind: 'gpio', line: 'doorbell', storm: true } } });
  t.match(h.notices()[0]!.text, /line doorbell is producing edges much faster than its trigger allows.*quiet for 60 s.*floating input/);
  t.match(h.runner.status(), [{ submitted: 4, suppressed: 7, state: 'storm' }]);
  // A minute after the last passed edge the window has room again: the next edge is a turn, and
  // the storm's end is logged with what it swallowed.
  w.fire('falling', 1000 + 70_000);
  t.equal(h.turns().length, 4);
  t.equal(h.logs.at('info').filter((l) => /storm is over/.test(l)).length, 1);
  t.match(h.logs.at('info')[0], /trigger on line 'doorbell': the edge storm is over after .* s; 7 edge\(s\) were ignored/);
  t.match(h.runner.status(), [{ state: 'watching' }]);
});

t.test('a floating input: 10 000 edges are a bounded few messages and exactly one storm notice', async (t) => {
  const h = harness(t, { triggers: [gpioTrigger({ debounceMs: 20, rateLimit: { max: 6, perSeconds: 60 } })] });
  const w = h.gpio.get('doorbell');
  // 10 kHz of noise for one second, kernel timestamps 100 µs apart.
  for (let i = 0; i < 10_000; i++) w.fire(i % 2 ? 'rising' : 'falling', 5000 + i * 0.1, i);
  t.equal(h.turns().length, 1, 'the first edge is a turn; the noise after it never is');
  t.equal(h.notices().length, 1, 'one notice for the storm');
  t.equal(h.logs.at('warn').length, 1, 'the storm start is logged once');
  t.match(h.logs.at('warn')[0], /trigger on line 'doorbell': edges come faster than .* ignoring them until the line is quiet/);
  t.match(h.runner.status(), [{ state: 'storm', submitted: 2, suppressed: 9999 }]);

  // Not quiet for a window yet: the settle timer says nothing.
  h.clock.ms += 30_000;
  await sleep(30);
  t.equal(h.logs.at('info').length, 0, 'half a window of quiet does not end the storm');
  // The line has been quiet for the whole window: the settle timer reports the end, once.
  h.clock.ms += 31_000;
  await until('the storm end', () => h.logs.at('info').length > 0);
  await sleep(30);
  t.equal(h.logs.at('info').length, 1, 'the end is logged once');
  t.match(h.logs.at('info')[0], /the edge storm is over after \d+\.\d s; 9999 edge\(s\) were ignored/);
  t.match(h.runner.status(), [{ state: 'watching' }]);

  // The line floats again within the hour: logged again, but the owner already knows.
  for (let i = 0; i < 1000; i++) w.fire(i % 2 ? 'rising' : 'falling', 200_000 + i * 0.1);
  t.equal(h.logs.at('warn').length, 2);
  t.equal(h.notices().length, 1, 'no second notice within the cool-down');
  t.equal(h.submitted.length, 3, 'the first edge after the quiet period was one more turn, nothing else');
});

t.test('a watch that fails to open does not stop the other triggers', async (t) => {
  const gpio = fakeGpio((line, w) => {
    if (line === 'broken') throw new Error('line GPIO5 is busy (EBUSY)');
    if (line === 'reports') w.onError(new Error('edge detection not supported by this chip'));
  });
  const h = harness(t, {
    gpio,
    triggers: [gpioTrigger({ line: 'broken' }), gpioTrigger({ line: 'reports' }), gpioTrigger({ line: 'doorbell' }), gpioTrigger({ line: undefined })],
  });
  t.same(gpio.watches.map((w) => w.line), ['reports', 'doorbell'], 'every configured line was tried; the throwing one returned nothing');
  t.equal(gpio.get('reports').closed, 1, 'a watch that reported an error while opening is released at once');
  gpio.get('doorbell').fire('falling', 10);
  t.equal(h.submitted.length, 1, 'the working trigger runs');
  t.same(h.logs.at('error'), [
    "error: trigger on line 'broken' could not start: line GPIO5 is busy (EBUSY)",
    "error: trigger on line 'reports' could not start: edge detection not supported by this chip",
    "error: trigger on line '?' not started: line is required",
  ]);
  t.match(h.runner.status(), [
    { name: 'broken', state: 'failed', lastError: 'line GPIO5 is busy (EBUSY)', submitted: 0 },
    { name: 'reports', state: 'failed', lastError: 'edge detection not supported by this chip' },
    { name: 'doorbell', state: 'watching', submitted: 1 },
    { name: '', state: 'failed', lastError: 'line is required' },
  ]);
  // A working watch that later reports errors: logged once, not per report, and healed by the next edge.
  const d = gpio.get('doorbell');
  for (let i = 0; i < 5; i++) d.onError(new Error('read from the line fd failed: EIO'));
  t.equal(h.logs.at('error').filter((l) => /'doorbell' failed: read from the line fd failed: EIO/.test(l)).length, 1);
  t.match(h.runner.status()[2], { state: 'failed', lastError: /EIO/ });
  d.fire('falling', 5000);
  t.match(h.runner.status()[2], { state: 'watching', submitted: 2 });
});

t.test('a submit that throws is logged; the watch keeps going', async (t) => {
  let calls = 0;
  const h = harness(t, {
    triggers: [gpioTrigger()],
    submit: () => {
      if (++calls === 1) throw new Error('message refused: too long');
    },
  });
  const w = h.gpio.get('doorbell');
  t.doesNotThrow(() => w.fire('falling', 10), 'nothing is thrown into the GPIO callback');
  w.fire('falling', 5000);
  t.equal(calls, 2);
  t.match(h.logs.at('error'), [/trigger on line 'doorbell': the message could not be queued: message refused: too long/]);
  t.match(h.runner.status(), [{ submitted: 1 }], 'only the queued message counts');
});

/** Records the intervals made and cleared while the test runs (the runner's storm-settle timer). */
function spyIntervals(t: Test) {
  const made: NodeJS.Timeout[] = [];
  const cleared = new Set<unknown>();
  const { setInterval: realSet, clearInterval: realClear } = globalThis;
  globalThis.setInterval = ((...args: Parameters<typeof realSet>) => {
    const timer = realSet(...args);
    made.push(timer);
    return timer;
  }) as typeof realSet;
  globalThis.clearInterval = ((timer: Parameters<typeof realClear>[0]) => {
    cleared.add(timer);
    realClear(timer);
  }) as typeof realClear;
  t.teardown(() => {
    globalThis.setInterval = realSet;
    globalThis.clearInterval = realClear;
  });
  return { made, cleared };
}

t.test('stop() closes every watch and timer, once', async (t) => {
  const resourcesBefore = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const intervals = spyIntervals(t);
  let reads = 0;
  const h = harness(t, {
    triggers: [gpioTrigger({ line: 'a', debounceMs: 20 }), gpioTrigger({ line: 'b' })],
    sensorTriggers: [sensorTrigger({ above: 1_000_000 })],
    readSensor: async () => {
      reads++;
      return 5;
    },
  });
  await until('a few sensor reads', () => reads >= 3);
  t.equal(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length, resourcesBefore, "the runner's timers never keep the process alive");
  // A storm in progress when stopped: its end must not be reported by a timer left behind.
  const a = h.gpio.get('a');
  for (let i = 0; i < 100; i++) a.fire('rising', i * 0.1);
  t.equal(h.logs.at('warn').length, 1);
  t.equal(intervals.made.length, 1, 'one settle timer for all the edge triggers');
  t.notOk(intervals.made[0]!.hasRef(), 'unref\'d');
  h.runner.stop();
  h.runner.stop();
  t.ok(intervals.cleared.has(intervals.made[0]), 'the settle timer is cleared');
  t.same(h.gpio.watches.map((w) => w.closed), [1, 1], 'each watch closed exactly once');
  const readsAtStop = reads;
  const submittedAtStop = h.submitted.length;
  h.clock.ms += 10 * 60_000;
  a.fire('falling', 900_000);
  h.gpio.get('b').fire('falling', 900_000);
  await sleep(40);
  t.equal(reads, readsAtStop, 'no read after stop');
  t.equal(h.submitted.length, submittedAtStop, 'an edge delivered after stop is dropped');
  t.equal(h.logs.at('info').length, 0, 'no storm end reported after stop');
  t.match(h.runner.status(), [{ state: 'stopped' }, { state: 'stopped' }, { state: 'stopped' }]);
});

/** A sensor that answers from a list, one value per read, and tells when the list is used up. */
function scriptedSensor(values: readonly (number | Error)[], delayMs = 0) {
  const asked: SensorRegister[] = [];
  let active = 0;
  let peak = 0;
  const readSensor = async (s: SensorRegister): Promise<number> => {
    asked.push(s);
    active++;
    peak = Math.max(peak, active);
    if (delayMs) await sleep(delayMs);
    active--;
    const v = values[Math.min(asked.length, values.length) - 1]!;
    if (v instanceof Error) throw v;
    return v;
  };
  return { readSensor, asked, done: () => asked.length >= values.length, peak: () => peak };
}

t.test('sensor thresholds: hovering within the hysteresis is one message; re-armed past it', async (t) => {
  // Above 30 with hysteresis 2: it fires at 31, and only a value at or below 28 re-arms it.
  const sensor = scriptedSensor([20, 31, 29, 30.5, 29.5, 31, 28.5, 30.9, 27, 33, 33]);
  const h = harness(t, { sensorTriggers: [sensorTrigger()], readSensor: sensor.readSensor });
  await until('every scripted reading', sensor.done);
  await sleep(10);
  t.equal(h.submitted.length, 2, 'one message while hovering, one after re-arming below 28');
  t.same(h.submitted[0], {
    sessionKey: 'home',
    channel: 'hardware',
    chatId: 'home',
    sender: 'hardware',
    text: 'the greenhouse is too warm\n(hardware trigger: I2C bus 1, address 0x48, register 0x00: value 31, above the threshold 30, at 2025-03-01T12:00:00.000Z)',
    meta: { trigger: { kind: 'i2c', bus: 1, address: 0x48, register: 0, value: 31, threshold: 30, direction: 'above' } },
  });
  t.match(h.submitted[1], { meta: { trigger: { value: 33 } } });
  t.same(sensor.asked[0], { bus: 1, address: 0x48, register: 0, length: 2 }, 'the configured register is read');
  t.match(h.runner.status(), [{ kind: 'i2c', name: 'i2c-1 0x48 reg 0x00', state: 'polling', submitted: 2, lastValue: 33 }]);
});

t.test('sensor reads never overlap, however slow the bus', async (t) => {
  const sensor = scriptedSensor([1, 2, 3, 4, 5, 6], 15);
  harness(t, { sensorTriggers: [sensorTrigger({ intervalMs: 1 })], readSensor: sensor.readSensor });
  await until('six slow reads', sensor.done);
  t.equal(sensor.peak(), 1, 'one read at a time');
});

t.test('a failing sensor read is reported once, retried with backoff, and recovers', async (t) => {
  const values: (number | Error)[] = [20, ...Array.from({ length: 6 }, () => new Error('EREMOTEIO: no ACK from 0x48')), 35, new Error('EREMOTEIO: no ACK from 0x48')];
  const sensor = scriptedSensor(values);
  const readAt: number[] = [];
  const h = harness(t, {
    sensorTriggers: [sensorTrigger({ intervalMs: 4 })],
    maxBackoffMs: 40,
    readSensor: (s) => {
      readAt.push(performance.now());
      return sensor.readSensor(s);
    },
  });
  await until('the failing reads', () => sensor.asked.length >= 5);
  t.match(h.runner.status(), [{ state: 'read-failing', lastError: 'EREMOTEIO: no ACK from 0x48' }]);
  await until('every scripted reading', sensor.done, 5000);
  await sleep(10);
  const failing = h.logs.at('warn');
  t.equal(failing.length, 2, 'one warning per run of failures, not one per read');
  t.match(failing[0], /sensor trigger i2c-1 0x48 reg 0x00: the sensor cannot be read \(EREMOTEIO: no ACK from 0x48\); retrying with backoff/);
  t.match(h.logs.at('info'), [/sensor trigger i2c-1 0x48 reg 0x00: the sensor reads again after 6 failed read\(s\)/]);
  t.equal(h.notices().length, 1, 'the owner is told once; the second run of failures falls in the cool-down');
  t.match(h.notices()[0], { meta: { trigger: { kind: 'i2c', bus: 1, address: 0x48, register: 0, error: 'EREMOTEIO: no ACK from 0x48' } } });
  t.match(h.notices()[0]!.text, /cannot be read \(EREMOTEIO: no ACK from 0x48\); its threshold is not watched until a read succeeds again/);
  t.equal(h.turns().length, 1, 'the reading after the failures still crosses the threshold');
  t.match(h.turns()[0], { meta: { trigger: { value: 35 } } });
  // Reads 2..7 fail: the waits after them double from the 4 ms interval (8, 16, 32) and are then
  // capped at 40 ms; uncapped, the wait after the sixth failure would be 256 ms.
  const gaps = readAt.slice(1, 8).map((x, i) => x - readAt[i]!);
  const shown = gaps.map((g) => g.toFixed(0)).join(', ');
  t.ok(gaps[4]! >= 30, `the wait grows with the failures (gaps ${shown} ms)`);
  t.ok(gaps[6]! < 150, `and is capped by maxBackoffMs (gaps ${shown} ms)`);
});

t.test('a sensor trigger with an impossible threshold is refused alone', async (t) => {
  const sensor = scriptedSensor([50, 50]);
  const h = harness(t, {
    sensorTriggers: [sensorTrigger({ above: 10, below: 20 }), sensorTrigger({ above: 40, register: 1 })],
    readSensor: sensor.readSensor,
  });
  await until('the working trigger to fire', () => h.submitted.length === 1);
  t.match(h.logs.at('error'), [/sensor trigger i2c-1 0x48 reg 0x00 not started: below \(20\) must not be greater than above \(10\)/]);
  t.match(h.runner.status(), [{ state: 'failed', lastError: /below \(20\)/ }, { name: 'i2c-1 0x48 reg 0x01', state: 'polling', submitted: 1 }]);
});

t.test('the hardware channel logs the reply of a trigger turn and asks for no confirmation', async (t) => {
  const logs = capture();
  const ch = hardwareChannel({ log: logs.log });
  t.equal(ch.name, 'hardware');
  t.equal(ch.debounceMs, 0);
  t.equal(ch.confirm, undefined, 'a tool that needs a yes is refused in a trigger turn');
  const row: OutboundRow = { id: 1, idempotency_key: 'reply:1', inbound_id: 1, session_key: 'home', channel: 'hardware', chat_id: 'home', text: 'Someone is at the door.\nI told Anna.', kind: 'reply', state: 'pending', created_at: 0, sent_at: null, attempts: 0, next_attempt_at: 0, last_error: null, delivered_parts: null };
  const delivery = { sentParts: [], partSent: () => {} };
  await ch.send(row, delivery);
  await ch.send({ ...row, kind: 'notice', text: "I couldn't get an answer right now (overloaded)." }, delivery);
  await ch.send({ ...row, text: 'x'.repeat(5000) }, delivery);
  t.same(logs.lines.slice(0, 2), [
    'info: hardware trigger turn in session home replied: Someone is at the door. ⏎ I told Anna.',
    "warn: hardware trigger turn in session home could not be answered: I couldn't get an answer right now (overloaded).",
  ]);
  t.ok(logs.lines[2]!.length < 2200 && logs.lines[2]!.endsWith('… (5000 characters)'), 'a long reply is cut in the log');
});

/** The real conductor on a SQLite file, with the hardware channel and a chat channel 'test'. */
function conductorFixture(t: Test, answer: string) {
  const dir = tempDir();
  const db = openDatabase(join(dir, 'pinclaw.db'));
  const workspace = join(dir, 'workspace');
  ensureWorkspace(workspace);
  const config = defaults();
  const provider = scriptedProvider([], reply(answer));
  const chat: OutboundRow[] = [];
  const testChannel: ChannelAdapter = { name: 'test', debounceMs: 0, send: async (o) => void chat.push(o) };
  const conductor = createConductor({
    db, config, workspace, provider: async () => provider, tools: toolSet([]), countTokens: heuristicCount, bus: createBus(),
    channels: [hardwareChannel(), testChannel],
  });
  // The hardware channel logs through src/log.ts: its lines are captured here.
  const logLines: string[] = [];
  setLogSink((line) => void logLines.push(line));
  t.teardown(async () => {
    await conductor.stop(1000);
    db.close();
    setLogSink((line) => process.stderr.write(line + '\n'));
  });
  conductor.start();
  const rows: InboundRow[] = [];
  const submit = (m: NewInbound) => {
    const row = conductor.submit(m);
    rows.push(row);
    return row;
  };
  return { db, conductor, provider, chat, logLines, rows, submit };
}

t.test('integration: a bouncing press becomes one durable row, one turn, and a reply on the hardware channel', async (t) => {
  const f = conductorFixture(t, 'I will check the door camera.');
  const gpio = fakeGpio();
  const runner = startTriggers({ triggers: [gpioTrigger()], sensorTriggers: [], watchEdges: gpio.watchEdges, readSensor: async () => 0, submit: f.submit, knownChannels: ['test'] });
  t.teardown(() => runner.stop());
  const w = gpio.get('doorbell');
  w.fire('falling', 42_000, 7);
  for (let i = 1; i <= 12; i++) w.fire(i % 2 ? 'rising' : 'falling', 42_000 + i * 3, 7 + i);
  t.equal(f.rows.length, 1, 'one row for the press');
  const out = await f.conductor.delivered(f.rows[0]!.id);
  t.equal(out.text, 'I will check the door camera.');
  await sleep(50);

  const inbound = f.db.prepare('select session_key, channel, chat_id, sender, text, meta, state from inbound').all() as InboundRow[];
  t.equal(inbound.length, 1);
  t.match(inbound[0], { session_key: 'home', channel: 'hardware', chat_id: 'home', sender: 'hardware', state: 'done', text: /^the doorbell rang\n\(hardware trigger: line doorbell, falling edge, value 0, at \d{4}-\d\d-\d\dT[\d:.]+Z\)$/ });
  t.same(JSON.parse(inbound[0]!.meta!), { trigger: { kind: 'gpio', line: 'doorbell', edge: 'falling', value: 0, timestampNs: '42000000000', seqno: 7 } });

  t.equal(f.provider.requests.length, 1, 'the provider got exactly one turn');
  t.match(JSON.stringify(f.provider.requests[0]!.messages.at(-1)!.content), /the doorbell rang\\n\(hardware trigger: line doorbell, falling edge/);

  const outbound = f.db.prepare('select channel, chat_id, session_key, text, state from outbound').all();
  t.same(outbound, [{ channel: 'hardware', chat_id: 'home', session_key: 'home', text: 'I will check the door camera.', state: 'sent' }]);
  t.same(f.logLines.filter((l) => l.includes('hardware trigger turn')), ['info: hardware trigger turn in session home replied: I will check the door camera.'], 'the reply went through the hardware channel');
  t.equal(f.chat.length, 0, 'no chat got it');
});

t.test('integration: a floating input is two rows at most, and a chat session answers in its chat', async (t) => {
  const f = conductorFixture(t, 'Line noted.');
  const gpio = fakeGpio();
  const runner = startTriggers({
    triggers: [gpioTrigger({ session: 'test:anna', debounceMs: 20 })],
    sensorTriggers: [],
    watchEdges: gpio.watchEdges,
    readSensor: async () => 0,
    submit: f.submit,
    knownChannels: ['test'],
  });
  t.teardown(() => runner.stop());
  const w = gpio.get('doorbell');
  for (let i = 0; i < 10_000; i++) w.fire(i % 2 ? 'rising' : 'falling', i * 0.1);
  t.equal(f.rows.length, 2, 'the first edge and one storm notice');
  await Promise.all(f.rows.map((r) => f.conductor.delivered(r.id)));
  const inbound = f.db.prepare('select channel, chat_id, sender, meta from inbound order by id').all() as InboundRow[];
  t.match(inbound, [
    { channel: 'test', chat_id: 'anna', sender: 'hardware' },
    { channel: 'test', chat_id: 'anna', sender: 'hardware', meta: /"storm":true/ },
  ]);
  t.ok(f.provider.requests.length >= 1 && f.provider.requests.length <= 2, `at most two turns for 10 000 edges (${f.provider.requests.length})`);
  t.ok(f.chat.length >= 1 && f.chat.every((o) => o.chat_id === 'anna' && o.text === 'Line noted.'), 'the replies went to the chat');
  t.equal(f.logLines.filter((l) => l.includes('hardware trigger turn')).length, 0, 'nothing went through the hardware channel');
});

t.test('owner.notify: a trigger without a session runs in the owner\'s chat; a notify trigger with nowhere to send does not start', async (t) => {
  const h = harness(t, {
    triggers: [gpioTrigger({ session: undefined }), gpioTrigger({ line: 'gate', action: 'notify', session: undefined, message: undefined, text: 'gate {edge}' }), gpioTrigger({ line: 'shed', session: undefined })],
    owner: { channel: 'telegram', chatId: '42' },
    knownChannels: ['telegram'],
    notify: () => undefined,
  });
  h.gpio.get('doorbell').fire('falling', 1);
  t.match(h.submitted, [{ sessionKey: 'telegram:42', channel: 'telegram', chatId: '42', text: /^the doorbell rang\n/ }], 'the turn is answered in the owner\'s chat');
  const none = harness(t, { triggers: [gpioTrigger({ session: undefined }), gpioTrigger({ line: 'gate', action: 'notify', session: 'home', text: 'gate' }), gpioTrigger({ line: 'lid', action: 'notify', session: 'telegram:7' })] });
  t.same(none.logs.at('error'), [
    "error: trigger on line 'doorbell' not started: session is required (or set owner.notify)",
    "error: trigger on line 'gate' not started: action notify needs a chat: a CHANNEL:CHAT session such as telegram:12345, or owner.notify",
    "error: trigger on line 'lid' not started: text is required with action notify",
  ]);
  t.equal(none.gpio.watches.length, 0, 'no line was watched for them');
});

t.test('integration: action notify sends its text to the owner with no model call, also for a storm', async (t) => {
  const f = conductorFixture(t, 'never said');
  const gpio = fakeGpio();
  const runner = startTriggers({
    triggers: [gpioTrigger({ line: 'door', edge: 'rising', action: 'notify', session: undefined, message: undefined, text: 'Door {line}: {edge} to {value} at {time} {unknown}' })],
    sensorTriggers: [],
    watchEdges: gpio.watchEdges,
    readSensor: async () => 0,
    submit: f.submit,
    knownChannels: ['test'],
    owner: { channel: 'test', chatId: 'owner' },
    notify: (m) => f.conductor.send(m),
    timezone: 'UTC',
  });
  t.teardown(() => runner.stop());
  const w = gpio.get('door');
  w.fire('rising', 1000);
  w.fire('falling', 1500);
  await until('the text is delivered', () => f.chat.length === 1);
  t.match(f.chat[0], { channel: 'test', chat_id: 'owner', session_key: 'test:owner', kind: 'reply' });
  t.match(f.chat[0]!.text, /^Door door: rising to 1 at \d\d:\d\d \{unknown\}$/, 'placeholders filled, unknown braces kept');
  // A storm on a notify trigger: one notice, sent the same way.
  for (let i = 0; i < 200; i++) w.fire(i % 2 ? 'falling' : 'rising', 5000 + i * 100);
  const notice = (o: OutboundRow) => o.text.startsWith('Hardware notice: line door is producing edges');
  await until('the storm notice is delivered', () => f.chat.some(notice));
  await sleep(50);
  t.equal(f.chat.filter(notice).length, 1, 'one storm notice');
  t.equal(f.chat.filter((o) => o.text.startsWith('Door door: rising')).length, 6, 'the rate limit (6 a minute) holds for texts too');
  t.equal(f.rows.length, 0, 'nothing entered the inbound queue');
  t.equal(f.provider.requests.length, 0, 'the provider was never called');
});

t.test('integration: an I2C threshold with action notify sends its text to the owner with no model call', async (t) => {
  const f = conductorFixture(t, 'never said');
  const values = [20, 35, 36];
  const runner = startTriggers({
    triggers: [],
    sensorTriggers: [sensorTrigger({ action: 'notify', session: undefined, message: undefined, text: 'Greenhouse {direction} {threshold}: {value} at {time} {other}' })],
    watchEdges: fakeGpio().watchEdges,
    readSensor: async () => values.shift() ?? 36,
    submit: f.submit,
    knownChannels: ['test'],
    owner: { channel: 'test', chatId: 'owner' },
    notify: (m) => f.conductor.send(m),
    timezone: 'UTC',
  });
  t.teardown(() => runner.stop());
  await until('the text is delivered', () => f.chat.length === 1);
  await sleep(50);
  t.match(f.chat[0], { channel: 'test', chat_id: 'owner', session_key: 'test:owner' });
  t.match(f.chat[0]!.text, /^Greenhouse above 30: 35 at \d\d:\d\d \{other\}$/, 'placeholders filled, unknown braces kept');
  t.equal(f.chat.length, 1, 'one crossing, one text (36 is still above)');
  t.equal(f.rows.length, 0, 'nothing entered the inbound queue');
  t.equal(f.provider.requests.length, 0, 'the provider was never called');
  const bad = harness(t, { sensorTriggers: [sensorTrigger({ action: 'notify', session: 'home', message: undefined, text: 'hot' }), sensorTrigger({ action: 'notify', session: 'telegram:7', message: undefined })], knownChannels: ['telegram'] });
  t.same(bad.logs.at('error'), [
    'error: sensor trigger i2c-1 0x48 reg 0x00 not started: action notify needs a chat: a CHANNEL:CHAT session such as telegram:12345, or owner.notify',
    'error: sensor trigger i2c-1 0x48 reg 0x00 not started: text is required with action notify',
  ]);
});
