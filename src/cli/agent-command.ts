// `pinclaw agent -m TEXT [--session KEY]`: one turn through the same queue and conductor as every
// channel; without -m an interactive chat. Replies to earlier messages of the session that a
// stopped process left unanswered are delivered here too.
import { createInterface, type Interface } from 'node:readline';
import { UsageError } from '../errors.js';
import type { ChannelAdapter } from '../conductor/conductor.js';
import type { OutboundRow } from '../store/queue.js';
import type { ConfirmRequest } from '../tools/types.js';
import { parseCommandArgs } from './args.js';
import { agentOptions } from './options.js';
import { cliConfirm, terminalAsk } from './confirm.js';
import { openProcess, withTurns, type TurnProcess } from '../setup/process.js';
import type { CliContext } from './context.js';
import { stdinIsTerminal } from './terminal.js';

const USAGE = 'pinclaw agent [-m TEXT] [--session KEY]';

export async function runAgent(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, agentOptions, USAGE);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${USAGE}`);
  if (values.message !== undefined && values.message.trim() === '') throw new UsageError(`-m needs a non-empty message\nusage: ${USAGE}`);
  const session = values.session ?? 'cli:main';

  // Every configuration error (exit 78) before anything starts: the checks `config set` runs, and a model.
  const proc = await openProcess(ctx, { secrets: 'required', startChecks: {}, turns: true, logLevel: true });
  const { config } = proc;

  const mine = new Set<number>();
  // In a chat the question goes through the chat's own readline (a second reader would steal lines).
  let rl: Interface | undefined;
  const chatAsk = (q: string) => new Promise<string>((resolve) => (rl ? rl.question(q, resolve) : resolve('')));
  const confirm = cliConfirm(ctx, stdinIsTerminal() ? (values.message === undefined ? chatAsk : terminalAsk) : undefined);
  const cli: ChannelAdapter = {
    name: 'cli',
    debounceMs: config.channels.cli.debounceMs,
    async send(o: OutboundRow) {
      const earlier = o.inbound_id !== null && !mine.has(o.inbound_id);
      ctx.out(earlier ? `(reply to an earlier message)\n${o.text}` : o.text);
    },
    ...(confirm ? { confirm: (_chatId: string, request: ConfirmRequest) => confirm(request) } : {}),
  };
  // The owner at the device can use its hardware from the CLI as from any chat.
  let turns: TurnProcess;
  try {
    turns = await withTurns(ctx, proc, { channels: [cli], sessions: [session] });
  } catch (err) {
    proc.close();
    throw err;
  }
  const { conductor, bus } = turns;
  // At a terminal the owner sees what the turn is doing, read off the same bus events the dashboard
  // and /api/events show; piped output stays the reply alone.
  if (process.stderr.isTTY) {
    bus.on('tool_start', (e) => ctx.err(`… ${e.name}`));
    bus.on('tool_end', (e) => e.isError && ctx.err(`… ${e.name} failed`));
    bus.on('retry', (e) => ctx.err(`… the model did not answer (${e.reason}); trying again in ${Math.round(e.delayMs / 1000)} s`));
  }
  const ask = async (text: string): Promise<OutboundRow> => {
    const row = conductor.submit({ sessionKey: session, channel: 'cli', chatId: 'local', sender: 'owner', text });
    mine.add(row.id);
    return conductor.delivered(row.id);
  };

  try {
    conductor.start();
    if (values.message !== undefined) {
      const out = await ask(values.message);
      return out.kind === 'reply' ? 0 : 1;
    }
    rl = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY });
    if (process.stdin.isTTY) ctx.err(`pinclaw chat, session ${session}. /reset starts over, /compact summarizes, Ctrl-D quits.`);
    for await (const line of rl) {
      const text = line.trim();
      if (!text) continue;
      if (text === '/exit' || text === '/quit') break;
      await ask(text);
    }
    return 0;
  } finally {
    try {
      await turns.stop(5000);
    } finally {
      proc.close();
    }
  }
}
