// The fleet server's memory of the calls it received (table fleet_seen): one row per call, keyed by
// its time, caller and id, for as long as a call with that time could still pass the signature
// window. In SQLite, so a signed call captured on the broker and replayed after the callee restarted
// is still a replay. Time first, so inserts land on the table's last pages (migration 13).
import type { Db } from './db.js';
import { sql } from './statements.js';

/** Records a call; false when this call (caller, id and signed time) was recorded already: a replay. The fleet server refuses an id reused at another time from its map of ids. */
export function rememberFleetCall(db: Db, caller: string, callId: string, at: number): boolean {
  return sql(db, 'insert into fleet_seen (caller, call_id, at) values (?, ?, ?) on conflict do nothing').run(caller, callId, at).changes === 1;
}

/** The calls recorded at or after `since`: what a fleet server starting knows of the window before it. */
export function fleetCallsSince(db: Db, since: number): { caller: string; call_id: string; at: number }[] {
  return sql(db, 'select caller, call_id, at from fleet_seen where at >= ?').all(since) as { caller: string; call_id: string; at: number }[];
}

/** Deletes the ids of calls dated before `before` (no call that old can pass the window any more); returns how many. */
export function forgetFleetCalls(db: Db, before: number): number {
  return sql(db, 'delete from fleet_seen where at < ?').run(before).changes;
}

/** How many call ids are remembered (diagnostics, tests). */
export function rememberedFleetCalls(db: Db): number {
  return (sql(db, 'select count(*) as n from fleet_seen').get() as { n: number }).n;
}
