// What the conductor does with memory when it goes quiet (docs/operations.md, "Memory when idle").
//   a quiet second: the C heap's freed blocks go back to the OS (malloc_trim) and the pages of the
//     executable, the addons and the libraries that the turns touched leave the process's page
//     tables (trimFilePages): both cheap to undo, what the next turn runs faults back in.
//   conductor.releaseAfterIdleSeconds quiet (60 by default; 0 never): also the caches only turns use
//     (src/release.ts releaseCaches: rank tables, the embedder, SQLite's page cache), then V8's
//     low-memory collection (reduceHeap: compaction, and the young generation and V8's page pool
//     shrunk, which a plain gc() leaves), so that native memory held by collected handles is freed
//     too, then the same trims. The next turn loads what it needs again, a few milliseconds.
//   conductor.unloadCodeAfterIdleSeconds quiet (900 by default; 0 never): the code only turns run and
//     that is slow to load again (src/release.ts unloadCode: the Anthropic SDK), then the same
//     collection and trims.
// Idle is decided by the conductor, which knows when turns run: quiet() when none is running,
// busy() when one starts. quiet() again without a busy() in between changes nothing, so a pump
// that finds no work does not postpone the release for ever. Work outside turns that loads caches
// again (the memory's re-index, src/release.ts backgroundWorkDone) starts the caches' quiet time
// again; it loads no code, so the unload keeps its time.
import { log } from '../log.js';
import { reduceHeap, trimFilePages, trimMemory } from '../native/index.js';
import { onBackgroundWork, releaseCaches, unloadCode } from '../release.js';

const SETTLE_MS = 1000;

export interface IdleMemory {
  busy(): void;
  quiet(): void;
  stop(): void;
}

function settle(): void {
  trimMemory();
  try {
    trimFilePages();
  } catch (err) {
    log.once('trim-file-pages', 'warn', `memory: cannot trim file pages: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function release(what: 'released' | 'unloaded', drop: () => string[]): void {
  const names = drop();
  reduceHeap();
  // Finalizers of collected native handles run from the immediate queue: trim after them.
  setImmediate(settle);
  log.debug(`memory: ${what} ${names.join(', ') || 'nothing'} after the idle time`);
}

/**
 * V8's low-memory collection, then the trims: what a gateway's start allocated and dropped (its
 * config checks, the channels' setup) is given back once it listens instead of at the first idle
 * release. Caches stay: nothing a turn needs is dropped.
 */
export function collectStartGarbage(): void {
  reduceHeap();
  setImmediate(settle);
}

/** `releaseAfterMs` for the caches, `unloadAfterMs` for the code (src/release.ts); 0: never. */
export function idleMemory(releaseAfterMs: number, unloadAfterMs = 0): IdleMemory {
  let settleTimer: NodeJS.Timeout | undefined;
  let releaseTimer: NodeJS.Timeout | undefined;
  let unloadTimer: NodeJS.Timeout | undefined;
  let quiet = false;
  // unref'd: memory housekeeping never keeps a process (a CLI turn) alive.
  const startCaches = () => {
    settleTimer = setTimeout(settle, SETTLE_MS).unref();
    if (releaseAfterMs > 0) releaseTimer = setTimeout(() => release('released', releaseCaches), releaseAfterMs).unref();
  };
  const clearCaches = () => {
    clearTimeout(settleTimer);
    clearTimeout(releaseTimer);
    settleTimer = releaseTimer = undefined;
  };
  const clear = () => {
    clearCaches();
    clearTimeout(unloadTimer);
    unloadTimer = undefined;
  };
  // Work done while quiet (the memory's re-index) loaded caches again: their quiet time starts from
  // now. While a turn runs there is nothing to do: its end starts the quiet time.
  const offWork = onBackgroundWork(() => {
    if (!quiet) return;
    clearCaches();
    startCaches();
  });
  return {
    busy() {
      clear();
      quiet = false;
    },
    quiet() {
      if (quiet) return;
      quiet = true;
      startCaches();
      if (unloadAfterMs > 0) unloadTimer = setTimeout(() => release('unloaded', unloadCode), unloadAfterMs).unref();
    },
    stop() {
      clear();
      quiet = false;
      offWork();
    },
  };
}
