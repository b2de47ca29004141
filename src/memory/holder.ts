// The memory of a process, opened on first use: a gateway that nobody talks to never loads the
// embedder, the index or the vectors. The first use also brings the workspace's memory files up to
// date; a gateway then watches them (debounced) and saves the index snapshot when it stops.
// This module is part of the main bundle; the memory itself (memory.ts and everything under it, the
// embedders) is the lazy chunk 'memory' (src/lazy-chunk.ts), reached only through import().
import { watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { PinclawConfig } from '../config/schema.js';
import { errorMessage, PinclawError } from '../errors.js';
import { log } from '../log.js';
import { backgroundWorkDone } from '../release.js';
import { loadBuiltin } from '../v8-flags.js';
import { getTokenizer } from '../native/tokenizer.js';
import type { Paths } from '../paths.js';
import type { Db } from '../store/db.js';
import type { Memory, MemoryInputError } from './memory.js';

/**
 * `err` if it is the memory refusing bad input (a MemoryInputError), else undefined. The class lives
 * in the memory's chunk, which is imported here only for an error of pinclaw's that could be one
 * (by then the memory has been loaded anyway).
 */
export async function memoryInputError(err: unknown): Promise<MemoryInputError | undefined> {
  if (!(err instanceof PinclawError)) return undefined;
  const { MemoryInputError } = await import('./memory.js');
  return err instanceof MemoryInputError ? err : undefined;
}

export interface MemoryHolder {
  get(): Promise<Memory>;
  /** re-indexes the memory files when they change (debounced); returns the stop */
  watchFiles(debounceMs?: number): () => void;
  /** saves the index snapshot if the memory was opened and changed */
  close(): void;
}

/** ~4 characters a token: only when the tokenizer's data cannot load, so chunking still works. */
const roughCount = (s: string) => Math.ceil(s.length / 4);

/**
 * The chunks' sizer. The tokenizer's table (4.5 MiB, 30-40 ms to decompress and load) is loaded by
 * the first count, not when the memory opens: a turn that recalls and writes nothing counts nothing,
 * and a one-shot turn (`pinclaw agent`) used to load it for nothing (docs/performance.md, "Twelfth pass").
 */
function tokenCount(): (s: string) => number {
  let count: ((s: string) => number) | undefined;
  return (s) => {
    if (!count) {
      try {
        const t = getTokenizer('o200k_base');
        count = (text) => t.count(text);
      } catch (err) {
        log.warn(`memory: chunks are sized by a character estimate: the tokenizer did not load (${errorMessage(err)})`);
        count = roughCount;
      }
    }
    return count(s);
  };
}

export function memoryHolder(o: { db: Db; paths: Paths; config: PinclawConfig; env: NodeJS.ProcessEnv }): MemoryHolder {
  let opening: Promise<Memory> | undefined;
  let opened: Memory | undefined;
  // Set by watchFiles(): a long-running process (the gateway) also does the background work.
  let maintaining = false;

  /**
   * After a change of embedder (or a server that was down) the chunks without a vector of the
   * current one are embedded in the background, with progress in the log; until then keyword search
   * finds them. Never two embedders' vectors in one query.
   */
  const reembedInBackground = (memory: Memory) => {
    const missing = memory.unembedded();
    if (missing === 0 || !memory.embedder) return;
    const id = memory.embedder.id;
    log.info(`memory: ${missing} chunks have no vector of ${id}; embedding them in the background`);
    let lastTenth = 0;
    void memory.reembed((done, total) => {
      const tenth = Math.floor((done * 10) / total);
      if (tenth > lastTenth) {
        lastTenth = tenth;
        log.info(`memory: embedding with ${id}: ${done} of ${total} chunks`);
      }
    }).then(backgroundWorkDone, (err: unknown) => {
      log.warn(`memory: background embedding stopped: ${errorMessage(err)}`);
      backgroundWorkDone();
    });
  };
  const open = async (): Promise<Memory> => {
    const [{ createEmbedder }, { openMemory }] = await Promise.all([import('./embedders/index.js'), import('./memory.js')]);
    const embedder = await createEmbedder(o.config.memory, o.db, o.env);
    const memory = openMemory({ db: o.db, workspace: o.paths.workspace, cacheDir: o.paths.cache, config: o.config.memory, count: tokenCount(), embedder });
    const report = await memory.syncFiles();
    if (report.changed.length || report.removed.length) log.info(`memory: indexed ${report.changed.join(', ') || 'no changed files'}${report.removed.length ? `; removed ${report.removed.join(', ')}` : ''}`);
    opened = memory;
    if (maintaining) reembedInBackground(memory);
    return memory;
  };
  return {
    get() {
      // A failed open is not kept: the next use tries again (a server that was down may be up).
      opening ??= open().catch((err: unknown) => {
        opening = undefined;
        throw err;
      });
      return opening;
    },
    watchFiles(debounceMs = 2000) {
      maintaining = true;
      if (opened) reembedInBackground(opened);
      let timer: NodeJS.Timeout | undefined;
      const watchers: FSWatcher[] = [];
      const sync = () => {
        timer = undefined;
        if (!opened) return; // not opened yet: the first use indexes them anyway
        opened.syncFiles().then((r) => {
          if (r.changed.length || r.removed.length) log.info(`memory: re-indexed ${[...r.changed, ...r.removed].join(', ')}`);
        }, (err: unknown) => log.warn(`memory: re-indexing the memory files failed: ${errorMessage(err)}`)).finally(backgroundWorkDone);
      };
      const changed = (name: string | null) => {
        if (name && !name.endsWith('.md')) return;
        clearTimeout(timer);
        timer = setTimeout(sync, debounceMs);
        timer.unref();
      };
      for (const dir of [o.paths.workspace, join(o.paths.workspace, 'memory')]) {
        try {
          // The first watch loads Node's watcher module: under V8's defaults in the executable (src/v8-flags.ts).
          watchers.push(loadBuiltin('internal/fs/watchers', () => watch(dir, (_event, name) => changed(name === null ? null : String(name)))));
        } catch (err) {
          log.debug(`memory: not watching ${dir}: ${errorMessage(err)}`);
        }
      }
      return () => {
        clearTimeout(timer);
        for (const w of watchers) w.close();
      };
    },
    close() {
      opened?.flush();
    },
  };
}
