// `pinclaw restore`: a backup checked, extracted and verified in a temporary directory next to the
// home, then renamed into place under the home's lock; what it replaces is kept aside.
import { createHash } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fchmodSync, fsyncSync, futimesSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, rmdirSync, statSync, unlinkSync, utimesSync, writeSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { loadConfig, unreadableSecrets, type UnreadableSecret } from '../../config/index.js';
import { parseConfigText } from '../../config/parse.js';
import { clearSecrets, encryptClearSecrets } from '../../config/write.js';
import { ConfigError, PinclawError, errorMessage } from '../../errors.js';
import { ensureWritableDir, writeFileAtomic } from '../../fsutil.js';
import type { Paths } from '../../paths.js';
import { describeHolder, tryLockHome, type HomeLock } from '../../store/home-lock.js';
import { pinclawVersion } from '../../version.js';
import { ArchiveError, readTarGz } from '../../archive.js';
import { ENCRYPTED_VALUE, MANIFEST, homeParts, knownSchemaVersion, openPlain, quickCheck, readManifest, schemaVersionOf, within, type BackupManifest, type Progress } from './manifest.js';
import { processesUsing } from './processes.js';


/** Files restored 0600 whatever mode the archive records. */
const OWNER_ONLY = new Set(['pinclaw.db', 'config.json', 'secret.key']);

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
