// The state repository: small key/value facts the runtime keeps across restarts (last start, versions).
import type { Db } from './db.js';
import { sql } from './statements.js';

export function getState(db: Db, key: string): string | undefined {
  const row = sql(db, 'select value from state where key = ?').get(key) as { value: string } | undefined;
  return row?.value;
}

export function setState(db: Db, key: string, value: string): void {
  sql(db, 
    `insert into state (key, value, updated_at) values (?, ?, ?)
     on conflict(key) do update set value = excluded.value, updated_at = excluded.updated_at`,
  ).run(key, value, new Date().toISOString());
}

/** Adds one to a counter kept as text (absent counts as 0) in one statement, and returns the new value. */
export function incrementState(db: Db, key: string): number {
  const row = sql(db, 
    `insert into state (key, value, updated_at) values (?, '1', ?)
     on conflict(key) do update set value = cast(coalesce(cast(state.value as integer), 0) + 1 as text), updated_at = excluded.updated_at
     returning value`,
  ).get(key, new Date().toISOString()) as { value: string };
  return Number(row.value);
}
