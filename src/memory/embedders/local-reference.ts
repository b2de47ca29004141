// The local embedder's computation in plain TypeScript: what runs when the addon is missing, and
// the specification native/embed_model.cc is held to (test/embedder-local.test.ts: equal to 1e-6;
// in practice bit for bit, as both do the same IEEE double operations in the same order).
//
//   1. prepareText (shared by both backends): the ranking's folding (NFKC, case folding), Latin
//      diacritics dropped (the vocabulary is ASCII), contractions spelled out or dropped ("n't" →
//      "not"; 's 're 'll 've 'd 'm go), and a hyphen between word characters written as "_", so
//      "wi-fi" stays one term (the vocabulary stores "wi_fi").
//   2. Terms: the ranking's splitTerms (runs of word characters; CJK characters and pairs).
//   3. Each term, in order, adds a vector to a double-precision sum:
//      a. a vocabulary word: its product-quantized vector (per subspace, the centroid its code
//         names, from the frequent or the rare words' codebook as its frequency class says) times
//         the SIF weight a / (a + p(w)) of its class (p from the word's frequency rank, Zipf's
//         estimate; a = 1e-3);
//      b. otherwise, a term with "_" is looked up part by part (snake_case, unknown compounds);
//      c. an unknown part of 5 to 24 letters a–z: the most frequent vocabulary word one edit away
//         (deletion, transposition, substitution, insertion): a typo gets its word's vector. "Most
//         frequent": the lowest frequency class, then the first in the (sorted) word list;
//      d. else, unless it is one ASCII character (a stray "a", "s", "5"): the sum of the vectors of
//         its character 3- to 5-grams of "<term>" (FNV-1a of the UTF-8 bytes, modulo the bucket
//         count; each bucket's vector product-quantized too), normalised, times the unknown-word
//         scale (the SIF weight of a word rarer than all known ones at a typical vector length).
//   4. The common component (stored unit vector u) is removed: v -= (v·u) u; then v / |v|, as
//      float32. A text without a term (or whose sum is zero) gets u itself: orthogonal to every
//      other embedding, the same for all such texts.
import { foldText, splitTerms } from '../../native/ranking-text.js';
import { CENTROIDS, wordList, type EmbedderData } from './local-asset.js';

const ASCII = /^[\x00-\x7f]*$/;
const LATIN_ACCENTED = /[\u00c0-\u024f\u1e00-\u1eff]/g;
const CAN_WONT = /\b(can|won)['\u2019]t\b/g;
const NOT = /n['\u2019]t\b/g;
const CLITIC = /['\u2019](?:s|re|ll|ve|d|m)\b/g;
const HYPHEN = /(?<=[\p{L}\p{N}])-(?=[\p{L}\p{N}])/gu;

function stripLatinMark(ch: string): string {
  const d = ch.normalize('NFD');
  return d.length > 1 && d.charCodeAt(0) < 0x80 ? d[0]! : ch;
}

/** Step 1: the text both backends split. */
export function prepareText(text: string): string {
  let s = foldText(text);
  if (!ASCII.test(s)) s = s.replace(LATIN_ACCENTED, stripLatinMark);
  return s
    .replace(CAN_WONT, (_m, w: string) => (w === 'can' ? 'can not' : 'will not'))
    .replace(NOT, ' not')
    .replace(CLITIC, ' ')
    .replace(HYPHEN, '_');
}

const TYPO = /^[a-z]{5,24}$/;
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

function utf8Of(cp: number): number[] {
  if (cp < 0x80) return [cp];
  if (cp < 0x800) return [0xc0 | (cp >> 6), 0x80 | (cp & 63)];
  if (cp < 0x10000) return [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)];
  return [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)];
}

export class ReferenceEmbedder {
  readonly dims: number;
  private readonly vocab = new Map<string, number>();
  private readonly bytes: Uint8Array;
  /** SIF weight of each word (its class's). */
  private readonly weights: Float64Array;
  private readonly classes: Uint8Array;

  constructor(readonly data: EmbedderData) {
    const { bytes, words, classesOffset, classWeights } = data;
    this.dims = data.dims;
    this.bytes = bytes;
    this.classes = bytes.subarray(classesOffset, classesOffset + words);
    this.weights = Float64Array.from(this.classes, (c) => classWeights[c]!);
    const list = wordList(data);
    // The first occurrence wins, as in the addon's table (the list has no duplicates).
    for (let i = 0; i < words; i++) if (!this.vocab.has(list[i]!)) this.vocab.set(list[i]!, i);
  }

  /** Embeds text already passed through prepareText. */
  embed(prepared: string): Float32Array {
    const d = this.dims;
    const acc = new Float64Array(d);
    for (const term of splitTerms(prepared)) {
      const hit = this.vocab.get(term);
      if (hit !== undefined) this.addWord(hit, acc);
      else if (term.includes('_')) {
        for (const part of term.split('_')) if (part) this.addUnknown(part, acc);
      } else this.addUnknown(term, acc);
    }
    const pc = this.data.pc;
    let dot = 0;
    for (let k = 0; k < d; k++) dot += acc[k]! * pc[k]!;
    for (let k = 0; k < d; k++) acc[k] = acc[k]! - dot * pc[k]!;
    let sq = 0;
    for (let k = 0; k < d; k++) sq += acc[k]! * acc[k]!;
    if (!(sq > 0)) return Float32Array.from(pc);
    const norm = Math.sqrt(sq);
    const out = new Float32Array(d);
    for (let k = 0; k < d; k++) out[k] = acc[k]! / norm;
    return out;
  }

  private addWord(index: number, acc: Float64Array): void {
    const w = this.weights[index]!;
    const { firstRareClass, frequentCodebook, rareCodebook, codeOffsets } = this.data;
    const { subspaces, offsets, sizes, values } = this.classes[index]! < firstRareClass ? frequentCodebook : rareCodebook;
    const codes = codeOffsets[index]!;
    for (let s = 0; s < subspaces; s++) {
      const o = offsets[s]!;
      const n = sizes[s]!;
      const base = CENTROIDS * o + this.bytes[codes + s]! * n;
      for (let k = 0; k < n; k++) acc[o + k] = acc[o + k]! + values[base + k]! * w;
    }
  }

  /** Adds bucket `b`'s vector to `sum`, unweighted. */
  private addBucket(b: number, sum: Float64Array): void {
    const { subspaces, offsets, sizes, values } = this.data.bucketCodebook;
    const codes = this.data.bucketCodesOffset + b * subspaces;
    for (let s = 0; s < subspaces; s++) {
      const o = offsets[s]!;
      const n = sizes[s]!;
      const base = CENTROIDS * o + this.bytes[codes + s]! * n;
      for (let k = 0; k < n; k++) sum[o + k] = sum[o + k]! + values[base + k]!;
    }
  }

  private addUnknown(term: string, acc: Float64Array): void {
    const known = this.vocab.get(term);
    if (known !== undefined) return this.addWord(known, acc);
    if (TYPO.test(term)) {
      const fixed = this.correct(term);
      if (fixed >= 0) return this.addWord(fixed, acc);
    }
    if (term.length === 1 && term.charCodeAt(0) < 0x80) return;
    this.addGrams(term, acc);
  }

  /** The most frequent vocabulary word one edit away (lowest class, then lowest index), or -1. */
  private correct(w: string): number {
    let best = -1;
    const consider = (c: string) => {
      const i = this.vocab.get(c);
      if (i !== undefined && (best < 0 || this.classes[i]! < this.classes[best]! || (this.classes[i] === this.classes[best] && i < best))) best = i;
    };
    const n = w.length;
    for (let i = 0; i < n; i++) consider(w.slice(0, i) + w.slice(i + 1));
    for (let i = 0; i + 1 < n; i++) consider(w.slice(0, i) + w[i + 1] + w[i] + w.slice(i + 2));
    for (let i = 0; i < n; i++) for (const c of LETTERS) if (c !== w[i]) consider(w.slice(0, i) + c + w.slice(i + 1));
    for (let i = 0; i <= n; i++) for (const c of LETTERS) consider(w.slice(0, i) + c + w.slice(i));
    return best;
  }

  private addGrams(term: string, acc: Float64Array): void {
    const d = this.dims;
    const { minGram, maxGram, buckets, unknownScale } = this.data;
    const cps: number[][] = [[0x3c]];
    for (const ch of term) cps.push(utf8Of(ch.codePointAt(0)!));
    cps.push([0x3e]);
    const sum = new Float64Array(d);
    for (let n = minGram; n <= maxGram; n++) {
      for (let i = 0; i + n <= cps.length; i++) {
        let h = 0x811c9dc5;
        for (let j = i; j < i + n; j++) for (const b of cps[j]!) h = Math.imul(h ^ b, 0x01000193) >>> 0;
        this.addBucket(h % buckets, sum);
      }
    }
    let sq = 0;
    for (let k = 0; k < d; k++) sq += sum[k]! * sum[k]!;
    if (!(sq > 0)) return;
    const f = unknownScale / Math.sqrt(sq);
    for (let k = 0; k < d; k++) acc[k] = acc[k]! + f * sum[k]!;
  }
}
