// Assembles what a process needs to run turns: store, provider chain, tools, token counter and the
// conductor, from the config. The gateway and `pinclaw agent` both start here.
import { count } from '../counters.js';
import type { Provider } from '../agent/types.js';
import { tokenCounterFor } from '../agent/tokens.js';
import { ensureWorkspace } from '../agent/workspace.js';
import type { PinclawConfig } from '../config/schema.js';
import type { Paths } from '../paths.js';
import type { Db } from '../store/db.js';
import { setLogRedactor } from '../log.js';
import type { Registry } from '../tools/registry.js';
import { configuredRegistry, type ConfiguredDeps } from './registry.js';
import type { Tool, ToolSource } from '../tools/types.js';
import { createBus, type Bus } from '../conductor/bus.js';
import { providerOutcomeRecorder } from '../conductor/provider-outcome.js';
import { createConductor, type ChannelAdapter, type Conductor } from '../conductor/conductor.js';
import { createSubAgents } from '../conductor/subagent.js';
import { promptMemories } from '../memory/prompt-memories.js';
import type { MemoryHolder } from '../memory/holder.js';
import type { Hooks } from '../hooks/index.js';

export interface Runtime {
  bus: Bus;
  conductor: Conductor;
  tools: Registry;
  memory: MemoryHolder;
  /** command hooks, when the config has any (HardwareTrigger is asked by the trigger runner's caller) */
  hooks?: Hooks;
}

export interface RuntimeOptions {
  db: Db;
  config: PinclawConfig;
  paths: Paths;
  env: NodeJS.ProcessEnv;
  channels: readonly ChannelAdapter[];
  sessions?: readonly string[];
  tools?: readonly Tool[];
  /** tools added to the built-in ones (the hardware tools of this machine) */
  extraTools?: readonly Tool[];
  /** tools that come and go (MCP servers') */
  toolSources?: readonly ToolSource[];
  /** the board for the system prompt (src/hardware/boards/prompt-board.ts) */
  board?: string;
  /** the bus to use, when a channel needs it before the runtime exists (the http channel's confirmations) */
  bus?: Bus;
  /** whether exec runs in an OS sandbox here (src/sandbox/detect.ts execSandbox); the standard profile offers exec only then */
  execSandbox?: ConfiguredDeps['execSandbox'];
  /** replaces the provider chain built from the config (tests) */
  provider?: Provider;
}

/**
 * Counts model calls for /metrics: each call of the chain (its retries and fallbacks inside), each
 * retry it reports (a failed attempt), and each call that failed in the end.
 */
function countedProvider(p: Provider, outcome: ReturnType<typeof providerOutcomeRecorder>): Provider {
  return {
    id: p.id,
    async complete(req, onEvent) {
      count('provider_calls', { provider: p.id });
      try {
        const res = await p.complete(req, (e) => {
          if (e.type === 'retry') count('provider_errors', { provider: p.id, kind: 'retried' });
          onEvent?.(e);
        });
        outcome.ok(res.answeredBy ?? p.id);
        return res;
      } catch (err) {
        count('provider_errors', { provider: p.id, kind: req.signal?.aborted ? 'aborted' : 'failed' });
        if (!req.signal?.aborted) outcome.failed(p.id, err);
        throw err;
      }
    },
  };
}

export function createRuntime(o: RuntimeOptions): Runtime {
  ensureWorkspace(o.paths.workspace);
  let provider: Promise<Provider | { missing: string }> | undefined;
  const resolveProvider = () =>
    (provider ??= (o.provider ? Promise.resolve(o.provider) : import('../agent/providers/index.js').then(({ buildProvider }) => {
      const built = buildProvider(o.config, o.env);
      return 'provider' in built ? built.provider : built;
    })).then((p) => ('complete' in p ? countedProvider(p, providerOutcomeRecorder(o.db)) : p)));
  // Built in order: each part from the ones before it. send_message and spawn are lent the
  // conductor's send and the registry through each call's context (src/tools/types.ts ToolContext).
  const subAgents = createSubAgents({ db: o.db, config: o.config, provider: resolveProvider });
  // Every tool call goes through the registry: policy from tools.*, limits, redaction, audit rows.
  const { registry, redact, memory, hooks } = configuredRegistry({
    config: o.config, paths: o.paths, env: o.env, db: o.db, tools: o.tools, extraTools: o.extraTools, toolSources: o.toolSources, execSandbox: o.execSandbox,
    subAgents,
  });
  setLogRedactor(redact);
  const channels = new Map(o.channels.map((c) => [c.name, c]));
  const bus = o.bus ?? createBus();
  const countTokens = tokenCounterFor(o.config.agent.model);
  const conductor = createConductor({
    db: o.db,
    config: o.config,
    workspace: o.paths.workspace,
    provider: resolveProvider,
    tools: registry,
    confirmFor: (channel, chatId) => {
      const ch = channels.get(channel);
      return ch?.confirm ? (request) => ch.confirm!(chatId, request) : undefined;
    },
    countTokens,
    memories: o.config.memory.promptTokens > 0
      ? async (_key, text) => promptMemories(await memory.get(), text, o.config.memory.promptTokens, countTokens)
      : undefined,
    board: o.board,
    ...(hooks ? { hooks } : {}),
    bus,
    channels: o.channels,
    sessions: o.sessions,
  });
  return { bus, conductor, tools: registry, memory, ...(hooks ? { hooks } : {}) };
}
