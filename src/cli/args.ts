// Argument parsing. The global flags of the contract (--home, --config, --json, --help, --version,
// --yes) may stand anywhere; they are declared together with the command's own flags and read in
// one strict node:util parseArgs pass, so `-m --yes` is judged as parseArgs judges it (an option
// missing its value), `-yV` is two flags, and `--` ends the options. Failures become usage errors.
// The command name is found first (splitCommand) so that index.ts can answer --help and --version
// from the command table without loading any command module.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from '../errors.js';

export interface GlobalFlags {
  home?: string;
  config?: string;
  json: boolean;
  help: boolean;
  version: boolean;
  yes: boolean;
  /** --verbose: a one-shot command shows the runtime's info lines too */
  verbose: boolean;
}

export type CommandOptions = NonNullable<ParseArgsConfig['options']>;

export const GLOBAL_OPTIONS = {
  home: { type: 'string' },
  config: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
  yes: { type: 'boolean', short: 'y' },
  verbose: { type: 'boolean' },
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
  for (const k of ['json', 'help', 'version', 'yes', 'verbose'] as const) if (values[k] === true) into[k] = true;
  return into;
}

export interface SplitArgs {
  flags: GlobalFlags;
  /** the command name, when one was given */
  command?: string;
  /** the arguments after the command name, untouched (led by `--` when one came before the name) */
  args: string[];
}

/**
 * Finds the command (the first positional) and reads the global flags before it. The arguments after
 * it are read by `commandArgs`, which knows the command's own flags.
 */
export function splitCommand(argv: readonly string[]): SplitArgs {
  // Not strict: only to find where the command stands. Until the command only global flags are
  // allowed, and an unknown one is read as a boolean, so on every line the strict parse below
  // accepts this finds the same command.
  const { tokens } = parseArgs({ args: [...argv], options: GLOBAL_OPTIONS, strict: false, allowPositionals: true, tokens: true });
  const at = tokens.find((t) => t.kind === 'positional');
  // Only a terminator before the command concerns this pass; one after it is the command's.
  const terminator = tokens.find((t) => t.kind === 'option-terminator' && (at === undefined || t.index < at.index));
  const end = terminator?.index ?? at?.index ?? argv.length;
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ args: argv.slice(0, end), options: GLOBAL_OPTIONS, strict: true, allowPositionals: false }));
  } catch (err) {
    throw usageError(err, 'pinclaw [--home DIR] [--config FILE] [--json] COMMAND [ARGS]');
  }
  const flags = globalsOf(values, { json: false, help: false, version: false, yes: false, verbose: false });
  if (at?.kind !== 'positional') return { flags, args: [] };
  const rest = argv.slice(at.index + 1);
  // `pinclaw -- agent --help`: everything after the terminator stays an operand, also for the command.
  return { flags, command: at.value, args: terminator ? ['--', ...rest] : rest };
}

export interface CommandArgs {
  /**
   * The arguments for the command's module, without the global flags: the first operand (a
   * subcommand, for commands that have them), then the command's own flags as `--name` or
   * `--name=value`, then the other operands, behind `--` when one starts with a dash. Parsed again
   * with the command's own options this gives exactly the values and operands of the strict pass;
   * an inline value cannot be mistaken for a flag or swallow the next operand.
   */
  args: string[];
  /** the operands, in their order */
  positionals: string[];
}

function commandArgsOf(tokens: readonly Token[], own: CommandOptions): CommandArgs {
  const options: string[] = [];
  const positionals: string[] = [];
  for (const t of tokens) {
    if (t.kind === 'positional') positionals.push(t.value);
    else if (t.kind === 'option' && Object.hasOwn(own, t.name)) options.push(t.value === undefined ? `--${t.name}` : `--${t.name}=${t.value}`);
  }
  const [first, ...others] = positionals;
  const lead = first !== undefined && !first.startsWith('-') ? [first] : [];
  const rest = lead.length ? others : positionals;
  const separator = rest.some((p) => p.startsWith('-')) ? ['--'] : [];
  return { args: [...lead, ...options, ...separator, ...rest], positionals };
}

/**
 * Reads a command's arguments strictly with its own flags and the global ones together, merges the
 * global flags found into `flags`, and returns the rest for the command (see CommandArgs).
 */
export function commandArgs(args: readonly string[], own: CommandOptions, usage: string, flags: GlobalFlags): CommandArgs {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...args], options: { ...own, ...GLOBAL_OPTIONS }, strict: true, allowPositionals: true, tokens: true });
  } catch (err) {
    throw usageError(err, usage);
  }
  globalsOf(parsed.values, flags);
  return commandArgsOf(parsed.tokens ?? [], own);
}

/**
 * For a command that is not built yet and so has no flags of its own: its arguments are not
 * judged, but the global flags among them still count (`pinclaw memory --help`).
 */
export function looseCommandArgs(args: readonly string[], flags: GlobalFlags): CommandArgs {
  const { values, positionals } = parseArgs({ args: [...args], options: GLOBAL_OPTIONS, strict: false, allowPositionals: true });
  globalsOf(values, flags);
  return { args: [...args], positionals };
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
