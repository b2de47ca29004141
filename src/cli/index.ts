// The CLI entry: global flags, dispatch, and the one place that turns errors into exit codes.
import { EXIT, PinclawError, UsageError, errorMessage } from '../errors.js';
import { setOneShotLogging } from '../log.js';
import { resolvePaths } from '../paths.js';
import { damagedDatabaseMessage } from '../store/db.js';
import { closest } from '../suggest.js';
import { migrations } from '../store/schema.js';
import { pinclawVersion } from '../version.js';
import { commandArgs, looseCommandArgs, splitCommand } from './args.js';
import { commands, helpText } from './commands.js';
import type { CliContext } from './context.js';

export interface CliIO {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
}

const processIO: CliIO = {
  out: (line) => process.stdout.write(line + '\n'),
  err: (line) => process.stderr.write(line + '\n'),
  env: process.env,
};

export async function main(argv: readonly string[], io: CliIO = processIO): Promise<number> {
  try {
    const { flags, command: name, args: rawArgs } = splitCommand(argv);
    if (!name) {
      if (flags.version) {
        // --json adds the database schema this version migrates to: what `pinclaw update` asks a new executable.
        io.out(flags.json ? JSON.stringify({ version: pinclawVersion(), schema: Math.max(0, ...migrations.map((m) => m.version)) }) : `pinclaw ${pinclawVersion()}`);
        return EXIT.ok;
      }
      if (flags.help) {
        io.out(helpText(pinclawVersion()));
        return EXIT.ok;
      }
      io.err(helpText(pinclawVersion()));
      return EXIT.usage;
    }
    const cmd = commands.find((c) => c.name === name);
    if (!cmd) {
      const hint = closest(name, commands.map((c) => c.name));
      throw new UsageError(`unknown command '${name}'${hint ? ` (did you mean '${hint}'?)` : ''}; see 'pinclaw --help'`);
    }
    // Commands not built yet take any arguments (they only say they are not available), but the
    // global flags among them still count.
    const { args, positionals } = cmd.arrives ? looseCommandArgs(rawArgs, flags) : commandArgs(rawArgs, cmd.options ?? {}, cmd.usage, flags);
    // Both are answered from the command table, before any command module is loaded.
    if (flags.version) {
      io.out(`pinclaw ${pinclawVersion()}`);
      return EXIT.ok;
    }
    if (flags.help) {
      io.out(`usage: ${cmd.usage}\n${cmd.summary}`);
      return EXIT.ok;
    }
    const sub = positionals[0];
    if (cmd.subcommands && (sub === undefined || !cmd.subcommands.includes(sub))) {
      const what = sub !== undefined ? `unknown subcommand '${sub}'` : 'missing subcommand';
      const hint = sub !== undefined ? closest(sub, cmd.subcommands) : undefined;
      throw new UsageError(`pinclaw ${name}: ${what}${hint ? ` (did you mean '${hint}'?)` : ''}\nusage: ${cmd.usage}`);
    }
    if (cmd.arrives || !cmd.run) {
      io.err(`pinclaw ${name}: not available yet in this version (arrives with ${cmd.arrives ?? 'a later version'})`);
      return EXIT.failure;
    }
    // Only the gateway is a log: every other command prints what was asked for, and the runtime's
    // info lines would bury it (warnings and errors still show; --verbose brings the rest back).
    if (name !== 'gateway') setOneShotLogging(flags.verbose);
    const ctx: CliContext = { paths: resolvePaths({ home: flags.home, config: flags.config }, io.env), json: flags.json, yes: flags.yes, verbose: flags.verbose, out: io.out, err: io.err, env: io.env };
    return await cmd.run(args, ctx);
  } catch (err) {
    if (err instanceof PinclawError) {
      io.err(`pinclaw: ${err.message}`);
      if (err instanceof UsageError && !err.message.includes('usage:')) io.err(`usage: pinclaw [--home DIR] [--config FILE] [--json] COMMAND [ARGS]`);
      return err.exitCode;
    }
    const damaged = damagedDatabase(err, argv, io.env);
    if (damaged) {
      io.err(`pinclaw: ${damaged}`);
      return EXIT.failure;
    }
    io.err(`pinclaw: unexpected error: ${err instanceof Error && err.stack ? err.stack : errorMessage(err)}`);
    return EXIT.failure;
  }
}

/** The damaged-database message (src/store/db.ts) for the database this command line uses. */
function damagedDatabase(err: unknown, argv: readonly string[], env: NodeJS.ProcessEnv): string | undefined {
  let file = 'pinclaw.db in PINCLAW_HOME';
  try {
    const { flags } = splitCommand(argv);
    file = resolvePaths({ home: flags.home, config: flags.config }, env).database;
  } catch {
    // the arguments were read once already; keep the generic name
  }
  return damagedDatabaseMessage(err, file);
}
