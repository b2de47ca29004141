// Loads native addons: from the assets of the single executable (extracted once under a content
// hash, and verified before every load, see extractAsset) or from a dev tree's build output.
// Nothing else in pinclaw knows where a .node file lives.
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, type BigIntStats } from 'node:fs';
import { createRequire } from 'node:module';
import { constants, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../fsutil.js';
import { errorMessage } from '../errors.js';
import { projectRoot } from './root.js';
import { isSea, seaBinaryAsset, seaTextAsset } from './sea.js';

export const ADDONS = ['pinclaw', 'better_sqlite3', 'serialport', 'i2c'] as const;
export type AddonName = (typeof ADDONS)[number];

export interface AddonStatus {
  name: AddonName;
  loaded: boolean;
  source?: 'sea' | 'dev';
  path?: string;
  error?: string;
}

export interface SeaManifestEntry {
  asset: string;
  sha256: string;
  size: number;
}
export interface SeaManifest {
  arch: string;
  node: string;
  addons: Partial<Record<AddonName, SeaManifestEntry>>;
}
export const MANIFEST_ASSET = 'native/manifest.json';

interface Settings {
  cacheDir: string;
  enabled: boolean;
  /** Compare every cached addon with the embedded bytes before loading it, stamp or not (doctor). */
  compareBytes: boolean;
}
let settings: Settings = { cacheDir: join(tmpdir(), `pinclaw-cache-${process.getuid?.() ?? 0}`), enabled: true, compareBytes: false };
const loaded = new Map<AddonName, { exports: unknown; status: AddonStatus }>();

/** Called once the CLI knows $PINCLAW_HOME and the config; before that, a temp cache is used. */
export function configureNative(next: Partial<Settings>): void {
  settings = { ...settings, ...next };
}

/** A package's directory, also for packages whose `exports` hide their package.json. */
export function packageDir(name: string, req: NodeRequire): string {
  let dir = dirname(req.resolve(name));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === name) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the directory of package ${name}`);
    dir = up;
  }
}

function devCandidates(name: AddonName, root: string): string[] {
  const req = createRequire(join(root, 'package.json'));
  const pkgDir = (pkg: string, from = req) => packageDir(pkg, from);
  const arch = process.arch;
  switch (name) {
    case 'pinclaw':
      return [join(root, 'build', 'Release', 'pinclaw.node')];
    case 'better_sqlite3': {
      // N-API prebuilds in the npm package; a build/ of its own only when compiled on purpose
      // (better-sqlite3's lib/binding.js prefers it too).
      const dir = pkgDir('better-sqlite3');
      return [join(dir, 'build', 'Release', 'better_sqlite3.node'), join(dir, 'prebuilds', `linux-${arch}.node`)];
    }
    case 'serialport': {
      const dir = pkgDir('@serialport/bindings-cpp', createRequire(join(pkgDir('serialport'), 'package.json')));
      const tag = arch === 'arm64' ? 'armv8.glibc' : 'glibc';
      return [join(dir, 'build', 'Release', 'bindings.node'), join(dir, 'prebuilds', `linux-${arch}`, `@serialport+bindings-cpp.${tag}.node`)];
    }
    case 'i2c':
      // nan: built for one Node ABI, the dev tree's Node 24 (scripts/dev-node.mjs puts it there).
      return [join(pkgDir('i2c-bus'), 'build', 'Release', 'i2c.node')];
  }
}

let manifest: SeaManifest | undefined;
export function seaManifest(): SeaManifest {
  manifest ??= JSON.parse(seaTextAsset(MANIFEST_ASSET)) as SeaManifest;
  return manifest;
}

/**
 * What a stamp records of a cached addon's file when its bytes were last found equal to the
 * embedded copy: any write to the file, or its replacement, changes the inode, the size or the
 * change time (ctime, which unlike mtime no one can set back without root).
 */
interface Stamp {
  sha256: string;
  dev: string;
  ino: string;
  size: string;
  mtimeNs: string;
  ctimeNs: string;
}
const stampOf = (sha256: string, st: BigIntStats): Stamp => ({
  sha256, dev: String(st.dev), ino: String(st.ino), size: String(st.size), mtimeNs: String(st.mtimeNs), ctimeNs: String(st.ctimeNs),
});
const sameStamp = (a: Stamp, b: Stamp): boolean => a.sha256 === b.sha256 && a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;

function lstatOrNull(path: string): BigIntStats | null {
  try {
    return lstatSync(path, { bigint: true });
  } catch {
    return null;
  }
}

/**
 * Only where no one else can write: the file and its directory ours and writable by us alone. A
 * stamp in a directory someone else controls (a cache left to a shared /tmp) proves nothing.
 */
function privatelyOwned(st: BigIntStats | null): boolean {
  const uid = process.getuid?.();
  return st !== null && (uid === undefined || st.uid === BigInt(uid)) && (st.mode & 0o022n) === 0n;
}

function stampValid(file: string, sha256: string): boolean {
  const st = lstatOrNull(file);
  if (!st?.isFile() || !privatelyOwned(st) || !privatelyOwned(lstatOrNull(dirname(file)))) return false;
  try {
    return sameStamp(JSON.parse(readFileSync(`${file}.verified`, 'utf8')) as Stamp, stampOf(sha256, st));
  } catch {
    return false;
  }
}

/** After a comparison of the bytes: `before` is the file's stat from before they were read. */
function writeStamp(file: string, sha256: string, before: BigIntStats): void {
  const after = lstatOrNull(file);
  // Changed while we read it: no stamp, so the next load compares again.
  if (!after || !sameStamp(stampOf(sha256, before), stampOf(sha256, after))) return;
  try {
    // Not flushed to the disk (two fsyncs fewer in a first start): the addon was flushed before this
    // is written, and a stamp lost or stale after a power cut only makes the next load compare the bytes.
    writeFileAtomic(`${file}.verified`, JSON.stringify(stampOf(sha256, after)), 0o600, { fsync: false });
  } catch {
    // A cache we cannot write stamps in still works: each load then compares the bytes.
  }
}

/**
 * The cached copy of an embedded addon. The directory name carries the content hash, so a new
 * executable never reuses an old addon. A truncated, corrupted or replaced cache file is replaced
 * rather than dlopen'ed: its bytes are compared with the embedded asset when it is written and
 * whenever its stamp (`<name>.node.verified`, written after a comparison) no longer matches the
 * file's inode, size, mtime and ctime. While the stamp matches, a start reads neither copy: the
 * comparison read the cached file and the embedded asset in full on every start, which cost
 * ~3 MiB of idle memory (the read copy, and the asset's pages of the executable) and, on a
 * Raspberry Pi after a reboot, the time to read ~3 MB of the executable from the SD card. What the
 * stamp cannot see is a change that leaves the metadata alone (media corruption under the file
 * system); that is the risk every page of the executable itself runs, and `doctor` compares the
 * bytes regardless of the stamp (compareBytes).
 */
export function extractAsset(name: AddonName): string {
  const entry = seaManifest().addons[name];
  if (!entry) throw new Error(`${name} is not embedded in this executable`);
  const dir = join(settings.cacheDir, 'native', entry.sha256.slice(0, 16));
  const file = join(dir, `${name}.node`);
  if (!settings.compareBytes && stampValid(file, entry.sha256)) return file;
  const bytes = seaBinaryAsset(entry.asset);
  const before = lstatOrNull(file);
  if (before?.isFile()) {
    const onDisk = readFileSync(file);
    if (onDisk.length === bytes.length && onDisk.equals(bytes)) {
      writeStamp(file, entry.sha256, before);
      return file;
    }
  }
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (digest !== entry.sha256 || bytes.length !== entry.size) {
    throw new Error(`embedded asset ${entry.asset} is damaged (sha256 ${digest.slice(0, 12)}…, expected ${entry.sha256.slice(0, 12)}…)`);
  }
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileAtomic(file, bytes, 0o700);
  } catch (err) {
    throw new Error(`cannot extract ${name} addon to ${file}: ${errorMessage(err)}`);
  }
  // Written from bytes whose hash was just checked: as good as compared.
  const written = lstatOrNull(file);
  if (written) writeStamp(file, entry.sha256, written);
  return file;
}

function dlopen(file: string): unknown {
  const mod = { exports: {} as unknown };
  process.dlopen(mod, file, constants.dlopen.RTLD_NOW);
  return mod.exports;
}

function locate(name: AddonName): { path: string; source: 'sea' | 'dev' } {
  if (isSea()) return { path: extractAsset(name), source: 'sea' };
  const root = projectRoot();
  if (!root) throw new Error('no project tree found next to this script');
  const candidates = devCandidates(name, root);
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`not built: none of ${candidates.join(', ')} exists`);
  return { path: found, source: 'dev' };
}

/**
 * The Node-API version an addon needs where some Node it might meet lacks it. An addon asking for
 * more than the running Node has crashes the process in dlopen (better-sqlite3 13 on Node 20:
 * SIGSEGV) instead of failing; this turns that into an error that says what to do.
 */
const NAPI_NEEDED: Partial<Record<AddonName, number>> = { better_sqlite3: 10 };

function checkNapi(name: AddonName): void {
  const need = NAPI_NEEDED[name];
  const have = Number(process.versions.napi ?? 0);
  if (need !== undefined && have < need) {
    throw new Error(`needs Node-API ${need} (Node 22.14 or later); Node ${process.version} has ${have}. pinclaw runs on Node 24 (npm start and npm test use it: scripts/dev-node.mjs)`);
  }
}

/** Loads an addon or throws an Error naming the addon and the reason. Results are memoized, failures too. */
export function loadAddon<T = unknown>(name: AddonName): T {
  let hit = loaded.get(name);
  if (!hit) {
    const status: AddonStatus = { name, loaded: false };
    let exports: unknown = null;
    try {
      if (name === 'pinclaw' && !settings.enabled) throw new Error('disabled by configuration (native.enabled = false)');
      checkNapi(name);
      const where = locate(name);
      status.path = where.path;
      status.source = where.source;
      exports = dlopen(where.path);
      status.loaded = true;
    } catch (err) {
      status.error = errorMessage(err);
    }
    hit = { exports, status };
    loaded.set(name, hit);
  }
  if (!hit.status.loaded) throw new Error(`native addon ${name} unavailable: ${hit.status.error}`);
  return hit.exports as T;
}

export function tryAddon<T = unknown>(name: AddonName): T | null {
  try {
    return loadAddon<T>(name);
  } catch {
    return null;
  }
}

export function addonStatus(name: AddonName): AddonStatus {
  tryAddon(name);
  return { ...loaded.get(name)!.status };
}
