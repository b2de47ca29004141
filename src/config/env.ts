// Environment overrides: every leaf key has a PINCLAW_* variable, so a service unit or a container
// can change one setting without editing the file. Values arrive as text and are parsed by the
// field's kind; the same parser serves `pinclaw config set`.
import { leaves, schema, type Field, type Leaf } from './schema.js';
import { checkField, type ConfigIssue } from './validate.js';

/** gateway.port → PINCLAW_GATEWAY_PORT, store.busyTimeoutMs → PINCLAW_STORE_BUSY_TIMEOUT_MS. */
export function envVarFor(path: string): string {
  const segs = path.split('.').map((s) => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase());
  return ['PINCLAW', ...segs].join('_');
}

export type TextParse = { ok: true; value: unknown } | { ok: false; issue: ConfigIssue };

/**
 * Turns command-line or environment text into a value of the field's kind and checks it
 * (range, enum values, nested items), so the issue can name where the text came from.
 */
export function parseFieldText(field: Field, text: string, path: string): TextParse {
  const secret = field.secret === true;
  const fail = (expected: string): TextParse => ({
    ok: false,
    issue: { path, expected, found: secret ? 'text (hidden)' : JSON.stringify(text) },
  });
  let value: unknown;
  switch (field.kind) {
    case 'string':
    case 'enum':
      value = text;
      break;
    case 'integer':
    case 'number': {
      const t = text.trim();
      const re = field.kind === 'integer' ? /^[+-]?\d+$/ : /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
      if (!re.test(t)) return fail(field.kind === 'integer' ? 'an integer' : 'a number');
      value = Number(t);
      break;
    }
    case 'boolean': {
      const t = text.trim().toLowerCase();
      if (t === 'true' || t === '1') value = true;
      else if (t === 'false' || t === '0') value = false;
      else return fail('true, false, 1 or 0');
      break;
    }
    case 'object':
    case 'array':
    case 'record':
      try {
        value = JSON.parse(text);
      } catch {
        return fail(`${field.kind === 'object' ? 'an object' : 'an array'} as JSON`);
      }
      break;
  }
  const issues: ConfigIssue[] = [];
  const checked = checkField(field, value, path, issues);
  return issues.length ? { ok: false, issue: issues[0]! } : { ok: true, value: checked };
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const segs = path.split('.');
  let cur = obj;
  for (const seg of segs.slice(0, -1)) {
    const next = cur[seg];
    if (next === undefined) cur[seg] = {};
    // A non-object here is a file error that validation reports; the override has nowhere to go.
    else if (typeof next !== 'object' || next === null || Array.isArray(next)) return;
    cur = cur[seg] as Record<string, unknown>;
  }
  cur[segs[segs.length - 1]!] = value;
}

/**
 * Returns a copy of `raw` with every set PINCLAW_* leaf variable applied. Empty variables count
 * as unset, because service managers and compose files commonly write `NAME=` to mean "none".
 */
export function applyEnv(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): { raw: Record<string, unknown>; errors: ConfigIssue[] } {
  const out = structuredClone(raw);
  const errors: ConfigIssue[] = [];
  // The few hundred leaves are listed only for a section some PINCLAW_ variable starts with:
  // PINCLAW_HOME alone, the usual case, lists none. (Listing them all, as this did, was about
  // 130 KiB of a start's allocations, measured with V8's sampling heap profiler.)
  const set = Object.keys(env).filter((k) => k.startsWith('PINCLAW_') && env[k] !== '');
  if (!set.length) return { raw: out, errors };
  for (const [section, sectionField] of Object.entries(schema.fields)) {
    const base = envVarFor(section);
    if (set.some((k) => k === base || k.startsWith(`${base}_`))) applySection(out, leaves(sectionField, section), env, errors);
  }
  return { raw: out, errors };
}

function applySection(out: Record<string, unknown>, sectionLeaves: readonly Leaf[], env: NodeJS.ProcessEnv, errors: ConfigIssue[]): void {
  for (const { path, field } of sectionLeaves) {
    const name = envVarFor(path);
    const text = env[name];
    if (text === undefined || text === '') continue;
    const parsed = parseFieldText(field, text, `env ${name}`);
    if (parsed.ok) setPath(out, path, parsed.value);
    else errors.push(parsed.issue);
  }
}
