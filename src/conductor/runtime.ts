// Assembles what a process needs to run turns: store, provider chain, tools, token counter and the
// conductor, from the config. The gateway and `pinclaw agent` both start here.
import type { Provider } from '../agent/types.js';
import { tokenCounterFor } from '../agent/tokens.js';
import { ensureWorkspace } from '../agent/workspace.js';
import type { PinclawConfig } from '../config/schema.js';
import type { Paths } from '../paths.js';
import type { Db } from '../store/db.js';
import { setLogRedactor } from '../log.js';
import type { Registry } from '../tools/registry.js';
import { configuredRegistry } from '../tools/setup.js';
import type { Tool } from '../tools/types.js';
import { createBus, type Bus } from './bus.js';
import { createConductor, type ChannelAdapter, type Conductor } from './conductor.js';

export interface Runtime {
  bus: Bus;
  conductor: Conductor;
  tools: Registry;
}

export interface RuntimeOptions {
  db: Db;
  config: PinclawConfig;
  paths: Paths;
  env: NodeJS.ProcessEnv;
  channels: readonly ChannelAdapter[];
  sessions?: readonly string[];
  tools?: readonly Tool[];
}

export function createRuntime(o: RuntimeOptions): Runtime {
  ensureWorkspace(o.paths.workspace);
  let provider: Promise<Provider | { missing: string }> | undefined;
  const resolveProvider = () =>
    (provider ??= import('../agent/providers/index.js').then(({ buildProvider }) => {
      const built = buildProvider(o.config, o.env);
      return 'provider' in built ? built.provider : built;
    }));
  // Every tool call goes through the registry: policy from tools.*, limits, redaction, audit rows.
  const { registry, redact } = configuredRegistry({ config: o.config, paths: o.paths, env: o.env, db: o.db, tools: o.tools });
  setLogRedactor(redact);
  const channels = new Map(o.channels.map((c) => [c.name, c]));
  const bus = createBus();
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
    countTokens: tokenCounterFor(o.config.agent.model),
    bus,
    channels: o.channels,
    sessions: o.sessions,
  });
  return { bus, conductor, tools: registry };
}
