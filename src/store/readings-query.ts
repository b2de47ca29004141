// Reading the readings ring back (src/store/readings.ts writes it): only the dashboard's Home view
// does, so this is apart from the writer and stays out of what an idle gateway holds.
import type { Db } from './db.js';
import type { Reading, ReadingKind } from './readings.js';
import { sql } from './statements.js';

/** The readings of one source since `since` (ms), oldest first. */
export function readingsOf(db: Db, kind: ReadingKind, name: string, since: number): Reading[] {
  return sql(db, 'select at, value from readings where kind = ? and name = ? and at >= ? order by at, rowid').all(kind, name, since) as Reading[];
}

/** The newest reading of one source, or undefined. */
export function lastReading(db: Db, kind: ReadingKind, name: string): Reading | undefined {
  return sql(db, 'select at, value from readings where kind = ? and name = ? order by at desc, rowid desc limit 1').get(kind, name) as Reading | undefined;
}
