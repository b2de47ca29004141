// The automaton a glob program runs as (see pattern.ts for why): states are a program position, a
// mode (what the current pattern segment holds so far) and whether a segment has been committed;
// only the states reachable from the start are built. Also what a walk needs to know beforehand:
// how deep a match can reach and whether hidden names can match.
import type { Instr } from './glob-program.js';

// What the current pattern segment holds so far (before the program position of the state).
/** at the pattern's start: an empty segment here is real (`/x` is absolute) */
const FIRST = 0;
/** at the start of a later segment, nothing consumed for it yet */
const START = 1;
/** a segment committed: its separator consumed, none of its tokens yet */
const BEGUN = 2;
/** exactly a leading `.` so far; ending here would make the segment `.`, which is dropped instead */
const DOT = 3;
/** exactly one `*` */
const STAR1 = 4;
/** exactly `**`; ending here would make it a globstar, which GLOB_* handle instead */
const STAR2 = 5;
/** anything else */
const MORE = 6;
/** pending, nothing consumed: the segment may turn out to be `.` (dropped) */
const MAYBE_DOT = 7;
/** pending: the segment may turn out to be `**` */
const MAYBE_GLOB1 = 8;
const MAYBE_GLOB2 = 9;
/** a globstar between names */
const GLOB_GAP = 10;
/** a globstar inside a name */
const GLOB_NAME = 11;
const MODES = 12;

// Consuming edges test a path character by kind: one of these, or the position of a char, any,
// class or star instruction.
/** the '/' before a segment */
const SEP = -1;
/** the '.' a segment starts with; the only way to match a name starting with a dot */
const LEAD_DOT = -2;
/** any character of a name a globstar spans */
const NAME_CHAR = -3;

const SLASH_CP = 0x2f;
const DOT_CP = 0x2e;

/** The states reachable from the start, numbered densely, with their edges in flat arrays. */
export interface Automaton {
  program: readonly Instr[];
  start: number;
  /** program position and mode of each state */
  pc: Int32Array;
  mode: Uint8Array;
  accepting: Uint8Array;
  /** epsilon edges of state s: epsTo[epsAt[s] .. epsAt[s + 1]] */
  epsAt: Int32Array;
  epsTo: Int32Array;
  /** consuming edges of state s: (consKind, consTo)[consAt[s] .. consAt[s + 1]] */
  consAt: Int32Array;
  consKind: Int32Array;
  consTo: Int32Array;
}

type Key = number;
const key = (pc: number, mode: number, started: number): Key => (pc * MODES + mode) * 2 + started;

/**
 * The edges out of one state. `started`: a segment has been committed, so the next one needs a
 * '/' before it (it is a flag, not "something consumed": `/x` commits an empty first segment).
 */
function edges(program: readonly Instr[], pc: number, mode: number, started: number, eps: (k: Key) => void, cons: (kind: number, k: Key) => void, accept: () => void): void {
  const ins = program[pc]!;
  if (ins.op === 'fork') {
    for (const to of ins.to) eps(key(to, mode, started));
    return;
  }
  if (ins.op === 'jump') {
    eps(key(ins.to, mode, started));
    return;
  }
  const ends = ins.op === 'slash' || ins.op === 'end';
  switch (mode) {
    case FIRST:
    case START:
      if (ins.op === 'slash') eps(key(pc + 1, START, mode === FIRST ? 1 : started));
      else if (ins.op === 'end') {
        if (mode === FIRST || started) accept();
      } else {
        // Commit a real segment here, and keep the readings in which it is not one yet.
        if (started) cons(SEP, key(pc, BEGUN, 1));
        else eps(key(pc, BEGUN, 1));
        if (ins.op === 'char' && ins.cp === DOT_CP && !ins.escaped) eps(key(pc + 1, MAYBE_DOT, started));
        if (ins.op === 'star') eps(key(pc + 1, MAYBE_GLOB1, started));
      }
      return;
    case BEGUN:
      if (ins.op === 'char' && ins.cp === DOT_CP) cons(LEAD_DOT, key(pc + 1, ins.escaped ? MORE : DOT, 1));
      else if (ins.op === 'star') {
        cons(pc, key(pc, BEGUN, 1));
        eps(key(pc + 1, STAR1, 1));
      } else cons(pc, key(pc + 1, MORE, 1));
      return;
    case DOT:
    case STAR1:
    case STAR2:
    case MORE:
      if (ends) {
        if (mode === DOT || mode === STAR2) return;
        if (ins.op === 'slash') eps(key(pc + 1, START, 1));
        else accept();
      } else if (ins.op === 'star') {
        cons(pc, key(pc, mode, 1));
        eps(key(pc + 1, mode === STAR1 ? STAR2 : MORE, 1));
      } else cons(pc, key(pc + 1, MORE, 1));
      return;
    case MAYBE_DOT:
      if (ins.op === 'slash') eps(key(pc + 1, START, started));
      else if (ins.op === 'end' && started) accept();
      return;
    case MAYBE_GLOB1:
      if (ins.op === 'star') eps(key(pc + 1, MAYBE_GLOB2, started));
      return;
    case MAYBE_GLOB2:
      if (ends) eps(key(pc, GLOB_GAP, started));
      return;
    case GLOB_GAP:
      if (ins.op === 'slash') eps(key(pc + 1, START, started));
      else if (started) accept();
      if (started) cons(SEP, key(pc, GLOB_NAME, 1));
      else eps(key(pc, GLOB_NAME, 1));
      return;
    case GLOB_NAME:
      cons(NAME_CHAR, key(pc, GLOB_NAME, 1));
      eps(key(pc, GLOB_GAP, 1));
      return;
  }
}

export function buildAutomaton(program: readonly Instr[]): Automaton {
  const index = new Map<Key, number>();
  const keys: Key[] = [];
  const id = (k: Key) => {
    let s = index.get(k);
    if (s === undefined) {
      s = keys.length;
      index.set(k, s);
      keys.push(k);
    }
    return s;
  };
  const start = id(key(0, FIRST, 0));
  const epsAt = [0];
  const epsTo: number[] = [];
  const consAt = [0];
  const consKind: number[] = [];
  const consTo: number[] = [];
  const accepting: number[] = [];
  // Breadth-first over the states as they are found: each gets its edges once.
  for (let s = 0; s < keys.length; s++) {
    const k = keys[s]!;
    const started = k % 2;
    const mode = Math.floor(k / 2) % MODES;
    const pc = Math.floor(k / 2 / MODES);
    let acc = 0;
    edges(program, pc, mode, started, (t) => epsTo.push(id(t)), (kind, t) => {
      consKind.push(kind);
      consTo.push(id(t));
    }, () => {
      acc = 1;
    });
    epsAt.push(epsTo.length);
    consAt.push(consTo.length);
    accepting.push(acc);
  }
  return {
    program,
    start,
    pc: Int32Array.from(keys, (k) => Math.floor(k / 2 / MODES)),
    mode: Uint8Array.from(keys, (k) => Math.floor(k / 2) % MODES),
    accepting: Uint8Array.from(accepting),
    epsAt: Int32Array.from(epsAt),
    epsTo: Int32Array.from(epsTo),
    consAt: Int32Array.from(consAt),
    consKind: Int32Array.from(consKind),
    consTo: Int32Array.from(consTo),
  };
}

/** Whether an edge of this kind consumes the code point; `nameStart`: it would be a name's first. */
function consumes(program: readonly Instr[], kind: number, cp: number, nameStart: boolean): boolean {
  if (kind === SEP) return cp === SLASH_CP;
  if (cp === SLASH_CP) return false;
  if (kind === LEAD_DOT) return cp === DOT_CP;
  if (nameStart && cp === DOT_CP) return false;
  if (kind === NAME_CHAR) return true;
  const ins = program[kind]!;
  switch (ins.op) {
    case 'char':
      return ins.cp === cp;
    case 'any':
    case 'star':
      return true;
    case 'class': {
      for (const [lo, hi] of ins.ranges) if (cp >= lo && cp <= hi) return !ins.negate;
      return ins.negate;
    }
    default:
      return false;
  }
}

/**
 * One step of the Thompson simulation: the states alive after a code point, from those alive
 * before. Each state is visited once per step, so a step costs O(states + edges), O(pattern).
 * Holds its scratch arrays; not reentrant, and matching is synchronous.
 */
export class Stepper {
  private readonly seen: Uint32Array;
  private readonly stack: Int32Array;
  private readonly out: Int32Array;
  private count = 0;
  private generation = 0;

  constructor(private readonly a: Automaton) {
    const n = a.pc.length;
    this.seen = new Uint32Array(n);
    this.stack = new Int32Array(n);
    this.out = new Int32Array(n);
  }

  /** The start state and what it reaches without consuming, sorted. */
  initial(): Int32Array {
    this.begin();
    this.close(this.a.start);
    return this.result();
  }

  /** The states after consuming cp (a name's first character when nameStart), sorted. */
  next(live: Int32Array, cp: number, nameStart: boolean): Int32Array {
    const a = this.a;
    this.begin();
    for (const s of live) {
      for (let e = a.consAt[s]!; e < a.consAt[s + 1]!; e++) {
        if (consumes(a.program, a.consKind[e]!, cp, nameStart)) this.close(a.consTo[e]!);
      }
    }
    return this.result();
  }

  accepts(live: Int32Array): boolean {
    for (const s of live) if (this.a.accepting[s]) return true;
    return false;
  }

  private begin(): void {
    this.count = 0;
    if (++this.generation === 0xffffffff) {
      this.seen.fill(0);
      this.generation = 1;
    }
  }

  /** Adds s and every state its epsilon edges reach. */
  private close(s0: number): void {
    const { a, seen, stack, out, generation } = this;
    if (seen[s0] === generation) return;
    seen[s0] = generation;
    let top = 0;
    stack[top++] = s0;
    while (top > 0) {
      const s = stack[--top]!;
      out[this.count++] = s;
      for (let e = a.epsAt[s]!; e < a.epsAt[s + 1]!; e++) {
        const t = a.epsTo[e]!;
        if (seen[t] !== generation) {
          seen[t] = generation;
          stack[top++] = t;
        }
      }
    }
  }

  private result(): Int32Array {
    // Sorted, so equal sets look equal to the cache in pattern.ts.
    return this.out.slice(0, this.count).sort();
  }
}

/**
 * The states on some path from the start to acceptance; the others cannot take part in a match.
 * Every state was reached from the start when it was built, so co-reachable is enough.
 */
function useful(a: Automaton): Uint8Array {
  const n = a.pc.length;
  const preds: number[][] = Array.from({ length: n }, () => []);
  for (let s = 0; s < n; s++) {
    for (let e = a.epsAt[s]!; e < a.epsAt[s + 1]!; e++) preds[a.epsTo[e]!]!.push(s);
    for (let e = a.consAt[s]!; e < a.consAt[s + 1]!; e++) preds[a.consTo[e]!]!.push(s);
  }
  const out = new Uint8Array(n);
  const queue: number[] = [];
  for (let s = 0; s < n; s++) {
    if (a.accepting[s]) {
      out[s] = 1;
      queue.push(s);
    }
  }
  while (queue.length) {
    for (const p of preds[queue.pop()!]!) {
      if (!out[p]) {
        out[p] = 1;
        queue.push(p);
      }
    }
  }
  return out;
}

/**
 * The most segments a match can span: the longest path from the start counting commits. Without a
 * globstar the useful states form a DAG apart from star loops: edges go to a later program position,
 * except a segment's commit, which stays at its position (START/FIRST to BEGUN).
 */
function longestSpan(a: Automaton, ok: Uint8Array): number {
  const n = a.pc.length;
  if (!ok[a.start]) return 0;
  const order = Array.from({ length: n }, (_, s) => s).filter((s) => ok[s]);
  const late = (m: number) => (m === START || m === FIRST ? 1 : 0);
  order.sort((x, y) => a.pc[y]! - a.pc[x]! || late(a.mode[x]!) - late(a.mode[y]!));
  const best = new Float64Array(n).fill(-Infinity);
  for (const s of order) {
    const m = a.mode[s]!;
    // Accepting in FIRST: the pattern is one empty segment (`` or `{,x}`), which a path must have too.
    let b = a.accepting[s] ? (m === FIRST ? 1 : 0) : -Infinity;
    const weigh = (t: number) => {
      if (t === s || !ok[t]) return;
      const commit = (late(m) === 1 && a.mode[t] === BEGUN) || (m === FIRST && a.mode[t] === START);
      b = Math.max(b, best[t]! + (commit ? 1 : 0));
    };
    for (let e = a.epsAt[s]!; e < a.epsAt[s + 1]!; e++) weigh(a.epsTo[e]!);
    for (let e = a.consAt[s]!; e < a.consAt[s + 1]!; e++) weigh(a.consTo[e]!);
    best[s] = b;
  }
  return best[a.start]!;
}

/** How deep matches can lie and whether hidden names can match, from the states alone. */
export function analyse(a: Automaton): { maxDepth: number; deep: boolean; dotted: boolean } {
  const ok = useful(a);
  let deep = false;
  let dotted = false;
  for (let s = 0; s < ok.length; s++) {
    if (!ok[s]) continue;
    if (a.mode[s] === GLOB_GAP) deep = true;
    for (let e = a.consAt[s]!; e < a.consAt[s + 1]!; e++) if (a.consKind[e] === LEAD_DOT && ok[a.consTo[e]!]) dotted = true;
  }
  return { maxDepth: deep ? Infinity : longestSpan(a, ok), deep, dotted };
}
