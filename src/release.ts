// What a quiet gateway gives back. A module that keeps something only turns need (the tokenizer's
// rank table, the embedder's word table, SQLite's page cache) registers how to drop it here; the
// conductor calls releaseCaches() once no turn has run for conductor.releaseAfterIdleSeconds, and
// the next turn loads again what it needs (tens of milliseconds). A leaf module: anything may
// depend on it, it depends on nothing of pinclaw's but the logger.
import { errorMessage } from './errors.js';
import { log } from './log.js';

const releasers = new Map<string, () => void>();

/** Registers (or replaces) the release function called `name`; returns a function that removes it. */
export function onRelease(name: string, release: () => void): () => void {
  releasers.set(name, release);
  return () => {
    if (releasers.get(name) === release) releasers.delete(name);
  };
}

/**
 * Calls every release function. One that throws is logged and does not stop the others: a cache
 * that could not be dropped is memory kept, not a failure of anything the user asked for.
 */
export function releaseCaches(): string[] {
  const done: string[] = [];
  for (const [name, release] of [...releasers]) {
    try {
      release();
      done.push(name);
    } catch (err) {
      log.warn(`memory: releasing ${name} failed: ${errorMessage(err)}`);
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
