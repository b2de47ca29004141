// Glob patterns from the model, matched in time linear in (pattern × path) whatever the pattern.
// The usual shell rules: `*` and `?` stay within one path segment, `**` as a whole segment spans
// zero or more of them, `[abc]`, `[a-z]`, `[!abc]`/`[^abc]` are classes, `{a,b}` alternatives
// (nested, and an alternative may hold `/` and `**`: `{**,x}/y` is `**/y` or `x/y`), `\` escapes the
// next character. As in the shell, a name that starts with a dot is matched only by a pattern
// segment that starts with a literal dot (`.env`, `{.a,.b}`), which keeps `.git` out of `**/*`.
// An unbalanced `{`, `}` or `[` is an ordinary character. Empty and `.` segments are dropped
// (`./src//*.ts` is `src/*.ts`). A pattern means what the shell's brace expansion of it would mean,
// except that a class does not reach across brace syntax (see glob-program.ts). Limits, refused by
// rule "glob pattern limits": MAX_PATTERN_CHARS, MAX_BRACE_DEPTH. Nothing else needs one: braces are
// never expanded, the program has at most one instruction per pattern character (plus its end) and
// the automaton at most 24 states per instruction (3.7 per character at worst in practice).
//
// No regular expression: backtracking on `*a*a*a…*b` took 28 s (picomatch and path.matchesGlob hang
// the same way), and expanding braces first costs the product of their alternatives (11 s for one
// path with `{a,b}` × 10 in front of `**/*a*a/` × 118). Instead the pattern becomes a program
// (glob-program.ts) run as a Thompson automaton (glob-automaton.ts): the set of states alive after
// each path character. A state is a program position plus what the current segment holds so far,
// which is what makes the segment rules work without expanding braces: whether a segment is
// exactly `**` (a globstar), exactly `.` (dropped) or starts with a literal dot is known only once
// the segment ends, whichever alternatives led there, so the automaton keeps those readings alive
// side by side and lets the end of the segment decide.
//
// A walk matches thousands of similar paths against one pattern, so the state sets met are cached
// with their transitions (a lazily built DFA, as RE2 does); a step the cache answers costs one map
// lookup instead of O(pattern). The cache is bounded; past the bound steps are computed afresh,
// so the worst case stays linear and memory stays small.
import { analyse, buildAutomaton, Stepper } from './glob-automaton.js';
import { globProgram, topSegments } from './glob-program.js';

export { LIMITS_RULE, MAX_BRACE_DEPTH, MAX_PATTERN_CHARS } from './glob-program.js';

export interface CompiledGlob {
  /** True when the '/'-separated relative path matches. */
  match(path: string): boolean;
  /** the pattern's segments split at '/' outside braces, for the literal prefix a walk can skip to */
  segments: string[];
  /** the most path segments a match can span; Infinity when a `**` can match (also in braces) */
  maxDepth: number;
  /** a `**` can match: matches may lie at any depth */
  deep: boolean;
  /** a segment starts with a literal '.': hidden directories may hold matches */
  dotted: boolean;
}

/**
 * What the cache may hold: sets, and state ids in all (1 MiB of them), a few MiB with the keys and
 * maps. A hostile pattern meets many sets, or large ones; past the bound it is as slow as uncached.
 */
const MAX_CACHED_SETS = 10_000;
const MAX_CACHED_STATES = 1 << 18;

const SLASH_CP = 0x2f;

/** A set of live states met while matching, and the sets it led to, by code point. */
interface CachedSet {
  live: Int32Array;
  /** reached by a '/' (or the start): the next character is a name's first */
  nameStart: boolean;
  accepting: boolean;
  next: Map<number, CachedSet>;
}

class Matcher {
  private cache = new Map<string, CachedSet>();
  private cachedStates = 0;
  private start: CachedSet;

  constructor(private readonly stepper: Stepper) {
    this.start = this.intern(stepper.initial(), true);
  }

  match(path: string): boolean {
    if (this.full()) {
      this.cache = new Map();
      this.cachedStates = 0;
      this.start = this.intern(this.stepper.initial(), true);
    }
    let cur = this.start;
    for (let i = 0; i < path.length && cur.live.length > 0; ) {
      const cp = path.codePointAt(i)!;
      i += cp > 0xffff ? 2 : 1;
      let to = cur.next.get(cp);
      if (!to) {
        to = this.intern(this.stepper.next(cur.live, cp, cur.nameStart), cp === SLASH_CP);
        if (!this.full()) cur.next.set(cp, to);
      }
      cur = to;
    }
    return cur.accepting;
  }

  private full(): boolean {
    return this.cache.size >= MAX_CACHED_SETS || this.cachedStates >= MAX_CACHED_STATES;
  }

  /** The cached set equal to live, or a new one (cached while the bound allows). */
  private intern(live: Int32Array, nameStart: boolean): CachedSet {
    const k = `${nameStart ? '/' : ''}${live.join(',')}`;
    const found = this.cache.get(k);
    if (found) return found;
    const set: CachedSet = { live, nameStart, accepting: this.stepper.accepts(live), next: new Map() };
    if (!this.full()) {
      this.cache.set(k, set);
      this.cachedStates += live.length;
    }
    return set;
  }
}

/** Compiles a relative pattern; matched against '/'-separated paths relative to the search base. */
export function compileGlob(pattern: string): CompiledGlob {
  const automaton = buildAutomaton(globProgram(pattern));
  const matcher = new Matcher(new Stepper(automaton));
  return { match: (path) => matcher.match(path), segments: topSegments(pattern), ...analyse(automaton) };
}

/** True when a segment holds no wildcard, so it names one entry. */
export function isLiteral(seg: string): boolean {
  return !/[*?[{\\]/.test(seg);
}
