// The event stream that never goes silent: one connection to GET /api/v1/events at a time, a
// watchdog that abandons it when not even a keep-alive came for KEEPALIVE_GRACE_MS (a half-open
// connection), reconnects with a backoff, and Last-Event-ID so a newer daemon hands over what came
// meanwhile. Each envelope's message is committed together with the envelope's key (./seen.ts), so
// an envelope handed over twice is queued once.
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import type { Db } from '../../store/db.js';
import { DiskFullError, isDiskFull } from '../../store/disk.js';
import { getState, setState } from '../../store/state.js';
import { envelopeKey, type ReceiveEvent } from './envelope.js';
import { sseEvents } from './events.js';
import type { Commit } from './inbound.js';
import { transportReason } from './rpc.js';
import type { Seen } from './seen.js';
import { httpFetch } from '../../net/fetch.js';

/** The daemon sends a keep-alive every 15 s; three missed is a dead connection. */
export const KEEPALIVE_GRACE_MS = 45_000;
export const LAST_EVENT_KEY = 'signal.lastEventId';
/** How long receiving pauses when a message cannot be saved because the disk is full. */
export const DISK_FULL_WAIT_MS = 15_000;

export interface ReceiverOptions {
  url: string;
  account: string;
  db: Db;
  seen: Seen;
  prepare(ev: ReceiveEvent): Commit;
  /** after the commit of an envelope that became a turn (a read receipt) */
  taken(ev: ReceiveEvent): void;
  onStatus(state: 'up' | 'down', detail: string): void;
  signal: AbortSignal;
  graceMs?: number;
}

const sleepFor = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => (clearTimeout(timer), signal.removeEventListener('abort', done), resolve());
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });

class DiskFullPause extends Error {}

/** Runs until the signal aborts. */
export async function runReceiver(o: ReceiverOptions): Promise<void> {
  const base = o.url.replace(/\/+$/, '');
  const url = `${base}/api/v1/events?account=${encodeURIComponent(o.account)}`;
  const grace = o.graceMs ?? KEEPALIVE_GRACE_MS;
  let failures = 0;
  let up = false;
  while (!o.signal.aborted) {
    const conn = new AbortController();
    const stop = () => conn.abort();
    o.signal.addEventListener('abort', stop);
    let watchdog: NodeJS.Timeout | undefined;
    let silent = false;
    const alive = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => ((silent = true), conn.abort()), grace);
    };
    let detail: string;
    let wait: number | undefined;
    try {
      alive();
      const last = getState(o.db, LAST_EVENT_KEY);
      let res: Response;
      try {
        res = await httpFetch(url, { headers: { accept: 'text/event-stream', ...(last ? { 'last-event-id': last } : {}) }, signal: conn.signal });
      } catch (err) {
        throw new Error(silent ? `no answer within ${grace / 1000} s` : transportReason(err, base, o.account));
      }
      if (res.status !== 200 || !res.body) {
        await res.body?.cancel();
        throw new Error(res.status === 400
          ? `the daemon does not run account ${o.account} (channels.signal.account): start it with signal-cli -a ${o.account} daemon --http, or register the account`
          : `${base}/api/v1/events answered HTTP ${res.status}: is that a signal-cli daemon started with --http?`);
      }
      if (!up) o.onStatus('up', 'receiving');
      up = true;
      failures = 0;
      for await (const ev of sseEvents(res.body, alive)) {
        if (ev.event !== 'receive') continue;
        take(ev.data, ev.id);
      }
      detail = o.signal.aborted ? 'stopping' : silent ? `the event stream went silent for ${grace / 1000} s (no keep-alive)` : 'the daemon ended the event stream';
    } catch (err) {
      if (err instanceof DiskFullPause) {
        detail = err.message;
        wait = DISK_FULL_WAIT_MS;
      } else detail = silent ? `the event stream went silent for ${grace / 1000} s (no keep-alive)` : errorMessage(err);
    } finally {
      clearTimeout(watchdog);
      o.signal.removeEventListener('abort', stop);
      conn.abort();
    }
    if (o.signal.aborted) break;
    failures++;
    wait ??= Math.min(30_000, 500 * 2 ** Math.min(failures - 1, 6)) * (0.75 + Math.random() / 2);
    // The first failure of a connection that worked is said once; the rest goes to the log.
    if (up || failures === 1) o.onStatus('down', detail);
    up = false;
    log.warn(`signal: ${detail}; reconnecting in ${(wait / 1000).toFixed(1)} s (the other channels go on)`);
    await sleepFor(wait, o.signal);
  }

  function take(data: string, id: string | undefined): void {
    let ev: ReceiveEvent;
    try {
      ev = JSON.parse(data) as ReceiveEvent;
      if (!ev || typeof ev !== 'object' || !ev.envelope || typeof ev.envelope.timestamp !== 'number') throw new Error('no envelope with a timestamp');
    } catch (err) {
      log.error(`signal: an event the daemon sent is not an envelope and is skipped (${errorMessage(err)}): ${data.slice(0, 200)}`);
      return;
    }
    if (ev.account && ev.account !== o.account) return;
    const key = envelopeKey(ev.envelope);
    if (key && o.seen.has(key)) return;
    let commit: Commit;
    try {
      commit = o.prepare(ev);
    } catch (err) {
      // One broken envelope must not stop the channel or come back forever: logged and passed.
      log.error(`signal: envelope ${key ?? '?'} could not be handled and is skipped: ${errorMessage(err)}`);
      commit = () => {};
    }
    try {
      o.db.transaction(() => {
        commit();
        if (key) o.seen.add(key);
        if (id !== undefined) setState(o.db, LAST_EVENT_KEY, id);
      })();
    } catch (err) {
      if (err instanceof DiskFullError || isDiskFull(err)) {
        // Not taken: the connection is dropped, and the reconnect's Last-Event-ID asks the daemon for it again.
        throw new DiskFullPause(`a message cannot be saved, the disk is full (${errorMessage(err)}); receiving again in ${DISK_FULL_WAIT_MS / 1000} s`);
      }
      log.error(`signal: envelope ${key ?? '?'} could not be stored and is skipped: ${errorMessage(err)}`);
      return;
    }
    if (commit.receipt) o.taken(ev);
  }
}
