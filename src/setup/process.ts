// How every command that touches the store opens pinclaw, in one order: the config (with its
// secrets as the command needs them), the start checks and the model check for the processes that
// run turns, the log level, the native addon, then the store. A command then adds what it runs:
// the governed tools of this machine (openToolProcess, tool-process.ts), turns (withTurns, below),
// or the whole gateway (gateway.ts). The CLI is left parsing arguments and printing.
import { execSandbox } from '../sandbox/detect.js';
import { missingProvider, modelRefs, resolveModels } from '../agent/providers/models.js';
import { loadConfig, type LoadOptions } from '../config/index.js';
import type { PinclawConfig } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { ensureWritableDir } from '../fsutil.js';
import { setChunkCacheDir } from '../lazy-chunk-cache.js';
import { setLogLevel } from '../log.js';
import { configureNative } from '../native/loader.js';
import { openDatabase, type Db } from '../store/db.js';
import { storeTemplate } from '../store/template.js';
import type { ChannelAdapter, Conductor } from '../conductor/conductor.js';
import type { Bus } from '../conductor/bus.js';
import type { ProcessContext } from './context.js';
import { checkConfig } from './config-checks.js';
import { startHardware, type HardwareRuntime } from './hardware.js';
import { createRuntime } from './runtime.js';

export interface OpenOptions {
  /** 'required': a secret the config names but cannot be read stops the start (a gateway, a turn) */
  secrets?: LoadOptions['secrets'];
  /** every check `config set` runs, before anything starts (exit 78); `host` when --host replaces gateway.host */
  startChecks?: { host?: string };
  /** a process that answers turns: without a usable model it is a configuration error (exit 78) */
  turns?: boolean;
  /** the config's log.level (processes that run tools or turns; a reading command keeps the CLI's) */
  logLevel?: boolean;
  /** what the process does with its config once the addon is configured, before the store opens (the gateway's) */
  beforeStore?: (config: PinclawConfig) => void;
}

export interface OpenedProcess {
  config: PinclawConfig;
  db: Db;
  /** Closes the store (what was added to the process is closed by what added it). */
  close(): void;
}

export async function openProcess(ctx: ProcessContext, o: OpenOptions = {}): Promise<OpenedProcess> {
  if (o.turns || o.startChecks) {
    ensureWritableDir(ctx.paths.home, 'PINCLAW_HOME');
    // The lazy chunks' code caches: the gateway's, and a one-shot turn's, which loads the Anthropic
    // SDK's chunk (0.6 MiB) in a new process each time. Before the start checks, which load the
    // chunks of what the config turns on (mqtt, the MCP client, the camera, update).
    setChunkCacheDir(ctx.paths.cache);
  }
  const config = loadConfig(ctx.paths, ctx.env, o.secrets ? { secrets: o.secrets } : {});
  // Every configuration error (exit 78) before anything starts, the same checks `config set` runs.
  if (o.startChecks) await checkConfig(config, { paths: ctx.paths, env: ctx.env, ...o.startChecks });
  if (o.turns) {
    modelRefs(config);
    // Without a provider no turn can be answered: a configuration error before anything starts.
    const missing = missingProvider(resolveModels(config, ctx.env));
    if (missing) throw new ConfigError(`${missing}\nOr run \`pinclaw onboard\` to set up a provider and its key.`);
  }
  if (o.logLevel) setLogLevel(config.log.level);
  configureNative({ cacheDir: ctx.paths.cache, enabled: config.native.enabled });
  o.beforeStore?.(config);
  const db = openStore(ctx, config);
  return { config, db, close: () => db.close() };
}

/** The store as the config says (for a command that must check its input against the config first). */
export function openStore(ctx: ProcessContext, config: PinclawConfig): Db {
  configureNative({ cacheDir: ctx.paths.cache, enabled: config.native.enabled });
  return openDatabase(ctx.paths.database, { busyTimeoutMs: config.store.busyTimeoutMs, template: storeTemplate });
}

export interface TurnProcess {
  conductor: Conductor;
  bus: Bus;
  /** Lets the turns in flight finish (up to drainMs), then releases the hardware. The store stays open. */
  stop(drainMs: number): Promise<void>;
}

/**
 * Turns in a process that is not the gateway (`pinclaw agent`, `pinclaw cron run`): this machine's
 * hardware tools (no triggers: those belong to the gateway, which owns the lines they watch) and a
 * conductor serving the given channels.
 */
export async function withTurns(ctx: ProcessContext, p: OpenedProcess, o: { channels: readonly ChannelAdapter[]; sessions: readonly string[] }): Promise<TurnProcess> {
  const hardware: HardwareRuntime = await startHardware(p.config, ctx);
  try {
    const { conductor, bus } = createRuntime({ db: p.db, config: p.config, paths: ctx.paths, env: ctx.env, channels: o.channels, sessions: o.sessions, extraTools: hardware.tools, board: hardware.promptText, execSandbox: await execSandbox(p.config.sandbox.backend) });
    return {
      conductor,
      bus,
      async stop(drainMs) {
        try {
          await conductor.stop(drainMs);
        } finally {
          hardware.close();
        }
      },
    };
  } catch (err) {
    hardware.close();
    throw err;
  }
}
