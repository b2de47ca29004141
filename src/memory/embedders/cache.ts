// Vectors by content hash, per embedder: a text that was embedded once (a memory file re-indexed
// after an edit elsewhere in it, a note stored twice) is never sent to the server again. On a board
// whose embedding server is the board itself, that is the difference between seconds and minutes.
import { createHash } from 'node:crypto';
import type { Db } from '../../store/db.js';
import { sql } from '../../store/statements.js';

export interface EmbeddingCache {
  /** the unit vector stored for this text's hash by this embedder, or undefined */
  get(embedderId: string, hash: string): Float32Array | undefined;
  set(embedderId: string, hash: string, v: Float32Array): void;
}

/** SHA-256 of the text, hex: the same hash memory chunks carry (MemoryChunk.hash). */
export const contentHash = (text: string): string => createHash('sha256').update(text).digest('hex');

interface CacheRow {
  vector: Buffer;
  dims: number;
}

/**
 * The cache in the table `embedding_cache (embedder, hash, vector, dims, created_at)` of migration 6.
 * Vectors are stored as little-endian float32 blobs, as memory_chunks.embedding is.
 */
export function sqliteEmbeddingCache(db: Db): EmbeddingCache {
  return {
    get(embedderId, hash) {
      const row = sql(db, 'select vector, dims from embedding_cache where embedder = ? and hash = ?').get(embedderId, hash) as CacheRow | undefined;
      // A blob whose length disagrees with its dims was not written by set(): a miss, so the text is
      // embedded again and the row overwritten, rather than a vector read out of garbage.
      if (!row || !Number.isInteger(row.dims) || row.dims <= 0 || row.vector.length !== row.dims * 4) return undefined;
      // A copy: the Buffer from SQLite may not be 4-byte aligned for a Float32Array view.
      const v = new Float32Array(row.dims);
      new Uint8Array(v.buffer).set(row.vector);
      return v;
    },
    set(embedderId, hash, v) {
      sql(db,
        `insert into embedding_cache (embedder, hash, vector, dims, created_at) values (?, ?, ?, ?, ?)
         on conflict (embedder, hash) do update set vector = excluded.vector, dims = excluded.dims, created_at = excluded.created_at`,
      ).run(embedderId, hash, Buffer.from(v.buffer, v.byteOffset, v.byteLength), v.length, Date.now());
    },
  };
}
