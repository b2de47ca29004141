// Loads native addons: from the assets of the single executable (extracted once under a content
// hash, and verified before every load, see src/native/extract.ts) or from a dev tree's build output.
// Nothing else in pinclaw knows where a .node file lives.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { errorMessage } from '../errors.js';
import { projectRoot } from './root.js';
import { extractAddon, prefetchAddon, type SeaManifestEntry } from './extract.js';
import { isSea, seaTextAsset } from './sea.js';

export const ADDONS = ['pinclaw', 'better_sqlite3', 'serialport', 'i2c'] as const;
export type AddonName = (typeof ADDONS)[number];

export interface AddonStatus {
  name: AddonName;
  loaded: boolean;
  source?: 'sea' | 'dev';
  path?: string;
  error?: string;
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

/** Where the embedded addon `name` is loaded from (src/native/extract.ts: extracted once, then trusted by its stamp). */
export function extractAsset(name: AddonName): string {
  const entry = seaManifest().addons[name];
  if (!entry) throw new Error(`${name} is not embedded in this executable`);
  return extractAddon(name, entry, settings, (tmp, file) => {
    // The status `doctor` and `status` show names the file as it is now called.
    for (const hit of loaded.values()) if (hit.status.path === tmp) hit.status.path = file;
  });
}

/**
 * A gateway's first start: the addons it will extract before it listens are decompressed on the
 * thread pool while its modules are evaluated (src/native/extract.ts, prefetchAddon). Await it
 * before the first load (an await lets the thread pool's results in). Nothing in a dev tree.
 */
export function prefetchAddons(names: readonly AddonName[], cacheDir: string): Promise<unknown> {
  try {
    if (!isSea()) return Promise.resolve();
    return Promise.all(names.flatMap((name) => {
      const entry = seaManifest().addons[name];
      return entry ? [prefetchAddon(name, entry, cacheDir)] : [];
    }));
  } catch {
    return Promise.resolve(); // a damaged manifest: the load says so
  }
}

/**
 * Once the gateway listens (and at any process's exit): the addons its start extracted and loaded
 * from temporary files are flushed and named (src/native/extract.ts).
 */
export { settleExtractions } from './extract.js';

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
