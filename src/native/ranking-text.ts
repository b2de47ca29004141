// Text rules of the ranking index (docs/ranking.md, "Text"): folding (NFKC + case folding), done in
// TypeScript for both backends so they see identical text, and term splitting, which the addon
// re-implements in native/ranking_text.cc from the same table.

const LONE_SURROGATE = /\p{Cs}/gu;
const ASCII = /^[\x00-\x7f]*$/;

/** Replaces unpaired surrogates with U+FFFD, as the addon's UTF-8 conversion does. */
export function wellFormed(s: string): string {
  return s.replace(LONE_SURROGATE, '\uFFFD');
}

/**
 * NFKC, then lower case, then the case foldings that lower-casing misses and that matter for
 * matching (final sigma, sharp s), then NFKC again because lower-casing can denormalize.
 */
export function foldText(s: string): string {
  if (ASCII.test(s)) return s.toLowerCase();
  // Escapes rather than the letters: one character above U+00FF anywhere in the bundle makes V8 hold
  // all of its source as a two-byte string, twice the memory (scripts/build.mjs refuses that).
  return wellFormed(s).normalize('NFKC').toLowerCase().replace(/\u03C2/g, '\u03C3').replace(/\u00DF/g, 'ss').normalize('NFKC');
}

const SEP = 0;
const WORD = 1;
const CJK = 2;

// [lo, hi, class] for code points >= 0x80 that are not word characters: the same table, in the same
// order, as kRanges in native/ranking_text.cc.
const S = SEP;
const C = CJK;
// prettier-ignore
const kClasses = new Uint32Array([
  0x0080, 0x00BF, S, 0x00D7, 0x00D7, S, 0x00F7, 0x00F7, S, 0x037E, 0x037E, S,
  0x0387, 0x0387, S, 0x055A, 0x055F, S, 0x0589, 0x058A, S, 0x05BE, 0x05BE, S,
  0x05C0, 0x05C0, S, 0x05C3, 0x05C3, S, 0x05C6, 0x05C6, S, 0x05F3, 0x05F4, S,
  0x0600, 0x060F, S, 0x061B, 0x061F, S, 0x066A, 0x066D, S, 0x06D4, 0x06D4, S,
  0x0964, 0x0965, S, 0x0970, 0x0970, S, 0x0E5A, 0x0E5B, S, 0x104A, 0x104F, S,
  0x10FB, 0x10FB, S, 0x1100, 0x11FF, C, 0x1360, 0x1368, S, 0x166D, 0x166E, S,
  0x1680, 0x1680, S, 0x169B, 0x169C, S, 0x16EB, 0x16ED, S, 0x17D4, 0x17DA, S,
  0x1800, 0x180A, S, 0x180E, 0x180E, S, 0x2000, 0x206F, S, 0x20A0, 0x20CF, S,
  0x2190, 0x2BFF, S, 0x2E00, 0x2E7F, S, 0x2E80, 0x2FDF, C, 0x2FF0, 0x3004, S,
  0x3005, 0x3007, C, 0x3008, 0x3020, S, 0x3021, 0x302F, C, 0x3030, 0x303F, S,
  0x3040, 0x30FA, C, 0x30FB, 0x30FB, S, 0x30FC, 0x31BF, C, 0x31C0, 0x31EF, S,
  0x31F0, 0x31FF, C, 0x3200, 0x33FF, S, 0x3400, 0x4DBF, C, 0x4DC0, 0x4DFF, S,
  0x4E00, 0x9FFF, C, 0xA960, 0xA97F, C, 0xAC00, 0xD7FF, C, 0xD800, 0xDFFF, S,
  0xF900, 0xFAFF, C, 0xFD3E, 0xFD3F, S, 0xFE00, 0xFE1F, S, 0xFE30, 0xFE6F, S,
  0xFEFF, 0xFEFF, S, 0xFF01, 0xFF0F, S, 0xFF1A, 0xFF20, S, 0xFF3B, 0xFF3E, S,
  0xFF40, 0xFF40, S, 0xFF5B, 0xFF65, S, 0xFF66, 0xFFDC, C, 0xFFE0, 0xFFEE, S,
  0xFFF0, 0xFFFF, S, 0x1B000, 0x1B16F, C, 0x1F000, 0x1FAFF, S, 0x20000, 0x3FFFF, C,
  0xE0000, 0xE007F, S, 0xE0100, 0xE01EF, S,
]);
const kRangeCount = kClasses.length / 3;

/** Longer runs of word characters are cut to this many code points. */
export const MAX_TERM_CODE_POINTS = 64;

function classify(cp: number): number {
  if (cp < 0x80) {
    return (cp >= 0x30 && cp <= 0x39) || (cp >= 0x61 && cp <= 0x7a) || (cp >= 0x41 && cp <= 0x5a) || cp === 0x5f ? WORD : SEP;
  }
  // The last range whose lower bound is <= cp.
  let lo = 0;
  let hi = kRangeCount;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (kClasses[mid * 3]! <= cp) lo = mid + 1;
    else hi = mid;
  }
  if (lo === 0) return WORD;
  const r = (lo - 1) * 3;
  return cp <= kClasses[r + 1]! ? kClasses[r + 2]! : WORD;
}

/**
 * The terms of already folded text, in order of occurrence: runs of word characters (cut to 64
 * code points), and for runs of CJK characters each character and each adjacent pair, in the order
 * c1, c1c2, c2, c2c3, c3.
 */
export function splitTerms(text: string): string[] {
  const out: string[] = [];
  const n = text.length;
  let run = SEP;
  let wordStart = 0;
  let wordEnd = 0;
  let wordLen = 0;
  let prevStart = 0;
  let i = 0;
  while (i < n) {
    const start = i;
    let cp = text.charCodeAt(i++);
    if (cp >= 0xd800 && cp <= 0xdbff && i < n) {
      const low = text.charCodeAt(i);
      if (low >= 0xdc00 && low <= 0xdfff) {
        cp = ((cp - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
        i++;
      }
    }
    const cls = classify(cp);
    if (cls === WORD) {
      if (run !== WORD) {
        run = WORD;
        wordStart = start;
        wordLen = 0;
      }
      if (++wordLen <= MAX_TERM_CODE_POINTS) wordEnd = i;
    } else if (cls === CJK) {
      if (run === WORD) out.push(text.slice(wordStart, wordEnd));
      if (run === CJK) out.push(text.slice(prevStart, i));
      out.push(text.slice(start, i));
      run = CJK;
      prevStart = start;
    } else {
      if (run === WORD) out.push(text.slice(wordStart, wordEnd));
      run = SEP;
    }
  }
  if (run === WORD) out.push(text.slice(wordStart, wordEnd));
  return out;
}

/**
 * Code point order, which is the addon's UTF-8 byte order. Plain `<` compares UTF-16 code units and
 * differs where a surrogate (a code point above U+FFFF) meets a unit from U+E000 to U+FFFF.
 */
export function compareIds(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}
