// `pinclaw config path | get KEY | set KEY VALUE | validate`.
import { ConfigError, EXIT, UsageError } from '../errors.js';
import { envVarFor, getConfigValue, loadConfig, lookupKey, setConfigValue, setSecretValue } from '../config/index.js';
import type { Field } from '../config/schema.js';
import { parseCommandArgs } from './args.js';
import { checkConfig, checkConfigSet, providerNote } from './config-checks.js';
import { configOptions } from './commands.js';
import type { CliContext } from './context.js';

const USAGE = 'pinclaw config path | get KEY | set [--secret] KEY VALUE | validate';
const arity: Record<string, { n: number; usage: string }> = {
  path: { n: 0, usage: 'pinclaw config path' },
  get: { n: 1, usage: 'pinclaw config get KEY' },
  set: { n: 2, usage: 'pinclaw config set [--secret] KEY VALUE' },
  validate: { n: 0, usage: 'pinclaw config validate' },
};

const MASK = '********';

/** Replaces non-empty secret values (also inside a whole section) so `get` never prints them. */
function maskSecrets(field: Field, value: unknown): unknown {
  if (field.secret && value !== undefined && value !== '') return MASK;
  if (field.kind === 'object' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, Object.hasOwn(field.fields, k) ? maskSecrets(field.fields[k]!, v) : v]));
  }
  if (field.kind === 'array' && Array.isArray(value)) return value.map((v) => maskSecrets(field.items, v));
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
  const spec = Object.hasOwn(arity, sub) ? arity[sub] : undefined;
  if (!spec) throw new UsageError(`config: unknown subcommand '${sub}'\nusage: ${USAGE}`);
  if (secret && sub !== 'set') throw new UsageError(`config ${sub}: --secret is only for 'config set'\nusage: ${spec.usage}`);
  if (rest.length !== spec.n) {
    throw new UsageError(`config ${sub}: expected ${spec.n} argument${spec.n === 1 ? '' : 's'}, got ${rest.length}\nusage: ${spec.usage}`);
  }
  const file = ctx.paths.config;

  switch (sub) {
    case 'path':
      ctx.out(ctx.json ? JSON.stringify({ path: file }) : file);
      return EXIT.ok;

    case 'get': {
      const key = rest[0]!;
      const field = lookupKey(key);
      const value = maskSecrets(field, getConfigValue(loadConfig(ctx.paths, ctx.env), key));
      if (ctx.json) ctx.out(JSON.stringify(value ?? null));
      else if (typeof value === 'string') ctx.out(value);
      else if (value !== undefined) ctx.out(JSON.stringify(value));
      return EXIT.ok;
    }

    case 'set': {
      const [key, value] = rest as [string, string];
      // Refused (exit 78, nothing written) when the gateway or pinclaw agent would refuse the result.
      const remaining = await checkConfigSet(key, value, ctx);
      if (secret) setSecretValue(ctx.paths, key, value);
      else setConfigValue(file, key, value);
      ctx.out(ctx.json ? JSON.stringify({ set: key, file }) : `set ${key}`);
      for (const name of overridingVars(key, ctx.env)) ctx.err(`note: ${name} is set in the environment and overrides the file`);
      for (const line of remaining) ctx.err(`note: still to fix: ${line}`);
      return EXIT.ok;
    }

    case 'validate': {
      try {
        // Everything the gateway and pinclaw agent check before they start (src/cli/config-checks.ts).
        const config = loadConfig(ctx.paths, ctx.env);
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
