// Opens the SQLite database through better-sqlite3 with the addon from our own loader (so the same
// code runs in a dev tree and in the single executable), in WAL mode with a busy timeout.
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { ensureWritableDir } from '../fsutil.js';
import { PinclawError, errorMessage } from '../errors.js';
import { loadAddon } from '../native/loader.js';
import { onRelease } from '../release.js';
import { migrate, type Migration } from './migrations.js';
import { migrations as builtIn } from './schema.js';
import { placeTemplate } from './template.js';

export type Db = Database.Database;

export interface OpenOptions {
  busyTimeoutMs?: number;
  readonly?: boolean;
  migrations?: readonly Migration[];
  /**
   * A file that does not exist yet starts as a copy of this database, every migration already
   * applied (src/store/template.ts); undefined, or no bytes: the migrations make it.
   */
  template?: () => Uint8Array | undefined;
}

export function openDatabase(file: string, opts: OpenOptions = {}): Db {
  let fromTemplate = false;
  if (file !== ':memory:' && !opts.readonly) {
    ensureWritableDir(dirname(file), 'database directory');
    const bytes = opts.template && !existsSync(file) ? opts.template() : undefined;
    if (bytes) {
      try {
        fromTemplate = placeTemplate(file, bytes);
      } catch (err) {
        throw new PinclawError(`cannot create database ${file}: ${errorMessage(err)}`);
      }
    }
  }
  let db: Db;
  try {
    db = new Database(file, { readonly: opts.readonly ?? false, nativeBinding: loadAddon<object>('better_sqlite3') as never });
  } catch (err) {
    throw new PinclawError(`cannot open database ${file}: ${errorMessage(err)}`);
  }
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(opts.busyTimeoutMs ?? 5000))}`);
    if (!opts.readonly) {
      db.pragma('journal_mode = WAL');
      // WAL + NORMAL is durable against process crashes; only an OS crash may lose the last commits.
      db.pragma('synchronous = NORMAL');
    }
    db.pragma('foreign_keys = ON');
    if (!opts.readonly) migrate(db, opts.migrations ?? builtIn);
    // The template's migrations are dated when the build made it; this database got them now.
    if (fromTemplate) db.prepare('update schema_migrations set applied_at = ?').run(new Date().toISOString());
  } catch (err) {
    db.close();
    throw err instanceof PinclawError ? err : new PinclawError(`cannot prepare database ${file}: ${errorMessage(err)}`);
  }
  // A quiet gateway hands SQLite's page cache (up to 2 MiB a connection) back (src/release.ts).
  const forget = onRelease(`sqlite#${++connections} ${file}`, () => {
    if (db.open) db.pragma('shrink_memory');
  });
  beforeClose(db, forget);
  return db;
}

let connections = 0;

const closeHooks = new WeakMap<Db, (() => void)[]>();

/**
 * Runs `fn` right before the connection closes (once), so a write kept back to batch it (see
 * insertAuditSoon) is never lost to a close that comes first.
 */
export function beforeClose(db: Db, fn: () => void): void {
  let hooks = closeHooks.get(db);
  if (!hooks) {
    const list: (() => void)[] = [];
    hooks = list;
    closeHooks.set(db, list);
    const close = db.close.bind(db);
    db.close = () => {
      for (const h of list.splice(0)) {
        try {
          h();
        } catch {
          // A hook's own failure is its to report; the connection still closes.
        }
      }
      return close();
    };
  }
  hooks.push(fn);
}

/**
 * A connection with none of openDatabase's set-up (no WAL switch, no migrations): for what must not
 * change the file it looks at, such as a backup's snapshot and its checks (src/ops/backup.ts).
 */
export function openPlainDatabase(file: string, opts: { readonly: boolean }): Db {
  return new Database(file, { readonly: opts.readonly, fileMustExist: true, nativeBinding: loadAddon<object>('better_sqlite3') as never });
}

/**
 * SQLite's "the file is damaged" codes, whichever query met the damaged page first: a disk or power
 * failure, not a bug, so the owner gets the way out instead of a stack trace. Undefined for any
 * other error.
 */
export function damagedDatabaseMessage(err: unknown, file: string): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^SQLITE_(CORRUPT|NOTADB)/.test(code)) return undefined;
  return `the database ${file} is damaged (${errorMessage(err)}); stop pinclaw, then restore it from a backup (pinclaw restore FILE), or move it aside (mv ${file} ${file}.damaged) to start with an empty one; sqlite3's .recover may save its rows`;
}

export interface SqliteReport {
  version: string;
  fts5: boolean;
  journalMode: string;
}

/** What doctor shows: the SQLite library's version and whether FTS5 (keyword memory search) works. */
export function sqliteReport(db: Db): SqliteReport {
  const version = (db.prepare('select sqlite_version() as v').get() as { v: string }).v;
  let fts5 = false;
  try {
    db.exec('create virtual table temp.pinclaw_fts5_probe using fts5(body); drop table temp.pinclaw_fts5_probe;');
    fts5 = true;
  } catch {
    fts5 = false;
  }
  const journalMode = String(db.pragma('journal_mode', { simple: true }));
  return { version, fts5, journalMode };
}
