// The gateway's liveness under systemd: a start counter, and the watchdog. WATCHDOG=1 is not sent
// from a blind timer, which a wedged gateway would keep sending: every quarter of WatchdogSec the
// gateway checks itself (the event loop keeps up, the database takes a tiny write) and pings only
// when both pass. A stalled loop sends nothing at all; a gateway that stays unhealthy for a whole
// WatchdogSec is killed and restarted by systemd (Restart=on-failure). Loaded by every gateway: small.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { errorMessage } from '../errors.js';
import { log } from '../log.js';
import { sdNotify } from '../native/index.js';
import type { Db } from '../store/db.js';
import { incrementState, setState } from '../store/state.js';

/** Counts this start in the state table (`gateway.starts`, exported as pinclaw_gateway_starts_total). */
export function recordGatewayStart(db: Db): number {
  return incrementState(db, 'gateway.starts');
}

/**
 * The watchdog interval systemd asks for, in microseconds, as sd_watchdog_enabled(3) reads it:
 * WATCHDOG_USEC must be a positive integer, and WATCHDOG_PID, when set, must name this process
 * (a child that inherited the variables is not the one being watched).
 */
export function watchdogUsec(env: NodeJS.ProcessEnv, pid: number = process.pid): number | undefined {
  const text = env.WATCHDOG_USEC ?? '';
  if (!/^\d+$/.test(text)) return undefined;
  const usec = Number(text);
  if (!Number.isSafeInteger(usec) || usec <= 0) return undefined;
  const owner = env.WATCHDOG_PID ?? '';
  if (owner !== '' && (!/^\d+$/.test(owner) || Number(owner) !== pid)) return undefined;
  return usec;
}

export interface Health {
  ok: boolean;
  /** why not, in words; empty when ok */
  problems: string[];
  lagMs: number;
}

export interface WatchdogOptions {
  env: NodeJS.ProcessEnv;
  pid?: number;
  /** the tiny write that proves the database works: gateway.alive_at */
  write: (isoTime: string) => void;
  /** defaults to sd_notify on $NOTIFY_SOCKET */
  notify?: (state: string) => boolean;
  /** a monotonic clock in ms, for the timer's drift; defaults to performance.now */
  now?: () => number;
  /** mean event-loop delay in ms since the previous call; defaults to a monitorEventLoopDelay histogram */
  loopDelayMs?: () => number;
  /** false: the caller runs check() itself (tests) */
  timer?: boolean;
}

export interface Watchdog {
  intervalMs: number;
  /** the lag above which the gateway counts as unhealthy */
  maxLagMs: number;
  check(): Health;
  stop(): void;
}

/** The health check runs four times per WatchdogSec, so one bad check alone never gets the gateway killed. */
export const CHECKS_PER_PERIOD = 4;

/** The lag bound: the check interval, kept between 250 ms and 5 s. */
export function lagBoundMs(intervalMs: number): number {
  return Math.min(5000, Math.max(250, intervalMs));
}

function histogramDelay(): { read: () => number; stop: () => void } {
  const resolution = 10;
  const h = monitorEventLoopDelay({ resolution });
  h.enable();
  return {
    read() {
      // The histogram's samples include the sampling interval itself.
      const mean = h.count ? Math.max(0, h.mean / 1e6 - resolution) : 0;
      h.reset();
      return mean;
    },
    stop: () => h.disable(),
  };
}

/** Starts the watchdog when systemd asks for one (WATCHDOG_USEC); undefined otherwise. */
export function startWatchdog(o: WatchdogOptions): Watchdog | undefined {
  const usec = watchdogUsec(o.env, o.pid);
  if (usec === undefined || !o.env.NOTIFY_SOCKET && !o.notify) return undefined;
  const intervalMs = Math.max(1, Math.floor(usec / 1000 / CHECKS_PER_PERIOD));
  const maxLagMs = lagBoundMs(intervalMs);
  const notify = o.notify ?? ((state: string) => sdNotify(state, o.env));
  const now = o.now ?? (() => performance.now());
  const hist = o.loopDelayMs ? undefined : histogramDelay();
  const loopDelay = o.loopDelayMs ?? hist!.read;
  let last = now();
  let healthy = true;

  const check = (): Health => {
    const t = now();
    // How late this check runs: the loop was busy with something else for that long.
    const drift = Math.max(0, t - last - intervalMs);
    last = t;
    const lagMs = Math.round(Math.max(drift, loopDelay()));
    const problems: string[] = [];
    if (lagMs > maxLagMs) problems.push(`the event loop lags ${lagMs} ms (limit ${maxLagMs} ms)`);
    try {
      o.write(new Date().toISOString());
    } catch (err) {
      problems.push(`the database takes no write: ${errorMessage(err)}`);
    }
    const ok = problems.length === 0;
    if (ok) {
      try {
        notify('WATCHDOG=1');
      } catch (err) {
        log.warn(`watchdog: ${errorMessage(err)}`);
      }
      if (!healthy) log.info('watchdog: healthy again, WATCHDOG=1 resumed');
    } else {
      log.warn(`watchdog: withholding WATCHDOG=1: ${problems.join('; ')}`);
    }
    healthy = ok;
    return { ok, problems, lagMs };
  };

  const timer = o.timer === false ? undefined : setInterval(check, intervalMs);
  timer?.unref();
  const blocker = testLoopBlocker(o.env);
  log.info(`watchdog: checking every ${intervalMs} ms (WatchdogSec ${usec / 1e6} s)`);
  return {
    intervalMs,
    maxLagMs,
    check,
    stop() {
      if (timer) clearInterval(timer);
      hist?.stop();
      blocker?.();
    },
  };
}

/**
 * PINCLAW_TEST_BLOCK_LOOP_MS=N, for the tests only: after SIGUSR2 the event loop is kept busy in
 * N ms stretches (a gateway that is alive but starved), so the tests see WATCHDOG=1 withheld.
 */
function testLoopBlocker(env: NodeJS.ProcessEnv): (() => void) | undefined {
  const ms = Number(env.PINCLAW_TEST_BLOCK_LOOP_MS);
  if (!(ms > 0)) return undefined;
  let busy: NodeJS.Timeout | undefined;
  const start = () => {
    log.warn(`watchdog: test hook: blocking the event loop ${ms} ms at a time`);
    busy ??= setInterval(() => {
      const end = Date.now() + ms;
      while (Date.now() < end);
    }, 1);
  };
  process.on('SIGUSR2', start);
  return () => {
    process.off('SIGUSR2', start);
    if (busy) clearInterval(busy);
  };
}

/** The gateway's own health write: gateway.alive_at. */
export function aliveWriter(db: Db): (isoTime: string) => void {
  return (at) => setState(db, 'gateway.alive_at', at);
}
