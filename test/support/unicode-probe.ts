// Where tiktoken's character classes differ from Node's. tiktoken's WASM uses Rust's regex-syntax
// tables (Unicode 16.0 in tiktoken 1.0.22); pinclaw's come from the \p{..} regexes of the Node that
// built them (Unicode 17.0 on Node 20.20 and 24.21). The probe asks tiktoken itself: an encoding
// whose ranks are the 256 bytes and whose pattern is one class, e.g. \p{L}, encodes exactly the
// characters of that class (find_iter skips everything else), so decoding the ids lists them.
import { Tiktoken } from 'tiktoken/lite';

const BYTE_RANKS = '! 0 ' + Array.from({ length: 256 }, (_, b) => Buffer.from([b]).toString('base64')).join(' ');

/** The class bits of native/gen/unicode-classes.mjs, as tiktoken's pattern and as a Node regex. */
const CLASSES: readonly [name: string, rust: string, node: RegExp][] = [
  ['letter', '\\p{L}', /\p{L}/gu],
  ['number', '\\p{N}', /\p{N}/gu],
  ['upperish', '[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]', /[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]/gu],
  ['lowerish', '[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]', /[\p{Ll}\p{Lm}\p{Lo}\p{M}]/gu],
  ['space', '\\s', /\p{White_Space}/gu],
];

function everyCodePoint(): string {
  const parts: string[] = [];
  for (let cp = 0; cp < 0x110000; cp++) if (cp < 0xd800 || cp > 0xdfff) parts.push(String.fromCodePoint(cp));
  return parts.join('');
}

function tiktokenMatches(pattern: string, text: string): Uint8Array {
  const enc = new Tiktoken(BYTE_RANKS, {}, pattern);
  try {
    const ids = enc.encode_ordinary(text);
    const hits = new Uint8Array(0x110000);
    for (const ch of Buffer.from(Uint8Array.from(ids)).toString('utf8')) hits[ch.codePointAt(0)!] = 1;
    return hits;
  } finally {
    enc.free();
  }
}

function nodeMatches(re: RegExp, text: string): Uint8Array {
  const hits = new Uint8Array(0x110000);
  for (const m of text.matchAll(re)) hits[m[0].codePointAt(0)!] = 1;
  return hits;
}

export interface ClassDifference {
  codePoint: number;
  /** class names whose membership differs */
  classes: string[];
  /** unassigned (Cn) in tiktoken's Unicode version, i.e. new since */
  newSinceTiktoken: boolean;
}

let memo: ClassDifference[] | undefined;

/** Every code point whose class differs (memoized: the probe takes a couple of seconds). */
export function classDifferences(): ClassDifference[] {
  memo ??= probe();
  return memo;
}

function probe(): ClassDifference[] {
  const all = everyCodePoint();
  const unassigned = tiktokenMatches('\\p{Cn}', all);
  const byCp = new Map<number, string[]>();
  for (const [name, rust, node] of CLASSES) {
    const a = tiktokenMatches(rust, all);
    const b = nodeMatches(node, all);
    for (let cp = 0; cp < 0x110000; cp++) {
      if (a[cp] !== b[cp]) byCp.set(cp, [...(byCp.get(cp) ?? []), name]);
    }
  }
  return [...byCp].map(([codePoint, classes]) => ({ codePoint, classes, newSinceTiktoken: unassigned[codePoint] === 1 }));
}
