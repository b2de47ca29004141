// Hardware triggers at run time: GPIO edges and polled I2C readings that start agent turns. Every
// event is judged here, without the model (EdgeFilter, ThresholdWatch), and only what passes is
// submitted to the durable queue as one system message, so a bouncing contact or a floating input
// never costs more than a bounded handful of provider calls.
//
// The runner knows nothing about GPIO character devices or I2C ioctls: it gets plain functions
// (watchEdges, readSensor, submit), which keeps it testable without hardware and keeps the
// dependency direction (hardware/ never imports the conductor; the caller hands its submit in).
import { count } from '../../counters.js';
import type { PinclawConfig } from '../../config/schema.js';
import { errorMessage } from '../../errors.js';
import { clockTime } from '../../local-time.js';
import { log as defaultLog, type Logger } from '../../log.js';
import type { NewInbound } from '../../store/queue.js';
import { EdgeFilter, type Edge } from './edge-filter.js';
import { ThresholdWatch, type Crossing } from './threshold.js';
import { fillPlaceholders } from '../../placeholders.js';

export type GpioTriggerConfig = PinclawConfig['hardware']['triggers'][number];
export type SensorTriggerConfig = PinclawConfig['hardware']['sensorTriggers'][number];

/** One edge as the GPIO layer reports it; `value` is the level after the edge (after activeLow). */
export interface TriggerEdge {
  edge: Edge;
  /** the kernel's timestamp of the edge */
  timestampNs: bigint;
  value: 0 | 1;
  /** the kernel's per-line sequence number, when the backend has one */
  seqno?: number;
}

export interface EdgeWatchHandle {
  close(): void;
}

/** Opens an edge watch on a hardware.lines name; may throw when the line cannot be watched. */
export type WatchEdges = (lineName: string, onEdge: (e: TriggerEdge) => void, onError: (err: Error) => void) => EdgeWatchHandle;

export interface SensorRegister {
  bus: number;
  address: number;
  register: number;
  /** bytes read, as one unsigned big-endian number */
  length: number;
}


export interface TriggerDeps {
  triggers: readonly GpioTriggerConfig[];
  sensorTriggers: readonly SensorTriggerConfig[];
  watchEdges: WatchEdges;
  /** One I2C register read as an unsigned big-endian number. */
  readSensor(s: SensorRegister): Promise<number>;
  /** The conductor's submit; its result is not used (a returned promise's rejection is logged). */
  submit(msg: NewInbound): unknown;
  /** wall clock, ms since the epoch (the message's time, storm ends, notice cool-down); default Date.now */
  now?: () => number;
  log?: Logger;
  /** Where a session's trigger turns are answered; default: routeSession with knownChannels. */
  channelFor?(session: string): { channel: string; chatId: string };
  /** channels a `channel:chatId` session key may address (the default routing) */
  knownChannels?: readonly string[];
  /** owner.notify: the session of a trigger that names none, and where action notify sends by default */
  owner?: { channel: string; chatId: string };
  /** Sends a fixed text to a chat without a model call (the conductor's send), for action notify. */
  notify?(m: { channel: string; chatId: string; text: string; sessionKey: string }): unknown;
  /** agent.timezone, for {time} in a notify text; undefined: the host's */
  timezone?: string;
  /** how often a storm is checked for its end; default 1000 ms */
  settleIntervalMs?: number;
  /** at least this long between two notices (storm, failing sensor) of one trigger; default 1 hour */
  noticeCooldownMs?: number;
  /** the longest wait between reads of a failing sensor; default 5 minutes (never below its intervalMs) */
  maxBackoffMs?: number;
}

export interface TriggerStatus {
  kind: 'gpio' | 'i2c';
  /** the line name, or `i2c-<bus> 0x<address> reg 0x<register>` */
  name: string;
  session: string;
  state: 'watching' | 'storm' | 'polling' | 'read-failing' | 'failed' | 'stopped';
  /** messages submitted: turns and notices */
  submitted: number;
  /** edges dropped by debounce or rate limit (edges of the other kind are not counted) */
  suppressed: number;
  lastError?: string;
  /** the last sensor reading */
  lastValue?: number;
}

export interface TriggerRunner {
  /** Closes every watch and timer; idempotent. */
  stop(): void;
  /** Per trigger, for doctor and status. */
  status(): TriggerStatus[];
}

/** The channel a trigger turn of `session` is answered on: `telegram:123` → that chat, else the hardware channel. */
export function routeSession(session: string, knownChannels: readonly string[] = []): { channel: string; chatId: string } {
  const colon = session.indexOf(':');
  if (colon > 0 && colon < session.length - 1) {
    const channel = session.slice(0, colon);
    if (knownChannels.includes(channel)) return { channel, chatId: session.slice(colon + 1) };
  }
  return { channel: 'hardware', chatId: session };
}

/** What every trigger shares: the clock, the log, routing, and a submit that never throws into a GPIO callback. */
interface Context {
  log: Logger;
  now: () => number;
  noticeCooldownMs: number;
  maxBackoffMs: number;
  readSensor: TriggerDeps['readSensor'];
  watchEdges: WatchEdges;
  /** true when the message was handed to the queue */
  submit(session: string, text: string, meta: Record<string, unknown>, what: string): boolean;
  route(session: string): { channel: string; chatId: string };
  owner?: { channel: string; chatId: string };
  /** true when the text was handed to the conductor to send */
  notify(to: { channel: string; chatId: string }, text: string, what: string): boolean;
  timezone?: string;
}

interface Handle {
  status(): TriggerStatus;
  /** a periodic chance to notice that a storm is over */
  settle?(): void;
  stop(): void;
}

const hex = (n: number) => `0x${n.toString(16).padStart(2, '0')}`;

function makeContext(deps: TriggerDeps): Context {
  const log = deps.log ?? defaultLog;
  const route = deps.channelFor ?? ((s: string) => routeSession(s, deps.knownChannels));
  return {
    log,
    route,
    owner: deps.owner,
    timezone: deps.timezone,
    notify(to, text, what) {
      if (!deps.notify) {
        log.error(`${what}: no channel can send its text in this process`);
        return false;
      }
      try {
        const result = deps.notify({ ...to, text, sessionKey: `${to.channel}:${to.chatId}` });
        count('triggers', { source: 'hardware' });
        if (result instanceof Promise) result.catch((err: unknown) => log.error(`${what}: the text could not be sent: ${errorMessage(err)}`));
        return true;
      } catch (err) {
        log.error(`${what}: the text could not be sent: ${errorMessage(err)}`);
        return false;
      }
    },
    now: deps.now ?? Date.now,
    noticeCooldownMs: deps.noticeCooldownMs ?? 60 * 60_000,
    maxBackoffMs: deps.maxBackoffMs ?? 5 * 60_000,
    readSensor: deps.readSensor,
    watchEdges: deps.watchEdges,
    submit(session, text, meta, what) {
      try {
        const { channel, chatId } = route(session);
        const result = deps.submit({ sessionKey: session, channel, chatId, sender: 'hardware', text, meta });
        count('triggers', { source: 'hardware' });
        // A conductor that commits asynchronously reports its failure later; it must not go unhandled.
        if (result instanceof Promise) result.catch((err: unknown) => log.error(`${what}: the message could not be queued: ${errorMessage(err)}`));
        return true;
      } catch (err) {
        log.error(`${what}: the message could not be queued: ${errorMessage(err)}`);
        return false;
      }
    },
  };
}

/** Starts every configured trigger; one that cannot start is logged and reported, the others run. */
export function startTriggers(deps: TriggerDeps): TriggerRunner {
  const ctx = makeContext(deps);
  const handles: Handle[] = [
    ...deps.triggers.map((tr) => startEdgeTrigger(ctx, tr)),
    ...deps.sensorTriggers.map((s) => startSensorTrigger(ctx, s)),
  ];
  // A storm ends when the line goes quiet, and a quiet line sends no edge to say so: a timer asks.
  let settleTimer: NodeJS.Timeout | undefined;
  if (handles.some((h) => h.settle)) {
    settleTimer = setInterval(() => handles.forEach((h) => h.settle?.()), deps.settleIntervalMs ?? 1000);
    settleTimer.unref();
  }
  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(settleTimer);
      for (const h of handles) h.stop();
    },
    status: () => handles.map((h) => h.status()),
  };
}

/** A trigger that cannot run at all: kept in status() so doctor can say why. */
function failedHandle(base: Omit<TriggerStatus, 'state' | 'submitted' | 'suppressed'>): Handle {
  return { status: () => ({ ...base, state: 'failed', submitted: 0, suppressed: 0 }), stop() {} };
}

/** ms in the kernel's clock, keeping microseconds (a plain Number() of the ns would round them away on a realtime clock). */
const kernelMs = (ns: bigint) => Number(ns / 1000n) / 1000;

/** The session of a trigger: its own, else the owner's chat (owner.notify), else none. */
function sessionOf(ctx: Context, session: string | undefined): string {
  return session ?? (ctx.owner ? `${ctx.owner.channel}:${ctx.owner.chatId}` : '');
}

function startEdgeTrigger(ctx: Context, tr: GpioTriggerConfig): Handle {
  const line = tr.line ?? '';
  const session = sessionOf(ctx, tr.session);
  const what = `trigger on line '${line || '?'}'`;
  const notify = tr.action === 'notify';
  // Where a notify trigger sends: its session's chat when that is one, else the owner's.
  const routed = session ? ctx.route(session) : undefined;
  const notifyTo = routed && routed.channel !== 'hardware' ? routed : ctx.owner;
  const reason = !line
    ? 'line is required'
    : notify
      ? !tr.text
        ? 'text is required with action notify'
        : !notifyTo
          ? 'action notify needs a chat: a CHANNEL:CHAT session such as telegram:12345, or owner.notify'
          : undefined
      : !session
        ? 'session is required (or set owner.notify)'
        : !tr.message
          ? 'message is required'
          : undefined;
  if (reason) {
    ctx.log.error(`${what} not started: ${reason}`);
    return failedHandle({ kind: 'gpio', name: line, session, lastError: reason });
  }
  const message = tr.message ?? tr.text ?? '';
  const filter = new EdgeFilter({ edge: tr.edge, debounceMs: tr.debounceMs, maxPerWindow: tr.rateLimit.max, windowMs: tr.rateLimit.perSeconds * 1000 });
  let submitted = 0;
  let suppressed = 0;
  let lastError: string | undefined;
  let storm = false;
  let lastNoticeAt = -Infinity;
  let stopped = false;
  let watch: EdgeWatchHandle | undefined;
  /** while watchEdges runs: an error then means the watch never opened */
  let opening = true;
  /** an error was reported and no edge has come since */
  let broken = false;
  // The kernel's clock (monotonic, usually) is not the wall clock: the last edge pairs the two, so
  // settle() can ask "quiet for a window?" in the kernel's time.
  let lastEdge: { kernelMs: number; wallMs: number } | undefined;

  function fail(err: unknown): void {
    const reason = errorMessage(err);
    // The same error again before any edge (a backend that reports on every poll) adds nothing.
    const repeat = broken && reason === lastError;
    broken = true;
    lastError = reason;
    if (!repeat) ctx.log.error(`${what}${opening ? ' could not start' : ' failed'}: ${reason}`);
  }

  function stormStarted(e: TriggerEdge): void {
    storm = true;
    ctx.log.warn(`${what}: edges come faster than debounce ${tr.debounceMs} ms / at most ${tr.rateLimit.max} per ${tr.rateLimit.perSeconds} s allow; ignoring them until the line is quiet (a floating input or a loose wire?)`);
    // One notice per storm, and not more often than the cool-down: a line that floats on and off
    // must not become a message every minute.
    const now = ctx.now();
    if (now - lastNoticeAt < ctx.noticeCooldownMs) return;
    lastNoticeAt = now;
    const text = `Hardware notice: line ${line} is producing edges much faster than its trigger allows, so they are being ignored until it has been quiet for ${tr.rateLimit.perSeconds} s. `
      + `A floating input (no pull resistor) or a loose wire does this. (The trigger's message is: "${message}")`;
    // A notify trigger tells the owner directly, like its edges: no model call for a notice either.
    if (notify) {
      if (ctx.notify(notifyTo!, text, what)) submitted++;
      return;
    }
    if (ctx.submit(session, text, { trigger: { kind: 'gpio', line, storm: true, edge: e.edge, value: e.value, timestampNs: e.timestampNs.toString() } }, what)) submitted++;
  }

  function stormEnded(s: { suppressed: number; sinceMs: number }): void {
    storm = false;
    ctx.log.info(`${what}: the edge storm is over after ${(s.sinceMs / 1000).toFixed(1)} s; ${s.suppressed} edge(s) were ignored`);
  }

  function submitEdge(e: TriggerEdge): void {
    if (notify) {
      const time = clockTime(new Date(ctx.now()), ctx.timezone);
      if (ctx.notify(notifyTo!, fillPlaceholders(tr.text!, { line, edge: e.edge, value: e.value, time }), what)) submitted++;
      return;
    }
    const at = new Date(ctx.now()).toISOString();
    const text = `${message}\n(hardware trigger: line ${line}, ${e.edge} edge, value ${e.value}, at ${at})`;
    const meta = { trigger: { kind: 'gpio', line, edge: e.edge, value: e.value, timestampNs: e.timestampNs.toString(), seqno: e.seqno } };
    if (ctx.submit(session, text, meta, what)) submitted++;
  }

  function onEdge(e: TriggerEdge): void {
    if (stopped) return;
    // An edge after a reported error: the watch works again.
    broken = false;
    const ms = kernelMs(e.timestampNs);
    lastEdge = { kernelMs: ms, wallMs: ctx.now() };
    const v = filter.offer(e.edge, ms);
    if (v.pass) {
      if (v.stormEnded) stormEnded(v.stormEnded);
      submitEdge(e);
      return;
    }
    if (v.reason === 'edge') return;
    suppressed++;
    if (v.stormStarted) stormStarted(e);
  }

  try {
    watch = ctx.watchEdges(line, onEdge, (err) => {
      if (!stopped) fail(err);
    });
  } catch (err) {
    fail(err);
  }
  opening = false;
  // An error reported while opening means no watch: release whatever half-open handle came back.
  if (broken && watch) closeWatch();

  function closeWatch(): void {
    try {
      watch?.close();
    } catch (err) {
      ctx.log.warn(`${what}: closing the watch failed: ${errorMessage(err)}`);
    }
    watch = undefined;
  }

  return {
    status: () => ({
      kind: 'gpio', name: line, session, submitted, suppressed, lastError,
      state: stopped ? 'stopped' : broken || !watch ? 'failed' : storm ? 'storm' : 'watching',
    }),
    settle() {
      if (stopped || !storm || !lastEdge) return;
      const ended = filter.settle(lastEdge.kernelMs + (ctx.now() - lastEdge.wallMs));
      if (ended) stormEnded(ended);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      closeWatch();
    },
  };
}

function sensorName(s: SensorTriggerConfig): string {
  return `i2c-${s.bus ?? '?'} ${hex(s.address ?? 0)} reg ${hex(s.register ?? 0)}`;
}

function describeCrossing(c: Crossing): string {
  return c.direction === 'above' ? `above the threshold ${c.threshold}` : `below the threshold ${c.threshold}`;
}

function startSensorTrigger(ctx: Context, s: SensorTriggerConfig): Handle {
  const name = sensorName(s);
  const session = sessionOf(ctx, s.session);
  const what = `sensor trigger ${name}`;
  const notify = s.action === 'notify';
  // As for an edge: a notify trigger sends to its session's chat when that is one, else the owner's.
  const routed = session ? ctx.route(session) : undefined;
  const notifyTo = routed && routed.channel !== 'hardware' ? routed : ctx.owner;
  const missing = s.bus === undefined || s.address === undefined || s.register === undefined;
  const reason = missing
    ? 'bus, address and register are required'
    : notify
      ? !s.text
        ? 'text is required with action notify'
        : !notifyTo
          ? 'action notify needs a chat: a CHANNEL:CHAT session such as telegram:12345, or owner.notify'
          : undefined
      : !session || !s.message
        ? `session${ctx.owner ? '' : ' (or owner.notify)'} and message are required`
        : undefined;
  if (reason || s.bus === undefined || s.address === undefined || s.register === undefined) {
    ctx.log.error(`${what} not started: ${reason}`);
    return failedHandle({ kind: 'i2c', name, session, lastError: reason });
  }
  let watch: ThresholdWatch;
  try {
    watch = new ThresholdWatch({ above: s.above, below: s.below, hysteresis: s.hysteresis });
  } catch (err) {
    ctx.log.error(`${what} not started: ${errorMessage(err)}`);
    return failedHandle({ kind: 'i2c', name, session, lastError: errorMessage(err) });
  }
  const reg: SensorRegister = { bus: s.bus, address: s.address, register: s.register, length: s.length };
  const message = (notify ? s.text : s.message) ?? '';
  const intervalMs = Math.max(1, s.intervalMs);
  let submitted = 0;
  let failures = 0;
  let lastError: string | undefined;
  let lastValue: number | undefined;
  let lastNoticeAt = -Infinity;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  function schedule(ms: number): void {
    if (stopped) return;
    // A chain of timeouts, not an interval: a slow read (a bus held by another device) can never
    // overlap the next one.
    timer = setTimeout(() => void poll(), ms);
    timer.unref();
  }

  /** Doubles the wait with every failed read in a row, up to maxBackoffMs. */
  function backoffMs(): number {
    return Math.min(intervalMs * 2 ** Math.min(failures, 20), Math.max(intervalMs, ctx.maxBackoffMs));
  }

  function readFailed(err: unknown): void {
    failures++;
    lastError = errorMessage(err);
    if (failures > 1) {
      ctx.log.debug(`${what}: read ${failures} failed: ${lastError}`);
      return;
    }
    // Reported once per run of failures; the next report comes only after a read has succeeded.
    ctx.log.warn(`${what}: the sensor cannot be read (${lastError}); retrying with backoff, the threshold is not watched meanwhile`);
    const now = ctx.now();
    if (now - lastNoticeAt < ctx.noticeCooldownMs) return;
    lastNoticeAt = now;
    const text = `Hardware notice: the sensor on I2C bus ${reg.bus}, address ${hex(reg.address)}, register ${hex(reg.register)} cannot be read (${lastError}); `
      + `its threshold is not watched until a read succeeds again. (The trigger's message is: "${message}")`;
    const meta = { trigger: { kind: 'i2c', bus: reg.bus, address: reg.address, register: reg.register, error: lastError } };
    // A notify trigger tells the owner directly: no model call for a notice either.
    if (notify ? ctx.notify(notifyTo!, text, what) : ctx.submit(session, text, meta, what)) submitted++;
  }

  function readOk(value: number): void {
    if (failures > 0) ctx.log.info(`${what}: the sensor reads again after ${failures} failed read(s)`);
    failures = 0;
    lastError = undefined;
    lastValue = value;
    const c = watch.offer(value);
    if (!c) return;
    const at = new Date(ctx.now()).toISOString();
    if (notify) {
      const time = clockTime(new Date(ctx.now()), ctx.timezone);
      if (ctx.notify(notifyTo!, fillPlaceholders(message, { value, direction: c.direction, threshold: c.threshold, time }), what)) submitted++;
      return;
    }
    const text = `${message}\n(hardware trigger: I2C bus ${reg.bus}, address ${hex(reg.address)}, register ${hex(reg.register)}: value ${value}, ${describeCrossing(c)}, at ${at})`;
    const meta = { trigger: { kind: 'i2c', bus: reg.bus, address: reg.address, register: reg.register, value, threshold: c.threshold, direction: c.direction } };
    if (ctx.submit(session, text, meta, what)) submitted++;
  }

  async function poll(): Promise<void> {
    timer = undefined;
    let value: number;
    try {
      value = await ctx.readSensor(reg);
      if (!Number.isFinite(value)) throw new Error(`the read returned ${String(value)}, not a number`);
    } catch (err) {
      if (stopped) return;
      readFailed(err);
      schedule(backoffMs());
      return;
    }
    if (stopped) return;
    readOk(value);
    schedule(intervalMs);
  }

  // The first read right away: a value already past its threshold at start is news.
  schedule(0);
  return {
    status: () => ({
      kind: 'i2c', name, session, submitted, suppressed: 0, lastError, lastValue,
      state: stopped ? 'stopped' : failures > 0 ? 'read-failing' : 'polling',
    }),
    stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
