// The addon's ranking index over the memory rows, kept in step with SQLite by the generation counter
// (migration 6's triggers count every change, from any process). A snapshot is saved under
// cache/memory/ with the generation and embedder it was taken at; a start loads it when both still
// match, and rebuilds from the rows (no re-embedding: vectors are in SQLite) when either changed or
// the snapshot does not load.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../errors.js';
import { log } from '../log.js';
import { createRankingIndex } from '../native/ranking.js';
import type { RankingDoc, RankingIndex } from '../native/ranking-types.js';
import type { Db } from '../store/db.js';
import { allChunkRows, generation, vectorOf, type ChunkRow } from './store.js';

const FORMAT = 1;

export interface IndexState {
  index: RankingIndex;
  /** the generation the index reflects */
  generation: number;
  /** the embedder whose vectors it holds ('' for keyword only) */
  embedder: string;
  dimensions: number;
}

export type Progress = (done: number, total: number) => void;

/** A row as the index sees it; `time` orders decay (a daily note's day, else its creation). */
export function rankingDoc(r: ChunkRow, embedder: string, time: number): RankingDoc {
  return { id: String(r.id), text: r.text, vector: embedder && r.embedder === embedder ? vectorOf(r) : null, kind: r.kind, time };
}

export function docTime(r: Pick<ChunkRow, 'file' | 'created_at'>): number {
  const m = r.file ? /^memory\/(\d{4})-(\d{2})-(\d{2})\.md$/.exec(r.file) : null;
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : r.created_at;
}

function snapshotPath(cacheDir: string): string {
  return join(cacheDir, 'memory', 'index.snapshot');
}

const newIndex = (dimensions: number) => createRankingIndex({ dimensions, quantization: 'i8' });

/** Builds the index from every row; vectors of another embedder are left out (keyword only for them). */
export function buildIndex(db: Db, embedder: string, dimensions: number, progress?: Progress): IndexState {
  const gen = generation(db);
  const total = (db.prepare('select count(*) as n from memory_chunks').get() as { n: number }).n;
  const index = newIndex(dimensions);
  let batch: RankingDoc[] = [];
  let done = 0;
  for (const r of allChunkRows(db)) {
    batch.push(rankingDoc(r, embedder, docTime(r)));
    if (batch.length === 1000) {
      index.addMany(batch);
      done += batch.length;
      batch = [];
      progress?.(done, total);
    }
  }
  if (batch.length) index.addMany(batch);
  done += batch.length;
  progress?.(done, total);
  return { index, generation: gen, embedder, dimensions };
}

export function saveSnapshot(cacheDir: string, s: IndexState): void {
  const file = snapshotPath(cacheDir);
  mkdirSync(join(cacheDir, 'memory'), { recursive: true });
  const header = Buffer.from(`${JSON.stringify({ format: FORMAT, generation: s.generation, embedder: s.embedder, dimensions: s.dimensions })}\n`);
  // Written aside and renamed: a crash mid-write leaves the old snapshot or none, never half of one.
  writeFileSync(`${file}.tmp`, Buffer.concat([header, s.index.serialize()]));
  renameSync(`${file}.tmp`, file);
}

/** The saved index, when it was taken at this generation with this embedder and loads; else undefined (logged). */
export function loadSnapshot(db: Db, cacheDir: string, embedder: string, dimensions: number): IndexState | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(snapshotPath(cacheDir));
  } catch {
    return undefined;
  }
  const nl = bytes.indexOf(10);
  let header: { format?: unknown; generation?: unknown; embedder?: unknown; dimensions?: unknown };
  try {
    header = JSON.parse(bytes.subarray(0, nl).toString('utf8')) as typeof header;
  } catch {
    log.warn('memory: the index snapshot has no readable header; rebuilding it from the database');
    return undefined;
  }
  const gen = generation(db);
  if (header.format !== FORMAT || header.generation !== gen || header.embedder !== embedder || header.dimensions !== dimensions) return undefined;
  const index = newIndex(dimensions);
  try {
    index.load(bytes.subarray(nl + 1));
  } catch (err) {
    log.warn(`memory: the index snapshot does not load (${errorMessage(err)}); rebuilding it from the database`);
    return undefined;
  }
  return { index, generation: gen, embedder, dimensions };
}
