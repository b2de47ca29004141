// Argument parsing: the global flags of the contract, wherever they appear, then each command's
// own flags through node:util parseArgs (strict), with failures turned into usage errors.
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

const valued = new Set(['--home', '--config']);

/** Pulls the global flags out of argv; everything else stays in order for the command. */
export function splitGlobal(argv: readonly string[]): { flags: GlobalFlags; rest: string[] } {
  const flags: GlobalFlags = { json: false, help: false, version: false, yes: false };
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    const eq = a.indexOf('=');
    const name = a.startsWith('--') && eq > 0 ? a.slice(0, eq) : a;
    if (valued.has(name)) {
      const value = eq > 0 && name !== a ? a.slice(eq + 1) : argv[++i];
      if (value === undefined || value === '') throw new UsageError(`${name} needs a value`);
      if (name === '--home') flags.home = value;
      else flags.config = value;
    } else if (a === '--json') flags.json = true;
    else if (a === '--help' || a === '-h') flags.help = true;
    else if (a === '--version' || a === '-V') flags.version = true;
    else if (a === '--yes' || a === '-y') flags.yes = true;
    else rest.push(a);
  }
  return { flags, rest };
}

type Options = NonNullable<ParseArgsConfig['options']>;

export function parseCommandArgs<O extends Options>(args: string[], options: O, usage: string) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    const msg = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new UsageError(`${msg}\nusage: ${usage}`);
  }
}

export function parsePort(text: string, what: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > 65535) throw new UsageError(`${what} must be an integer between 0 and 65535, got '${text}'`);
  return n;
}
