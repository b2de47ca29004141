// `pinclaw backup` / `pinclaw restore`: the whole state of a home in one file, taken while the gateway
// runs, and put back only into a home that holds nothing (or, with force, with everything it held
// kept aside).
//
// The file is a gzip-compressed tar (src/archive.ts) whose first entry is manifest.json: the
// pinclaw version, the database's schema version, when it was made, and every file with its size and
// SHA-256. The manifest comes first so that restore can refuse a backup it cannot use (a newer schema,
// a foreign file) after reading a few KiB and before touching anything; for its checksums to be known
// up front, everything is first copied to a staging directory next to the output: the database
// through SQLite's online backup API (a consistent snapshot even while the gateway writes), the
// workspace file by file, so what is hashed is exactly what is archived.
import { createHash } from 'node:crypto';
import {
  chmodSync, closeSync, copyFileSync, existsSync, fchmodSync, fsyncSync, futimesSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync,
  renameSync, rmSync, rmdirSync, statSync, unlinkSync, utimesSync, writeSync, type Stats,
} from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { loadConfig, unreadableSecrets, type UnreadableSecret } from '../config/index.js';
import { parseConfigText } from '../config/parse.js';
import { clearSecrets, encryptClearSecrets } from '../config/write.js';
import { ConfigError, PinclawError, errorMessage } from '../errors.js';
import { ensureWritableDir, writeFileAtomic } from '../fsutil.js';
import type { Paths } from '../paths.js';
import { openPlainDatabase, type Db } from '../store/db.js';
import { describeHolder, tryLockHome, type HomeLock } from '../store/home-lock.js';
import { migrations } from '../store/schema.js';
import { pinclawVersion } from '../version.js';
import { noteBackup, partialName, removeBackupLeftovers, stagingPrefix } from './backup-leftovers.js';
import { ArchiveError, StopReading, readTarGz, sha256File, writeTarGz, type TarEntry } from '../archive.js';

export const BACKUP_FORMAT = 'pinclaw-backup';
export const BACKUP_FORMAT_VERSION = 1;
const MANIFEST = 'manifest.json';
/** Pages copied per step of the online backup: a step holds a read transaction only for its length. */
const STEP_PAGES = 2048;
/** An encrypted value in config text (src/config/secrets.ts writes "enc:v1:…"). */
const ENCRYPTED_VALUE = /"enc:v\d+:/;

export interface ManifestFile {
  path: string;
  size: number;
  sha256: string;
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  formatVersion: number;
  pinclawVersion: string;
  /** the database's schema_migrations max(version) */
  schemaVersion: number;
  createdAt: string;
  /** secret.key is in the backup */
  includesSecrets: boolean;
  files: ManifestFile[];
  directories: string[];
}

export interface Progress {
  phase: 'database' | 'files' | 'reading';
  done: number;
  total: number;
}

/** The newest schema this pinclaw knows. */
export function knownSchemaVersion(): number {
  return Math.max(0, ...migrations.map((m) => m.version));
}

/** Backup copies and checks must not change what they look at: no WAL switch, no migrations. */
const openPlain = (file: string, readonly: boolean): Db => openPlainDatabase(file, { readonly });

function schemaVersionOf(db: Db): number {
  const table = db.prepare(`select 1 from sqlite_master where type = 'table' and name = 'schema_migrations'`).get();
  if (!table) return 0;
  return (db.prepare('select max(version) as v from schema_migrations').get() as { v: number | null }).v ?? 0;
}

function quickCheck(db: Db): string {
  const rows = db.pragma('quick_check') as { quick_check: string }[];
  return rows.map((r) => r.quick_check).join('; ');
}

/** The parts of a home a backup holds, by their name in the archive. */
function homeParts(paths: Paths) {
  return {
    database: paths.database,
    config: paths.config,
    secretKey: paths.secretKey,
    workspace: paths.workspace,
    boards: join(paths.home, 'boards'),
  };
}

const within = (dir: string, p: string) => p === dir || p.startsWith(dir + sep);

// ---- backup ----

export interface BackupOptions {
  includeSecrets: boolean;
  /** replace `file` when it exists (without: refused, so an older backup is never lost by a slip) */
  force?: boolean;
  onProgress?: (p: Progress) => void;
  now?: () => Date;
}

export interface BackupResult {
  file: string;
  /** size of the backup file */
  bytes: number;
  manifest: BackupManifest;
  /** symbolic links and special files left out */
  skipped: string[];
  /** secret.key was asked for but there is none */
  noSecretKey: boolean;
  /** the config holds encrypted values (they need secret.key to be read) */
  configHasEncrypted: boolean;
  /** secrets the home's config holds in clear, encrypted in the backup's copy */
  encryptedInBackup: string[];
}

interface Staged {
  entries: TarEntry[];
  files: ManifestFile[];
  directories: string[];
  skipped: string[];
}

/** Copies a directory tree into the staging area: regular files and directories only. */
function stageTree(src: string, archiveRoot: string, staging: string, into: Staged): void {
  const walk = (dir: string, rel: string) => {
    let st: Stats;
    try {
      st = statSync(dir);
    } catch {
      return;
    }
    into.directories.push(rel);
    into.entries.push({ path: rel, type: 'dir', mode: st.mode & 0o777, mtime: Math.floor(st.mtimeMs / 1000) });
    mkdirSync(join(staging, rel), { recursive: true, mode: 0o700 });
    const names = readdirSync(dir).sort();
    for (const name of names) {
      const abs = join(dir, name);
      const r = `${rel}/${name}`;
      let l: Stats;
      try {
        l = lstatSync(abs);
      } catch {
        continue; // removed while we looked
      }
      if (l.isDirectory()) walk(abs, r);
      else if (l.isFile()) {
        const dest = join(staging, r);
        try {
          copyFileSync(abs, dest);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
          throw new PinclawError(`cannot copy ${abs}: ${errorMessage(err)}`);
        }
        into.entries.push({ path: r, type: 'file', mode: l.mode & 0o777, mtime: Math.floor(l.mtimeMs / 1000), file: dest, size: statSync(dest).size });
      } else into.skipped.push(`${r} (${l.isSymbolicLink() ? 'symbolic link' : 'not a regular file'})`);
    }
  };
  walk(src, archiveRoot);
}

/**
 * Writes a backup of the home to `file` (mode 0600; an existing file only with force, then replaced
 * atomically). The database
 * is read through SQLite's backup API, so a running gateway may keep writing.
 */
export async function createBackup(paths: Paths, file: string, opts: BackupOptions): Promise<BackupResult> {
  const out = resolve(file);
  const parts = homeParts(paths);
  for (const dir of [parts.workspace, parts.boards]) {
    if (within(dir, out)) throw new PinclawError(`${out} is inside ${dir}, which the backup reads; write it somewhere else`);
  }
  if (!existsSync(parts.database)) throw new PinclawError(`there is no database at ${parts.database}: nothing to back up (is --home right?)`);
  if (existsSync(out) && !statSync(out).isFile()) throw new PinclawError(`${out} exists and is not a file; name the backup file itself`);
  if (existsSync(out) && !opts.force) throw new PinclawError(`${out} exists already (an earlier backup?); name another file, or pass --force to replace it. Nothing was written`);
  const outDir = dirname(out);
  ensureWritableDir(outDir, 'backup directory');
  const progress = opts.onProgress ?? (() => undefined);
  const now = (opts.now ?? (() => new Date()))();

  // What an earlier backup killed midway left (its staging copy, its partial archive) goes first.
  removeBackupLeftovers(paths.home, [outDir]);
  // Next to the output: it needs about the room of the backup anyway, and /tmp may be a small tmpfs.
  // Both carry the pid and are noted in the home, so that a kill leaves nothing for good.
  const staging = mkdtempSync(stagingPrefix(outDir));
  const partial = partialName(out);
  const forget = noteBackup(paths.home, { staging, partial });
  try {
    // 1. The database: a snapshot through the online backup API.
    const dbCopy = join(staging, 'pinclaw.db');
    let src: Db;
    try {
      src = openPlain(parts.database, true);
    } catch (err) {
      throw new PinclawError(`cannot open the database ${parts.database}: ${errorMessage(err)}`);
    }
    try {
      const pageSize = Number(src.pragma('page_size', { simple: true }));
      let last = Infinity;
      const done = await src.backup(dbCopy, {
        progress: ({ totalPages, remainingPages }) => {
          progress({ phase: 'database', done: (totalPages - remainingPages) * pageSize, total: totalPages * pageSize });
          // A write by another connection (the gateway) between two steps restarts the copy; so that
          // a busy gateway cannot keep it from finishing, after a restart the rest goes in one step.
          const restarted = remainingPages > last;
          last = remainingPages;
          return restarted ? 0x7fffffff : STEP_PAGES;
        },
      });
      // The last step is not reported by better-sqlite3: the snapshot is complete.
      progress({ phase: 'database', done: done.totalPages * pageSize, total: done.totalPages * pageSize });
    } finally {
      src.close();
    }
    // The copy is made self-contained (rollback journal, no -wal beside it) and checked.
    let schemaVersion: number;
    {
      const copy = openPlain(dbCopy, false);
      try {
        copy.pragma('journal_mode = DELETE');
        const check = quickCheck(copy);
        if (check !== 'ok') throw new PinclawError(`the database ${parts.database} fails SQLite's check: ${check}`);
        schemaVersion = schemaVersionOf(copy);
      } finally {
        copy.close();
      }
    }
    const dbStat = statSync(parts.database);
    const staged: Staged = {
      entries: [{ path: 'pinclaw.db', type: 'file', mode: dbStat.mode & 0o777, mtime: Math.floor(now.getTime() / 1000), file: dbCopy, size: statSync(dbCopy).size }],
      files: [],
      directories: [],
      skipped: [],
    };

    // 2. The config as it is on disk, except that no secret is in clear in a backup: encrypted values
    // stay as they are, and one the file still holds in clear (a config from before every write
    // encrypted them, or edited by hand) is encrypted in the copy with this home's key (created if
    // needed), which only --include-secrets puts in the backup. The home's file is not changed.
    let configHasEncrypted = false;
    let encryptedInBackup: string[] = [];
    if (existsSync(parts.config)) {
      let data = readFileSync(parts.config);
      const st = statSync(parts.config);
      const raw = parseConfigText(data.toString('utf8'), parts.config);
      encryptedInBackup = encryptClearSecrets(raw, parts.secretKey);
      if (encryptedInBackup.length) data = Buffer.from(JSON.stringify(raw, null, 2) + '\n');
      staged.entries.push({ path: 'config.json', type: 'file', mode: 0o600, mtime: Math.floor(st.mtimeMs / 1000), data });
      configHasEncrypted = ENCRYPTED_VALUE.test(data.toString('utf8'));
    }
    // 3. The key only when asked for.
    let noSecretKey = false;
    if (opts.includeSecrets) {
      if (existsSync(parts.secretKey)) {
        const st = statSync(parts.secretKey);
        staged.entries.push({ path: 'secret.key', type: 'file', mode: 0o600, mtime: Math.floor(st.mtimeMs / 1000), data: readFileSync(parts.secretKey) });
      } else noSecretKey = true;
    }
    // 4. The workspace and the user's board profiles, copied (a snapshot of each file).
    if (existsSync(parts.workspace)) stageTree(parts.workspace, 'workspace', staging, staged);
    if (existsSync(parts.boards)) stageTree(parts.boards, 'boards', staging, staged);

    for (const e of staged.entries) {
      if (e.type !== 'file') continue;
      const sha256 = e.data ? createHash('sha256').update(e.data).digest('hex') : await sha256File(e.file!);
      staged.files.push({ path: e.path, size: e.data ? e.data.length : e.size!, sha256 });
    }
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      formatVersion: BACKUP_FORMAT_VERSION,
      pinclawVersion: pinclawVersion(),
      schemaVersion,
      createdAt: now.toISOString(),
      includesSecrets: staged.entries.some((e) => e.path === 'secret.key'),
      files: staged.files,
      directories: staged.directories,
    };
    const manifestEntry: TarEntry = { path: MANIFEST, type: 'file', mode: 0o600, mtime: Math.floor(now.getTime() / 1000), data: Buffer.from(JSON.stringify(manifest, null, 2) + '\n') };

    // 5. The archive, under a temporary name until it is complete and on disk.
    const total = staged.files.reduce((n, f) => n + f.size, 0);
    rmSync(partial, { force: true });
    const bytes = await writeTarGz(partial, [manifestEntry, ...staged.entries], (done) => progress({ phase: 'files', done: Math.min(done, total), total }));
    const fd = openSync(partial, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(partial, out);
    return { file: out, bytes, manifest, skipped: staged.skipped, noSecretKey, configHasEncrypted, encryptedInBackup };
  } finally {
    rmSync(staging, { recursive: true, force: true });
    rmSync(partial, { force: true });
    forget();
  }
}

// ---- restore ----

const SAFE_SEGMENT = /^[^/\0]+$/;
/** Files restored 0600 whatever mode the archive records. */
const OWNER_ONLY = new Set(['pinclaw.db', 'config.json', 'secret.key']);

/** Only the parts of a home, only relative paths without '.' or '..' segments. */
function allowedPath(p: string, type: 'file' | 'dir'): boolean {
  const segs = p.split('/');
  if (segs.some((s) => !SAFE_SEGMENT.test(s) || s === '.' || s === '..')) return false;
  if (type === 'file' && segs.length === 1) return ['pinclaw.db', 'config.json', 'secret.key'].includes(p);
  return segs[0] === 'workspace' || segs[0] === 'boards';
}

function checkManifest(value: unknown): BackupManifest {
  const bad = (why: string): never => {
    throw new ArchiveError(`its manifest is not valid: ${why}`);
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad('not an object');
  const m = value as Record<string, unknown>;
  if (m.format !== BACKUP_FORMAT) return bad(`format is ${JSON.stringify(m.format)}, not "${BACKUP_FORMAT}"`);
  if (typeof m.formatVersion !== 'number' || !Number.isInteger(m.formatVersion)) return bad('formatVersion is missing');
  if (m.formatVersion > BACKUP_FORMAT_VERSION) {
    throw new PinclawError(`the backup has format version ${m.formatVersion}, made by pinclaw ${String(m.pinclawVersion)}; this pinclaw (${pinclawVersion()}) reads version ${BACKUP_FORMAT_VERSION}: restore it with a newer pinclaw`);
  }
  if (typeof m.schemaVersion !== 'number' || !Number.isInteger(m.schemaVersion) || m.schemaVersion < 0) return bad('schemaVersion is missing');
  if (typeof m.pinclawVersion !== 'string' || typeof m.createdAt !== 'string' || typeof m.includesSecrets !== 'boolean') return bad('pinclawVersion, createdAt or includesSecrets is missing');
  if (!Array.isArray(m.files) || !Array.isArray(m.directories)) return bad('files or directories is missing');
  const seen = new Set<string>();
  for (const f of m.files as unknown[]) {
    const e = f as Partial<ManifestFile>;
    if (typeof e?.path !== 'string' || typeof e.size !== 'number' || !Number.isSafeInteger(e.size) || e.size < 0 || typeof e.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(e.sha256)) return bad(`a file entry is malformed: ${JSON.stringify(f)}`);
    if (!allowedPath(e.path, 'file')) return bad(`${JSON.stringify(e.path)} is not a part of a pinclaw home`);
    if (seen.has(e.path)) return bad(`${e.path} is listed twice`);
    seen.add(e.path);
  }
  for (const d of m.directories as unknown[]) {
    if (typeof d !== 'string' || !allowedPath(d, 'dir')) return bad(`${JSON.stringify(d)} is not a directory of a pinclaw home`);
    if (seen.has(d)) return bad(`${d} is listed twice`);
    seen.add(d);
  }
  if (!seen.has('pinclaw.db')) return bad('it holds no pinclaw.db');
  return m as unknown as BackupManifest;
}

/** Reads only the manifest at the start of a backup. */
export async function readManifest(file: string): Promise<BackupManifest> {
  let text: string | undefined;
  await readTarGz(file, (h) => {
    if (h.path !== MANIFEST || h.type !== 'file') throw new ArchiveError(`it is not a pinclaw backup (it does not start with ${MANIFEST})`);
    if (h.size > 16 << 20) throw new ArchiveError(`its ${MANIFEST} is implausibly large (${h.size} bytes)`);
    const parts: Buffer[] = [];
    return {
      data: (c) => void parts.push(Buffer.from(c)),
      end: () => {
        text = Buffer.concat(parts).toString('utf8');
        throw new StopReading();
      },
    };
  });
  if (text === undefined) throw new ArchiveError(`${file} cannot be used: it is empty`);
  try {
    return checkManifest(JSON.parse(text));
  } catch (err) {
    if (err instanceof ArchiveError) throw new ArchiveError(`${file} cannot be used: ${err.message}`);
    if (err instanceof PinclawError) throw err;
    throw new ArchiveError(`${file} cannot be used: its ${MANIFEST} is not JSON (${errorMessage(err)})`);
  }
}

/**
 * The other processes that hold the database (or its -wal) open, found through /proc/PID/fd: a
 * gateway, a `pinclaw agent`, anything. Read from the kernel rather than from the database, which
 * would have to be opened (creating its -shm) to ask. Empty where /proc cannot tell (not Linux, or
 * another user's processes): then nothing is known to be running.
 */
export function processesUsing(database: string): { pid: number; command: string }[] {
  const targets = new Set([database, `${database}-wal`]);
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d) && Number(d) !== process.pid);
  } catch {
    return [];
  }
  const found: { pid: number; command: string }[] = [];
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or not ours to look at
    }
    const holds = fds.some((fd) => {
      try {
        return targets.has(readlinkSync(`/proc/${pid}/fd/${fd}`));
      } catch {
        return false;
      }
    });
    if (!holds) continue;
    let command = '';
    try {
      command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    } catch {
      // exited meanwhile
    }
    found.push({ pid: Number(pid), command });
  }
  return found;
}

export interface RestoreOptions {
  force: boolean;
  env: NodeJS.ProcessEnv;
  onProgress?: (p: Progress) => void;
  now?: () => Date;
}

export interface RestoreResult {
  manifest: BackupManifest;
  /** what was put in place, as paths */
  restored: string[];
  /** what the home held before, where it is now */
  keptAside: { was: string; now: string }[];
  /** things the user must know (a missing key for the encrypted values) */
  notes: string[];
}

/** What a restore would replace in the home: the first of each pair is what the user sees. */
function occupied(paths: Paths, manifest: BackupManifest): { name: string; path: string }[] {
  const parts = homeParts(paths);
  const found: { name: string; path: string }[] = [];
  const nonEmptyDir = (p: string) => {
    try {
      return readdirSync(p).length > 0;
    } catch {
      return existsSync(p);
    }
  };
  if (existsSync(parts.database)) found.push({ name: 'pinclaw.db', path: parts.database });
  if (existsSync(parts.config)) found.push({ name: within(paths.home, parts.config) ? relative(paths.home, parts.config) : parts.config, path: parts.config });
  if (nonEmptyDir(parts.workspace)) found.push({ name: 'workspace/', path: parts.workspace });
  if (nonEmptyDir(parts.boards)) found.push({ name: 'boards/', path: parts.boards });
  // The key is replaced only by a backup that has one; a key equal to it is no conflict.
  if (manifest.includesSecrets && existsSync(parts.secretKey)) {
    const mine = manifest.files.find((f) => f.path === 'secret.key');
    const same = mine && createHash('sha256').update(readFileSync(parts.secretKey)).digest('hex') === mine.sha256;
    if (!same) found.push({ name: 'secret.key', path: parts.secretKey });
  }
  return found;
}

/** Extracts and verifies every entry into `dir`; the manifest must match the archive exactly. */
async function extractInto(file: string, dir: string, manifest: BackupManifest, onBytes: (n: number) => void): Promise<void> {
  const files = new Map(manifest.files.map((f) => [f.path, f]));
  const dirs = new Set(manifest.directories);
  const seen = new Set<string>();
  const dirTimes: { path: string; mtime: number; mode: number }[] = [];
  let first = true;
  await readTarGz(
    file,
    (h) => {
      if (first) {
        first = false;
        if (h.path !== MANIFEST) throw new ArchiveError(`it is not a pinclaw backup (it does not start with ${MANIFEST})`);
        return undefined; // read already
      }
      if (seen.has(h.path)) throw new ArchiveError(`${h.path} occurs twice`);
      seen.add(h.path);
      const target = join(dir, ...h.path.split('/'));
      if (h.type === 'dir') {
        if (!dirs.has(h.path)) throw new ArchiveError(`the directory ${h.path} is not in the manifest`);
        mkdirSync(target, { recursive: true, mode: 0o700 });
        dirTimes.push({ path: target, mtime: h.mtime, mode: h.mode });
        return undefined;
      }
      const expected = files.get(h.path);
      if (!expected) throw new ArchiveError(`${h.path} is not in the manifest`);
      if (expected.size !== h.size) throw new ArchiveError(`${h.path} has ${h.size} bytes, the manifest says ${expected.size}`);
      mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
      // The archive's mode is not trusted: the key, the config and the database are always 0600
      // (a crafted backup must not leave them readable by others); other files keep their mode
      // without group/other write, and the owner can always read and write them. Set with fchmod,
      // as the umask only narrows the mode given to open.
      const mode = OWNER_ONLY.has(h.path) ? 0o600 : (h.mode & 0o755) | 0o600;
      const fd = openSync(target, 'wx', mode);
      fchmodSync(fd, mode);
      const hash = createHash('sha256');
      return {
        data: (chunk) => {
          hash.update(chunk);
          let off = 0;
          while (off < chunk.length) off += writeSync(fd, chunk, off, chunk.length - off);
        },
        end: () => {
          try {
            fsyncSync(fd);
            futimesSync(fd, h.mtime, h.mtime);
          } finally {
            closeSync(fd);
          }
          if (hash.digest('hex') !== expected.sha256) throw new ArchiveError(`${h.path} does not match its SHA-256 in the manifest`);
        },
      };
    },
    onBytes,
  );
  const missing = [...files.keys(), ...dirs].filter((p) => !seen.has(p));
  if (missing.length) throw new ArchiveError(`the manifest lists ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ` and ${missing.length - 3} more` : ''}, which the archive does not hold`);
  // Innermost first, so that setting a parent's time is not undone by its children. Created 0700
  // while being filled; the owner keeps full access whatever was recorded.
  for (const d of dirTimes.reverse()) {
    chmodSync(d.path, (d.mode & 0o755) | 0o700);
    utimesSync(d.path, d.mtime, d.mtime);
  }
}

/**
 * Restores a backup into the home: verified in full in a temporary directory inside the home, then
 * renamed into place. Without force a home that holds a database, a config, a workspace or board
 * profiles is refused; with force those are renamed to NAME.before-restore-TIME first.
 */
export async function restoreBackup(paths: Paths, file: string, opts: RestoreOptions): Promise<RestoreResult> {
  const held: { lock?: HomeLock } = {};
  try {
    return await restoreHoldingLock(paths, file, opts, held);
  } finally {
    held.lock?.release();
  }
}

/**
 * A restore holds the home's gateway lock from its first change to its end, so that no gateway can
 * start on a home that is half restored; held by a gateway (one that has not opened the database
 * yet, or another user's, invisible to processesUsing), it refuses.
 */
function lockForRestore(paths: Paths): HomeLock {
  const r = tryLockHome(paths.lock);
  if ('held' in r) return r.held;
  throw new PinclawError(`${describeHolder(r.busy)} holds ${paths.lock}: a gateway is running or starting on ${paths.home}; stop it first (systemctl stop pinclaw, or Ctrl-C), then restore. Nothing was changed`);
}

async function restoreHoldingLock(paths: Paths, file: string, opts: RestoreOptions, held: { lock?: HomeLock }): Promise<RestoreResult> {
  const src = resolve(file);
  try {
    if (!statSync(src).isFile()) throw new PinclawError(`${src} is not a file`);
  } catch (err) {
    if (err instanceof PinclawError) throw err;
    throw new PinclawError(`cannot read ${src}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : errorMessage(err)}`);
  }
  const progress = opts.onProgress ?? (() => undefined);
  const size = statSync(src).size;

  // 1. Before anything is touched: the manifest, the schema, the home.
  const manifest = await readManifest(src);
  const known = knownSchemaVersion();
  if (manifest.schemaVersion > known) {
    throw new PinclawError(`${src} holds a database at schema version ${manifest.schemaVersion} (made by pinclaw ${manifest.pinclawVersion}); this pinclaw (${pinclawVersion()}) knows schema versions up to ${known}: restore it with pinclaw ${manifest.pinclawVersion} or newer. Nothing was changed`);
  }
  const parts = homeParts(paths);
  const users = existsSync(parts.database) ? processesUsing(parts.database) : [];
  if (users.length) {
    const [first] = users;
    const what = / gateway\b/.test(first!.command) ? `a gateway (pid ${first!.pid})` : `another process (pid ${first!.pid}${first!.command ? `: ${first!.command}` : ''})`;
    throw new PinclawError(`${what} has the database of ${paths.home} open; stop it first (systemctl stop pinclaw, or Ctrl-C), then restore. Nothing was changed`);
  }
  const taken = occupied(paths, manifest);
  if (taken.length && !opts.force) {
    throw new PinclawError(`${paths.home} is not empty: it holds ${taken.map((t) => t.name).join(', ')}, which the restore would replace. Restore into an empty home (--home DIR), or pass --force: what is there now is then kept as NAME.before-restore-TIME. Nothing was changed`);
  }

  // 2. Everything extracted and verified beside the home's files, on the same file system.
  const homeExisted = existsSync(paths.home);
  ensureWritableDir(paths.home, 'PINCLAW_HOME');
  const lockExisted = existsSync(paths.lock);
  held.lock = lockForRestore(paths);
  const tmp = mkdtempSync(join(paths.home, '.restore-'));
  const cleanUp = () => {
    rmSync(tmp, { recursive: true, force: true });
    // A failed restore leaves the home as it was: a lock file it created goes, removed while still
    // held (a gateway that opened it meanwhile sees that and retries: src/store/home-lock.ts).
    if (!lockExisted) rmSync(paths.lock, { force: true });
    held.lock?.release();
    if (!homeExisted) {
      try {
        rmdirSync(paths.home);
      } catch {
        // not empty: something else is there now
      }
    }
  };
  try {
    await extractInto(src, tmp, manifest, (done) => progress({ phase: 'reading', done, total: size }));
    const db = openPlain(join(tmp, 'pinclaw.db'), true);
    try {
      const check = quickCheck(db);
      if (check !== 'ok') throw new ArchiveError(`its database fails SQLite's check: ${check}`);
      const v = schemaVersionOf(db);
      if (v !== manifest.schemaVersion) throw new ArchiveError(`its database is at schema version ${v}, the manifest says ${manifest.schemaVersion}`);
    } finally {
      db.close();
    }
  } catch (err) {
    cleanUp();
    if (err instanceof ArchiveError) throw new ArchiveError(`${err.message.startsWith(src) ? err.message : `${src} cannot be used: ${err.message}`}; nothing was changed`);
    if (err instanceof PinclawError) throw new PinclawError(`${err.message}; nothing was changed`);
    throw new PinclawError(`restoring ${src} failed: ${errorMessage(err)}; nothing was changed`);
  }

  // 3. The swap: what is there goes aside, what was extracted moves in. Undone if a step fails.
  const stamp = (opts.now ?? (() => new Date()))().toISOString().replace(/[:.]/g, '-');
  const done: { from: string; to: string; copied?: boolean }[] = [];
  const move = (from: string, to: string) => {
    renameSync(from, to);
    done.push({ from, to });
  };
  const keptAside: RestoreResult['keptAside'] = [];
  const aside = (path: string, to = `${path}.before-restore-${stamp}`) => {
    if (!existsSync(path)) return;
    const st = lstatSync(path);
    if (st.isDirectory() && readdirSync(path).length === 0) {
      rmdirSync(path); // an empty directory holds nothing worth keeping
      return;
    }
    move(path, to);
    keptAside.push({ was: path, now: to });
  };
  const has = (p: string) => manifest.files.some((f) => f.path === p) || manifest.directories.includes(p);
  const restored: string[] = [];
  try {
    // The database with its -wal and -shm, named so that SQLite still finds them together.
    aside(parts.database);
    for (const suffix of ['-wal', '-shm', '-journal']) aside(parts.database + suffix, `${parts.database}.before-restore-${stamp}${suffix}`);
    aside(parts.config);
    aside(parts.workspace);
    aside(parts.boards);
    if (manifest.includesSecrets && taken.some((t) => t.path === parts.secretKey)) aside(parts.secretKey);

    move(join(tmp, 'pinclaw.db'), parts.database);
    restored.push(parts.database);
    if (has('config.json')) {
      const from = join(tmp, 'config.json');
      mkdirSync(dirname(parts.config), { recursive: true, mode: 0o700 }); // --config may name a new directory
      try {
        move(from, parts.config);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
        // --config on another file system than the home
        writeFileAtomic(parts.config, readFileSync(from), 0o600);
        done.push({ from, to: parts.config, copied: true });
      }
      restored.push(parts.config);
    }
    for (const [name, target] of [['workspace', parts.workspace], ['boards', parts.boards]] as const) {
      if (!has(name)) continue;
      move(join(tmp, name), target);
      restored.push(target);
    }
    if (manifest.includesSecrets && !existsSync(parts.secretKey)) {
      move(join(tmp, 'secret.key'), parts.secretKey);
      restored.push(parts.secretKey);
    }
  } catch (err) {
    for (const m of done.reverse()) {
      try {
        if (m.copied) unlinkSync(m.to);
        else renameSync(m.to, m.from);
      } catch {
        // best effort: the error below says what failed
      }
    }
    cleanUp();
    throw new PinclawError(`restoring ${src} failed while moving files into ${paths.home}: ${errorMessage(err)}; what was moved has been put back`);
  }
  rmSync(tmp, { recursive: true, force: true });

  const notes: string[] = [];
  // 4. A backup from before every secret was encrypted holds some in clear: encrypted now with the
  // key this home has. Without one none is made here: the owner may still copy the old home's key
  // in for the values that are encrypted, and a new key would leave these unreadable then.
  if (has('config.json') && existsSync(parts.config)) {
    try {
      const raw = parseConfigText(readFileSync(parts.config, 'utf8'), parts.config);
      const clear = clearSecrets(raw);
      const list = `${clear.length} secret${clear.length === 1 ? '' : 's'}`;
      if (clear.length && existsSync(parts.secretKey)) {
        encryptClearSecrets(raw, parts.secretKey);
        writeFileAtomic(parts.config, JSON.stringify(raw, null, 2) + '\n', 0o600);
        notes.push(`the backup held ${list} in clear (it is older than encrypted secrets): ${clear.join(', ')}; now encrypted with ${parts.secretKey}`);
      } else if (clear.length) {
        notes.push(
          `the restored config holds ${list} in clear (the backup is older than encrypted secrets): ${clear.join(', ')}; this home has no ${parts.secretKey} to encrypt them with. ` +
            `Copy the secret.key of the home the backup came from to ${parts.secretKey} (chmod 600) if its other values are encrypted, then run any config write (e.g. pinclaw config set gateway.port <its value>): it encrypts them, making a key if there is none`,
        );
      }
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      notes.push(`the restored config cannot be read (${err.message.split('\n')[0]}), so secrets it may hold in clear were not encrypted; fix it, then any config write encrypts them`);
    }
  }

  // 5. Whether the config's encrypted values can be read with the key this home has now: which
  // keys cannot, and what that stops.
  if (has('config.json') && existsSync(parts.config) && ENCRYPTED_VALUE.test(readFileSync(parts.config, 'utf8'))) {
    let lost: readonly UnreadableSecret[] = [];
    try {
      lost = unreadableSecrets(loadConfig(paths, opts.env));
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      notes.push(`the restored config is not valid here: ${err.message.split('\n')[0]} (pinclaw config validate lists every problem)`);
    }
    if (lost.length) {
      const why = existsSync(parts.secretKey) ? `${parts.secretKey} cannot decrypt them` : 'the backup has no secret.key';
      notes.push(
        `${lost.length} secret${lost.length === 1 ? '' : 's'} of the restored config cannot be read (${why}): ${lost.map((u) => u.path).join(', ')}. ` +
          `Until they can, pinclaw gateway and pinclaw agent refuse to start; every other command (config get of other keys, sessions, memory, cron, doctor) works. ` +
          `Copy the secret.key of the home the backup came from to ${parts.secretKey} (chmod 600), or set each again: pinclaw config set KEY VALUE`,
      );
    }
  }
  return { manifest, restored, keptAside, notes };
}
