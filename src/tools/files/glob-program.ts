// A glob pattern's text turned into a small program for the matcher in pattern.ts: one instruction
// per wildcard, literal or '/', and `{a,b}` as a fork to each alternative that joins after the
// group. Braces are never expanded, so the program grows with the pattern's length, not with the
// product of its alternatives (`{a,b}` ten times is 1,024 alternatives but 51 instructions).
//
// Parsing follows the shell: braces first, by matching pairs (an unbalanced `{` or `}` is an
// ordinary character, a ',' separates alternatives only directly inside a pair); `\` makes the
// next character literal (a trailing `\` is itself literal); `[...]` is a class when its `]` comes
// before the next '/' or brace ',', '{', '}' (a class does not reach across them, unlike `[a{b,c}]`
// in bash, which expands to two classes), else the `[` is literal.
import { Refused } from './confine.js';

export const MAX_PATTERN_CHARS = 1000;
export const MAX_BRACE_DEPTH = 10;

export const LIMITS_RULE = 'glob pattern limits';

export type Instr =
  /** one character; `escaped` tells a written `\.` from a `.` that may be a `./` segment to drop */
  | { op: 'char'; cp: number; escaped: boolean }
  | { op: 'any' }
  | { op: 'class'; negate: boolean; ranges: readonly (readonly [number, number])[] }
  | { op: 'star' }
  | { op: 'slash' }
  | { op: 'fork'; to: readonly number[] }
  | { op: 'jump'; to: number }
  | { op: 'end' };

const PLAIN = 0;
const OPEN = 1;
const CLOSE = 2;
const COMMA = 3;

/** The structural role of every character: which braces pair up, which commas separate. */
function braceRoles(chars: readonly string[]): Uint8Array {
  const roles = new Uint8Array(chars.length);
  const open: number[] = [];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i];
    if (ch === '\\') i++;
    else if (ch === '{') open.push(i);
    else if (ch === '}' && open.length) {
      roles[open.pop()!] = OPEN;
      roles[i] = CLOSE;
    }
  }
  // A second pass, now that the pairs are known: depth counts pairs only, and a comma separates
  // when a pair encloses it.
  let depth = 0;
  for (let i = 0; i < chars.length; i++) {
    if (chars[i] === '\\') i++;
    else if (roles[i] === OPEN) {
      if (++depth > MAX_BRACE_DEPTH) {
        throw new Refused(LIMITS_RULE, `braces nest more than ${MAX_BRACE_DEPTH} deep (level ${depth} opens at character ${i + 1}); write several simpler patterns`);
      }
    } else if (roles[i] === CLOSE) depth--;
    else if (chars[i] === ',' && depth > 0) roles[i] = COMMA;
  }
  return roles;
}

class Parser {
  readonly program: Instr[] = [];
  private i = 0;
  private readonly roles: Uint8Array;

  constructor(private readonly chars: readonly string[]) {
    this.roles = braceRoles(chars);
  }

  /** Emits one alternative (or the whole pattern) up to its ',' or '}' (or the end). */
  sequence(): void {
    const { chars, roles, program } = this;
    let stars = 0;
    while (this.i < chars.length && roles[this.i] !== COMMA && roles[this.i] !== CLOSE) {
      const ch = chars[this.i]!;
      stars = ch === '*' ? stars + 1 : 0;
      if (roles[this.i] === OPEN) {
        this.group();
        continue;
      }
      this.i++;
      if (ch === '\\' && this.i < chars.length) program.push({ op: 'char', cp: chars[this.i++]!.codePointAt(0)!, escaped: true });
      else if (ch === '*') {
        // A run of three stars means what a longer one does (a `*`, never a globstar); `*` × 999 stays small.
        if (stars <= 3) program.push({ op: 'star' });
      }
      else if (ch === '?') program.push({ op: 'any' });
      else if (ch === '/') program.push({ op: 'slash' });
      else if (ch === '[') program.push(this.charClass() ?? { op: 'char', cp: 0x5b, escaped: false });
      else program.push({ op: 'char', cp: ch.codePointAt(0)!, escaped: false });
    }
  }

  /** `{a,b,…}`: a fork to each alternative, each ending in a jump past the group. */
  private group(): void {
    const { program } = this;
    const targets: number[] = [];
    const fork: { op: 'fork'; to: number[] } = { op: 'fork', to: targets };
    program.push(fork);
    const jumps: { op: 'jump'; to: number }[] = [];
    do {
      this.i++; // past the '{' or ','
      targets.push(program.length);
      this.sequence();
      const jump = { op: 'jump' as const, to: -1 };
      jumps.push(jump);
      program.push(jump);
    } while (this.roles[this.i] === COMMA);
    this.i++; // past the '}'
    for (const j of jumps) j.to = program.length;
  }

  /** A class starting at the '[' just passed, or undefined (and nothing consumed) if it does not close. */
  private charClass(): Instr | undefined {
    const { chars, roles } = this;
    let j = this.i;
    // Inside a class, the characters that end a segment or shape the braces are not members.
    const usable = (k: number) => k < chars.length && roles[k] === PLAIN && chars[k] !== '/';
    const negate = usable(j) && (chars[j] === '!' || chars[j] === '^');
    if (negate) j++;
    const ranges: [number, number][] = [];
    // As in the shell, a ']' right after the opening (and its negation) is a member.
    for (let first = true; usable(j); first = false) {
      if (chars[j] === ']' && !first) {
        this.i = j + 1;
        return { op: 'class', negate, ranges };
      }
      if (chars[j] === '\\' && j + 1 < chars.length) j++;
      const lo = chars[j]!.codePointAt(0)!;
      let k = j + 1;
      if (chars[k] === '-' && usable(k + 1) && chars[k + 1] !== ']') {
        k++;
        if (chars[k] === '\\' && k + 1 < chars.length) k++;
        const hi = chars[k]!.codePointAt(0)!;
        ranges.push([Math.min(lo, hi), Math.max(lo, hi)]);
        j = k + 1;
      } else {
        ranges.push([lo, lo]);
        j = k;
      }
    }
    return undefined;
  }
}

/** The program for a pattern, ending in `end`; throws Refused past a limit. */
export function globProgram(pattern: string): Instr[] {
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw new Refused(LIMITS_RULE, `the pattern is ${pattern.length} characters long; at most ${MAX_PATTERN_CHARS}`);
  }
  const parser = new Parser(Array.from(pattern));
  parser.sequence();
  parser.program.push({ op: 'end' });
  return parser.program;
}

/**
 * The pattern's text split at the '/'s outside braces, without the empty and '.' segments the
 * matcher drops too (`./src//a` is `src/a`); the first empty one stays (an absolute pattern).
 */
export function topSegments(pattern: string): string[] {
  const chars = Array.from(pattern);
  const roles = braceRoles(chars);
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (let i = 0; i < chars.length; i++) {
    if (roles[i] === OPEN) depth++;
    else if (roles[i] === CLOSE) depth--;
    if (chars[i] === '\\' && i + 1 < chars.length) cur += chars[i]! + chars[++i]!;
    else if (chars[i] === '/' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += chars[i];
  }
  out.push(cur);
  return out.filter((s, i) => (s !== '' || i === 0) && s !== '.');
}
