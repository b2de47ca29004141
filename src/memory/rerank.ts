// A reranking step for the local embedder's hybrid search: word-level late interaction over the
// fused top candidates. A sentence vector (a weighted mean of word vectors) blurs a question whose
// answer shares no word with it; matching each query word to its closest word in the chunk
// (BERTScore's greedy matching, Zhang et al. 2020; the relaxed word mover's distance of Kusner et
// al. 2015) scores each query word by its best partner alone, however much else the chunk is about.
// The word vectors are the embedder's own (each word embedded alone: its vocabulary vector, typo
// correction and n-grams included). WordNet's links between words (word-links.ts), when the embedder
// has them, count a linked pair as closer than its vectors say.
import { foldText, splitTerms } from '../native/ranking-text.js';
import { onRelease } from '../release.js';
import type { WordRelation } from './types.js';

// A quiet gateway drops the word caches with the embedder's data (src/release.ts); the next search
// fills them again.
const live = new Set<WeakRef<WordVectors>>();
onRelease('memory-word-vectors', () => {
  for (const ref of live) {
    const wv = ref.deref();
    if (wv) wv.clear();
    else live.delete(ref);
  }
});

/**
 * Function words carry no topic: matched against a chunk's function words they would raise every
 * candidate alike. The SIF weights already damp them in the sentence vector; here they are left out.
 */
const STOPWORDS = new Set(`a about above after again against all am an and any are as at be because been before being below between both but by
can could did do does doing don down during each few for from further had has have having he her here hers herself him himself his how i if in into
is it its itself just me more most my myself no nor not now of off on once only or other our ours ourselves out over own same she should so some
such than that the their theirs them themselves then there these they this those through to too under until up very was we were what when where
which while who whom why will with would you your yours yourself yourselves s t d ll m re ve may must shall also get gets got one`.split(/\s+/));

/** The content words of a text, once each, in order. */
export function contentWords(text: string): string[] {
  const seen = new Set<string>();
  for (const t of splitTerms(foldText(text).replace(/['\u2019]/g, ' '))) if (!STOPWORDS.has(t)) seen.add(t);
  return [...seen];
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let k = 0; k < a.length; k++) s += a[k]! * b[k]!;
  return s;
}

/**
 * How well a chunk's words cover the query's: the mean, over the query's content words, of the best
 * cosine to any of the chunk's content words (0 when either side has none; negative cosines count
 * as 0, an unrelated word).
 */
export function coverage(query: readonly Float32Array[], chunk: readonly Float32Array[]): number {
  if (query.length === 0 || chunk.length === 0) return 0;
  let sum = 0;
  for (const q of query) {
    let best = 0;
    for (const c of chunk) {
      const s = dot(q, c);
      if (s > best) best = s;
    }
    sum += best;
  }
  return sum / query.length;
}

/** Word vectors, cached across searches (a chunk's words recur in every search that reaches it). */
export class WordVectors {
  private readonly cache = new Map<string, Float32Array>();

  constructor(
    private readonly embed: (words: string[]) => Promise<Float32Array[]>,
    /** Entries kept; at 100 float32 dimensions, 4,096 words are ~2 MB with the keys (a household memory of a few hundred chunks has fewer distinct words). */
    private readonly max = 4096,
  ) {
    live.add(new WeakRef(this));
  }

  clear(): void {
    this.cache.clear();
  }

  async of(words: readonly string[]): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    const missing: string[] = [];
    for (const w of words) {
      const v = this.cache.get(w);
      if (v) out.set(w, v);
      else if (!out.has(w)) missing.push(w);
    }
    const fresh = missing.length ? await this.embed([...new Set(missing)]) : [];
    [...new Set(missing)].forEach((w, i) => {
      out.set(w, fresh[i]!);
      // Dropped whole when full: simpler than an LRU, and refilled by the next few searches.
      if (this.cache.size >= this.max) this.cache.clear();
      this.cache.set(w, fresh[i]!);
    });
    return out;
  }
}

export interface Candidate {
  text: string;
  /** The fused score the index gave (cosine and BM25 mixed, 0..1). */
  score: number;
}

/**
 * The similarity of a query word and a chunk word whose vectors have cosine `cos`: the cosine, or,
 * when WordNet links the two words and the vectors do not disagree (cos > 0), halfway from it to an
 * exact match, (1 + cos) / 2. A link alone is weak evidence (WordNet links "cut" to "dock" as well
 * as to "mow"), so it raises a pair in proportion to what the vectors already see rather than to a
 * fixed score; measured alternatives in bench/README.md ("Memory paraphrase experiments").
 */
export function linkedSimilarity(cos: number, linked: boolean): number {
  return linked && cos > 0 ? (1 + cos) / 2 : cos;
}

/**
 * New scores for the candidates: (1 − weight) · fused + weight · coverage (normalised). The order of candidates
 * is kept; the caller sorts. `links`: WordNet's links, or null to use the word vectors alone.
 * `aliases`: for a query word, the folded names it stands for (names.ts: "dog" → "biscuit"); a chunk
 * word that is one of them matches the query word exactly.
 */
export async function rerank(query: string, candidates: readonly Candidate[], words: WordVectors, weight: number, links: WordRelation | null = null, aliases: ReadonlyMap<string, ReadonlySet<string>> = new Map()): Promise<number[]> {
  const qWords = contentWords(query);
  const cWords = candidates.map((c) => contentWords(c.text));
  const vectors = await words.of([...qWords, ...cWords.flat()]);
  const qv = qWords.map((w) => vectors.get(w)!);
  // Each distinct chunk word's cosine to each query word, once: the candidates share most of their
  // words, so this is several times less work than comparing chunk by chunk (the same result as
  // coverage()).
  const sims = new Map<string, Float64Array>();
  for (const ws of cWords) {
    for (const w of ws) {
      if (sims.has(w)) continue;
      const v = vectors.get(w)!;
      sims.set(w, Float64Array.from(qv, (q, j) => {
        if (aliases.get(qWords[j]!)?.has(w)) return 1;
        const cos = dot(q, v);
        // The link lookup only where it can change something (a positive cosine).
        return links && cos > 0 ? linkedSimilarity(cos, links.has(qWords[j]!, w)) : cos;
      }));
    }
  }
  const best = new Float64Array(qv.length);
  const cov = cWords.map((ws) => {
    if (qv.length === 0 || ws.length === 0) return 0;
    best.fill(0);
    for (const w of ws) {
      const row = sims.get(w)!;
      for (let j = 0; j < row.length; j++) if (row[j]! > best[j]!) best[j] = row[j]!;
    }
    let sum = 0;
    for (const b of best) sum += b;
    return sum / qv.length;
  });
  // Min-max normalised over the candidates, as the index normalises each side before fusing: the
  // raw coverage spans a narrow band (every chunk has some loosely related word).
  const lo = Math.min(...cov);
  const hi = Math.max(...cov);
  return candidates.map((c, i) => (1 - weight) * c.score + weight * (hi > lo ? (cov[i]! - lo) / (hi - lo) : 0));
}
