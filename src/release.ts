// What a quiet gateway gives back. A module that keeps something only turns need registers how to drop
// it here, as one of two kinds:
//   caches (onRelease): the tokenizer's rank table, the embedder's word table, SQLite's page cache;
//     the conductor calls releaseCaches() once no turn has run for conductor.releaseAfterIdleSeconds,
//     and the next turn loads again what it needs (a few milliseconds each on x64);
//   code (onUnload): a lazy chunk that is slow to load again (the Anthropic SDK: about 20 ms of the
//     next turn on x64, several times that on a Pi, for 2.3 MiB held), unloaded by unloadCode() after
//     the longer conductor.unloadCodeAfterIdleSeconds, so that a conversation whose messages come
//     minutes apart keeps it and a gateway left alone for the night does not.
// A leaf module: anything may depend on it, it depends on nothing of pinclaw's but the logger.
import { errorMessage } from './errors.js';
import { log } from './log.js';

const caches = new Map<string, () => void>();
const code = new Map<string, () => void>();

function register(kind: Map<string, () => void>, name: string, release: () => void): () => void {
  kind.set(name, release);
  return () => {
    if (kind.get(name) === release) kind.delete(name);
  };
}

/** Registers (or replaces) the cache release called `name`; returns a function that removes it. */
export function onRelease(name: string, release: () => void): () => void {
  return register(caches, name, release);
}

/** Registers (or replaces) the code unload called `name`; returns a function that removes it. */
export function onUnload(name: string, unload: () => void): () => void {
  return register(code, name, unload);
}

/**
 * Calls every cache release; returns the names of those that ran. One that throws is logged and does
 * not stop the others: a cache that could not be dropped is memory kept, not a failure of anything
 * the user asked for.
 */
export function releaseCaches(): string[] {
  return runAll(caches, 'releasing');
}

/** Calls every code unload, as releaseCaches does the caches. */
export function unloadCode(): string[] {
  return runAll(code, 'unloading');
}

function runAll(kind: Map<string, () => void>, doing: string): string[] {
  const done: string[] = [];
  for (const [name, release] of [...kind]) {
    try {
      release();
      done.push(name);
    } catch (err) {
      log.warn(`memory: ${doing} ${name} failed: ${errorMessage(err)}`);
    }
  }
  return done;
}

const workListeners = new Set<() => void>();

/**
 * Says that work outside turns (the memory's re-index after a file changed, its background embedding)
 * has just loaded what the release frees (the embedder): a quiet gateway's release timer starts
 * again from now, so that it is freed again (src/conductor/idle-memory.ts listens).
 */
export function backgroundWorkDone(): void {
  for (const listener of [...workListeners]) {
    try {
      listener();
    } catch (err) {
      log.warn(`memory: a listener of background work failed: ${errorMessage(err)}`);
    }
  }
}

/** Called at each backgroundWorkDone(); returns a function that removes it. */
export function onBackgroundWork(listener: () => void): () => void {
  workListeners.add(listener);
  return () => workListeners.delete(listener);
}
