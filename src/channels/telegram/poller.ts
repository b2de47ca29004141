// Long polling of getUpdates that never goes silent: the offset lives in SQLite and moves in the
// same transaction that commits the update's message, so across a restart or a SIGKILL no update is
// handled twice or lost; each poll has a watchdog (api.getUpdates abandons a poll silent past its
// timeout and a grace: a half-open connection); failures back off, 429 waits what Telegram asks, 409 (a
// poll of a previous process still open, or a webhook) is waited out or cleared.
import type { Update } from '@grammyjs/types';
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import type { Db } from '../../store/db.js';
import { DiskFullError, isDiskFull } from '../../store/disk.js';
import { getState, setState } from '../../store/state.js';
import { TelegramError, type TelegramApi } from './api.js';

export const OFFSET_KEY = 'telegram.offset';

/** An update's commit; `diskFull` tells its sender when it cannot be saved (a full disk). */
export type Commit = (() => void) & { diskFull?: () => void };

export interface PollerOptions {
  api: TelegramApi;
  db: Db;
  timeoutSeconds: number;
  /**
   * Prepares an update (downloads its files) and returns the commit: a synchronous function run in
   * the transaction that stores the new offset, so the update's message and the offset are one write.
   */
  prepare(update: Update): Promise<Commit>;
  onStatus(state: 'up' | 'down', detail: string): void;
  signal: AbortSignal;
  /** waits, or ends early when the signal aborts */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** How long polling pauses when an update cannot be saved because the disk is full. */
export const DISK_FULL_WAIT_MS = 15_000;

export function storedOffset(db: Db): number {
  return Number(getState(db, OFFSET_KEY) ?? 0);
}

const sleepFor = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });

/** Why polling cannot go on at all (the token): stops the loop; everything else is retried. */
export function fatalReason(err: unknown): string | undefined {
  if (err instanceof TelegramError && (err.code === 401 || err.code === 404)) {
    return `Telegram refused the bot token (${err.code} ${err.description}): check channels.telegram.token (the token @BotFather gave); the other channels keep running`;
  }
  return undefined;
}

/** Runs until the signal aborts or the token is refused; resolves with the fatal reason, if any. */
export async function runPoller(o: PollerOptions): Promise<string | undefined> {
  const sleep = o.sleep ?? sleepFor;
  let failures = 0;
  let up = false;
  let webhookCleared = false;
  /** the disk was full at the last commit: said once until a commit works again */
  let diskFull = false;
  const down = (detail: string) => {
    if (up || failures === 1) o.onStatus('down', detail);
    up = false;
  };
  while (!o.signal.aborted) {
    let updates: Update[];
    try {
      updates = await o.api.getUpdates(storedOffset(o.db), o.timeoutSeconds, o.signal);
    } catch (err) {
      if (o.signal.aborted) break;
      const fatal = fatalReason(err);
      if (fatal) {
        o.onStatus('down', fatal);
        return fatal;
      }
      failures++;
      let wait = Math.min(30_000, 1000 * 2 ** Math.min(failures - 1, 5)) * (0.75 + Math.random() / 2);
      let detail = errorMessage(err);
      if (err instanceof TelegramError && err.code === 429) {
        wait = (err.retryAfter ?? 5) * 1000;
      } else if (err instanceof TelegramError && err.code === 409) {
        if (/webhook/i.test(err.description) && !webhookCleared) {
          // A webhook left by another tool blocks getUpdates; pinclaw polls, so it removes it once.
          webhookCleared = true;
          await o.api.call('deleteWebhook', { drop_pending_updates: false }).catch((e: unknown) => log.warn(`telegram: deleteWebhook failed: ${errorMessage(e)}`));
          wait = 0;
        } else {
          detail = 'another getUpdates is open for this bot (409 Conflict): a previous pinclaw still polling, or a second instance with the same token';
          wait = Math.min(wait, o.timeoutSeconds * 1000);
        }
      }
      down(detail);
      log.warn(`telegram: polling failed (${failures} in a row), next poll in ${(wait / 1000).toFixed(1)} s: ${detail}`);
      await sleep(wait, o.signal);
      continue;
    }
    if (!up) {
      o.onStatus('up', 'polling');
      up = true;
    }
    failures = 0;
    for (const update of updates) {
      if (o.signal.aborted) break;
      const next = update.update_id + 1;
      if (next <= storedOffset(o.db)) continue;
      let commit: Commit;
      try {
        commit = await o.prepare(update);
      } catch (err) {
        // One broken update must not stop the bot or come back forever: it is logged with its id and passed.
        log.error(`telegram: update ${update.update_id} could not be handled and is skipped: ${errorMessage(err)}`);
        commit = () => {};
      }
      try {
        o.db.transaction(() => {
          commit();
          setState(o.db, OFFSET_KEY, String(next));
        })();
        if (diskFull) log.info(`telegram: the disk has space again; update ${update.update_id} is saved`);
        diskFull = false;
      } catch (err) {
        if (err instanceof DiskFullError || isDiskFull(err)) {
          // Not skipped: the offset stays, Telegram hands the update over again, and it is taken
          // once there is space. The sender was told (inbound.ts); polling pauses meanwhile.
          commit.diskFull?.();
          if (!diskFull) log.error(`telegram: update ${update.update_id} cannot be saved: ${errorMessage(err)}; it is kept at Telegram (for up to a day) and taken once there is space, polling again every ${DISK_FULL_WAIT_MS / 1000} s`);
          diskFull = true;
          await sleep(DISK_FULL_WAIT_MS, o.signal);
          break;
        }
        log.error(`telegram: update ${update.update_id} could not be stored and is skipped: ${errorMessage(err)}`);
        try {
          setState(o.db, OFFSET_KEY, String(next));
        } catch (again) {
          // The loop goes on: the update comes again and is judged again.
          log.error(`telegram: the offset after update ${update.update_id} could not be stored either: ${errorMessage(again)}`);
        }
      }
    }
  }
  return undefined;
}
