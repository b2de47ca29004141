// Delivery of recorded replies, one loop per channel. Each channel has its own pass, its own retry
// timer and its own failures: a channel that is down waits on its own rows and never delays another,
// and a pass that throws (a SQLite error, a bug) is logged and ends that pass only; the next one
// starts from the rows as they are in the database. There is no promise chain to poison.
import { count } from '../counters.js';
import { errorMessage } from '../errors.js';
import { log } from '../log.js';
import type { Db } from '../store/db.js';
import { deliveredParts, markDeliveryFailed, markSent, pendingOutbound, recordDeliveredPart, type OutboundRow } from '../store/queue.js';

/** What a channel is told about a reply it delivers. */
export interface Delivery {
  /** message ids of the parts an earlier attempt delivered; the channel sends only the rest */
  readonly sentParts: readonly string[];
  /** commits a part as delivered (its message id in the channel) the moment it is sent */
  partSent(externalId: string): void;
}

export interface DeliveryChannel {
  name: string;
  /** Delivers a reply; throwing leaves it pending, to be tried again after a backoff. */
  send(o: OutboundRow, delivery: Delivery): Promise<void>;
}

export interface DelivererOptions {
  db: Db;
  channel: DeliveryChannel;
  /** rows of sessions this process serves */
  wanted: (sessionKey: string) => boolean;
  /** delay before retry `attempt` (1-based) of a failed delivery */
  retryDelayMs: (attempt: number) => number;
  /** after a row is marked sent */
  onSent: (o: OutboundRow) => void;
  /** fault injection for the crash tests */
  crashPoint: (name: string) => void;
}

export interface Deliverer {
  /** starts a pass now (or right after the running one) */
  kick(): void;
  /** resolves when no pass is running */
  idle(): Promise<void>;
  stop(): void;
}

export const defaultDeliveryRetryDelay = (attempt: number) => Math.min(5 * 60_000, 2000 * 2 ** (attempt - 1));

export function createDeliverer(o: DelivererOptions): Deliverer {
  const { db, channel } = o;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  // Passes that threw in a row: the next waits longer, so a broken database is not hammered.
  let failedPasses = 0;

  /**
   * Sends what is due; returns when the earliest reply it left waiting may be tried (ms epoch), or
   * null when none waits. A reply that waits behind an earlier one of the same chat does not count:
   * it goes after that one, whose time is counted (counting it made a pass every 10 ms while a
   * chat's first reply waited for its retry).
   */
  async function pass(): Promise<number | null> {
    const now = Date.now();
    let next: number | null = null;
    const later = (at: number) => {
      if (next === null || at < next) next = at;
    };
    // Replies to one chat keep their order: once one of them waits for a retry, the later ones wait too.
    const waiting = new Set<string>();
    for (const row of pendingOutbound(db, channel.name)) {
      if (stopped) return null;
      if (!o.wanted(row.session_key) || waiting.has(row.chat_id)) continue;
      if (row.next_attempt_at > now) {
        waiting.add(row.chat_id);
        later(row.next_attempt_at);
        continue;
      }
      const sentParts = deliveredParts(row);
      try {
        await channel.send(row, { sentParts, partSent: (id) => recordDeliveredPart(db, row.id, id) });
      } catch (err) {
        const delay = o.retryDelayMs(row.attempts + 1);
        markDeliveryFailed(db, row.id, errorMessage(err), delay);
        later(Date.now() + delay);
        count('deliveries', { channel: channel.name, outcome: 'failed' });
        waiting.add(row.chat_id);
        log.warn(`delivery of reply ${row.id} through ${channel.name} failed (attempt ${row.attempts + 1}), next try in ${Math.round(delay / 1000)} s: ${errorMessage(err)}`);
        continue;
      }
      o.crashPoint('after-send');
      markSent(db, row.id);
      count('deliveries', { channel: channel.name, outcome: 'sent' });
      o.onSent({ ...row, state: 'sent' });
    }
    return next;
  }

  /**
   * The timer for the earliest waiting reply, as the pass that just ended found it: a reply recorded
   * since then kicked a pass of its own (`again`), so no query is needed here.
   */
  function schedule(next: number | null): void {
    clearTimeout(timer);
    timer = undefined;
    if (stopped || next === null) return;
    // Not unref'd: an undelivered reply is work, and keeps a CLI process alive until it is delivered.
    timer = setTimeout(kick, Math.max(10, next - Date.now()));
  }

  function kick(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(timer);
    let next: number | null = null;
    running = pass()
      .then((at) => {
        failedPasses = 0;
        next = at;
      }, (err: unknown) => {
        failedPasses++;
        log.error(`delivery pass of ${channel.name} failed, the next one starts over: ${errorMessage(err)}`);
      })
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          kick();
          return;
        }
        if (failedPasses === 0) return schedule(next);
        // Without a timer nothing would wake this channel until the next reply: try again, later each time.
        timer = setTimeout(kick, Math.min(60_000, 500 * 2 ** (failedPasses - 1)));
      });
  }

  return {
    kick,
    idle: async () => {
      while (running) await running;
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
