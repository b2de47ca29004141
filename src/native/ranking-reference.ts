// The pure-TypeScript ranking index: the fallback when the addon is missing and the yardstick the
// tests hold the addon to. Every formula is written in the same order of operations as
// native/ranking_index.cc, so scores agree to the last bit or nearly (Math.log and glibc's log may
// differ in the last place). It is always exact on the vector side: it has no HNSW graph.
import { compareIds, splitTerms } from './ranking-text.js';
import { cosine, prepare, type PreparedVector } from './ranking-vectors.js';
import { checkVector, MAX_DIMENSIONS, parseDoc, parseId, parseOptions, parseQuery, prepareDoc, prepareQuery, rangeFail, typeFail, type ParsedDoc, type ParsedFilter } from './ranking-input.js';
import { decodeIndex, encodeIndex, type StoredDoc } from './ranking-reference-codec.js';
import type { RankingDoc, RankingHit, RankingIndex, RankingOptions, RankingQuery, RankingStats, ResolvedRankingOptions } from './ranking-types.js';

interface Doc extends StoredDoc {
  /** Sum of the term frequencies. */
  length: number;
  prepared: PreparedVector | null;
}

/** The documents containing a term, as document numbers with their term frequencies. */
interface Postings {
  docs: number[];
  tfs: number[];
}

interface Candidate {
  score: number;
  id: string;
}

const better = (a: Candidate, b: Candidate): boolean => (a.score !== b.score ? a.score > b.score : compareIds(a.id, b.id) < 0);

/** Keeps the `cap` best candidates: a binary heap whose root is the worst of them. */
class TopK {
  readonly items: Candidate[] = [];
  constructor(private readonly cap: number) {}
  push(c: Candidate): void {
    const h = this.items;
    if (h.length < this.cap) {
      h.push(c);
      let i = h.length - 1;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!better(h[p]!, h[i]!)) break;
        [h[p], h[i]] = [h[i]!, h[p]!];
        i = p;
      }
    } else if (h.length && better(c, h[0]!)) {
      h[0] = c;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let worst = i;
        if (l < h.length && better(h[worst]!, h[l]!)) worst = l;
        if (r < h.length && better(h[worst]!, h[r]!)) worst = r;
        if (worst === i) break;
        [h[worst], h[i]] = [h[i]!, h[worst]!];
        i = worst;
      }
    }
  }
  sorted(): Candidate[] {
    return this.items.sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0));
  }
}

export class ReferenceRankingIndex implements RankingIndex {
  readonly backend = 'reference' as const;
  #options: ResolvedRankingOptions;
  /** Documents by number; numbers of removed documents are reused. */
  #docs: (Doc | undefined)[] = [];
  #free: number[] = [];
  #ids = new Map<string, number>();
  #postings = new Map<string, Postings>();
  #totalLength = 0;
  #vectors = 0;
  /** Scratch for BM25 sums, indexed by document number. */
  #acc = new Float64Array(0);

  constructor(options?: RankingOptions) {
    this.#options = parseOptions(options);
  }

  options(): ResolvedRankingOptions {
    return { ...this.#options };
  }

  add(doc: RankingDoc): void {
    this.#put([doc], 'add');
  }
  addMany(docs: readonly RankingDoc[]): void {
    if (!Array.isArray(docs)) typeFail('documents must be an array');
    this.#put(docs, 'add');
  }
  update(doc: RankingDoc): void {
    this.#put([doc], 'update');
  }
  upsert(doc: RankingDoc): void {
    this.#put([doc], 'upsert');
  }

  #put(input: readonly unknown[], mode: 'add' | 'update' | 'upsert'): void {
    const docs = input.map((d) => parseDoc(prepareDoc(d)));
    let dims = this.#options.dimensions;
    const batch = new Set<string>();
    for (const d of docs) {
      const who = `document '${d.id}'`;
      if (batch.has(d.id)) rangeFail(`${who} appears twice in one batch`);
      batch.add(d.id);
      const exists = this.#ids.has(d.id);
      if (mode === 'add' && exists) rangeFail(`${who} already exists`);
      if (mode === 'update' && !exists) rangeFail(`${who} does not exist`);
      if (!Number.isFinite(d.time)) rangeFail(`${who}: time must be a finite number`);
      if (d.vector) {
        if (dims === 0) {
          if (d.vector.length === 0 || d.vector.length > MAX_DIMENSIONS) rangeFail(`${who}: vector must have from 1 to 65536 dimensions`);
          dims = d.vector.length;
        }
        checkVector(d.vector, dims, `${who}: vector`);
      }
    }
    this.#options.dimensions = dims;
    for (const d of docs) {
      const old = this.#ids.get(d.id);
      if (old !== undefined) this.#erase(old);
      this.#insert(d);
    }
  }

  #insert(d: ParsedDoc): void {
    const terms = new Map<string, number>();
    for (const t of splitTerms(d.text)) terms.set(t, (terms.get(t) ?? 0) + 1);
    const prepared = d.vector ? prepare(d.vector, this.#options.dimensions, this.#options.quantization) : null;
    this.#store({ id: d.id, kind: d.kind, session: d.session, time: d.time, terms, length: 0, prepared });
  }

  #store(doc: Doc): void {
    const num = this.#free.pop() ?? this.#docs.length;
    this.#docs[num] = doc;
    this.#ids.set(doc.id, num);
    for (const [t, tf] of doc.terms) {
      doc.length += tf;
      let p = this.#postings.get(t);
      if (!p) this.#postings.set(t, (p = { docs: [], tfs: [] }));
      p.docs.push(num);
      p.tfs.push(tf);
    }
    this.#totalLength += doc.length;
    if (doc.prepared) this.#vectors++;
  }

  #erase(num: number): void {
    const doc = this.#docs[num]!;
    for (const t of doc.terms.keys()) {
      const p = this.#postings.get(t)!;
      // Posting order carries no meaning (scores are summed per document), so swap-remove.
      const i = p.docs.indexOf(num);
      p.docs[i] = p.docs[p.docs.length - 1]!;
      p.tfs[i] = p.tfs[p.tfs.length - 1]!;
      p.docs.pop();
      p.tfs.pop();
      if (p.docs.length === 0) this.#postings.delete(t);
    }
    this.#totalLength -= doc.length;
    if (doc.prepared) this.#vectors--;
    this.#ids.delete(doc.id);
    this.#docs[num] = undefined;
    this.#free.push(num);
  }

  remove(id: string): boolean {
    const num = this.#ids.get(parseId(id));
    if (num === undefined) return false;
    this.#erase(num);
    return true;
  }

  has(id: string): boolean {
    return this.#ids.has(parseId(id));
  }

  size(): number {
    return this.#ids.size;
  }

  *#live(): IterableIterator<Doc> {
    for (const d of this.#docs) if (d) yield d;
  }

  #passes(f: ParsedFilter, doc: Doc): boolean {
    if (f.kinds && !f.kinds.includes(doc.kind)) return false;
    if (f.sessions && !f.sessions.includes(doc.session)) return false;
    return doc.time >= f.since && doc.time < f.until;
  }

  search(query: RankingQuery): RankingHit[] {
    const q = parseQuery(prepareQuery(query));
    const split = splitTerms(q.text);
    const hasText = split.length > 0;
    const terms = [...new Set(split)].filter((t) => this.#postings.has(t));
    const { dimensions: dims, k1, b } = this.#options;
    const hasVector = q.vector !== null;
    if (q.vector) checkVector(q.vector, dims !== 0 ? dims : q.vector.length, 'query vector');
    if ((!hasText && !hasVector) || this.#ids.size === 0) return [];

    const k = q.k;
    const cap = Math.max(k, q.candidates || Math.max(4 * k, 50));
    const f = q.filter;

    // Keyword side: BM25 summed per document over the distinct query terms, in query order.
    if (this.#acc.length < this.#docs.length) this.#acc = new Float64Array(this.#docs.length * 2);
    const acc = this.#acc;
    const touched: number[] = [];
    const keyword = new TopK(cap);
    if (hasText) {
      const n = this.#ids.size;
      const avgdl = this.#totalLength / n;
      for (const t of terms) {
        const { docs, tfs } = this.#postings.get(t)!;
        const df = docs.length;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        for (let i = 0; i < docs.length; i++) {
          const num = docs[i]!;
          const tf = tfs[i]!;
          const lenNorm = k1 * (1 - b + (b * this.#docs[num]!.length) / avgdl);
          if (acc[num] === 0) touched.push(num);
          acc[num] = acc[num]! + idf * ((tf * (k1 + 1)) / (tf + lenNorm));
        }
      }
      for (const num of touched) {
        const doc = this.#docs[num]!;
        if (this.#passes(f, doc)) keyword.push({ score: acc[num]!, id: doc.id });
      }
    }
    const bm25 = (id: string): number => acc[this.#ids.get(id)!]!;

    // Vector side: exact cosine over every document with a vector.
    const vector = new TopK(cap);
    const comparable = hasVector && dims !== 0 && this.#vectors > 0;
    const pq = comparable ? prepare(q.vector!, dims, this.#options.quantization) : null;
    if (pq) {
      for (const doc of this.#live()) {
        if (doc.prepared && this.#passes(f, doc)) vector.push({ score: cosine(pq, doc.prepared, dims), id: doc.id });
      }
    }

    interface Row {
      id: string;
      keyword: number;
      vector: number;
      rankKeyword: number;
      rankVector: number;
    }
    const rows = new Map<string, Row>();
    const rowFor = (id: string): Row => {
      let r = rows.get(id);
      if (!r) rows.set(id, (r = { id, keyword: hasText ? bm25(id) : NaN, vector: NaN, rankKeyword: 0, rankVector: 0 }));
      return r;
    };
    vector.sorted().forEach((c, i) => {
      const r = rowFor(c.id);
      r.vector = c.score;
      r.rankVector = i + 1;
    });
    keyword.sorted().forEach((c, i) => (rowFor(c.id).rankKeyword = i + 1));
    for (const r of rows.values()) {
      const prepared = this.#docs[this.#ids.get(r.id)!]!.prepared;
      if (r.rankVector === 0 && pq && prepared) r.vector = cosine(pq, prepared, dims);
    }
    for (const num of touched) acc[num] = 0;

    const fused: Candidate[] = [];
    if (q.fusion === 'rrf') {
      for (const r of rows.values()) {
        let s = 0;
        if (r.rankVector) s += 1 / (q.rrfK + r.rankVector);
        if (r.rankKeyword) s += 1 / (q.rrfK + r.rankKeyword);
        fused.push({ score: s, id: r.id });
      }
    } else {
      let wv = q.wVector;
      let wk = q.wKeyword;
      if (!hasText) [wv, wk] = [1, 0];
      else if (!hasVector) [wv, wk] = [0, 1];
      else {
        const total = wv + wk;
        wv = wv / total;
        wk = wk / total;
      }
      let maxK = 0;
      let minV = Infinity;
      let maxV = -Infinity;
      for (const r of rows.values()) {
        if (hasText && r.keyword > maxK) maxK = r.keyword;
        if (!Number.isNaN(r.vector)) {
          minV = Math.min(minV, r.vector);
          maxV = Math.max(maxV, r.vector);
        }
      }
      for (const r of rows.values()) {
        const nk = hasText && maxK > 0 ? r.keyword / maxK : 0;
        const nv = Number.isNaN(r.vector) ? 0 : maxV > minV ? (r.vector - minV) / (maxV - minV) : 1;
        fused.push({ score: wv * nv + wk * nk, id: r.id });
      }
    }
    fused.sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0));
    return fused.slice(0, k).map((c) => {
      const r = rows.get(c.id)!;
      return { id: c.id, score: c.score, keyword: Number.isNaN(r.keyword) ? null : r.keyword, vector: Number.isNaN(r.vector) ? null : r.vector };
    });
  }

  serialize(): Buffer {
    return encodeIndex(this.#options, this.#live());
  }

  load(buffer: Uint8Array): void {
    if (!(buffer instanceof Uint8Array)) typeFail('load: buffer must be a Buffer or Uint8Array');
    const { options, docs } = decodeIndex(buffer);
    const next = new ReferenceRankingIndex(options);
    for (const d of docs) next.#store({ ...d, length: 0 });
    this.#options = next.#options;
    this.#docs = next.#docs;
    this.#free = next.#free;
    this.#ids = next.#ids;
    this.#postings = next.#postings;
    this.#totalLength = next.#totalLength;
    this.#vectors = next.#vectors;
  }

  stats(): RankingStats {
    // A rough estimate: V8 does not report the size of one structure.
    let bytes = 0;
    for (const d of this.#live()) {
      bytes += 160 + d.id.length * 2 + d.terms.size * 40;
      if (d.prepared) bytes += 80 + (d.prepared.f32 ? d.prepared.f32.byteLength : d.prepared.i8!.byteLength);
    }
    for (const [t, p] of this.#postings) bytes += 100 + t.length * 2 + p.docs.length * 16;
    return {
      documents: this.#ids.size,
      vectors: this.#vectors,
      terms: this.#postings.size,
      dimensions: this.#options.dimensions,
      graphNodes: 0,
      graphTombstones: 0,
      memoryBytes: bytes,
    };
  }
}
