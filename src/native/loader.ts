// Loads native addons: from the assets of the single executable (extracted once under a content
// hash, verified against the embedded bytes on every load) or from a dev tree's build output.
// Nothing else in pinclaw knows where a .node file lives.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../fsutil.js';
import { errorMessage } from '../errors.js';
import { projectRoot } from './root.js';
import { isSea, seaAsset, seaTextAsset } from './sea.js';

export const ADDONS = ['pinclaw', 'better_sqlite3', 'usearch', 'serialport', 'i2c'] as const;
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
}
let settings: Settings = { cacheDir: join(tmpdir(), `pinclaw-cache-${process.getuid?.() ?? 0}`), enabled: true };
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
    case 'better_sqlite3':
      return [join(pkgDir('better-sqlite3'), 'build', 'Release', 'better_sqlite3.node')];
    case 'usearch': {
      const dir = pkgDir('usearch');
      return [join(dir, 'build', 'Release', 'usearch.node'), join(dir, 'prebuilds', `linux-${arch}`, 'usearch.node')];
    }
    case 'serialport': {
      const dir = pkgDir('@serialport/bindings-cpp', createRequire(join(pkgDir('serialport'), 'package.json')));
      const tag = arch === 'arm64' ? 'armv8.glibc' : 'glibc';
      return [join(dir, 'build', 'Release', 'bindings.node'), join(dir, 'prebuilds', `linux-${arch}`, `@serialport+bindings-cpp.${tag}.node`)];
    }
    case 'i2c':
      return [join(pkgDir('i2c-bus'), 'build', 'Release', 'i2c.node')];
  }
}

let manifest: SeaManifest | undefined;
export function seaManifest(): SeaManifest {
  manifest ??= JSON.parse(seaTextAsset(MANIFEST_ASSET)) as SeaManifest;
  return manifest;
}

/**
 * The cached copy of an embedded addon. The file name carries the content hash, so a new executable
 * never reuses an old addon; the bytes are compared with the embedded asset on every load, so a
 * truncated or corrupted cache file is replaced rather than dlopen'ed.
 */
export function extractAsset(name: AddonName): string {
  const entry = seaManifest().addons[name];
  if (!entry) throw new Error(`${name} is not embedded in this executable`);
  const bytes = seaAsset(entry.asset);
  const dir = join(settings.cacheDir, 'native', entry.sha256.slice(0, 16));
  const file = join(dir, `${name}.node`);
  if (existsSync(file)) {
    const onDisk = readFileSync(file);
    if (onDisk.length === bytes.length && onDisk.equals(bytes)) return file;
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

/** Loads an addon or throws an Error naming the addon and the reason. Results are memoized, failures too. */
export function loadAddon<T = unknown>(name: AddonName): T {
  let hit = loaded.get(name);
  if (!hit) {
    const status: AddonStatus = { name, loaded: false };
    let exports: unknown = null;
    try {
      if (name === 'pinclaw' && !settings.enabled) throw new Error('disabled by configuration (native.enabled = false)');
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
