// What the wiring of a process needs from the command that starts it: where the home is, and the
// environment. The CLI's context (src/cli/context.ts) is one; setup/ never imports the CLI.
import type { Paths } from '../paths.js';

export interface ProcessContext {
  paths: Paths;
  env: NodeJS.ProcessEnv;
}
