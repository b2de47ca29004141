// Pure-TypeScript byte-level BPE: the fallback when the addon cannot load, and the yardstick the
// tests hold the addon (and tiktoken) to. Pieces come from tokenizer-split.ts; each piece's UTF-8
// bytes are merged by tiktoken's rule (lowest-ranked adjacent pair first, leftmost on a tie).
// Byte strings are handled as latin1 strings (one char per byte), which Map can key directly.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { EncodingData } from './tokenizer-data.js';
import type { EncodingName } from './tokenizer-encodings.js';
import { Splitter } from './tokenizer-split.js';

export type TokenizerInput = string | Uint8Array;

/** Pieces up to this many bytes use tiktoken's quadratic scan; longer ones a heap (same merges). */
const SMALL_PIECE = 128;
/** countAsync gives the event loop a turn after this many UTF-16 units of text. */
const SLICE = 16 * 1024;

/** Text as tiktoken sees it: lone surrogates and invalid UTF-8 become U+FFFD. */
export function wellFormed(text: TokenizerInput): string {
  // String.prototype.toWellFormed is ES2024 (Node >= 20); the project compiles against ES2022's lib.
  return typeof text === 'string' ? (text as string & { toWellFormed(): string }).toWellFormed() : new TextDecoder().decode(text);
}

/** tiktoken's rank text ("<label> <first rank> <base64>…" per line) as a map from latin1 byte strings. */
export function parseRanks(text: string): Map<string, number> {
  const ranks = new Map<string, number>();
  let lineNo = 0;
  for (const line of text.split('\n')) {
    lineNo++;
    if (!line) continue;
    const fields = line.split(' ');
    const first = Number(fields[1]);
    if (!Number.isSafeInteger(first) || first < 0) throw new Error(`rank data line ${lineNo}: first rank is not a number`);
    for (let i = 2; i < fields.length; i++) {
      const b64 = fields[i]!;
      if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0) throw new Error(`rank data line ${lineNo}: token ${i - 1} is not base64`);
      const key = Buffer.from(b64, 'base64').toString('latin1');
      if (ranks.has(key)) throw new Error(`rank data line ${lineNo}: token of rank ${first + i - 2} repeats the token of rank ${ranks.get(key)}`);
      ranks.set(key, first + i - 2);
    }
  }
  for (let b = 0; b < 256; b++) {
    if (!ranks.has(String.fromCharCode(b))) throw new Error(`rank data: no token for the single byte 0x${b.toString(16).padStart(2, '0')}`);
  }
  return ranks;
}

export class ReferenceTokenizer {
  readonly encoding: EncodingName;
  private readonly ranks: Map<string, number>;
  private readonly splitter: Splitter;

  constructor(data: Pick<EncodingData, 'name' | 'ranks'>) {
    this.encoding = data.name;
    this.ranks = parseRanks(data.ranks);
    this.splitter = new Splitter(data.name);
  }

  encode(text: TokenizerInput): number[] {
    const out: number[] = [];
    for (const piece of this.splitter.pieces(wellFormed(text))) this.encodePiece(piece, out);
    return out;
  }

  count(text: TokenizerInput): number {
    let n = 0;
    for (const piece of this.splitter.pieces(wellFormed(text))) n += this.encodePiece(piece, null);
    return n;
  }

  /** Without the addon there is no other thread: the count yields to the event loop between slices. */
  async countAsync(text: TokenizerInput): Promise<number> {
    const s = wellFormed(text);
    let n = 0;
    let sinceYield = 0;
    for (let pos = 0; pos < s.length; ) {
      const end = this.splitter.next(s, pos);
      n += this.encodePiece(s.slice(pos, end), null);
      sinceYield += end - pos;
      pos = end;
      if (sinceYield >= SLICE) {
        sinceYield = 0;
        await yieldToLoop();
      }
    }
    return n;
  }

  /** Token count of one piece; the ids are appended to `out` when given. */
  encodePiece(piece: string, out: number[] | null): number {
    const bytes = Buffer.from(piece, 'utf8').toString('latin1');
    const whole = this.ranks.get(bytes);
    if (whole !== undefined) {
      out?.push(whole);
      return 1;
    }
    const ids = bytes.length <= SMALL_PIECE ? this.mergeScan(bytes) : this.mergeHeap(bytes);
    if (out) for (const id of ids) out.push(id);
    return ids.length;
  }

  private rank(bytes: string, start: number, end: number): number {
    return this.ranks.get(bytes.slice(start, end)) ?? Infinity;
  }

  /** tiktoken's byte_pair_merge, as written there. */
  private mergeScan(bytes: string): number[] {
    // parts[i] = [start, rank of the pair that starts at part i]
    const parts: [number, number][] = [];
    for (let i = 0; i <= bytes.length; i++) parts.push([i, Infinity]);
    for (let i = 0; i + 2 < parts.length; i++) parts[i]![1] = this.rank(bytes, i, i + 2);
    const pairRank = (i: number) => (i + 3 < parts.length ? this.rank(bytes, parts[i]![0], parts[i + 3]![0]) : Infinity);
    for (;;) {
      let best = Infinity;
      let at = -1;
      for (let i = 0; i + 1 < parts.length; i++) {
        if (parts[i]![1] < best) {
          best = parts[i]![1];
          at = i;
        }
      }
      if (at < 0) break;
      parts[at]![1] = pairRank(at);
      if (at > 0) parts[at - 1]![1] = pairRank(at - 1);
      parts.splice(at + 1, 1);
    }
    const ids: number[] = [];
    for (let i = 0; i + 1 < parts.length; i++) ids.push(this.rank(bytes, parts[i]![0], parts[i + 1]![0]));
    return ids;
  }

  /** The same merges in O(n log n): a heap of candidate pairs ordered by (rank, start). */
  private mergeHeap(bytes: string): number[] {
    const n = bytes.length;
    const next = new Int32Array(n + 1);
    const prev = new Int32Array(n + 1);
    for (let i = 0; i <= n; i++) {
      next[i] = i + 1;
      prev[i] = i - 1;
    }
    const heap = new PairHeap();
    for (let i = 0; i + 1 < n; i++) {
      const r = this.rank(bytes, i, i + 2);
      if (r !== Infinity) heap.push(r, i, i + 1, i + 2);
    }
    const GONE = -1;
    for (let c = heap.pop(); c; c = heap.pop()) {
      const [, start, mid, end] = c;
      if (next[start] !== mid || next[mid] !== end) continue; // stale: a part merged since
      next[start] = end;
      next[mid] = GONE;
      if (end < n) prev[end] = start;
      if (start > 0) {
        const left = prev[start]!;
        const r = this.rank(bytes, left, end);
        if (r !== Infinity) heap.push(r, left, start, end);
      }
      if (end < n) {
        const right = next[end]!;
        const r = this.rank(bytes, start, right);
        if (r !== Infinity) heap.push(r, start, end, right);
      }
    }
    const ids: number[] = [];
    for (let b = 0; b < n; b = next[b]!) ids.push(this.rank(bytes, b, next[b]!));
    return ids;
  }
}

type Candidate = [rank: number, start: number, mid: number, end: number];

/** A binary min-heap of merge candidates, ordered by rank, then by start (leftmost first). */
class PairHeap {
  private readonly items: Candidate[] = [];

  private static before(a: Candidate, b: Candidate): boolean {
    return a[0] !== b[0] ? a[0] < b[0] : a[1] < b[1];
  }

  push(rank: number, start: number, mid: number, end: number): void {
    const items = this.items;
    items.push([rank, start, mid, end]);
    let i = items.length - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (!PairHeap.before(items[i]!, items[up]!)) break;
      [items[i], items[up]] = [items[up]!, items[i]!];
      i = up;
    }
  }

  pop(): Candidate | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length && last) {
      items[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && PairHeap.before(items[l]!, items[m]!)) m = l;
        if (r < items.length && PairHeap.before(items[r]!, items[m]!)) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m]!, items[i]!];
        i = m;
      }
    }
    return top;
  }
}
