// How the command line answers a tool's confirmation: --yes says yes to all; a terminal gets a y/N
// question on stderr; anything else (a pipe, a service) cannot ask, and the call is refused.
import { createInterface } from 'node:readline';
import type { ConfirmRequest, ToolContext } from '../tools/types.js';
import type { CliContext } from './context.js';
import { stdinIsTerminal } from './terminal.js';

/** Puts a question to whoever is at the terminal and resolves with the line they type. */
export type Ask = (question: string) => Promise<string>;

/** A y/N question on stdin/stderr; end of input counts as no. */
export const terminalAsk: Ask = (question) =>
  new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    let answered = false;
    rl.question(question, (line) => {
      answered = true;
      rl.close();
      resolve(line);
    });
    rl.once('close', () => {
      if (!answered) resolve('');
    });
  });

export function questionFor(r: ConfirmRequest): string {
  return `pinclaw: ${r.tool} needs your confirmation${r.reason ? ` (${r.reason})` : ''}\n  ${r.summary}\nallow this call? [y/N] `;
}

/** undefined when nobody can be asked: the registry then refuses the call and says why. */
export function cliConfirm(ctx: Pick<CliContext, 'yes'>, ask: Ask | undefined = stdinIsTerminal() ? terminalAsk : undefined): ToolContext['confirm'] {
  if (ctx.yes) return async () => true;
  if (!ask) return undefined;
  return async (r) => /^\s*y(es)?\s*$/i.test(await ask(questionFor(r)));
}
