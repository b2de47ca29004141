// `pinclaw agent -m TEXT [--session KEY]`: one turn through the same queue and conductor as every
// channel; without -m an interactive chat. Replies to earlier messages of the session that a
// stopped process left unanswered are delivered here too.
import { execSandbox } from '../sandbox/detect.js';
import { createInterface, type Interface } from 'node:readline';
import { loadConfig } from '../config/index.js';
import { ConfigError, UsageError } from '../errors.js';
import { ensureWritableDir } from '../fsutil.js';
import { setLogLevel } from '../log.js';
import { configureNative } from '../native/loader.js';
import { createRuntime } from '../setup/runtime.js';
import { missingProvider, resolveModels } from '../agent/providers/models.js';
import type { ChannelAdapter } from '../conductor/conductor.js';
import { openDatabase } from '../store/db.js';
import type { OutboundRow } from '../store/queue.js';
import type { ConfirmRequest } from '../tools/types.js';
import { parseCommandArgs } from './args.js';
import { agentOptions } from './options.js';
import { cliConfirm, terminalAsk } from './confirm.js';
import { startHardware } from '../setup/hardware.js';
import { checkConfig } from './config-checks.js';
import type { CliContext } from './context.js';

const USAGE = 'pinclaw agent [-m TEXT] [--session KEY]';

export async function runAgent(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, agentOptions, USAGE);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${USAGE}`);
  if (values.message !== undefined && values.message.trim() === '') throw new UsageError(`-m needs a non-empty message\nusage: ${USAGE}`);
  const session = values.session ?? 'cli:main';

  ensureWritableDir(ctx.paths.home, 'PINCLAW_HOME');
  const config = loadConfig(ctx.paths, ctx.env, { secrets: 'required' });
  // Every configuration error (exit 78) before anything starts, the same checks `config set` runs.
  await checkConfig(config, ctx);
  // Without a provider no turn can be answered: a configuration error (exit 78) before anything starts.
  const missing = missingProvider(resolveModels(config, ctx.env));
  if (missing) throw new ConfigError(`${missing}\nOr run \`pinclaw onboard\` to set up a provider and its key.`);
  setLogLevel(config.log.level);
  configureNative({ cacheDir: ctx.paths.cache, enabled: config.native.enabled });
  const db = openDatabase(ctx.paths.database, { busyTimeoutMs: config.store.busyTimeoutMs });

  const mine = new Set<number>();
  // In a chat the question goes through the chat's own readline (a second reader would steal lines).
  let rl: Interface | undefined;
  const chatAsk = (q: string) => new Promise<string>((resolve) => (rl ? rl.question(q, resolve) : resolve('')));
  const confirm = cliConfirm(ctx, process.stdin.isTTY ? (values.message === undefined ? chatAsk : terminalAsk) : undefined);
  const cli: ChannelAdapter = {
    name: 'cli',
    debounceMs: config.channels.cli.debounceMs,
    async send(o: OutboundRow) {
      const earlier = o.inbound_id !== null && !mine.has(o.inbound_id);
      ctx.out(earlier ? `(reply to an earlier message)\n${o.text}` : o.text);
    },
    ...(confirm ? { confirm: (_chatId: string, request: ConfirmRequest) => confirm(request) } : {}),
  };
  // The owner at the device can use its hardware from the CLI as from any chat (no triggers here:
  // those belong to the gateway, which owns the lines they watch).
  const hardware = await startHardware(config, ctx);
  const { conductor, bus } = createRuntime({ db, config, paths: ctx.paths, env: ctx.env, channels: [cli], sessions: [session], extraTools: hardware.tools, board: hardware.promptText, execSandbox: await execSandbox(config.sandbox.backend) });
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
    await conductor.stop(5000);
    hardware.close();
    db.close();
  }
}
