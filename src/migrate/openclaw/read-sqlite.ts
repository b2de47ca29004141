// OpenClaw's databases (2026.8.1 and later), read without touching them: the file (and its -wal,
// which holds the commits not yet checkpointed) is copied to a temporary directory and the copy is
// opened read-only. Opening the original, even read-only, could create its -shm beside it, and a
// running OpenClaw gateway must find its home as it left it.
//
// The schema is OpenClaw's, read tolerantly: what a table or column this reader does not find
// means is reported ("not mapped: why"), never guessed. Known (from OpenClaw's own readers):
//   agents/<id>/agent/openclaw-agent.sqlite:
//     session_windows(session_id, session_key, updated_at, ...)
//     transcript_events(session_id, seq, event_json, created_at): event_json is the transcript line
//     auth_profile_store(store_key, store_json): {"profiles": {"anthropic:default": {"key": ...}}}
//   state/openclaw.sqlite: shared gateway state. ASSUMPTION (not found in OpenClaw's published
//     sources): cron jobs, when kept there, are in a table whose name contains "cron" with a *_json
//     column holding the same CronJob object as cron/jobs.json; docs/migrate.md says so.
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { openPlainDatabase, type Db } from '../../store/db.js';
import { errorMessage } from '../../errors.js';

export interface ReadOnlyDb {
  db: Db;
  close(): void;
}

/** A read-only connection to a copy of `file`; throws a message naming the file when it is not a database. */
export function openCopy(file: string): ReadOnlyDb {
  const dir = mkdtempSync(join(tmpdir(), 'pinclaw-migrate-'));
  const copy = join(dir, basename(file));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  try {
    copyFileSync(file, copy);
    if (existsSync(`${file}-wal`)) copyFileSync(`${file}-wal`, `${copy}-wal`);
    const db = openPlainDatabase(copy, { readonly: true });
    try {
      // The first read is where "file is not a database" shows.
      db.prepare('select count(*) from sqlite_schema').get();
    } catch (err) {
      db.close();
      throw err;
    }
    return { db, close: () => { db.close(); cleanup(); } };
  } catch (err) {
    cleanup();
    throw new Error(`${file}: not a readable SQLite database (${errorMessage(err)})`);
  }
}

export function tableNames(db: Db): string[] {
  return (db.prepare(`select name from sqlite_schema where type = 'table' order by name`).all() as { name: string }[]).map((r) => r.name);
}

export function columnNames(db: Db, table: string): string[] {
  return (db.prepare(`select name from pragma_table_info(?)`).all(table) as { name: string }[]).map((r) => r.name);
}

/** SQL identifier quoting for a table name read from sqlite_schema. */
export const quoteId = (name: string) => `"${name.replace(/"/g, '""')}"`;
