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
