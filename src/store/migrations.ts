// Forward-only schema migrations. Each runs in its own transaction together with its row in
// schema_migrations, so a failing migration leaves the database exactly as it was before it.
import type Database from 'better-sqlite3';
import { PinclawError, errorMessage } from '../errors.js';

export interface Migration {
  version: number;
  name: string;
  up: string | ((db: Database.Database) => void);
}

export function currentVersion(db: Database.Database): number {
  db.exec(`create table if not exists schema_migrations (
    version integer primary key, name text not null, applied_at text not null)`);
  const row = db.prepare('select max(version) as v from schema_migrations').get() as { v: number | null };
  return row.v ?? 0;
}

/** Applies the migrations newer than the database; returns the versions applied. */
export function migrate(db: Database.Database, migrations: readonly Migration[]): number[] {
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  sorted.forEach((m, i) => {
    if (!Number.isInteger(m.version) || m.version < 1) throw new PinclawError(`migration ${m.name}: version must be a positive integer`);
    if (i > 0 && sorted[i - 1]!.version === m.version) throw new PinclawError(`migrations ${sorted[i - 1]!.name} and ${m.name} share version ${m.version}`);
  });
  const have = currentVersion(db);
  const newest = sorted.at(-1)?.version ?? 0;
  if (have > newest) {
    throw new PinclawError(`database schema version ${have} is newer than this pinclaw knows (${newest}); use a newer pinclaw`);
  }
  const applied: number[] = [];
  const record = db.prepare('insert into schema_migrations (version, name, applied_at) values (?, ?, ?)');
  for (const m of sorted) {
    if (m.version <= have) continue;
    try {
      db.transaction(() => {
        if (typeof m.up === 'string') db.exec(m.up);
        else m.up(db);
        record.run(m.version, m.name, new Date().toISOString());
      })();
    } catch (err) {
      throw new PinclawError(`migration ${m.version} (${m.name}) failed, database left at version ${applied.at(-1) ?? have}: ${errorMessage(err)}`);
    }
    applied.push(m.version);
  }
  return applied;
}
