// The configuration façade: precedence is defaults < file < environment, and every way in
// (load, get, set) goes through the same schema so they cannot disagree about a key.
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError, PinclawError } from '../errors.js';
import { ensureWritableDir, writeFailure, writeFileAtomic } from '../fsutil.js';
import type { Paths } from '../paths.js';
import { closest } from '../suggest.js';
import { applyEnv, envVarFor, parseFieldText } from './env.js';
import { parseConfigText } from './parse.js';
import { decryptSecret, encryptSecret, isEncrypted, secretKey } from './secrets.js';
import { fieldAt, leaves, secretSlots, schema, type Field, type FieldKind, type ObjectField, type PinclawConfig } from './schema.js';
import { expectedText, formatIssue, formatIssues, validateConfig } from './validate.js';

export type { PinclawConfig } from './schema.js';
export { defaults } from './schema.js';
export { envVarFor } from './env.js';
export { formatIssues, validateConfig, type ConfigIssue } from './validate.js';

/** The raw file content; a missing file is an empty config, not an error. */
export function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') return {};
    const why = e.code === 'EACCES' || e.code === 'EPERM' ? 'permission denied' : e.code === 'EISDIR' ? 'is a directory' : e.message;
    throw new ConfigError(`cannot read config file ${file}: ${why}`);
  }
  return parseConfigText(text, file);
}

/** Defaults, then the file, then PINCLAW_* variables; any problem is a ConfigError listing all of them. */
export function loadConfig(paths: Paths, env: NodeJS.ProcessEnv = process.env): PinclawConfig {
  return configFromRaw(readConfigFile(paths.config), paths, env);
}

/** A file's content as loadConfig makes it a config: defaults, environment, decrypted secrets. */
export function configFromRaw(fromFile: Record<string, unknown>, paths: Pick<Paths, 'config' | 'secretKey'>, env: NodeJS.ProcessEnv = process.env): PinclawConfig {
  const merged = applyEnv(fromFile, env);
  const result = validateConfig(merged.raw);
  const lines = [formatIssues(result.errors, paths.config), formatIssues(merged.errors)].filter(Boolean);
  if (lines.length || !result.config) throw new ConfigError(lines.join('\n'));
  decryptSecrets(result.config, paths.secretKey);
  return result.config;
}

/** Decrypts the `enc:` values of secret fields in place; the key is read only when one exists. */
function decryptSecrets(config: PinclawConfig, keyFile: string): void {
  let key: Buffer | undefined;
  for (const { path, parent, key: name } of secretSlots(config)) {
    const value = parent[name];
    if (!isEncrypted(value)) continue;
    key ??= secretKey(keyFile, false);
    parent[name] = decryptSecret(value, key, path);
  }
}

/** `config set --secret`: the value is encrypted before it reaches the file. */
export function setSecretValue(paths: Paths, key: string, plain: string): void {
  const field = lookupKey(key);
  if (field.kind !== 'string' || !field.secret) throw new ConfigError(`${key} is not a secret field; set it without --secret`);
  setConfigValue(paths.config, key, encryptSecret(plain, secretKey(paths.secretKey, true)));
}

/** The schema field for a dot-path key; unknown keys get a "did you mean" from their siblings. */
export function lookupKey(key: string): Field {
  const field = fieldAt(key);
  if (field) return field;
  const segs = key.split('.');
  let parent: ObjectField = schema;
  let i = 0;
  for (; i < segs.length - 1; i++) {
    const next = Object.hasOwn(parent.fields, segs[i]!) ? parent.fields[segs[i]!] : undefined;
    if (next?.kind !== 'object') break;
    parent = next;
  }
  const prefix = segs.slice(0, i).join('.');
  const sib = closest(segs[i]!, Object.keys(parent.fields));
  let near = sib && (prefix ? `${prefix}.${sib}` : sib);
  // "port" alone is more likely a missing section than a typo, so look for a leaf of that name.
  near ??= segs.length === 1 ? leaves().find((l) => l.path.endsWith(`.${key}`))?.path : undefined;
  throw new ConfigError(`unknown key '${key}'${near ? ` (did you mean '${near}'?)` : ''}`);
}

export function getConfigValue(config: PinclawConfig, key: string): unknown {
  lookupKey(key);
  let cur: unknown = config;
  for (const seg of key.split('.')) {
    cur = typeof cur === 'object' && cur !== null ? (cur as Record<string, unknown>)[seg] : undefined;
  }
  return cur;
}

/**
 * Sets one key in the file. The value is parsed by the field's kind and the whole resulting file
 * is validated before anything is written, so a refused change leaves the file byte-identical.
 * Only the file's own content is written: defaults and environment values stay out of it.
 */
export function setConfigValue(file: string, key: string, valueText: string): void {
  writeConfigFile(file, plannedConfig(file, key, valueText));
}

/**
 * The file's content after `config set KEY VALUE`, not written: a ConfigError when the value or the
 * resulting file does not fit the schema.
 */
export function plannedConfig(file: string, key: string, valueText: string): Record<string, unknown> {
  const field = lookupKey(key);
  const parsed = parseFieldText(field, valueText, key);
  if (!parsed.ok) throw new ConfigError(`${formatIssue(parsed.issue)}; ${file} was not changed`);

  const raw = readConfigFile(file);
  const segs = key.split('.');
  let cur = raw;
  for (let i = 0; i < segs.length - 1; i++) {
    const seg = segs[i]!;
    const next = cur[seg];
    if (next === undefined) cur[seg] = {};
    else if (typeof next !== 'object' || next === null || Array.isArray(next)) {
      throw new ConfigError(`${file}: cannot set ${key}: ${segs.slice(0, i + 1).join('.')} is not an object; ${file} was not changed`);
    }
    cur = cur[seg] as Record<string, unknown>;
  }
  cur[segs[segs.length - 1]!] = parsed.value;

  const { errors } = validateConfig(raw);
  if (errors.length) throw new ConfigError(`${formatIssues(errors, file)}\n${file} was not changed`);
  return raw;
}

/**
 * Writes a whole config file atomically. A failed write (a full disk, a read-only file system) is a
 * message naming the file and the way out, and the old file is left as it was.
 */
export function writeConfigFile(file: string, raw: Record<string, unknown>): void {
  ensureWritableDir(dirname(file), 'config directory');
  try {
    writeFileAtomic(file, JSON.stringify(raw, null, 2) + '\n', 0o600);
  } catch (err) {
    throw new PinclawError(`cannot write ${file}: ${writeFailure(err, dirname(file))}; ${file} was not changed`);
  }
}

export interface KeyDescription {
  key: string;
  kind: FieldKind;
  /** What the value must be, e.g. "an integer between 0 and 65535". */
  accepts: string;
  default?: unknown;
  env: string;
  description: string;
  secret: boolean;
}

/** Every leaf key, in schema order (the docs' key table is generated from this). */
export function describeSchema(): KeyDescription[] {
  return leaves().map(({ path, field }) => ({
    key: path,
    kind: field.kind,
    accepts: expectedText(field),
    ...(field.default !== undefined ? { default: structuredClone(field.default) } : {}),
    env: envVarFor(path),
    description: field.description,
    secret: field.secret === true,
  }));
}
