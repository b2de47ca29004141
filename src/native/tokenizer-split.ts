// The pre-tokenizer of the TypeScript reference: tiktoken's own patterns, run by V8's regex engine,
// which backtracks with the same leftmost-first priorities as tiktoken's fancy-regex. Deliberately
// not a port of the C++ scanner, so the two can check each other. Three translations are needed:
// - \s / \S become \p{White_Space} / \P{White_Space}: Rust's \s is that property, while
//   JavaScript's \s adds U+FEFF and drops U+0085.
// - (?i:'s|'t|'re|'ve|'m|'ll|'d) becomes its own sticky regex with the i flag (Node 20 has no
//   inline modifiers). With the u flag, i is Unicode simple case folding, as in Rust's regex
//   (so 'ſ matches 's). An optional trailing contraction can be tried after the rest has matched:
//   a greedy X(?:C)? is X's first match followed by C when C matches there.
// - The alternatives that a contraction may follow are capture groups, to know when to try it.
import type { EncodingName } from './tokenizer-encodings.js';

const WS = '\\p{White_Space}';
const NOT_WS = '\\P{White_Space}';
const UPPERISH = '[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]';
const LOWERISH = '[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]';
const PREFIX = '[^\\r\\n\\p{L}\\p{N}]';
const tail = [`\\p{N}{1,3}`, `${WS}*[\\r\\n]+`, `${WS}+(?!${NOT_WS})`, `${WS}+`];

const MAIN: Readonly<Record<EncodingName, string>> = {
  o200k_base: [`(${PREFIX}?${UPPERISH}*${LOWERISH}+)`, `(${PREFIX}?${UPPERISH}+${LOWERISH}*)`, tail[0], ` ?[^${WS}\\p{L}\\p{N}]+[\\r\\n/]*`, ...tail.slice(1)].join('|'),
  cl100k_base: [`${PREFIX}?\\p{L}+`, tail[0], ` ?[^${WS}\\p{L}\\p{N}]+[\\r\\n]*`, ...tail.slice(1)].join('|'),
};
const CONTRACTION = "'(?:s|t|re|ve|m|ll|d)";

/** Splits well-formed text (no lone surrogates) into the pieces tiktoken's regex finds. */
export class Splitter {
  private readonly main: RegExp;
  private readonly contraction = new RegExp(CONTRACTION, 'iuy');
  private readonly contractionFirst: boolean;

  constructor(readonly encoding: EncodingName) {
    this.main = new RegExp(MAIN[encoding], 'uy');
    this.contractionFirst = encoding === 'cl100k_base';
  }

  /** End (UTF-16 index) of the piece that starts at `pos`. */
  next(text: string, pos: number): number {
    if (this.contractionFirst) {
      const end = this.contractionAt(text, pos);
      if (end > pos) return end;
    }
    this.main.lastIndex = pos;
    const m = this.main.exec(text);
    // Every character starts some alternative (letters, marks, numbers, whitespace, the rest),
    // so the sticky regex always matches; anything else is a bug worth stopping on.
    if (!m) throw new Error(`pre-tokenizer: no match at ${pos} (U+${text.codePointAt(pos)!.toString(16)})`);
    const end = pos + m[0].length;
    return !this.contractionFirst && (m[1] !== undefined || m[2] !== undefined) ? this.contractionAt(text, end) : end;
  }

  *pieces(text: string): Generator<string> {
    for (let pos = 0; pos < text.length; ) {
      const end = this.next(text, pos);
      yield text.slice(pos, end);
      pos = end;
    }
  }

  private contractionAt(text: string, pos: number): number {
    if (text.charCodeAt(pos) !== 0x27) return pos;
    this.contraction.lastIndex = pos;
    const m = this.contraction.exec(text);
    return m ? pos + m[0].length : pos;
  }
}
