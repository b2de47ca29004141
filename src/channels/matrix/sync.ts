// The /sync long poll that never loses its place: the next_batch token lives in SQLite (state key
// matrix.since) and is stored in the same transaction that queues the messages of the answer it came
// with, so across a restart or a SIGKILL each message is queued once: killed before that commit, the
// same answer comes again from the old token; after it, the new token asks for what follows.
// A first start (no token) takes the current position without replaying the history: one sync with
// timeout=0 whose messages are skipped (its invites are still handled).
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import type { Db } from '../../store/db.js';
import { DiskFullError, isDiskFull } from '../../store/disk.js';
import { getState, setState } from '../../store/state.js';
import { isRefusedToken, MatrixApiError, refusedTokenText, sleep, type MatrixApi } from './api.js';
import type { SyncResponse } from './events.js';
import type { Commit } from './inbound.js';

export const SINCE_KEY = 'matrix.since';
/** How long the homeserver holds a sync open when nothing happens. */
export const POLL_TIMEOUT_MS = 30_000;
/** Past the poll's timeout, this long without an answer is a dead connection. */
const GRACE_MS = 15_000;
// No presence, and up to 100 events per room in one answer: after an outage the homeserver's default
// (10 in Synapse) would leave a gap ("limited") where messages are never seen.
const FILTER = JSON.stringify({ presence: { not_types: ['*'] }, room: { timeline: { limit: 100 } } });
// The first sync: the rooms and invites, not their history.
const FIRST_FILTER = JSON.stringify({ presence: { not_types: ['*'] }, room: { timeline: { limit: 1 } } });

export class FatalSyncError extends Error {}

export interface SyncOptions {
  api: MatrixApi;
  db: Db;
  signal: AbortSignal;
  /** what to commit for an answer; first: the position-taking sync (its messages are not answered) */
  prepare(res: SyncResponse, first: boolean): Promise<Commit>;
  onStatus(state: 'up' | 'down', detail: string): void;
  pollTimeoutMs?: number;
}

/** Runs until the signal aborts; a refused token ends it with a FatalSyncError. */
export async function runSync(o: SyncOptions): Promise<void> {
  const poll = o.pollTimeoutMs ?? POLL_TIMEOUT_MS;
  let failures = 0;
  let up = false;
  while (!o.signal.aborted) {
    const since = getState(o.db, SINCE_KEY) || undefined;
    let wait: number | undefined;
    let detail: string;
    try {
      const path = since
        ? `/sync?timeout=${poll}&since=${encodeURIComponent(since)}&filter=${encodeURIComponent(FILTER)}`
        : `/sync?timeout=0&filter=${encodeURIComponent(FIRST_FILTER)}`;
      const res = await o.api.call<SyncResponse>('GET', path, undefined, { signal: o.signal, timeoutMs: poll + GRACE_MS });
      if (typeof res.next_batch !== 'string' || !res.next_batch) throw new Error(`${o.api.homeserver} answered /sync without a next_batch token: is it a Matrix homeserver?`);
      const commit = await o.prepare(res, !since);
      if (o.signal.aborted) break;
      try {
        o.db.transaction(() => {
          commit();
          setState(o.db, SINCE_KEY, res.next_batch);
        })();
      } catch (err) {
        if (!(err instanceof DiskFullError || isDiskFull(err))) throw err;
        // Not taken: the token stays, and the same answer is asked for again once there is room.
        throw new DiskFullPause(`a message cannot be saved, the disk is full (${errorMessage(err)}); syncing again in 15 s`);
      }
      if (!since) log.info('matrix: first start: took the current position; earlier messages are not answered');
      if (!up) o.onStatus('up', 'syncing');
      up = true;
      failures = 0;
      continue;
    } catch (err) {
      if (o.signal.aborted) break;
      if (isRefusedToken(err)) throw new FatalSyncError(refusedTokenText(o.api.homeserver));
      if (err instanceof DiskFullPause) wait = 15_000;
      detail = errorMessage(err);
      if (err instanceof MatrixApiError && err.errcode === 'M_UNKNOWN_POS') {
        // The homeserver forgot the token (a database restored, a very old token): the history since is not replayed.
        log.warn(`matrix: ${o.api.homeserver} no longer knows the saved sync position; taking the current one (messages meanwhile are not answered)`);
        setState(o.db, SINCE_KEY, '');
        continue;
      }
    }
    failures++;
    wait ??= Math.min(30_000, 500 * 2 ** Math.min(failures - 1, 6)) * (0.75 + Math.random() / 2);
    if (up || failures === 1) o.onStatus('down', detail);
    up = false;
    log.warn(`matrix: ${detail}; syncing again in ${(wait / 1000).toFixed(1)} s (the other channels go on)`);
    await sleep(wait, o.signal);
  }
}

class DiskFullPause extends Error {}
