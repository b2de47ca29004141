// The addon's ranking index behind the RankingIndex interface. Text is folded here (Unicode
// normalization needs tables the addon does not carry); every other check happens in the addon.
import { prepareDoc, prepareQuery } from './ranking-input.js';
import type { RankingDoc, RankingHit, RankingIndex, RankingOptions, RankingQuery, RankingStats, ResolvedRankingOptions } from './ranking-types.js';

/** What native/ranking.cc exports. */
export interface RankingAddonIndex {
  /** mode: 0 add, 1 update, 2 upsert */
  put(mode: 0 | 1 | 2, docs: readonly unknown[]): void;
  remove(id: string): boolean;
  has(id: string): boolean;
  size(): number;
  search(query: unknown): RankingHit[];
  serialize(): Buffer;
  load(buffer: Uint8Array): void;
  stats(): RankingStats;
  options(): ResolvedRankingOptions;
}
export interface RankingAddon {
  RankingIndex: new (options?: RankingOptions) => RankingAddonIndex;
  /** The term splitter alone: folded text (or raw UTF-8 bytes) in, terms out. */
  rankingTerms(text: string | Uint8Array): string[];
}

export function isRankingAddon(a: unknown): a is RankingAddon {
  const x = a as Partial<RankingAddon> | null;
  return typeof x?.RankingIndex === 'function' && typeof x.rankingTerms === 'function';
}

export class NativeRankingIndex implements RankingIndex {
  readonly backend = 'native' as const;
  readonly #index: RankingAddonIndex;

  constructor(addon: RankingAddon, options?: RankingOptions) {
    this.#index = new addon.RankingIndex(options);
  }

  options(): ResolvedRankingOptions {
    return this.#index.options();
  }
  add(doc: RankingDoc): void {
    this.#index.put(0, [prepareDoc(doc)]);
  }
  addMany(docs: readonly RankingDoc[]): void {
    this.#index.put(0, Array.isArray(docs) ? docs.map(prepareDoc) : docs);
  }
  update(doc: RankingDoc): void {
    this.#index.put(1, [prepareDoc(doc)]);
  }
  upsert(doc: RankingDoc): void {
    this.#index.put(2, [prepareDoc(doc)]);
  }
  remove(id: string): boolean {
    return this.#index.remove(id);
  }
  has(id: string): boolean {
    return this.#index.has(id);
  }
  size(): number {
    return this.#index.size();
  }
  search(query: RankingQuery): RankingHit[] {
    return this.#index.search(prepareQuery(query));
  }
  serialize(): Buffer {
    return this.#index.serialize();
  }
  load(buffer: Uint8Array): void {
    this.#index.load(buffer);
  }
  stats(): RankingStats {
    return this.#index.stats();
  }
}
