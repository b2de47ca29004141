// The glob matcher pinclaw used before the state-set matcher in src/tools/files/pattern.ts (commit
// 6bca8c3): braces expanded up to 1,024 alternatives, each alternative matched segment by segment.
// It states the rules the plain way, so the randomized tests compare the two on small patterns with
// braces. A reference only: its cost grows with the number of alternatives (11 s for one hostile
// match), which is why it was replaced.
import { Refused } from '../../src/tools/files/confine.js';

export const MAX_PATTERN_CHARS = 1000;
export const MAX_BRACE_DEPTH = 10;
export const MAX_ALTERNATIVES = 1024;

const RULE = 'glob pattern limits';

type Token = { kind: 'lit'; ch: string } | { kind: 'any' } | { kind: 'star' } | { kind: 'class'; negate: boolean; ranges: [number, number][] };

/** One segment of one alternative: `**`, or tokens matched against a single name. */
type Segment = { globstar: true } | { globstar: false; tokens: Token[]; dot: boolean };

export interface CompiledGlob {
  /** True when the '/'-separated relative path matches. */
  match(path: string): boolean;
  /** the pattern's segments split at '/' outside braces, for the literal prefix a walk can skip to */
  segments: string[];
  /** the most path segments a match can span; Infinity with `**` anywhere */
  maxDepth: number;
  /** a segment starts with '.': hidden directories may hold matches */
  dotted: boolean;
}

/** The index of the '}' closing the '{' at `open`, or -1; escapes are skipped. */
function closingBrace(p: string, open: number): number {
  let depth = 0;
  for (let i = open; i < p.length; i++) {
    const ch = p[i];
    if (ch === '\\') i++;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return i;
  }
  return -1;
}

/** Splits a brace body at its top-level commas. */
function alternatives(body: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch === '\\') i++;
    else if (ch === '{') depth++;
    else if (ch === '}') depth--;
    else if (ch === ',' && depth === 0) {
      out.push(body.slice(start, i));
      start = i + 1;
    }
  }
  out.push(body.slice(start));
  return out;
}

function checkDepth(p: string): void {
  let depth = 0;
  for (let i = 0; i < p.length; i++) {
    const ch = p[i];
    if (ch === '\\') i++;
    else if (ch === '{' && closingBrace(p, i) >= 0 && ++depth > MAX_BRACE_DEPTH) {
      throw new Refused(RULE, `the pattern nests braces more than ${MAX_BRACE_DEPTH} deep; write it as several simpler patterns`);
    } else if (ch === '}' && depth > 0) depth--;
  }
}

/** Every brace-free pattern the braces stand for; an unbalanced '{' is escaped into a literal. */
function expand(p: string): string[] {
  let open = -1;
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '\\') i++;
    else if (p[i] === '{') {
      if (closingBrace(p, i) >= 0) {
        open = i;
        break;
      }
      p = `${p.slice(0, i)}\\${p.slice(i)}`;
      i++;
    }
  }
  if (open < 0) return [p];
  const close = closingBrace(p, open);
  const head = p.slice(0, open);
  const tail = p.slice(close + 1);
  const out: string[] = [];
  for (const alt of alternatives(p.slice(open + 1, close))) {
    for (const e of expand(head + alt + tail)) {
      out.push(e);
      if (out.length > MAX_ALTERNATIVES) throw new Refused(RULE, `the braces expand to more than ${MAX_ALTERNATIVES} alternatives; write fewer or separate patterns`);
    }
  }
  return out;
}

/** Splits at '/' outside braces (so `{src,test/unit}/*.ts` keeps its alternatives whole). */
function splitOutsideBraces(p: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (let i = 0; i < p.length; i++) {
    const ch = p[i]!;
    if (ch === '\\' && i + 1 < p.length) {
      cur += ch + p[++i];
      continue;
    }
    if (ch === '{') depth++;
    else if (ch === '}' && depth > 0) depth--;
    if (ch === '/' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

/** Splits a brace-free pattern at '/', keeping escaped characters escaped. */
function splitSegments(p: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '\\' && i + 1 < p.length) cur += p[i]! + p[++i];
    else if (p[i] === '/') {
      out.push(cur);
      cur = '';
    } else cur += p[i];
  }
  out.push(cur);
  return out.filter((s, i) => (s !== '' || i === 0) && s !== '.');
}

function classToken(seg: string[], open: number): { token: Token; end: number } | undefined {
  let i = open + 1;
  const negate = seg[i] === '!' || seg[i] === '^';
  if (negate) i++;
  const ranges: [number, number][] = [];
  // A ']' right after the opening (and its negation) is a member, as in the shell.
  for (let first = true; i < seg.length; first = false) {
    let ch = seg[i]!;
    if (ch === ']' && !first) return { token: { kind: 'class', negate, ranges }, end: i };
    if (ch === '\\' && i + 1 < seg.length) ch = seg[++i]!;
    const lo = ch.codePointAt(0)!;
    if (seg[i + 1] === '-' && i + 2 < seg.length && seg[i + 2] !== ']') {
      let hiCh = seg[i + 2]!;
      let skip = 3;
      if (hiCh === '\\' && i + 3 < seg.length) {
        hiCh = seg[i + 3]!;
        skip = 4;
      }
      const hi = hiCh.codePointAt(0)!;
      ranges.push([Math.min(lo, hi), Math.max(lo, hi)]);
      i += skip;
    } else {
      ranges.push([lo, lo]);
      i++;
    }
  }
  return undefined;
}

function compileSegment(text: string): Segment {
  if (text === '**') return { globstar: true };
  const seg = Array.from(text);
  const tokens: Token[] = [];
  for (let i = 0; i < seg.length; i++) {
    const ch = seg[i]!;
    if (ch === '\\' && i + 1 < seg.length) tokens.push({ kind: 'lit', ch: seg[++i]! });
    else if (ch === '*') {
      if (tokens.at(-1)?.kind !== 'star') tokens.push({ kind: 'star' });
    } else if (ch === '?') tokens.push({ kind: 'any' });
    else if (ch === '[') {
      const c = classToken(seg, i);
      if (c) {
        tokens.push(c.token);
        i = c.end;
      } else tokens.push({ kind: 'lit', ch });
    } else tokens.push({ kind: 'lit', ch });
  }
  const t0 = tokens[0];
  return { globstar: false, tokens, dot: t0?.kind === 'lit' && t0.ch === '.' };
}

function one(t: Token, ch: string): boolean {
  if (t.kind === 'lit') return t.ch === ch;
  if (t.kind === 'any') return true;
  if (t.kind === 'class') {
    const c = ch.codePointAt(0)!;
    const hit = t.ranges.some(([lo, hi]) => c >= lo && c <= hi);
    return hit !== t.negate;
  }
  return false;
}

/** One name against one segment's tokens: the two-pointer wildcard match, O(tokens × name). */
function matchName(s: Segment & { globstar: false }, name: string): boolean {
  if (name.startsWith('.') && !s.dot) return false;
  const chars = Array.from(name);
  const tk = s.tokens;
  let p = 0;
  let i = 0;
  let starP = -1;
  let starI = 0;
  while (i < chars.length) {
    const t = tk[p];
    if (t && t.kind !== 'star' && one(t, chars[i]!)) {
      p++;
      i++;
    } else if (t?.kind === 'star') {
      starP = p++;
      starI = i;
    } else if (starP >= 0) {
      // Only the last star is ever widened: an earlier one could not lead to a match a later one misses.
      p = starP + 1;
      i = ++starI;
    } else return false;
  }
  while (tk[p]?.kind === 'star') p++;
  return p === tk.length;
}

/** Path segments against pattern segments, `**` spanning any number of non-hidden names. */
function matchSegments(segs: Segment[], names: string[]): boolean {
  const m = segs.length;
  const n = names.length;
  // ok[pi * (n + 1) + si]: pattern segments pi.. match names si.. (filled from the end).
  const ok = new Uint8Array((m + 1) * (n + 1));
  ok[m * (n + 1) + n] = 1;
  for (let pi = m - 1; pi >= 0; pi--) {
    const s = segs[pi]!;
    for (let si = n; si >= 0; si--) {
      let v: boolean;
      if (s.globstar) {
        // Zero names, or one non-hidden name and again `**` from the next.
        v = ok[(pi + 1) * (n + 1) + si] === 1 || (si < n && !names[si]!.startsWith('.') && ok[pi * (n + 1) + si + 1] === 1);
      } else v = si < n && matchName(s, names[si]!) && ok[(pi + 1) * (n + 1) + si + 1] === 1;
      ok[pi * (n + 1) + si] = v ? 1 : 0;
    }
  }
  return ok[0] === 1;
}

/** Compiles a relative pattern; matched against '/'-separated paths relative to the search base. */
export function compileGlob(pattern: string): CompiledGlob {
  if (pattern.length > MAX_PATTERN_CHARS) throw new Refused(RULE, `the pattern is ${pattern.length} characters long; at most ${MAX_PATTERN_CHARS}`);
  checkDepth(pattern);
  const alts = expand(pattern).map((p) => splitSegments(p).map(compileSegment));
  const segments = splitOutsideBraces(pattern).filter((s, i) => (s !== '' || i === 0) && s !== '.');
  const maxDepth = Math.max(...alts.map((a) => (a.some((s) => s.globstar) ? Infinity : a.length)));
  const dotted = alts.some((a) => a.some((s) => !s.globstar && s.dot));
  return {
    match: (path) => {
      const names = path.split('/');
      return alts.some((a) => matchSegments(a, names));
    },
    segments,
    maxDepth,
    dotted,
  };
}

/** True when a segment holds no wildcard, so it names one entry. */
export function isLiteral(seg: string): boolean {
  return !/[*?[{\\]/.test(seg);
}
