// The long-term memory: store, search (hybrid BM25 + vectors on the addon's index, or keyword only),
// get, forget, the workspace's memory files kept indexed, re-embedding when the embedder changes,
// hygiene (duplicates merged, daily notes decaying with age, a size cap that archives), export and
// import. Every row lives in SQLite; the index is rebuilt from it whenever in doubt.
import { errorMessage, PinclawError } from '../errors.js';
import { log } from '../log.js';
import type { Db } from '../store/db.js';
import type { PinclawConfig } from '../config/schema.js';
import { chunkMarkdown } from './chunker.js';
import { memoryFiles, NotUtf8Error, readMemoryFile } from './files.js';
import { buildIndex, docTime, loadSnapshot, rankingDoc, saveSnapshot, type IndexState, type Progress } from './memory-index.js';
import {
  archiveChunk, chunkRows, chunkTexts, counts, deleteChunk, fileChunkRows, fileMark, findByHash, generation, getChunkRow, hashText, indexedFiles, insertChunk, recentChunks, recordedFileMark, recordFileMark, setVector, toChunk, vectorOf,
  type ChunkRow, type ChunkText, type MemoryCounts,
} from './store.js';
import { namesFor, namingsIn, type Naming } from './names.js';
import { contentWords, rerank, WordVectors } from './rerank.js';
import { citationOf, type Embedder, type MemoryChunk, type MemoryHit, type MemoryKind, type SearchMode, type WordRelation } from './types.js';

export const MAX_QUERY_CHARS = 2000;
export const MAX_ENTRY_CHARS = 8000;
/** Cosine above which a new entry is the same memory as an old one and replaces it. */
export const DUPLICATE_COSINE = 0.95;
/** Fused candidates the word-level rerank looks at (rerank.ts; 20, 40 and 80 were measured: bench/README.md). */
const RERANK_CANDIDATES = 40;
/** Share of the rerank's word coverage in the final score (0.3 to 0.9 measured, 0.5 kept: bench/README.md). */
const RERANK_WEIGHT = 0.5;

export class MemoryInputError extends PinclawError {}

export interface MemoryOptions {
  db: Db;
  workspace: string;
  cacheDir: string;
  config: PinclawConfig['memory'];
  /** token counter for chunking (the native tokenizer) */
  count: (text: string) => number;
  /** null: keyword only */
  embedder: Embedder | null;
  now?: () => number;
}

export interface SearchOptions {
  limit?: number;
  mode?: SearchMode;
  kind?: string;
}

export interface StoreResult {
  id: number;
  /** the same text was stored already: nothing new was written */
  duplicate?: boolean;
  /** a near-duplicate entry was replaced by this text (the old text is archived) */
  merged?: boolean;
  /** the vector could not be made now (keyword search finds it; reindex adds the vector) */
  unembedded?: string;
}

export interface SyncReport {
  files: number;
  changed: string[];
  removed: string[];
  skipped: { file: string; reason: string }[];
  archived: number;
}

export interface Memory {
  readonly embedder: Embedder | null;
  search(query: string, o?: SearchOptions): Promise<MemoryHit[]>;
  get(id: number): MemoryChunk | undefined;
  /** the newest `limit` chunks, entries and file chunks alike */
  recent(limit: number): MemoryChunk[];
  store(text: string, o?: { kind?: MemoryKind; session?: string | null }): Promise<StoreResult>;
  forget(id: number): MemoryChunk;
  /** indexes the workspace's memory files that changed since they were last indexed */
  /** `rechunk`: chunk every file again, also those whose mark says unchanged (`pinclaw memory reindex`) */
  syncFiles(opts?: { rechunk?: boolean }): Promise<SyncReport>;
  /** vectors of the current embedder for every chunk that lacks one (a change of embedder, a server that was down) */
  reembed(progress?: (done: number, total: number) => void): Promise<{ embedded: number; failed: number }>;
  /** chunks without a vector of the current embedder */
  unembedded(): number;
  /** files, then vectors for every chunk that lacks one of the current embedder, then a fresh index */
  reindex(progress?: (what: string, done: number, total: number) => void): Promise<{ sync: SyncReport; embedded: number; failed: number }>;
  stats(): MemoryCounts & { embedder: string; generation: number; indexed: number };
  /** saves the index snapshot if it changed since the last save */
  flush(): void;
}

export function openMemory(o: MemoryOptions): Memory {
  const { db, config } = o;
  const now = o.now ?? Date.now;
  const embedderId = o.embedder?.id ?? '';
  let state: IndexState | undefined;
  let savedGeneration = -1;

  const dims = () => o.embedder?.dimensions ?? 0;
  let words: WordVectors | undefined;
  const wordVectors = () => (words ??= new WordVectors((w) => o.embedder!.embed(w)));

  /** WordNet's links when the embedder has them; without them (not loadable: a warning) the rerank uses the word vectors alone. */
  async function wordLinks(): Promise<WordRelation | null> {
    if (!o.embedder?.wordLinks) return null;
    try {
      return await o.embedder.wordLinks();
    } catch (err) {
      log.once('memory-word-links', 'warn', `memory: reranking without word links: ${errorMessage(err)}`);
      return null;
    }
  }

  // The household's names (names.ts), read from every chunk at the first search that needs them and
  // then kept in step with writes, as the index is (write()).
  let names: { generation: number; byChunk: Map<number, Naming[]>; all?: Naming[] } | undefined;
  // `gen`: the generation the search's index was taken at (index() has just read it).
  function householdNames(gen: number): Naming[] {
    if (names?.generation !== gen) {
      const byChunk = new Map<number, Naming[]>();
      for (const r of db.prepare('select id, text from memory_chunks').iterate() as Iterable<{ id: number; text: string }>) {
        const found = namingsIn(r.text);
        if (found.length) byChunk.set(r.id, found);
      }
      names = { generation: gen, byChunk };
    }
    return (names.all ??= [...names.byChunk.values()].flat());
  }

  /**
   * Which names the query's words stand for ("the dog" → biscuit), with WordNet's kinds when the
   * embedder has them. A failure here costs the search its names, not its results.
   */
  async function queryNames(q: string, gen: number): Promise<Map<string, Set<string>>> {
    try {
      const known = householdNames(gen);
      if (known.length === 0) return new Map();
      const links = await wordLinks();
      const kindOf = links?.kindOf ? (noun: string, general: string) => links.kindOf!(noun, general) : null;
      return namesFor(q, contentWords(q), known, kindOf);
    } catch (err) {
      log.once('memory-names', 'warn', `memory: searching without the household's names: ${errorMessage(err)}`);
      return new Map();
    }
  }

  /** Reranked scores of the candidates, or their fused scores when the words cannot be embedded now. */
  async function rerankOrKeep(q: string, found: readonly { r: ChunkText; score: number }[], aliases: Map<string, Set<string>>): Promise<number[]> {
    try {
      return await rerank(q, found.map((f) => ({ text: f.r.text, score: f.score })), wordVectors(), RERANK_WEIGHT, await wordLinks(), aliases);
    } catch (err) {
      log.warn(`memory: search results not reranked: ${errorMessage(err)}`);
      return found.map((f) => f.score);
    }
  }

  /** The index at the database's generation: the one held, the snapshot, or a rebuild. */
  function index(progress?: Progress): IndexState {
    const gen = generation(db);
    if (state && state.generation === gen && state.dimensions === dims()) return state;
    state = (!state ? loadSnapshot(db, o.cacheDir, embedderId, dims()) : undefined) ?? rebuild(progress);
    return state;
  }

  /** A rebuild from the rows, with progress in the log when it is long enough to notice. */
  function rebuild(progress?: Progress): IndexState {
    const started = Date.now();
    let lastTenth = 0;
    const built = buildIndex(db, embedderId, dims(), (done, total) => {
      progress?.(done, total);
      const tenth = Math.floor((done * 10) / Math.max(1, total));
      if (total >= 5000 && tenth > lastTenth) {
        lastTenth = tenth;
        log.info(`memory: building the search index: ${done} of ${total} chunks`);
      }
    });
    if (built.index.size() >= 5000) log.info(`memory: search index of ${built.index.size()} chunks built in ${Date.now() - started} ms`);
    return built;
  }

  /**
   * Runs a write and keeps the held index in step: when nobody else changed the memory since the
   * index was built, the rows the write touched are applied to it; otherwise the next search rebuilds.
   */
  function write<T>(fn: () => T, touched: (result: T) => { upsert: number[]; remove: number[] }): T {
    const before = generation(db);
    const result = db.transaction(fn)();
    const held = state?.generation === before ? state : undefined;
    const named = names?.generation === before ? names : undefined;
    if (held || named) {
      const t = touched(result);
      const rows = chunkRows(db, t.upsert);
      const after = generation(db);
      if (held) {
        for (const id of t.remove) held.index.remove(String(id));
        for (const r of rows) held.index.upsert(rankingDoc(r, embedderId, docTime(r)));
        held.generation = after;
      }
      if (named) {
        for (const id of t.remove) named.byChunk.delete(id);
        for (const r of rows) {
          const found = namingsIn(r.text);
          if (found.length) named.byChunk.set(r.id, found);
          else named.byChunk.delete(r.id);
        }
        named.all = undefined;
        named.generation = after;
      }
    }
    return result;
  }

  async function embed(texts: string[]): Promise<Float32Array[] | string> {
    if (!o.embedder || texts.length === 0) return [];
    try {
      return await o.embedder.embed(texts);
    } catch (err) {
      return errorMessage(err);
    }
  }

  function hit(r: ChunkText, score: number): MemoryHit {
    const c = toChunk(r);
    return { id: c.id, text: c.text, kind: c.kind, score, source: c.source, citation: citationOf(c.id, c.source) };
  }

  /** Daily notes count less as they age: half after decayHalfLifeDays. MEMORY.md and entries do not decay. */
  function decay(r: ChunkText): number {
    if (r.kind !== 'daily') return 1;
    const ageDays = Math.max(0, (now() - docTime(r)) / 86_400_000);
    return 0.5 ** (ageDays / config.decayHalfLifeDays);
  }

  /** The size cap: the oldest daily-note and entry chunks go to the archive, MEMORY.md never. */
  function enforceCap(): number {
    const total = (db.prepare('select count(*) as n from memory_chunks').get() as { n: number }).n;
    const over = total - config.maxChunks;
    if (over <= 0) return 0;
    const victims = db.prepare(`select id from memory_chunks where file is null or file != 'MEMORY.md' order by updated_at, id limit ?`).all(over) as { id: number }[];
    write(() => victims.forEach((v) => archiveChunk(db, v.id, `size cap: memory.maxChunks is ${config.maxChunks}`, now())), () => ({ upsert: [], remove: victims.map((v) => v.id) }));
    log.warn(`memory: over the size cap of ${config.maxChunks} chunks; archived the ${victims.length} oldest daily-note and entry chunks (kept in memory_archive, ids ${victims.slice(0, 5).map((v) => v.id).join(', ')}${victims.length > 5 ? ', ...' : ''})`);
    return victims.length;
  }

  async function indexFile(path: string, kind: 'file' | 'daily', text: string, rechunk: boolean): Promise<boolean> {
    const old = fileChunkRows(db, path);
    const mark = (chunks: number) => fileMark(text, config.chunkTokens, config.overlapTokens, chunks);
    // Unchanged since its chunks were made (store.ts, fileMark): nothing to count or compare.
    if (!rechunk && recordedFileMark(db, path) === mark(old.length)) return false;
    const chunks = chunkMarkdown(text, { target: config.chunkTokens, overlap: config.overlapTokens, count: o.count });
    const same = old.length === chunks.length && old.every((r, i) => r.hash === hashText(chunks[i]!.text) && r.line_start === chunks[i]!.lineStart && r.line_end === chunks[i]!.lineEnd);
    if (same) {
      recordFileMark(db, path, mark(chunks.length));
      return false;
    }
    // Vectors of unchanged text are kept (by hash); only new text is embedded.
    const known = new Map<string, Float32Array>();
    for (const r of old) {
      const v = r.embedder === embedderId ? vectorOf(r) : null;
      if (v) known.set(r.hash, v);
    }
    const fresh = chunks.filter((c) => !known.has(hashText(c.text)));
    const vectors = await embed(fresh.map((c) => c.text));
    if (typeof vectors === 'string') log.warn(`memory: ${path} is indexed for keyword search only for now: ${vectors}`);
    else fresh.forEach((c, i) => known.set(hashText(c.text), vectors[i]!));
    const t = now();
    write(() => {
      for (const r of old) deleteChunk(db, r.id);
      recordFileMark(db, path, mark(chunks.length));
      return chunks.map((c) => {
        const v = known.get(hashText(c.text));
        return insertChunk(db, { text: c.text, kind, source: { type: 'file', file: path, lineStart: c.lineStart, lineEnd: c.lineEnd }, vector: v && embedderId ? { embedder: embedderId, values: v } : null, createdAt: t }, t);
      });
    }, (ids) => ({ upsert: ids, remove: old.map((r) => r.id) }));
    return true;
  }

  /**
   * memory.transcripts: each session's conversation (the user's and the assistant's text, not tool
   * output) as 'transcript' chunks of that session, replaced when the session has changed since.
   */
  async function syncTranscripts(): Promise<string[]> {
    const changed: string[] = [];
    const sessions = db.prepare('select key, messages, updated_at from sessions').all() as { key: string; messages: string; updated_at: number }[];
    for (const s of sessions) {
      const old = db.prepare(`select * from memory_chunks where kind = 'transcript' and session = ? order by id`).all(s.key) as ChunkRow[];
      if (old.length && old.every((r) => r.updated_at >= s.updated_at)) continue;
      let text = '';
      try {
        const messages = JSON.parse(s.messages) as { role: string; content: { type: string; text?: string }[] }[];
        text = messages.map((m) => `${m.role}: ${m.content.filter((b) => b.type === 'text').map((b) => b.text ?? '').join(' ')}`).filter((l) => !/^\w+: $/.test(l)).join('\n\n');
      } catch {
        continue; // a session row that does not parse is the sessions store's to report
      }
      const chunks = text ? chunkMarkdown(text, { target: config.chunkTokens, overlap: config.overlapTokens, count: o.count }) : [];
      const vectors = await embed(chunks.map((c) => c.text));
      const t = Math.max(now(), s.updated_at);
      write(() => {
        for (const r of old) deleteChunk(db, r.id);
        return chunks.map((c, i) => insertChunk(db, {
          text: c.text, kind: 'transcript', source: { type: 'entry', session: s.key },
          vector: typeof vectors === 'string' || !embedderId ? null : { embedder: embedderId, values: vectors[i]! },
        }, t));
      }, (ids) => ({ upsert: ids, remove: old.map((r) => r.id) }));
      changed.push(`session ${s.key}`);
    }
    return changed;
  }

  const memory: Memory = {
    embedder: o.embedder,

    async search(query, so = {}) {
      const q = query.trim();
      if (q === '') throw new MemoryInputError('the search query is empty');
      if (q.length > MAX_QUERY_CHARS) throw new MemoryInputError(`the search query has ${q.length} characters; the limit is ${MAX_QUERY_CHARS}`);
      const limit = so.limit ?? 5;
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new MemoryInputError(`limit must be an integer from 1 to 100, not ${limit}`);
      let mode: SearchMode = so.mode ?? (o.embedder ? 'hybrid' : 'keyword');
      if (mode === 'vector' && !o.embedder) throw new MemoryInputError('vector search needs an embedder; memory.embedder is none');
      let vector: Float32Array | null = null;
      if (mode !== 'keyword') {
        const v = await embed([q]);
        if (typeof v === 'string') {
          log.warn(`memory: searching by keyword only: ${v}`);
          mode = 'keyword';
        } else vector = v[0]!;
      }
      const { index: idx, generation: gen } = index();
      const reranked = mode === 'hybrid' && o.embedder?.wordLevel === true;
      const k = Math.min(10_000, reranked ? Math.max(RERANK_CANDIDATES, limit * 4) : limit * 4);
      // The names the query's words stand for are searched by keyword too, and count as an exact
      // match for those words in the rerank ("the dog" finds "Biscuit must not have grapes").
      const aliases = mode === 'vector' ? new Map<string, Set<string>>() : await queryNames(q, gen);
      const nameTerms = [...new Set([...aliases.values()].flatMap((s) => [...s]))];
      const text = nameTerms.length ? `${q} ${nameTerms.join(' ')}` : q;
      const hits = idx.search({ text: mode === 'vector' ? undefined : text, vector: mode === 'keyword' ? null : vector, k, ...(so.kind ? { filter: { kind: so.kind } } : {}) });
      const rows = new Map(chunkTexts(db, hits.map((h) => Number(h.id))).map((r) => [r.id, r]));
      const found = hits.flatMap((h) => {
        const r = rows.get(Number(h.id));
        return r ? [{ r, score: h.score }] : [];
      });
      const scores = reranked && found.length > 1 ? await rerankOrKeep(q, found, aliases) : found.map((f) => f.score);
      return found
        .map((f, i) => hit(f.r, scores[i]! * decay(f.r)))
        .sort((a, b) => b.score - a.score || a.id - b.id)
        .slice(0, limit);
    },

    get(id) {
      const r = getChunkRow(db, id);
      return r ? toChunk(r) : undefined;
    },

    recent(limit) {
      return recentChunks(db, limit);
    },

    async store(text, so = {}) {
      const t = text.trim();
      if (t === '') throw new MemoryInputError('nothing to store: the text is empty');
      if (t.length > MAX_ENTRY_CHARS) throw new MemoryInputError(`the text has ${t.length} characters; one memory holds at most ${MAX_ENTRY_CHARS} (store the main points, or write them to MEMORY.md)`);
      const kind = so.kind ?? 'note';
      const exact = findByHash(db, hashText(t)).find((r) => r.file === null);
      if (exact) return { id: exact.id, duplicate: true };
      const v = await embed([t]);
      const vector = typeof v === 'string' ? null : v[0] ?? null;
      // A near-duplicate entry (same meaning, a few words changed) is replaced by the newer text;
      // the older one is archived, not lost.
      if (vector) {
        // Unfiltered: a kind filter over the HNSW graph costs ~25 ms at 100k chunks (bench:memory); the
        // few nearest are checked here instead.
        const old = index().index.search({ vector, k: 5 })
          .filter((h) => (h.vector ?? 0) >= DUPLICATE_COSINE)
          .map((h) => getChunkRow(db, Number(h.id)))
          .find((r) => r !== undefined && r.file === null && r.kind === kind);
        if (old) {
          const id = write(() => {
            archiveChunk(db, old.id, `merged: replaced by a newer near-duplicate`, now());
            return insertChunk(db, { text: t, kind, source: { type: 'entry', session: so.session ?? null }, vector: { embedder: embedderId, values: vector }, createdAt: old.created_at });
          }, (id) => ({ upsert: [id], remove: [old.id] }));
          return { id, merged: true };
        }
      }
      const id = write(
        () => insertChunk(db, { text: t, kind, source: { type: 'entry', session: so.session ?? null }, vector: vector && embedderId ? { embedder: embedderId, values: vector } : null }, now()),
        (id) => ({ upsert: [id], remove: [] }),
      );
      enforceCap();
      return typeof v === 'string' ? { id, unembedded: v } : { id };
    },

    forget(id) {
      const r = getChunkRow(db, id);
      if (!r) throw new MemoryInputError(`no memory #${id}`);
      if (r.file !== null) throw new MemoryInputError(`memory #${id} comes from ${r.file} (lines ${r.line_start}-${r.line_end}); edit that file to remove it`);
      write(() => deleteChunk(db, id), () => ({ upsert: [], remove: [id] }));
      return toChunk(r);
    },

    async syncFiles(opts = {}) {
      const report: SyncReport = { files: 0, changed: [], removed: [], skipped: [], archived: 0 };
      const files = memoryFiles(o.workspace);
      report.files = files.length;
      for (const f of files) {
        let text: string;
        try {
          text = readMemoryFile(o.workspace, f.path);
        } catch (err) {
          const reason = err instanceof NotUtf8Error ? err.message : `cannot be read: ${errorMessage(err)}`;
          report.skipped.push({ file: f.path, reason });
          log.warn(`memory: ${err instanceof NotUtf8Error ? reason : `${f.path} ${reason}`}`);
          continue;
        }
        if (await indexFile(f.path, f.kind, text, opts.rechunk ?? false)) report.changed.push(f.path);
      }
      const present = new Set(files.map((f) => f.path));
      for (const gone of indexedFiles(db).filter((f) => !present.has(f))) {
        const old = fileChunkRows(db, gone);
        write(() => {
          old.forEach((r) => deleteChunk(db, r.id));
          recordFileMark(db, gone, null);
        }, () => ({ upsert: [], remove: old.map((r) => r.id) }));
        report.removed.push(gone);
      }
      if (config.transcripts) report.changed.push(...(await syncTranscripts()));
      report.archived = enforceCap();
      return report;
    },

    async reembed(progress) {
      let embedded = 0;
      let failed = 0;
      if (!o.embedder) return { embedded, failed };
      const need = db.prepare('select id from memory_chunks where embedder is not ? order by id').all(embedderId) as { id: number }[];
      const batch = 32;
      for (let i = 0; i < need.length; i += batch) {
        const rows = chunkRows(db, need.slice(i, i + batch).map((r) => r.id));
        const v = await embed(rows.map((r) => r.text));
        if (typeof v === 'string') {
          failed += need.length - i;
          log.warn(`memory: re-embedding stopped after ${embedded} of ${need.length} chunks: ${v}; they stay searchable by keyword, and the next reindex goes on`);
          break;
        }
        // Through write(): the held index takes each batch's vectors, so searches meanwhile stay fast.
        write(() => rows.forEach((r, j) => setVector(db, r.id, embedderId, v[j]!)), () => ({ upsert: rows.map((r) => r.id), remove: [] }));
        embedded += rows.length;
        progress?.(embedded, need.length);
      }
      return { embedded, failed };
    },

    unembedded() {
      if (!o.embedder) return 0;
      return (db.prepare('select count(*) as n from memory_chunks where embedder is not ?').get(embedderId) as { n: number }).n;
    },

    async reindex(progress) {
      // The owner's explicit rebuild: every file chunked again (chunks made while the tokenizer could
      // not load were sized by a character estimate; the marks would keep them).
      const sync = await memory.syncFiles({ rechunk: true });
      const { embedded, failed } = await memory.reembed((d, t) => progress?.('embedding', d, t));
      state = buildIndex(db, embedderId, dims(), (d, t) => progress?.('indexing', d, t));
      saveSnapshot(o.cacheDir, state);
      savedGeneration = state.generation;
      return { sync, embedded, failed };
    },

    stats() {
      const s = index();
      return { ...counts(db), embedder: embedderId || 'none (keyword only)', generation: s.generation, indexed: s.index.size() };
    },

    flush() {
      if (!state || state.generation === savedGeneration) return;
      try {
        saveSnapshot(o.cacheDir, state);
        savedGeneration = state.generation;
      } catch (err) {
        log.warn(`memory: could not save the index snapshot: ${errorMessage(err)}`);
      }
    },
  };
  return memory;
}
