// The memory's shared vocabulary (a leaf: no imports from the rest of src/): what is stored, how a
// search hit cites its source, and the one interface every embedding backend implements.

export type MemoryKind = 'note' | 'fact' | 'preference' | 'file' | 'daily' | 'transcript' | (string & {});

/** Where a chunk came from: a workspace file and its 1-based line range, or an entry stored by a tool or the CLI. */
export type MemorySource =
  | { type: 'file'; file: string; lineStart: number; lineEnd: number }
  | { type: 'entry'; session: string | null };

export interface MemoryChunk {
  id: number;
  text: string;
  kind: MemoryKind;
  source: MemorySource;
  /** SHA-256 of the text, hex */
  hash: string;
  createdAt: number;
  updatedAt: number;
}

export interface MemoryHit {
  id: number;
  text: string;
  kind: MemoryKind;
  score: number;
  source: MemorySource;
  /** "MEMORY.md:12-18" or "memory #42": what the model cites */
  citation: string;
}

export type SearchMode = 'hybrid' | 'keyword' | 'vector';

/** A relation between words (word-links.ts: WordNet's links, inflections included). */
export interface WordRelation {
  has(a: string, b: string): boolean;
  /** Whether `general` names a kind of being that `noun` is ("dog" for "beagle"; names.ts). */
  kindOf?(noun: string, general: string): boolean;
}

/**
 * Turns texts into vectors. `id` names the model and its version: it is stored with every vector, so
 * vectors of two embedders are never compared and a change of embedder is noticed.
 */
export interface Embedder {
  readonly id: string;
  readonly dimensions: number;
  /**
   * Embedding single words is cheap (no network, no model): the hybrid search then reranks its top
   * candidates word by word (rerank.ts). Unset for a remote embedder.
   */
  readonly wordLevel?: boolean;
  /**
   * WordNet's links among the embedder's words, which the rerank adds to the word vectors
   * (word-links.ts). Unset when the embedder has none.
   */
  wordLinks?(): Promise<WordRelation>;
  /** One vector per text, in order; unit length. Throws EmbedderError when it cannot. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

/** An embedder failure, in words fit for a log line ("the embedding server at ... is down"). */
export class EmbedderError extends Error {
  constructor(message: string, readonly retryable = false) {
    super(message);
    this.name = 'EmbedderError';
  }
}

export const citationOf = (id: number, source: MemorySource): string =>
  source.type === 'file' ? `${source.file}:${source.lineStart}-${source.lineEnd}` : `memory #${id}`;
