// A small declarative validator for JSON data files (board profiles). Each spec checks a value and
// records every problem with its exact JSON path, so one run tells the author all that is wrong; the
// TypeScript type of the data is inferred from the spec, so the checks and the type cannot drift.
// Hand-written on purpose: a schema library would be a dependency in the idle bundle for 12 files.
import { closest } from '../../suggest.js';
import { isObject as isPlainObject } from '../../is-object.js';

export interface SpecIssue {
  /** "gpio.lines[3].offset"; "" for the whole value */
  path: string;
  message: string;
}

/** Returned by a check that failed; the issue is already recorded. */
export const INVALID: unique symbol = Symbol('invalid');
export type Checked<T> = T | typeof INVALID;

export interface Spec<T> {
  /** What the spec accepts, phrased to follow "expected". */
  readonly expected: string;
  readonly optional?: boolean;
  check(value: unknown, path: string, issues: SpecIssue[]): Checked<T>;
}

export type SpecType<S> = S extends Spec<infer T> ? T : never;

/** A short description of a found value, as the config validator words it. */
export function describeFound(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'nothing';
  if (Array.isArray(v)) return `array of ${v.length} item${v.length === 1 ? '' : 's'}`;
  if (typeof v === 'object') return 'object';
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 37)}...` : v)}`;
  return `${typeof v} ${String(v)}`;
}

function mismatch(spec: { expected: string }, value: unknown, path: string, issues: SpecIssue[]): typeof INVALID {
  issues.push({ path, message: `expected ${spec.expected}, found ${describeFound(value)}` });
  return INVALID;
}

export function joinPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}

export function string(opts: { pattern?: RegExp; patternText?: string; maxLength?: number } = {}): Spec<string> {
  const expected = opts.patternText ? `a string of ${opts.patternText}` : opts.maxLength ? `a string of at most ${opts.maxLength} characters` : 'a non-empty string';
  const spec: Spec<string> = {
    expected,
    check(value, path, issues) {
      if (typeof value !== 'string' || value.trim() === '') return mismatch(spec, value, path, issues);
      if (opts.pattern && !opts.pattern.test(value)) return mismatch(spec, value, path, issues);
      if (opts.maxLength !== undefined && value.length > opts.maxLength) {
        issues.push({ path, message: `expected ${expected}, found ${value.length} characters` });
        return INVALID;
      }
      return value;
    },
  };
  return spec;
}

export function integer(opts: { min?: number; max?: number } = {}): Spec<number> {
  const range = opts.min !== undefined && opts.max !== undefined ? ` between ${opts.min} and ${opts.max}` : opts.min !== undefined ? ` >= ${opts.min}` : opts.max !== undefined ? ` <= ${opts.max}` : '';
  const spec: Spec<number> = {
    expected: `an integer${range}`,
    check(value, path, issues) {
      if (typeof value !== 'number' || !Number.isInteger(value)) return mismatch(spec, value, path, issues);
      if ((opts.min !== undefined && value < opts.min) || (opts.max !== undefined && value > opts.max)) return mismatch(spec, value, path, issues);
      return value;
    },
  };
  return spec;
}

export function number(opts: { min?: number; max?: number } = {}): Spec<number> {
  const range = opts.min !== undefined && opts.max !== undefined ? ` between ${opts.min} and ${opts.max}` : opts.min !== undefined ? ` >= ${opts.min}` : '';
  const spec: Spec<number> = {
    expected: `a number${range}`,
    check(value, path, issues) {
      if (typeof value !== 'number' || !Number.isFinite(value)) return mismatch(spec, value, path, issues);
      if ((opts.min !== undefined && value < opts.min) || (opts.max !== undefined && value > opts.max)) return mismatch(spec, value, path, issues);
      return value;
    },
  };
  return spec;
}

export function boolean(): Spec<boolean> {
  const spec: Spec<boolean> = {
    expected: 'true or false',
    check: (value, path, issues) => (typeof value === 'boolean' ? value : mismatch(spec, value, path, issues)),
  };
  return spec;
}

export function oneOf<const V extends string>(values: readonly V[]): Spec<V> {
  const spec: Spec<V> = {
    expected: `one of ${values.map((v) => JSON.stringify(v)).join(', ')}`,
    check(value, path, issues) {
      if (typeof value === 'string' && (values as readonly string[]).includes(value)) return value as V;
      const near = typeof value === 'string' ? closest(value, values) : undefined;
      issues.push({ path, message: `expected ${spec.expected}, found ${describeFound(value)}${near ? ` (did you mean ${JSON.stringify(near)}?)` : ''}` });
      return INVALID;
    },
  };
  return spec;
}

export function array<T>(item: Spec<T>, opts: { minItems?: number } = {}): Spec<T[]> {
  const spec: Spec<T[]> = {
    expected: opts.minItems ? `an array of at least ${opts.minItems} item${opts.minItems === 1 ? '' : 's'}, each ${item.expected}` : `an array (each item ${item.expected})`,
    check(value, path, issues) {
      if (!Array.isArray(value)) return mismatch(spec, value, path, issues);
      if (opts.minItems !== undefined && value.length < opts.minItems) return mismatch(spec, value, path, issues);
      const out: T[] = [];
      let ok = true;
      value.forEach((v, i) => {
        const r = item.check(v, joinPath(path, i), issues);
        if (r === INVALID) ok = false;
        else out.push(r);
      });
      return ok ? out : INVALID;
    },
  };
  return spec;
}

/** Marks an object field that may be left out. */
export function optional<T>(inner: Spec<T>): Spec<T> & { optional: true } {
  return { expected: inner.expected, optional: true, check: (v, p, i) => inner.check(v, p, i) };
}

type Shape = Record<string, Spec<unknown>>;
type Simplify<T> = { [K in keyof T]: T[K] } & {};
export type InferShape<S extends Shape> = Simplify<
  { [K in keyof S as S[K] extends { optional: true } ? never : K]: SpecType<S[K]> } & {
    [K in keyof S as S[K] extends { optional: true } ? K : never]?: SpecType<S[K]>;
  }
>;

/** An object with exactly these keys (unknown ones are errors, with a did-you-mean). */
export function object<S extends Shape>(shape: S): Spec<InferShape<S>> {
  const spec: Spec<InferShape<S>> = {
    expected: 'an object',
    check(value, path, issues) {
      if (!isPlainObject(value)) return mismatch(spec, value, path, issues);
      const out: Record<string, unknown> = {};
      let ok = true;
      for (const [key, sub] of Object.entries(shape)) {
        const p = joinPath(path, key);
        if (!Object.hasOwn(value, key) || value[key] === undefined) {
          if (!sub.optional) {
            issues.push({ path: p, message: `missing (expected ${sub.expected})` });
            ok = false;
          }
          continue;
        }
        const r = sub.check(value[key], p, issues);
        if (r === INVALID) ok = false;
        else out[key] = r;
      }
      const known = Object.keys(shape);
      for (const key of Object.keys(value)) {
        if (Object.hasOwn(shape, key)) continue;
        const near = closest(key, known);
        issues.push({ path: joinPath(path, key), message: `unknown key (${near ? `did you mean '${near}'?` : `expected one of ${known.map((k) => `'${k}'`).join(', ')}`})` });
        ok = false;
      }
      return ok ? (out as InferShape<S>) : INVALID;
    },
  };
  return spec;
}
