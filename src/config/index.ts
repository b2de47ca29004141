// The configuration façade: precedence is defaults < file < environment, and every way in
// (load, get, set) goes through the same schema so they cannot disagree about a key.
import { readFileSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import type { Paths } from '../paths.js';
import { closest } from '../suggest.js';
import { applyEnv, envVarFor, parseFieldText } from './env.js';
import { parseConfigText } from './parse.js';
import { decryptSecret, isEncrypted, secretKey } from './secrets.js';
import { fieldAt, leaves, secretSlots, schema, type Field, type FieldKind, type ObjectField, type PinclawConfig } from './schema.js';
import { expectedText, formatIssue, formatIssues, validateConfig } from './validate.js';
import { writeConfigFile } from './write.js';

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

/** A secret field whose stored value this home cannot decrypt, and why. */
export interface UnreadableSecret {
  path: string;
  reason: string;
}

export interface LoadOptions {
  /**
   * 'required' (the gateway, the agent, `config validate`): a secret that cannot be decrypted is a
   * ConfigError naming every such key. 'readable' (the default, every other command): such a
   * secret is left unset and listed by unreadableSecrets(), so what needs no secret keeps working.
   */
  secrets?: 'required' | 'readable';
}

const unreadable = new WeakMap<PinclawConfig, UnreadableSecret[]>();

/** The secrets loadConfig had to leave unset in this config (empty when all were readable). */
export function unreadableSecrets(config: PinclawConfig): readonly UnreadableSecret[] {
  return unreadable.get(config) ?? [];
}

/** What an owner reads about unreadable secrets: one line per key, then the way out. */
export function unreadableText(list: readonly UnreadableSecret[], keyFile: string): string {
  return [
    ...list.map((u) => `${u.path}: ${u.reason}`),
    `put back the secret.key these values were encrypted with (${keyFile}, chmod 600), or set each again: pinclaw config set KEY VALUE`,
  ].join('\n');
}

/** Defaults, then the file, then PINCLAW_* variables; any problem is a ConfigError listing all of them. */
export function loadConfig(paths: Paths, env: NodeJS.ProcessEnv = process.env, opts: LoadOptions = {}): PinclawConfig {
  return configFromRaw(readConfigFile(paths.config), paths, env, opts);
}

/** A file's content as loadConfig makes it a config: defaults, environment, decrypted secrets. */
export function configFromRaw(fromFile: Record<string, unknown>, paths: Pick<Paths, 'config' | 'secretKey'>, env: NodeJS.ProcessEnv = process.env, opts: LoadOptions = {}): PinclawConfig {
  const merged = applyEnv(fromFile, env);
  const result = validateConfig(merged.raw);
  const lines = [formatIssues(result.errors, paths.config), formatIssues(merged.errors)].filter(Boolean);
  if (lines.length || !result.config) throw new ConfigError(lines.join('\n'));
  const failed = decryptSecrets(result.config, paths.secretKey);
  if (failed.length) {
    if (opts.secrets === 'required') throw new ConfigError(unreadableText(failed, paths.secretKey));
    unreadable.set(result.config, failed);
  }
  return result.config;
}

/**
 * Decrypts the `enc:` values of secret fields in place; the key is read only when one exists. A value
 * that cannot be decrypted (no key, a key of another home, an altered value) is removed, and listed.
 */
function decryptSecrets(config: PinclawConfig, keyFile: string): UnreadableSecret[] {
  let key: Buffer | ConfigError | undefined;
  const failed: UnreadableSecret[] = [];
  for (const { path, parent, key: name } of secretSlots(config)) {
    const value = parent[name];
    if (!isEncrypted(value)) continue;
    if (key === undefined) {
      try {
        key = secretKey(keyFile, false);
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        key = err;
      }
    }
    try {
      if (key instanceof ConfigError) throw key;
      parent[name] = decryptSecret(value, key, path);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      delete parent[name];
      failed.push({ path, reason: err.message.startsWith(`${path}: `) ? err.message.slice(path.length + 2) : err.message });
    }
  }
  return failed;
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
 * Only the file's own content is written: defaults and environment values stay out of it. Every
 * secret field is written encrypted under `secrets.keyFile` (src/config/write.ts), the one just set
 * and any the file held in clear; with `plain` the key just set is written as given. Returns the
 * paths of the secrets it encrypted.
 */
export function setConfigValue(file: string, key: string, valueText: string, secrets: { keyFile: string; plain?: boolean }): string[] {
  return writeConfigFile({ config: file, secretKey: secrets.keyFile }, plannedConfig(file, key, valueText), secrets.plain ? { keepPlain: key } : {});
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
  // An object or a list is stored as the owner wrote it (checked above): the parsed value has the
  // items' defaults filled in, which would then sit in the file as if the owner had chosen them.
  cur[segs[segs.length - 1]!] = field.kind === 'object' || field.kind === 'array' || field.kind === 'record' ? (JSON.parse(valueText) as unknown) : parsed.value;

  const { errors } = validateConfig(raw);
  if (errors.length) throw new ConfigError(`${formatIssues(errors, file)}\n${file} was not changed`);
  return raw;
}

/**
 * The file's content after `config unset KEY`, not written; `removed` is false when the file does not
 * set the key (then `raw` is the file as it is). A section left empty by the removal goes too, so
 * the file holds only what the owner set.
 */
export function plannedUnset(file: string, key: string): { raw: Record<string, unknown>; removed: boolean } {
  lookupKey(key);
  const raw = readConfigFile(file);
  const segs = key.split('.');
  const parents: Record<string, unknown>[] = [raw];
  for (const seg of segs.slice(0, -1)) {
    const next = parents.at(-1)![seg];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) return { raw, removed: false };
    parents.push(next as Record<string, unknown>);
  }
  const last = parents.at(-1)!;
  if (!Object.hasOwn(last, segs.at(-1)!)) return { raw, removed: false };
  delete last[segs.at(-1)!];
  for (let i = parents.length - 1; i > 0 && Object.keys(parents[i]!).length === 0; i--) delete parents[i - 1]![segs[i - 1]!];
  const { errors } = validateConfig(raw);
  if (errors.length) throw new ConfigError(`${formatIssues(errors, file)}\n${file} was not changed`);
  return { raw, removed: true };
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
