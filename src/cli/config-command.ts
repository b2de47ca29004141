// `pinclaw config path | show | get KEY | set KEY VALUE | unset KEY | validate`.
import { existsSync } from 'node:fs';
import { ConfigError, EXIT, UsageError } from '../errors.js';
import { envVarFor, getConfigValue, loadConfig, lookupKey, plannedUnset, readConfigFile, setConfigValue, unreadableSecrets, unreadableText } from '../config/index.js';
import { fieldAt, leaves, schema, type Field } from '../config/schema.js';
import { writeConfigFile } from '../config/write.js';
import { parseCommandArgs } from './args.js';
import { checkConfig, checkConfigChange, checkConfigSet, providerNote } from '../setup/config-checks.js';
import { configOptions } from './options.js';
import type { CliContext } from './context.js';

const USAGE = 'pinclaw config path | show | get KEY | set [--plain] KEY VALUE | unset KEY | validate';
const arity: Record<string, { n: number; usage: string }> = {
  path: { n: 0, usage: 'pinclaw config path' },
  show: { n: 0, usage: 'pinclaw config show [--json]' },
  get: { n: 1, usage: 'pinclaw config get KEY' },
  set: { n: 2, usage: 'pinclaw config set [--plain] KEY VALUE' },
  unset: { n: 1, usage: 'pinclaw config unset KEY' },
  validate: { n: 0, usage: 'pinclaw config validate' },
};

/**
 * The schema field of a key typed on the command line: an unknown key is a usage error (exit 2),
 * as a mistyped command is, with the nearest key named.
 */
function keyField(key: string, usage: string): Field {
  try {
    return lookupKey(key);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(`config: ${err.message}\nusage: ${usage}`);
    throw err;
  }
}

/** `key = value` lines for what a raw config sets, leaf by leaf (a list or an unknown part whole). */
function shownLines(value: unknown, path: string, field: Field | undefined, into: string[]): string[] {
  if (field?.kind === 'object' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) shownLines(v, path ? `${path}.${k}` : k, Object.hasOwn(field.fields, k) ? field.fields[k] : undefined, into);
    return into;
  }
  into.push(`${path} = ${typeof value === 'string' ? value : JSON.stringify(value)}`);
  return into;
}

const MASK = '********';


/** Replaces non-empty secret values (also inside a whole section) so `get` never prints them. */
function maskSecrets(field: Field, value: unknown): unknown {
  if (field.secret && value !== undefined && value !== '') return MASK;
  if (field.kind === 'object' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, Object.hasOwn(field.fields, k) ? maskSecrets(field.fields[k]!, v) : v]));
  }
  if (field.kind === 'array' && Array.isArray(value)) return value.map((v) => maskSecrets(field.items, v));
  if (field.kind === 'record' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskSecrets(field.values, v)]));
  }
  return value;
}

/** PINCLAW_* variables that would override what `set` just wrote to `key` (or under it). */
function overridingVars(key: string, env: NodeJS.ProcessEnv): string[] {
  const prefix = envVarFor(key);
  return Object.keys(env).filter((name) => (name === prefix || name.startsWith(`${prefix}_`)) && env[name] !== '').sort();
}

export async function runConfig(sub: string, args: string[], ctx: CliContext): Promise<number> {
  // Parsed, not scanned: after `--` a '--secret' is a value (`pinclaw config set -- KEY --secret`).
  const { values, positionals: rest } = parseCommandArgs(args, configOptions, USAGE);
  const secret = values.secret === true;
  const plain = values.plain === true;
  const spec = Object.hasOwn(arity, sub) ? arity[sub] : undefined;
  if (!spec) throw new UsageError(`config: unknown subcommand '${sub}'\nusage: ${USAGE}`);
  for (const [on, flag] of [[secret, '--secret'], [plain, '--plain']] as const) {
    if (on && sub !== 'set') throw new UsageError(`config ${sub}: ${flag} is only for 'config set'\nusage: ${spec.usage}`);
  }
  if (secret && plain) throw new UsageError(`config set: --secret and --plain contradict each other\nusage: ${spec.usage}`);
  if (rest.length !== spec.n) {
    throw new UsageError(`config ${sub}: expected ${spec.n} argument${spec.n === 1 ? '' : 's'}, got ${rest.length}\nusage: ${spec.usage}`);
  }
  const file = ctx.paths.config;

  switch (sub) {
    case 'path':
      ctx.out(ctx.json ? JSON.stringify({ path: file }) : file);
      return EXIT.ok;

    case 'show': {
      // What the owner set (the file's own content), not the defaults; secrets masked.
      const raw = readConfigFile(file);
      const shown = maskSecrets(schema, raw) as Record<string, unknown>;
      // Variables of leaf keys (src/config/env.ts): they win over the file; named, values not shown.
      const env = leaves().map((l) => ({ key: l.path, name: envVarFor(l.path) })).filter((v) => ctx.env[v.name] !== undefined && ctx.env[v.name] !== '');
      if (ctx.json) {
        ctx.out(JSON.stringify({ file, exists: existsSync(file), values: shown, environment: env }, null, 2));
        return EXIT.ok;
      }
      const lines = shownLines(shown, '', schema, []);
      if (!existsSync(file)) ctx.out(`${file} does not exist yet: every key has its default (pinclaw config set KEY VALUE to change one)`);
      else if (!lines.length) ctx.out(`${file} sets nothing: every key has its default`);
      else lines.forEach((l) => ctx.out(l));
      if (env.length) ctx.err(`note: set in the environment, over the file: ${env.map((v) => `${v.key} (${v.name})`).join(', ')}`);
      return EXIT.ok;
    }

    case 'unset': {
      const key = rest[0]!;
      keyField(key, spec.usage);
      const { raw, removed } = plannedUnset(file, key);
      if (!removed) {
        ctx.out(ctx.json ? JSON.stringify({ unset: key, file, removed: false }) : `${key} is not set in ${file}; nothing changed`);
      } else {
        // The same refusal as set: not a change that would keep the gateway or the agent from starting.
        const remaining = await checkConfigChange(raw, ctx);
        const encrypted = writeConfigFile({ config: file, secretKey: ctx.paths.secretKey }, raw);
        const fallback = fieldAt(key)?.default;
        ctx.out(ctx.json ? JSON.stringify({ unset: key, file, removed: true, encrypted }) : `unset ${key}${fallback !== undefined ? ` (back to its default: ${JSON.stringify(fallback)})` : ''}`);
        if (encrypted.length) ctx.err(`note: encrypted the secrets ${file} held in clear: ${encrypted.join(', ')}`);
        for (const line of remaining) ctx.err(`note: still to fix: ${line}`);
      }
      for (const name of overridingVars(key, ctx.env)) ctx.err(`note: ${name} is set in the environment and still sets ${key}`);
      return EXIT.ok;
    }

    case 'get': {
      const key = rest[0]!;
      const field = keyField(key, spec.usage);
      const config = loadConfig(ctx.paths, ctx.env);
      // A secret this home cannot decrypt is not "unset": say so, for it and for a section holding it.
      const lost = unreadableSecrets(config).filter((u) => u.path === key || u.path.startsWith(`${key}.`) || u.path.startsWith(`${key}[`));
      if (lost.length) throw new ConfigError(unreadableText(lost, ctx.paths.secretKey));
      const value = maskSecrets(field, getConfigValue(config, key));
      if (ctx.json) ctx.out(JSON.stringify(value ?? null));
      else if (typeof value === 'string') ctx.out(value);
      else if (value !== undefined) ctx.out(JSON.stringify(value));
      return EXIT.ok;
    }

    case 'set': {
      const [key, value] = rest as [string, string];
      // A secret field is always stored encrypted: --secret only asserts that the key is one.
      const isSecret = keyField(key, spec.usage).secret === true;
      if ((secret || plain) && !isSecret) throw new ConfigError(`${key} is not a secret field; set it without ${secret ? '--secret' : '--plain'}`);
      // Refused (exit 78, nothing written) when the gateway or pinclaw agent would refuse the result.
      const remaining = await checkConfigSet(key, value, ctx);
      const hadKey = existsSync(ctx.paths.secretKey);
      const encrypted = setConfigValue(file, key, value, { keyFile: ctx.paths.secretKey, plain });
      ctx.out(ctx.json ? JSON.stringify({ set: key, file, encrypted }) : `set ${key}${encrypted.includes(key) ? ' (stored encrypted)' : ''}`);
      if (plain) ctx.err(`warning: ${key} is stored in clear in ${file}: anyone who can read the file or a copy of it can use it; pinclaw doctor warns about it, and the next write of the config encrypts it`);
      const others = encrypted.filter((k) => k !== key);
      if (others.length) ctx.err(`note: encrypted the secrets ${file} held in clear: ${others.join(', ')}`);
      // A new key beside values written under another (a restore without the key): copying the old
      // key over it later would make what was just encrypted unreadable in turn.
      if (!hadKey && existsSync(ctx.paths.secretKey)) {
        let lost: string[] = [];
        try {
          lost = unreadableSecrets(loadConfig(ctx.paths, ctx.env)).map((u) => u.path);
        } catch (err) {
          if (!(err instanceof ConfigError)) throw err; // the environment's own problem: not this write's
        }
        if (lost.length) ctx.err(`warning: created a new ${ctx.paths.secretKey}; ${lost.join(', ')} ${lost.length === 1 ? 'was' : 'were'} encrypted under another key and stay unreadable: set ${lost.length === 1 ? 'it' : 'them'} again too, and do not copy the old secret.key over this one now (what was just encrypted would become unreadable)`);
      }
      for (const name of overridingVars(key, ctx.env)) ctx.err(`note: ${name} is set in the environment and overrides the file`);
      for (const line of remaining) ctx.err(`note: still to fix: ${line}`);
      return EXIT.ok;
    }

    case 'validate': {
      try {
        // Everything the gateway and pinclaw agent check before they start (src/setup/config-checks.ts).
        const config = loadConfig(ctx.paths, ctx.env, { secrets: 'required' });
        await checkConfig(config, ctx);
        const note = providerNote(config, ctx.env);
        if (note) ctx.err(`note: pinclaw agent would stop (exit 78) until a provider is set up; the gateway starts: ${note}`);
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        const problems = err.message.split('\n');
        if (ctx.json) ctx.out(JSON.stringify({ ok: false, file, problems }));
        else problems.forEach((line) => ctx.out(line));
        return EXIT.config;
      }
      ctx.out(ctx.json ? JSON.stringify({ ok: true, file, problems: [] }) : `ok: ${file}`);
      return EXIT.ok;
    }
  }
  throw new UsageError(`usage: ${USAGE}`);
}
