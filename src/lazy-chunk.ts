// Code an idle gateway never runs (the Anthropic SDK, the HTML parser, the Telegram channel,
// the memory) is not part of the main bundle: every KiB there is parsed and held at start whether or
// not it is used (measured, see bench/README.md). scripts/build.mjs builds each such piece as its own
// CommonJS file, a "lazy chunk": next to the bundle as dist/lazy/<name>.cjs, and inside the single
// executable as the asset lazy/<name>.cjs. The bundle reaches a chunk only through a dynamic import()
// of one of its entries, which the build turns into a call of loadLazyChunk, so the chunk is read and
// evaluated on first use; a chunk's own import() of another chunk's entry goes the same way. A chunk
// marked unloadable in scripts/build.mjs is imported as a view (lazyChunkView) instead, so that the
// idle release can drop it (unloadLazyChunk) and V8 free it.
//
// A module of src/ exists once per process. A chunk may import modules of src/ that the main bundle
// holds (the logger, the errors, the store, the native loader...): those are not compiled into the
// chunk but become require('pinclaw-host:src/<file>') calls, answered here with the bundle's own
// instances, so the logger's level and redactor, the native loader's cache and the classes behind
// instanceof are the same on both sides. The bundle registers exactly the modules its chunks ask
// for (the build computes the list and generates the registration, evaluated with the first chunk).
// A module of src/ that the bundle does not hold is compiled into the one chunk that uses it; two
// chunks sharing such a module is a build error (each would have its own copy). The one exception
// is explicit: a module without state that the bundle holds only a sliver of (its other exports
// tree-shaken) may be listed as a chunk's own copy, so that the bundle does not grow by it (see
// lazyChunks in scripts/build.mjs). Under tsx and tap none of this happens: the import() is an
// ordinary import.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import { chunkCompiled, readChunkCache } from './lazy-chunk-cache.js';
import { log } from './log.js';
import { isSea, seaTextAsset } from './native/sea.js';
import { loadBuiltin, underHeldFlags } from './v8-flags.js';

/** The prefix of a chunk's require() of a bundle module (scripts/build.mjs writes the same). */
const HOST_PREFIX = 'pinclaw-host:';

const loaded = new Map<string, unknown>();
/** 'src/log.ts' → the bundle's module namespace of src/log.ts; set by the build's generated code. */
let hostModules: Readonly<Record<string, object>> = {};

/** Called once by the registration scripts/build.mjs generates into the bundle; nothing else calls it. */
export function registerHostModules(modules: Readonly<Record<string, object>>): void {
  hostModules = modules;
}

function source(name: string): { code: string; filename: string } {
  if (isSea()) return { code: seaTextAsset(`lazy/${name}.cjs`), filename: `${process.execPath}/lazy/${name}.cjs` };
  const filename = join(dirname(fileURLToPath(import.meta.url)), 'lazy', `${name}.cjs`);
  try {
    return { code: readFileSync(filename, 'utf8'), filename };
  } catch (err) {
    throw new Error(`the lazy chunk ${name} is missing (${filename}): rebuild with npm run build`, { cause: err });
  }
}

/** The require a chunk sees: the bundle's modules by their src/ path, Node's built-in modules otherwise. */
function chunkRequire(name: string, filename: string): NodeJS.Require {
  // Relative to the chunk: besides the bundle's modules, chunks need only Node's built-in modules.
  const nodeRequire = createRequire(filename);
  const req = (id: string): unknown => {
    // A built-in a chunk brings first (node:https at the first https: request, what its libraries
    // import) under V8's defaults, so that Node's code cache of it is taken (src/v8-flags.ts).
    if (!id.startsWith(HOST_PREFIX)) return loadBuiltin(id, () => nodeRequire(id));
    const key = id.slice(HOST_PREFIX.length);
    const m = hostModules[key];
    // A bundle and chunks from different builds: the chunk would otherwise fail later and obscurely.
    if (m === undefined) throw new Error(`the lazy chunk ${name} needs ${key}, which this bundle does not provide: rebuild with npm run build`);
    return m;
  };
  // resolve, cache, main, extensions: for package code in a chunk that looks at them.
  return Object.assign(req, nodeRequire);
}

/** The module.exports of a chunk (its entries by name), evaluated once. Throws when the chunk is missing. */
export function loadLazyChunk(name: string): unknown {
  if (loaded.has(name)) return loaded.get(name);
  const { code, filename } = source(name);
  const module = { exports: {} as unknown };
  // A Script of the wrapped source, as the executable's loader compiles the bundle: its code cache can
  // be made after the chunk's first use, with the functions that use compiled (lazy-chunk-cache.ts).
  const cache = readChunkCache(name, code);
  const script = underHeldFlags(() => new Script(`(function (exports, require, module, __filename, __dirname) {${code}\n})`, { filename, ...(cache?.data ? { cachedData: cache.data } : {}) }));
  if (cache?.data) log.debug(`lazy chunk ${name}: ${script.cachedDataRejected ? 'V8 refused its code cache (another Node or other flags); compiled from source' : 'compiled from its code cache'}`);
  if (cache && (!cache.data || script.cachedDataRejected)) chunkCompiled(name, cache.file, script);
  const fn = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: { exports: unknown }, filename: string, dirname: string) => void;
  fn(module.exports, chunkRequire(name, filename), module, filename, dirname(filename));
  loaded.set(name, module.exports);
  return module.exports;
}

/**
 * An entry of an unloadable chunk as its importers see it (scripts/build.mjs makes the import() of
 * such an entry return this): each use reads the chunk as loaded now, so that once unloadLazyChunk
 * has dropped it only the caller's own references keep it alive. The entry may be a function or a
 * class (the Anthropic SDK's module is one): the target is a bound function, constructible and
 * callable, and without the non-configurable `prototype` that would tie the proxy's answers.
 */
export function lazyChunkView(name: string, entry: string): object {
  const current = (): object => (loadLazyChunk(name) as Record<string, object>)[entry]!;
  const target = function () {}.bind(null);
  return new Proxy(target, {
    get: (_t, key) => Reflect.get(current(), key),
    has: (_t, key) => Reflect.has(current(), key),
    ownKeys: () => Reflect.ownKeys(current()),
    // Reported configurable: the target does not hold the property, and a non-configurable one it
    // does not hold would break the Proxy's invariants.
    getOwnPropertyDescriptor: (_t, key) => {
      const d = Reflect.getOwnPropertyDescriptor(current(), key);
      return d && { ...d, configurable: true };
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(current()),
    apply: (_t, self, args) => Reflect.apply(current() as (...a: unknown[]) => unknown, self, args),
    construct: (_t, args) => Reflect.construct(current() as new (...a: unknown[]) => object, args),
  });
}

/**
 * Forgets a loaded chunk: the next use evaluates it again. What it frees depends on its users
 * dropping their references too (see the release in src/agent/providers/anthropic.ts). False when
 * it was not loaded (and always under tsx and tap, where there are no chunks).
 */
export function unloadLazyChunk(name: string): boolean {
  const exports = loaded.get(name);
  if (!loaded.delete(name)) return false;
  // Said once V8 has freed it (a debug line): what tells that nothing else held on to it.
  if (typeof exports === 'object' && exports !== null) collected.register(exports, name);
  return true;
}

const collected = new FinalizationRegistry<string>((name) => log.debug(`lazy chunk ${name}: unloaded and collected`));
