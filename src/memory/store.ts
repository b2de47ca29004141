// The memory's rows in SQLite (migration 6): chunks with their source and vector, the generation
// counter the triggers keep, and the archive. Every write is one statement or one transaction.
import { createHash } from 'node:crypto';
import type { Db } from '../store/db.js';
import { sql } from '../store/statements.js';
import type { MemoryChunk, MemoryKind, MemorySource } from './types.js';

export interface ChunkRow {
  id: number;
  text: string;
  kind: string;
  file: string | null;
  line_start: number | null;
  line_end: number | null;
  session: string | null;
  hash: string;
  embedder: string | null;
  dims: number | null;
  embedding: Buffer | null;
  created_at: number;
  updated_at: number;
}

export interface NewChunk {
  text: string;
  kind: MemoryKind;
  source: MemorySource;
  vector?: { embedder: string; values: Float32Array } | null;
  createdAt?: number;
}

export const hashText = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A chunk row without its vector: what a search shows. */
export type ChunkText = Omit<ChunkRow, 'embedding' | 'embedder' | 'dims'>;

export function toChunk(r: ChunkText): MemoryChunk {
  const source: MemorySource = r.file !== null
    ? { type: 'file', file: r.file, lineStart: r.line_start ?? 1, lineEnd: r.line_end ?? r.line_start ?? 1 }
    : { type: 'entry', session: r.session };
  return { id: r.id, text: r.text, kind: r.kind, source, hash: r.hash, createdAt: r.created_at, updatedAt: r.updated_at };
}

export function vectorOf(r: Pick<ChunkRow, 'embedding' | 'dims'>): Float32Array | null {
  if (!r.embedding || !r.dims) return null;
  // A copy: the Buffer from SQLite may not be 4-byte aligned for a Float32Array view.
  const copy = new Float32Array(r.dims);
  new Uint8Array(copy.buffer).set(r.embedding.subarray(0, r.dims * 4));
  return copy;
}

const blob = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

export function generation(db: Db): number {
  return (sql(db, `select value from memory_meta where key = 'generation'`).get() as { value: number }).value;
}

/**
 * What a memory file's chunks were made from: its text, the chunk sizes, and how many chunks it gave
 * (so that chunks archived by the size cap since count as a change, as they did before). Recorded
 * in memory_meta as `file:<path>`, 53 bits of a SHA-256 (the table holds integers). A file whose
 * mark still matches is not chunked again: chunking counts the tokens of every line, which loads
 * the tokenizer's table (4.5 MiB, 30-40 ms) at every memory open (docs/performance.md, "Twelfth pass").
 */
export function fileMark(text: string, chunkTokens: number, overlapTokens: number, chunks: number): number {
  const h = createHash('sha256').update(`${chunkTokens} ${overlapTokens} ${chunks}\0`).update(text).digest();
  return h.readUIntBE(0, 6) * 32 + (h[6]! >> 3);
}

export function recordedFileMark(db: Db, path: string): number | undefined {
  return (sql(db, 'select value from memory_meta where key = ?').get(`file:${path}`) as { value: number } | undefined)?.value;
}

export function recordFileMark(db: Db, path: string, mark: number | null): void {
  if (mark === null) sql(db, 'delete from memory_meta where key = ?').run(`file:${path}`);
  else sql(db, 'insert into memory_meta (key, value) values (?, ?) on conflict (key) do update set value = excluded.value').run(`file:${path}`, mark);
}

export function insertChunk(db: Db, c: NewChunk, now = Date.now()): number {
  const s = c.source;
  const info = sql(db,
    `insert into memory_chunks (text, kind, file, line_start, line_end, session, hash, embedder, dims, embedding, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    c.text, c.kind,
    s.type === 'file' ? s.file : null, s.type === 'file' ? s.lineStart : null, s.type === 'file' ? s.lineEnd : null,
    s.type === 'entry' ? s.session : null,
    hashText(c.text),
    c.vector?.embedder ?? null, c.vector ? c.vector.values.length : null, c.vector ? blob(c.vector.values) : null,
    c.createdAt ?? now, now,
  );
  return Number(info.lastInsertRowid);
}

export function getChunkRow(db: Db, id: number): ChunkRow | undefined {
  return sql(db, 'select * from memory_chunks where id = ?').get(id) as ChunkRow | undefined;
}

export function chunkRows(db: Db, ids: readonly number[]): ChunkRow[] {
  if (ids.length === 0) return [];
  return sql(db, `select * from memory_chunks where id in (${ids.map(() => '?').join(',')})`).all(...ids) as ChunkRow[];
}

/**
 * The rows a search found, without their vectors: a search shows texts, and each vector would be a
 * Buffer copied out of SQLite for nothing (up to 40 candidates a search, one search a turn).
 */
export function chunkTexts(db: Db, ids: readonly number[]): ChunkText[] {
  if (ids.length === 0) return [];
  return sql(db, `select id, text, kind, file, line_start, line_end, session, hash, created_at, updated_at from memory_chunks where id in (${ids.map(() => '?').join(',')})`).all(...ids) as ChunkText[];
}

/** Every row, in id order, a page at a time (the index is built from them without holding all texts twice). */
export function* allChunkRows(db: Db, page = 2000): Generator<ChunkRow> {
  let after = 0;
  for (;;) {
    const rows = sql(db, 'select * from memory_chunks where id > ? order by id limit ?').all(after, page) as ChunkRow[];
    if (rows.length === 0) return;
    yield* rows;
    after = rows.at(-1)!.id;
  }
}

/** The newest chunks first, without their vectors (what `pinclaw memory list` shows). */
export function recentChunks(db: Db, limit: number): MemoryChunk[] {
  const rows = sql(db, 'select id, text, kind, file, line_start, line_end, session, hash, null as embedder, null as dims, null as embedding, created_at, updated_at from memory_chunks order by created_at desc, id desc limit ?').all(limit) as ChunkRow[];
  return rows.map(toChunk);
}

export function fileChunkRows(db: Db, file: string): ChunkRow[] {
  return sql(db, 'select * from memory_chunks where file = ? order by line_start, id').all(file) as ChunkRow[];
}

export function indexedFiles(db: Db): string[] {
  return (sql(db, 'select distinct file from memory_chunks where file is not null').all() as { file: string }[]).map((r) => r.file);
}

export function setVector(db: Db, id: number, embedder: string, values: Float32Array): void {
  sql(db, 'update memory_chunks set embedder = ?, dims = ?, embedding = ? where id = ?').run(embedder, values.length, blob(values), id);
}

export function findByHash(db: Db, hash: string): ChunkRow[] {
  return sql(db, 'select * from memory_chunks where hash = ?').all(hash) as ChunkRow[];
}

/** Moves a chunk into the archive (kept, with the reason) and out of the memory. */
export function archiveChunk(db: Db, id: number, reason: string, now = Date.now()): boolean {
  return db.transaction(() => {
    const r = getChunkRow(db, id);
    if (!r) return false;
    sql(db,
      `insert into memory_archive (chunk_id, text, kind, file, line_start, line_end, session, created_at, archived_at, reason)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(r.id, r.text, r.kind, r.file, r.line_start, r.line_end, r.session, r.created_at, now, reason);
    sql(db, 'delete from memory_chunks where id = ?').run(id);
    return true;
  })();
}

export function deleteChunk(db: Db, id: number): boolean {
  return sql(db, 'delete from memory_chunks where id = ?').run(id).changes === 1;
}

export interface MemoryCounts {
  chunks: number;
  entries: number;
  files: number;
  archived: number;
  /** chunks by the embedder of their vector ('' for none) */
  byEmbedder: Record<string, number>;
}

export function counts(db: Db): MemoryCounts {
  const one = (q: string) => (sql(db, q).get() as { n: number }).n;
  const byEmbedder: Record<string, number> = {};
  for (const r of sql(db, 'select coalesce(embedder, \'\') as e, count(*) as n from memory_chunks group by e').all() as { e: string; n: number }[]) byEmbedder[r.e] = r.n;
  return {
    chunks: one('select count(*) as n from memory_chunks'),
    entries: one('select count(*) as n from memory_chunks where file is null'),
    files: one('select count(distinct file) as n from memory_chunks where file is not null'),
    archived: one('select count(*) as n from memory_archive'),
    byEmbedder,
  };
}
