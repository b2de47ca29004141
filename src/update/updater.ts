// `pinclaw update`: the release checked (release.ts), downloaded next to the executable, checked
// again (SHA-256, ELF architecture, its own --version), a backup when the database schema changes,
// the swap (swap.ts), and under systemd the restart with the health wait and the rollback.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, chmodSync, chownSync, constants, createReadStream, existsSync, mkdirSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { PinclawConfig } from '../config/schema.js';
import { PinclawError, errorMessage } from '../errors.js';
import { writeFailure } from '../fsutil.js';
import type { Paths } from '../paths.js';
import { openPlainDatabase } from '../store/db.js';
import { downloadTo, releaseFileUrl } from './download.js';
import { elfInfo } from './elf.js';
import { ReleaseError, fetchRelease, type Release } from './release.js';
import { compareVersions } from './release-files.js';
import type { GatewayService, ServiceHealth } from './service-health.js';
import { clearJournal, prevPath, readJournal, rollBack, swapIn, type Journal } from './swap.js';

export interface UpdateOptions {
  config: PinclawConfig;
  paths: Paths;
  env: NodeJS.ProcessEnv;
  /** the executable to replace (the running one, resolved through symbolic links) */
  target: string;
  currentVersion: string;
  check: boolean;
  to?: string;
  allowDowngrade: boolean;
  /** outside systemd the swap needs it */
  yes: boolean;
  /** the systemd service that runs the target, if any */
  service: GatewayService | undefined;
  say(line: string): void;
  /** tells owner.notify (queued in the database; the gateway delivers it) */
  notifyOwner(text: string): void;
  /** makes a backup of the home to `file` */
  backup(file: string): Promise<void>;
  /** fault injection for the tests: a name of a step */
  crashPoint?: (name: string) => void;
  arch?: string;
}

export interface NewExecutable {
  version: string;
  /** the schema of the database it migrates to; undefined when it does not say */
  schema: number | undefined;
}

/** Runs an executable's `--version --json`: it must start here and say the version it was signed as. */
export function probeExecutable(file: string, env: NodeJS.ProcessEnv): NewExecutable {
  const r = spawnSync(file, ['--version', '--json'], { encoding: 'utf8', timeout: 30_000, env: { PATH: env.PATH ?? '/usr/bin:/bin' }, stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.error) throw new Error(`it does not start: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`\`${basename(file)} --version\` exited with ${r.status ?? r.signal}${r.stderr.trim() ? `: ${r.stderr.trim().split('\n')[0]}` : ''}`);
  const out = r.stdout.trim();
  try {
    const j = JSON.parse(out) as { version?: unknown; schema?: unknown };
    if (typeof j.version === 'string') return { version: j.version, schema: typeof j.schema === 'number' ? j.schema : undefined };
  } catch {
    // an older pinclaw prints "pinclaw X.Y.Z" only
  }
  const m = /^pinclaw (\S+)$/.exec(out);
  if (!m) throw new Error(`\`${basename(file)} --version\` printed ${JSON.stringify(out.slice(0, 80))}, not a pinclaw version`);
  return { version: m[1]!, schema: undefined };
}

function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(file).on('data', (d) => h.update(d)).on('error', reject).on('end', () => resolve(h.digest('hex')));
  });
}

/** The schema version of the home's database now; undefined when there is no database yet. */
function databaseSchema(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const db = openPlainDatabase(file, { readonly: true });
  try {
    const table = db.prepare(`select 1 from sqlite_master where type = 'table' and name = 'schema_migrations'`).get();
    if (!table) return 0;
    return (db.prepare('select max(version) as v from schema_migrations').get() as { v: number | null }).v ?? 0;
  } finally {
    db.close();
  }
}

/** Refuses an install directory this process cannot write, with the way out. */
export function checkInstallDir(target: string): void {
  const dir = dirname(target);
  try {
    accessSync(dir, constants.W_OK);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const fix = e.code === 'EROFS'
      ? `${dir} is on a read-only file system: remount it read-write (or install pinclaw where it can be replaced) and run pinclaw update again`
      : `run \`sudo pinclaw update\` (the directory belongs to ${dir.startsWith('/home') ? 'another user' : 'root'}), or install pinclaw in a directory you own`;
    throw new PinclawError(`cannot update ${target}: its directory ${dir} is not writable by this user (${e.code ?? e.message}); nothing was changed. ${fix}`);
  }
}

/** Downloads left by an update that was killed (its pid gone): ~100 MB each, of no use to anyone. */
function removeStaleDownloads(target: string, say: (line: string) => void): void {
  const prefix = `.${basename(target)}.download-`;
  for (const name of readdirSync(dirname(target))) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length));
    let alive = false;
    try {
      alive = Number.isInteger(pid) && pid > 0 && process.kill(pid, 0);
    } catch (err) {
      // ESRCH: gone; EPERM: alive, another user's update
      alive = (err as NodeJS.ErrnoException).code === 'EPERM';
    }
    if (alive) continue;
    unlinkSync(join(dirname(target), name));
    say(`removed ${name}, the download of an update that was stopped`);
  }
}

/** The exit error of a refused release; the owner's chat is told too, unless this was only --check at a terminal. */
function refuse(o: UpdateOptions, cause: string): never {
  if (!o.check) o.notifyOwner(`pinclaw update: ${cause}`);
  throw new PinclawError(cause);
}

/** A restart that fails (systemctl refuses) counts as an unhealthy start: the rollback follows. */
async function restartAndWait(service: GatewayService, seconds: number): Promise<ServiceHealth> {
  try {
    service.restart();
  } catch (err) {
    return { ok: false, detail: errorMessage(err) };
  }
  return service.waitHealthy(seconds);
}

export async function runUpdate(o: UpdateOptions): Promise<number> {
  const crash = o.crashPoint ?? (() => {});
  const journal = readJournal(o.target);
  if (journal && o.check) {
    o.say(`note: a previous update (${journal.from} to ${journal.to}) stopped after the swap: run pinclaw update to finish it`);
  } else if (journal) {
    o.say(`a previous update (${journal.from} to ${journal.to}) stopped after the swap; finishing it`);
    return finish(o, journal);
  }
  // Before anything is fetched: an update that could not be put in place is not worth downloading.
  if (!o.check) checkInstallDir(o.target);
  let release: Release;
  try {
    release = await fetchRelease(o.config, o.arch);
  } catch (err) {
    if (err instanceof ReleaseError) refuse(o, `${err.message}; nothing was changed`);
    // A network or server error: the command line says it, nothing to tell the owner's chat.
    if (err instanceof PinclawError) throw err;
    throw new PinclawError(`${errorMessage(err)}; nothing was changed`);
  }
  const cmp = compareVersions(release.version, o.currentVersion);
  if (o.to !== undefined && release.version !== o.to) {
    throw new PinclawError(`update.url holds ${release.version}, not ${o.to}: point update.url at the release of ${o.to} (it holds one version)`);
  }
  if (cmp === 0) {
    o.say(`pinclaw ${o.currentVersion} is the release at ${release.base}: nothing to do`);
    return 0;
  }
  if (cmp < 0 && !o.allowDowngrade) {
    throw new PinclawError(`the release at ${release.base} is ${release.version}, older than this pinclaw ${o.currentVersion}: a downgrade needs --allow-downgrade (a newer database schema may not be readable by the older version; restore a backup from before the update if so)`);
  }
  if (o.check) {
    o.say(cmp > 0 ? `pinclaw ${release.version} is available (this is ${o.currentVersion}; signed by key ${release.keyId}): run pinclaw update to install it` : `the release at ${release.base} is ${release.version}, older than this ${o.currentVersion}`);
    return 0;
  }
  if (!o.service && !o.yes) {
    throw new PinclawError(`no systemd service runs ${o.target}, so pinclaw update cannot restart and watch it: run \`pinclaw update --yes\` to put ${release.version} in place; the next start runs it (restart the gateway yourself)`);
  }

  const dir = dirname(o.target);
  removeStaleDownloads(o.target, o.say);
  const download = join(dir, `.${basename(o.target)}.download-${process.pid}`);
  try {
    o.say(`downloading ${release.executable} ${release.version} from ${release.base}`);
    try {
      await downloadTo(releaseFileUrl(release.base, release.executable), download);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new PinclawError(e.code && e.syscall ? `cannot write the download next to ${o.target}: ${writeFailure(err, dir)}; nothing was changed` : `${errorMessage(err)}; nothing was changed`);
    }
    crash('after-download');
    const sum = await sha256File(download);
    if (sum !== release.sha256) refuse(o, `the download of ${release.executable} ${release.version} does not match SHA256SUMS (got ${sum}, signed ${release.sha256}): it was damaged or cut short on the way; nothing was changed, try again`);
    let elf;
    try {
      elf = elfInfo(download);
    } catch (err) {
      refuse(o, `${release.executable} ${release.version} is refused: ${errorMessage(err)}; nothing was changed`);
    }
    const arch = o.arch ?? process.arch;
    if (elf.arch !== arch) refuse(o, `${release.executable} ${release.version} is built for ${elf.arch}, but this machine is ${arch}: the release is wrong; nothing was changed`);
    let probed: NewExecutable;
    try {
      probed = probeExecutable(download, o.env);
    } catch (err) {
      refuse(o, `${release.executable} ${release.version} is refused: ${errorMessage(err)}; nothing was changed`);
    }
    if (probed.version !== release.version) refuse(o, `${release.executable} says it is ${probed.version}, but the release is signed as ${release.version}; nothing was changed`);

    // A new schema is migrated by the new gateway's first start; the backup is the way back.
    const schemaNow = databaseSchema(o.paths.database);
    if (schemaNow !== undefined && (probed.schema === undefined || probed.schema !== schemaNow)) {
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const backupDir = join(o.paths.home, 'backups');
      mkdirSync(backupDir, { recursive: true, mode: 0o700 });
      const file = join(backupDir, `before-update-${o.currentVersion}-to-${release.version}-${stamp}.tar.gz`);
      o.say(`the database schema changes (${schemaNow} to ${probed.schema ?? 'unknown'}): backing up the home to ${file}`);
      await o.backup(file);
      // `sudo pinclaw update`: the backup belongs to whoever owns the home, like the rest of it.
      if (process.getuid?.() === 0) {
        const home = statSync(o.paths.home);
        for (const f of [backupDir, file]) chownSync(f, home.uid, home.gid);
      }
    }
    // The new file gets the installed one's mode and owner: a 0700 root file would not start as the service's account.
    const st = statSync(o.target);
    chmodSync(download, st.mode & 0o7777);
    if (process.getuid?.() === 0) chownSync(download, st.uid, st.gid);
    const j: Journal = { from: o.currentVersion, to: release.version, target: o.target };
    try {
      swapIn(o.target, download, j, crash);
    } catch (err) {
      // The download still there: the rename over the target did not happen, the old executable is in
      // place. Gone: only the directory's fsync after it failed, and the update goes on (journal kept).
      if (existsSync(download)) {
        clearJournal(o.target);
        throw new PinclawError(`cannot put ${release.version} in place at ${o.target}: ${writeFailure(err, dir)}; the installed executable is unchanged`);
      }
      o.say(`warning: after the swap: ${writeFailure(err, dir)}`);
    }
  } finally {
    try {
      unlinkSync(download);
    } catch {
      // renamed into place, or never written
    }
  }
  return finish(o, { from: o.currentVersion, to: release.version, target: o.target });
}

/** After the swap: restart and watch under systemd (rolling back on failure), else say what is next. */
async function finish(o: UpdateOptions, j: Journal): Promise<number> {
  if (!o.service) {
    clearJournal(o.target);
    o.say(`pinclaw ${j.to} is in place at ${o.target} (${j.from} kept as ${prevPath(o.target)}): the next start of the gateway runs ${j.to}`);
    return 0;
  }
  o.say(`restarting ${o.service.name} with ${j.to}; waiting up to ${o.config.update.healthSeconds} s for READY=1 and a watchdog ping`);
  const health = await restartAndWait(o.service, o.config.update.healthSeconds);
  if (health.ok) {
    clearJournal(o.target);
    o.say(`updated ${j.from} to ${j.to}: the gateway is healthy (${health.detail})`);
    o.notifyOwner(`pinclaw updated from ${j.from} to ${j.to}`);
    return 0;
  }
  if (!existsSync(prevPath(o.target))) {
    throw new PinclawError(`${j.to} is not healthy (${health.detail}), and there is no ${prevPath(o.target)} to roll back to: reinstall ${j.from} by hand`);
  }
  o.say(`${health.detail}: rolling back to ${j.from}`);
  rollBack(o.target);
  const old = await restartAndWait(o.service, o.config.update.healthSeconds);
  clearJournal(o.target);
  const cause = `the update to ${j.to} was rolled back: ${health.detail}. ${j.from} runs again${old.ok ? '' : ` but is not healthy either (${old.detail}): see pinclaw logs`}`;
  o.notifyOwner(`pinclaw update: ${cause}`);
  throw new PinclawError(cause);
}

