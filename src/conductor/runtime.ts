// Assembles what a process needs to run turns: store, provider chain, tools, token counter and the
// conductor, from the config. The gateway and `pinclaw agent` both start here.
import type { Provider } from '../agent/types.js';
import { heuristicCount } from '../agent/tokens.js';
import { ensureWorkspace } from '../agent/workspace.js';
import type { PinclawConfig } from '../config/schema.js';
import type { Paths } from '../paths.js';
import type { Db } from '../store/db.js';
import { toolSet, type Tool } from '../tools/types.js';
import { webFetchTool } from '../tools/web/fetch.js';
import { createBus, type Bus } from './bus.js';
import { createConductor, type ChannelAdapter, type Conductor } from './conductor.js';

export interface Runtime {
  bus: Bus;
  conductor: Conductor;
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
  const bus = createBus();
  const conductor = createConductor({
    db: o.db,
    config: o.config,
    workspace: o.paths.workspace,
    provider: resolveProvider,
    // Until the tools capability brings its registry and policy, web_fetch (read-only, SSRF-guarded)
    // is the one built-in tool.
    tools: toolSet(o.tools ?? [webFetchTool(o.config.web)]),
    countTokens: heuristicCount,
    bus,
    channels: o.channels,
    sessions: o.sessions,
  });
  return { bus, conductor };
}
