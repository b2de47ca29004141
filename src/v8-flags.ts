// The executable's V8 flags at run time: the young generation's growth during a start, the flags a
// code cache is made under, and V8's defaults for the moment a built-in module is first loaded.
//
// V8's young generation during a start of the executable. The loader (scripts/sea-main.cjs) holds it
// at its first size, 1 MiB semi-spaces, with --semi-space-growth-factor=1 (scripts/v8-flags.mjs
// says why: the size --optimize-for-size gives when it is set at launch, for an idle gateway's and a
// busy one's memory). A start allocates about 3.4 MiB on it that mostly survives (module closures,
// the config, the tools), so under the hold a warm gateway start made three scavenges before it
// listened, 0.7-1.3 ms each. Here V8's own growth (factor 2) applies during the start's first task,
// which is a warm start's whole path to "listening": two scavenges, and 2.4 ms less in paired warm
// starts (docs/performance.md, "Eleventh pass"). The first turn of the event loop sets the hold
// again, and the gateway's collection once listening (collectStartGarbage) shrinks the young
// generation back (bench:footprint's idle figure is unchanged).
//
// V8 refuses a code cache made under other flags, and every flag counts, this one too: a lazy
// chunk's cache is read and written under the hold's flags (underHeldFlags), the state it is in
// after a start, so a chunk a start loads and an idle gateway's chunks share one cache.
//
// Node's code cache of its own built-in modules is taken only under V8's default flags, so the
// loader loads what a command is known to need before it sets the executable's flags. A built-in
// first loaded later (node:crypto, node:zlib, node:fs/promises at a gateway's first turn, node:https
// at its first https: request) was compiled from its source: 17-23 ms against 7-10 from the cache
// for the first three and the web streams, in a bare Node 24.21 under these flags. The build routes
// those loads through loadBuiltin (scripts/build.mjs), which sets V8's defaults for the load and the
// executable's flags again after it (about 12 us for the pair; only the built-in's own code runs in
// between, which is what the loader's early loads already run without the flags). V8's flags are
// the process's: a worker thread that compiled a pattern in those microseconds would compile it
// without the regular-expressions' fallback. pinclaw's one JavaScript worker (the grep tool's,
// src/tools/files/search-regex.ts) is itself the containment of the patterns the fallback cannot
// take: it is ended at its deadline.
// In a dev tree nothing is held and nothing here changes a flag.
import { setFlagsFromString } from 'node:v8';
import { isSea } from './native/sea.js';

/**
 * The executable's flags (scripts/v8-flags.mjs V8_FLAGS, given by the build), besides the young
 * generation's: all of the form --name or --no-name, so V8's default is the other one.
 */
declare const __PINCLAW_V8_FLAGS__: readonly string[] | undefined;

/** What scripts/v8-flags.mjs LOADER_V8_FLAGS holds (test/sea.test.ts: a chunk's cache is taken). */
const HELD = '--semi-space-growth-factor=1';
/** V8's default, which also counts in the flag check of Node's code cache. */
const GROWING = '--semi-space-growth-factor=2';

let growing = false;

/** Lets the young generation grow until the first turn of the event loop (the executable only). */
export function growDuringStart(): void {
  if (growing || !isSea()) return;
  setFlagsFromString(GROWING);
  growing = true;
  setImmediate(() => {
    growing = false;
    setFlagsFromString(HELD);
  }).unref();
}

/** Runs `fn` (a code cache's compile or creation) under the flags the loader set. */
export function underHeldFlags<T>(fn: () => T): T {
  if (!growing) return fn();
  setFlagsFromString(HELD);
  try {
    return fn();
  } finally {
    setFlagsFromString(GROWING);
  }
}

/** The flag that undoes `flag` (--name or --no-name), for a flag that is on or off. */
function defaultOf(flag: string): string {
  if (!/^--[a-z][a-z0-9-]*$/.test(flag)) throw new Error(`${flag}: not a flag of the form --name or --no-name, whose default is the other one`);
  return flag.startsWith('--no-') ? `--${flag.slice('--no-'.length)}` : `--no-${flag.slice(2)}`;
}

let executableFlags: { set: readonly string[]; defaults: readonly string[] } | undefined;

/** The flags the loader set and their defaults: none in a dev tree, where Node runs with its defaults. */
function setFlags(): { set: readonly string[]; defaults: readonly string[] } {
  if (!executableFlags) {
    const set = isSea() && typeof __PINCLAW_V8_FLAGS__ !== 'undefined' ? __PINCLAW_V8_FLAGS__ : [];
    executableFlags = { set, defaults: set.map(defaultOf) };
  }
  return executableFlags;
}

/** Whether Node has this built-in loaded already (process.moduleLoadList: "NativeModule fs/promises"). */
function loaded(name: string): boolean {
  const list = (process as { moduleLoadList?: readonly string[] }).moduleLoadList;
  return list?.includes(`NativeModule ${name.replace(/^node:/, '')}`) ?? false;
}

/**
 * A built-in module's first load (`load` requires it) under V8's default flags, so that Node's code
 * cache of it is taken; the executable's flags are set again after it, also when it throws. One
 * already loaded, and any in a dev tree, is just required.
 */
export function loadBuiltin<T>(name: string, load: () => T): T {
  const { set, defaults } = setFlags();
  if (!set.length || loaded(name)) return load();
  for (const flag of defaults) setFlagsFromString(flag);
  if (!growing) setFlagsFromString(GROWING);
  try {
    return load();
  } finally {
    for (const flag of set) setFlagsFromString(flag);
    if (!growing) setFlagsFromString(HELD);
  }
}
