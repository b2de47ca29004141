// Argument parsing. The global flags of the contract (--home, --config, --json, --help, --version,
// --yes) may stand anywhere; they are declared together with the command's own flags and read in
// one strict node:util parseArgs pass, so `-m --yes` is judged as parseArgs judges it (an option
// missing its value), `-yV` is two flags, and `--` ends the options. Failures become usage errors.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from '../errors.js';

export interface GlobalFlags {
  home?: string;
  config?: string;
  json: boolean;
  help: boolean;
  version: boolean;
  yes: boolean;
}

export type CommandOptions = NonNullable<ParseArgsConfig['options']>;

export const GLOBAL_OPTIONS = {
  home: { type: 'string' },
  config: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
  yes: { type: 'boolean', short: 'y' },
} as const satisfies CommandOptions;

type Token = NonNullable<ReturnType<typeof parseArgs>['tokens']>[number];

function usageError(err: unknown, usage: string): UsageError {
  // parseArgs's later lines say how to pass a value that starts with a dash: worth keeping.
  const msg = err instanceof Error ? err.message : String(err);
  return new UsageError(`${msg}\nusage: ${usage}`);
}

function globalsOf(values: Record<string, unknown>, into: GlobalFlags): GlobalFlags {
  for (const k of ['home', 'config'] as const) {
    const v = values[k];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v === '') throw new UsageError(`--${k} needs a value`);
    into[k] = v;
  }
  for (const k of ['json', 'help', 'version', 'yes'] as const) if (values[k] === true) into[k] = true;
  return into;
}

export interface SplitArgs {
  flags: GlobalFlags;
  /** the command name, when one was given */
  command?: string;
  /** the command's arguments without the global flags, in their order */
  args: string[];
}

/**
 * Finds the command (the first positional) and reads the global flags before it. The arguments after
 * it are read by `commandArgs`, which knows the command's own flags.
 */
export function splitCommand(argv: readonly string[]): SplitArgs {
  // Not strict: only to find where the command stands; what precedes it is then parsed strictly.
  const { tokens } = parseArgs({ args: [...argv], options: GLOBAL_OPTIONS, strict: false, allowPositionals: true, tokens: true });
  const at = tokens.find((t) => t.kind === 'positional');
  const before = at ? argv.slice(0, at.index) : [...argv];
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ args: before.filter((a) => a !== '--'), options: GLOBAL_OPTIONS, strict: true, allowPositionals: false }));
  } catch (err) {
    throw usageError(err, 'pinclaw [--home DIR] [--config FILE] [--json] COMMAND [ARGS]');
  }
  const flags = globalsOf(values, { json: false, help: false, version: false, yes: false });
  return at?.kind === 'positional' ? { flags, command: at.value, args: argv.slice(at.index + 1) } : { flags, args: [] };
}

/**
 * Reads a command's arguments strictly with its own flags and the global ones together; returns the
 * global flags found and the arguments with them taken out, for the command's own parse.
 */
export function commandArgs(args: readonly string[], own: CommandOptions, usage: string, flags: GlobalFlags): string[] {
  const options = { ...own, ...GLOBAL_OPTIONS };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...args], options, strict: true, allowPositionals: true, tokens: true });
  } catch (err) {
    throw usageError(err, usage);
  }
  globalsOf(parsed.values, flags);
  const isGlobal = (t: Token) => t.kind === 'option' && t.name in GLOBAL_OPTIONS && !(t.name in own);
  const byIndex = new Map<number, Token[]>();
  for (const t of parsed.tokens ?? []) byIndex.set(t.index, [...(byIndex.get(t.index) ?? []), t]);
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const ts = byIndex.get(i) ?? [];
    const options = ts.filter((t): t is Token & { kind: 'option' } => t.kind === 'option');
    if (!options.length || !options.some(isGlobal)) {
      out.push(args[i]!);
      continue;
    }
    const arg = args[i]!;
    if (arg.startsWith('--') || options.length === 1) {
      // A valued global (`--home DIR`) took the next argument as its value.
      if (options[0]!.value !== undefined && !options[0]!.inlineValue) i++;
      continue;
    }
    // A group of short flags (`-yj`): keep the command's own letters.
    const kept = options.filter((t) => !isGlobal(t)).map((t) => t.rawName.slice(1)).join('');
    if (kept) out.push(`-${kept}`);
  }
  return out;
}

export function parseCommandArgs<O extends CommandOptions>(args: string[], options: O, usage: string) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw usageError(err, usage);
  }
}

export function parsePort(text: string, what: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > 65535) throw new UsageError(`${what} must be an integer between 0 and 65535, got '${text}'`);
  return n;
}
