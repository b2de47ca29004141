// Prepared statements are compiled once per connection and reused: the queue and session paths run
// on every turn, and re-preparing each time costs CPU and churns SQLite's allocator.
import type Database from 'better-sqlite3';

const cache = new WeakMap<Database.Database, Map<string, Database.Statement>>();

export function sql(db: Database.Database, text: string): Database.Statement {
  let m = cache.get(db);
  if (!m) cache.set(db, (m = new Map()));
  let st = m.get(text);
  if (!st) m.set(text, (st = db.prepare(text)));
  return st;
}
