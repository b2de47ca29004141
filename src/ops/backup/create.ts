// `pinclaw backup`: the home's database (SQLite's online backup, a consistent snapshot while the
// gateway writes), config, key and workspace staged next to the output, hashed into the manifest,
// then archived.
import { createHash } from 'node:crypto';
import { closeSync, copyFileSync, existsSync, fsyncSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, type Stats } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseConfigText } from '../../config/parse.js';
import { encryptClearSecrets } from '../../config/write.js';
import { PinclawError, errorMessage } from '../../errors.js';
import { ensureWritableDir } from '../../fsutil.js';
import type { Paths } from '../../paths.js';
import type { Db } from '../../store/db.js';
import { pinclawVersion } from '../../version.js';
import { noteBackup, partialName, removeBackupLeftovers, stagingPrefix } from '../backup-leftovers.js';
import { sha256File, writeTarGz, type TarEntry } from '../../archive.js';
import { BACKUP_FORMAT, BACKUP_FORMAT_VERSION, ENCRYPTED_VALUE, MANIFEST, homeParts, openPlain, quickCheck, schemaVersionOf, within, type BackupManifest, type ManifestFile, type Progress } from './manifest.js';

/** Pages copied per step of the online backup: a step holds a read transaction only for its length. */
const STEP_PAGES = 2048;


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
