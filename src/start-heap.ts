// V8's young generation during a start of the executable. The loader (scripts/sea-main.cjs) holds it
// at its first size, 1 MiB semi-spaces, with --semi-space-growth-factor=1 (scripts/build-sea.mjs
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
// In a dev tree nothing is held and nothing here changes a flag.
import { setFlagsFromString } from 'node:v8';
import { isSea } from './native/sea.js';

/** What scripts/build-sea.mjs LOADER_V8_FLAGS holds (test/sea.test.ts: a chunk's cache is taken). */
const HELD = '--semi-space-growth-factor=1';
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
