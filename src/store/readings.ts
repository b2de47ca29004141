// A small ring of readings per sensor and GPIO line (table `readings`, migration 9), for the
// dashboard's 24-hour plots. Bounded by count, not by age: each write drops what is past the cap for
// its source, so a source read faster than expected loses history instead of growing the database,
// and the table never holds more than sources × READINGS_PER_SOURCE rows. Reading them back is
// src/store/readings-query.ts: only the dashboard does, so an idle gateway does not hold it.
import type { Db } from './db.js';
import { sql } from './statements.js';

/** 24 hours at the sampler's 5-minute interval (288), with room for writes and edges between. */
export const READINGS_PER_SOURCE = 400;

/** A sensor of hardware.sensors or a line of hardware.lines, by its name there. */
export type ReadingKind = 'sensor' | 'line';

export interface Reading {
  /** ms since the epoch */
  at: number;
  value: number;
}

/** Adds one reading and trims its source to the cap, in one transaction. */
export function recordReading(db: Db, kind: ReadingKind, name: string, value: number, at = Date.now(), cap = READINGS_PER_SOURCE): void {
  if (!Number.isFinite(value)) return;
  db.transaction(() => {
    sql(db, 'insert into readings (kind, name, at, value) values (?, ?, ?, ?)').run(kind, name, at, value);
    // Everything past the cap newest rows of this source goes: an index range scan, cheap at this size.
    sql(db, `delete from readings where rowid in (
      select rowid from readings where kind = ? and name = ? order by at desc, rowid desc limit -1 offset ?)`).run(kind, name, cap);
  })();
}
