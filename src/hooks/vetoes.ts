// The owner's vetoes of physical actions, kept in the state table for the turn they were made in:
// no retry of that turn (the conductor's after a failed model call, or one after a restart) runs
// the action. A veto is needed only while its turn can still be retried, that is while the turn's
// inbound row is pending or processing; once it is done or failed, the veto goes (its audit row,
// the record of it, stays with the audit table). A veto whose turn is not in the queue at all (a
// turn id from elsewhere) goes after VETO_MAX_AGE_MS. The sweep runs whenever a veto is stored, so
// the rows stay as few as the turns under way, and costs one statement.
import type { Db } from '../store/db.js';
import { getState, setState } from '../store/state.js';
import { sql } from '../store/statements.js';

export const VETO_MAX_AGE_MS = 7 * 24 * 3600_000;
const PREFIX = 'hooks.veto:';

export interface Veto {
  reason: string;
  rule: string;
}

const keyOf = (sessionKey: string, turnId: string, tool: string) => `${PREFIX}${sessionKey}:${turnId}:${tool}`;

export function findVeto(db: Db, sessionKey: string, turnId: string, tool: string): Veto | undefined {
  const stored = getState(db, keyOf(sessionKey, turnId, tool));
  if (stored === undefined) return undefined;
  try {
    const v = JSON.parse(stored) as Veto;
    return { reason: v.reason, rule: v.rule };
  } catch {
    return { reason: '', rule: 'hooks.PreToolUse' };
  }
}

/** Stores the veto, and removes those whose turn is over (see the top). */
export function storeVeto(db: Db, sessionKey: string, turnId: string, tool: string, veto: Veto, now = Date.now()): void {
  const key = keyOf(sessionKey, turnId, tool);
  db.transaction(() => {
    setState(db, key, JSON.stringify({ ...veto, turn: turnId }));
    pruneVetoes(db, now, key);
  })();
}

/** Removes the vetoes no retry can need any more; returns how many. `keep` is never removed. */
export function pruneVetoes(db: Db, now = Date.now(), keep = ''): number {
  const old = new Date(now - VETO_MAX_AGE_MS).toISOString();
  return sql(db, `delete from state where key like '${PREFIX}%' and key <> ? and (
      case when json_valid(value) and json_type(value, '$.turn') is not null
        then coalesce((select i.state in ('done', 'failed') from inbound i where i.id = cast(json_extract(state.value, '$.turn') as integer)), updated_at < ?)
        else updated_at < ? end)`).run(keep, old, old).changes;
}
