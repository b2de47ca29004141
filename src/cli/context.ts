// What every command receives from the CLI entry: resolved paths, the output mode, and the
// output/environment seams that let tests run commands in-process.
import type { Paths } from '../paths.js';

export interface CliContext {
  paths: Paths;
  json: boolean;
  /** --yes: answers the confirmations a command would otherwise ask for */
  yes?: boolean;
  /** --verbose: info log lines are shown (a one-shot command shows warnings and errors only) */
  verbose?: boolean;
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
}
