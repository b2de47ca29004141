// Validation against the schema. It collects every problem in one pass (a user fixing a config
// file should not have to rerun once per mistake) and fills defaults for missing keys.
import { closest } from '../suggest.js';
import type { ConfigIssue } from './issue.js';
import { signalIssues } from './signal.js';
import { discordIssues } from './discord.js';
import { matrixIssues } from './matrix.js';
import { hookIssues } from './hooks.js';
import { RECORD_KEY, schema, type Field, type PinclawConfig } from './schema.js';
import { isObject as isPlainObject } from '../is-object.js';

// The type's old home: the feature checks outside config/ name it from here.
export type { ConfigIssue } from './issue.js';

/** `found` of an unknown-key issue; formatIssues renders those differently. */
export const UNKNOWN_KEY = 'unknown key';

function range(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined) return ` between ${min} and ${max}`;
  if (min !== undefined) return ` >= ${min}`;
  if (max !== undefined) return ` <= ${max}`;
  return '';
}

/** What a field accepts, phrased to follow "expected". */
export function expectedText(field: Field): string {
  switch (field.kind) {
    case 'string': return 'a string';
    case 'integer': return `an integer${range(field.min, field.max)}`;
    case 'number': return `a number${range(field.min, field.max)}`;
    case 'boolean': return 'true or false';
    case 'enum': return `one of ${field.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'object': return 'an object';
    case 'array': return `an array (each item ${expectedText(field.items)})`;
    case 'record': return `an object of names (letters, digits, _ and -, starting with a letter) to ${expectedText(field.values)}`;
  }
}

/** A short description of an actual value; secrets show only their type. */
export function describeValue(v: unknown, secret = false): string {
  if (v === null) return 'null';
  if (v === undefined) return 'nothing';
  if (Array.isArray(v)) return `array of ${v.length} item${v.length === 1 ? '' : 's'}`;
  if (typeof v === 'object') return 'object';
  if (secret) return `${typeof v} (hidden)`;
  if (typeof v === 'string') {
    const shown = v.length > 40 ? `${v.slice(0, 37)}...` : v;
    return `string ${JSON.stringify(shown)}`;
  }
  return `${typeof v} ${String(v)}`;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** Checks `value` against `field`; returns the value with defaults filled in, or undefined. */
export function checkField(field: Field, value: unknown, path: string, issues: ConfigIssue[]): unknown {
  const bad = (): undefined => {
    issues.push({ path, expected: expectedText(field), found: describeValue(value, field.secret === true) });
    return undefined;
  };
  switch (field.kind) {
    case 'string':
      return typeof value === 'string' ? value : bad();
    case 'integer':
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return bad();
      if (field.kind === 'integer' && !Number.isInteger(value)) return bad();
      if ((field.min !== undefined && value < field.min) || (field.max !== undefined && value > field.max)) return bad();
      return value;
    }
    case 'boolean':
      return typeof value === 'boolean' ? value : bad();
    case 'enum':
      return typeof value === 'string' && field.values.includes(value) ? value : bad();
    case 'array':
      if (!Array.isArray(value)) return bad();
      return value.map((item, i) => checkField(field.items, item, `${path}[${i}]`, issues));
    case 'record': {
      if (!isPlainObject(value)) return bad();
      const out: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(value)) {
        if (!RECORD_KEY.test(key)) {
          issues.push({ path: join(path, key), expected: 'a name of letters, digits, _ and - starting with a letter, at most 32 characters', found: `the name ${JSON.stringify(key)}` });
          continue;
        }
        const checked = checkField(field.values, v, join(path, key), issues);
        if (checked !== undefined) out[key] = checked;
      }
      return out;
    }
    case 'object': {
      // A missing section is an empty one, so its defaults still apply.
      const obj = value === undefined ? {} : value;
      if (!isPlainObject(obj)) return bad();
      const out: Record<string, unknown> = {};
      const known = Object.keys(field.fields);
      for (const [key, sub] of Object.entries(field.fields)) {
        const given = obj[key];
        if (given === undefined) {
          if (sub.default !== undefined) out[key] = structuredClone(sub.default);
          else if (sub.kind === 'object') out[key] = checkField(sub, undefined, join(path, key), issues);
          continue;
        }
        const checked = checkField(sub, given, join(path, key), issues);
        if (checked !== undefined) out[key] = checked;
      }
      for (const key of Object.keys(obj)) {
        if (Object.hasOwn(field.fields, key)) continue;
        const near = closest(key, known);
        issues.push({
          path: join(path, key),
          expected: known.length ? `one of ${known.map((k) => `'${k}'`).join(', ')}` : 'no keys',
          found: UNKNOWN_KEY,
          ...(near ? { hint: `did you mean '${near}'?` } : {}),
        });
      }
      return out;
    }
  }
}

export function validateConfig(raw: unknown): { config?: PinclawConfig; errors: ConfigIssue[] } {
  const errors: ConfigIssue[] = [];
  const checked = checkField(schema, raw, '', errors);
  // What the tree cannot say: a hook's command is required and its matcher must compile.
  if (!errors.length) errors.push(...hookIssues((checked as PinclawConfig).hooks), ...signalIssues((checked as PinclawConfig).channels.signal), ...discordIssues((checked as PinclawConfig).channels.discord), ...matrixIssues((checked as PinclawConfig).channels.matrix));
  // A partially valid config is never handed out: callers would run on half their settings.
  return errors.length ? { errors } : { config: checked as PinclawConfig, errors };
}

export function formatIssue(issue: ConfigIssue): string {
  const what = issue.found === UNKNOWN_KEY
    ? `unknown key (${issue.hint ?? `expected ${issue.expected}`})`
    : `expected ${issue.expected}, found ${issue.found}${issue.hint ? ` (${issue.hint})` : ''}`;
  return `${issue.path || '(top level)'}: ${what}`;
}

/** One line per issue, each prefixed by `source` (usually the config file) when given. */
export function formatIssues(issues: readonly ConfigIssue[], source?: string): string {
  return issues.map((i) => (source ? `${source}: ${formatIssue(i)}` : formatIssue(i))).join('\n');
}
