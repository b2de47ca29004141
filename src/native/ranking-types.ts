// The one interface of the hybrid ranking index, implemented by the addon (ranking-native.ts) and
// by the pure-TypeScript reference (ranking-reference.ts). Semantics: docs/ranking.md.

export type Quantization = 'f32' | 'i8';
export type Fusion = 'weighted' | 'rrf';

export interface RankingOptions {
  /** Vector length; 0 or absent: fixed by the first vector added. */
  dimensions?: number;
  /** How vectors are stored and compared: float32, or int8 (a quarter of the memory). */
  quantization?: Quantization;
  /** BM25 parameters. */
  k1?: number;
  b?: number;
  /** With more vectors than this, the addon takes vector candidates from an HNSW graph. */
  hnswThreshold?: number;
  /** HNSW graph degree and search breadths (usearch's M, efConstruction, ef). */
  connectivity?: number;
  expansionAdd?: number;
  expansionSearch?: number;
}
export type ResolvedRankingOptions = Required<RankingOptions>;

export const DEFAULT_OPTIONS: ResolvedRankingOptions = Object.freeze({
  dimensions: 0,
  quantization: 'f32',
  k1: 1.2,
  b: 0.75,
  hnswThreshold: 20_000,
  connectivity: 16,
  expansionAdd: 64,
  expansionSearch: 64,
});

export type VectorInput = Float32Array | readonly number[];

export interface RankingDoc {
  id: string;
  text: string;
  vector?: VectorInput | null;
  kind?: string;
  session?: string;
  /** Any finite number; pinclaw uses milliseconds since the epoch. */
  time?: number;
}

export interface RankingFilter {
  kind?: string | readonly string[];
  session?: string | readonly string[];
  /** time >= since */
  since?: number;
  /** time < until */
  until?: number;
}

export interface RankingQuery {
  text?: string;
  vector?: VectorInput | null;
  /** Results wanted, 1 to 10000; default 10. */
  k?: number;
  fusion?: Fusion;
  /** For weighted fusion; default 0.7 vector, 0.3 keyword; renormalized to sum to 1. */
  weights?: { vector?: number; keyword?: number };
  /** The constant of reciprocal-rank fusion; default 60. */
  rrfK?: number;
  /** Candidates taken from each side before fusion; default max(4k, 50), never fewer than k. */
  candidates?: number;
  filter?: RankingFilter;
}

export interface RankingHit {
  id: string;
  /** The fused score. */
  score: number;
  /** Raw BM25; null when the query has no terms. */
  keyword: number | null;
  /** Raw cosine; null when the query or the document has no vector. */
  vector: number | null;
}

export interface RankingStats {
  documents: number;
  vectors: number;
  terms: number;
  dimensions: number;
  graphNodes: number;
  graphTombstones: number;
  /** The index's own structures; an estimate for the reference. */
  memoryBytes: number;
}

export interface RankingIndex {
  readonly backend: 'native' | 'reference';
  options(): ResolvedRankingOptions;
  /** Throws if the id exists. */
  add(doc: RankingDoc): void;
  /** All or nothing: every document is checked before any is added. */
  addMany(docs: readonly RankingDoc[]): void;
  /** Replaces a document; throws if the id does not exist. */
  update(doc: RankingDoc): void;
  /** Adds or replaces. */
  upsert(doc: RankingDoc): void;
  remove(id: string): boolean;
  has(id: string): boolean;
  size(): number;
  search(query: RankingQuery): RankingHit[];
  /** The canonical serialized form; both backends write the same bytes for the same documents. */
  serialize(): Buffer;
  /** Replaces contents and options with a serialized index; on error the index is unchanged. */
  load(buffer: Uint8Array): void;
  stats(): RankingStats;
}
