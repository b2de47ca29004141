// How the fleet server keeps refused calls from strangers from growing the home without bound.
// Whoever may publish on the broker can send calls as fast as it likes, most without a valid key
// (5,000 bogus calls once wrote 15 MB of audit rows in 4 s). So every refusal is counted
// (pinclaw_fleet_refused_total{code} in /metrics), the first few of each interval keep their own
// audit row and log line (a misconfigured board is still explained call by call), and the rest are
// summed up in one audit row and one log line when the interval ends.
import { count } from '../counters.js';
import { insertAudit } from '../store/audit.js';
import type { Db } from '../store/db.js';
import type { RefusalCode } from './fleet-sign.js';

/** The interval refusals are counted in. */
export const REFUSAL_INTERVAL_MS = 60_000;
/** Refusals per interval recorded one by one (audit row, log line, unsigned answer). */
export const REFUSALS_IN_DETAIL = 10;
/** Distinct callers named in a summary; more are counted as others. */
const NAMED_CALLERS = 20;

export interface RefusalLog {
  warn(message: string): void;
}

export interface RefusalBook {
  /** Counts a refusal; true when it is to be recorded in detail, false when only counted. */
  note(code: RefusalCode, from: string): boolean;
  /** Writes the summary of the current interval, if it has one (at stop). */
  flush(): void;
}

export function refusalBook(o: { db: Db; nodeId: string; now: () => number; log: RefusalLog; onError: (err: unknown) => void }): RefusalBook {
  let start = o.now();
  let detailed = 0;
  let suppressed = 0;
  const byCode = new Map<string, number>();
  const byCaller = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;

  function flush(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (suppressed > 0) {
      const end = o.now();
      const codes = [...byCode].map(([c, n]) => `${c} ${n}`).join(', ');
      const callers = [...byCaller].map(([c, n]) => `${c} ${n}`).join(', ');
      const detail = `${suppressed} more refused calls within ${Math.round((end - start) / 1000)} s were not recorded one by one (more than ${REFUSALS_IN_DETAIL} in ${REFUSAL_INTERVAL_MS / 1000} s): ${codes}; callers: ${callers}`;
      try {
        insertAudit(o.db, {
          at: end, sessionKey: 'fleet:*', channel: 'fleet', chatId: '*', caller: '*', tool: 'remote:*',
          input: JSON.stringify({ refused: suppressed, byCode: Object.fromEntries(byCode), byCaller: Object.fromEntries(byCaller) }),
          outcome: 'denied', rule: 'mqtt.fleet refusals', detail, durationMs: 0, outputBytes: 0,
        });
      } catch (err) {
        o.onError(err);
      }
      o.log.warn(`mqtt fleet: ${detail}`);
    }
    start = o.now();
    detailed = 0;
    suppressed = 0;
    byCode.clear();
    byCaller.clear();
  }

  return {
    note(code, from) {
      count('fleet_refused', { code });
      if (o.now() - start >= REFUSAL_INTERVAL_MS) flush();
      if (detailed < REFUSALS_IN_DETAIL) {
        detailed++;
        return true;
      }
      if (suppressed === 0) {
        o.log.warn(`mqtt fleet: more than ${REFUSALS_IN_DETAIL} refused calls within ${REFUSAL_INTERVAL_MS / 1000} s on ${o.nodeId}; the rest of this interval are counted (pinclaw_fleet_refused_total) and summed up in one audit row (if they are strangers, let only the fleet's users publish on <base>/+/fleet/#)`);
        // The summary is written when the interval ends, also if no call comes after it.
        timer = setTimeout(flush, Math.max(0, start + REFUSAL_INTERVAL_MS - o.now()));
        timer.unref();
      }
      suppressed++;
      byCode.set(code, (byCode.get(code) ?? 0) + 1);
      const name = from === '?' ? '(unreadable)' : from;
      const who = byCaller.has(name) || byCaller.size < NAMED_CALLERS ? name : '(others)';
      byCaller.set(who, (byCaller.get(who) ?? 0) + 1);
      return false;
    },
    flush,
  };
}
