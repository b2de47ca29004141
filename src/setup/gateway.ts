// The gateway assembled: the store, this machine's hardware, the channels (HTTP, the hardware's,
// the outside ones of outside-channels.ts, MQTT, the scheduler's), the MCP servers, the runtime and
// the HTTP server with the dashboard; then, at a signal, the drain in the order that loses nothing.
// `pinclaw gateway` (src/cli/gateway-command.ts) parses its flags, holds the home's lock and calls
// startGateway; everything it runs is built here, in the order each part needs the ones before.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { execSandbox } from '../sandbox/detect.js';
import { errorMessage } from '../errors.js';
import { addLogSink, log, stderrIsJournal } from '../log.js';
import { logFileSink } from '../log-file.js';
import { fixMallocThresholds, limitMallocArenas, nativeInfo, sdNotify } from '../native/index.js';
import { settleExtractions } from '../native/loader.js';
import { collectStartGarbage } from '../conductor/idle-memory.js';
import { setState } from '../store/state.js';
import { recordReading } from '../store/readings.js';
import { aliveWriter, recordGatewayStart, startWatchdog } from '../ops/watchdog.js';
import { removeBackupLeftovers } from '../ops/backup-leftovers.js';
import { startHttpServer, type RunningHttpServer } from '../channels/http/server.js';
import { apiRoutes, httpChannel } from '../channels/http/api.js';
import { createConfirmations } from '../channels/http/confirmations.js';
import { createBus } from '../conductor/bus.js';
import { metricsText } from '../ops/metrics.js';
import { trackChannelStatus } from '../channels/status.js';
import { pinclawVersion } from '../version.js';
import { prepareScheduling, type Scheduling } from '../scheduler/gateway.js';
import { ownerTarget } from '../scheduler/targets.js';
import { HARDWARE_CHANNEL, hardwareChannel } from '../hardware/triggers/hardware-channel.js';
import { problemsText } from '../hardware/health.js';
import type { ChannelAdapter } from '../conductor/conductor.js';
import type { ProcessContext } from './context.js';
import { checkConfigSet } from './config-checks.js';
import { dashboardOptions } from './gateway-dashboard.js';
import { startHardware } from './hardware.js';
import { createOutsideChannels } from './outside-channels.js';
import { openProcess } from './process.js';
import { createRuntime } from './runtime.js';

const DRAIN_MS = 10_000;
/** How often the gateway looks at the queue for what other processes put there (see conductor.wake). */
const WAKE_MS = 10_000;
/** After listening: when the start-up collection runs (what start-up dropped, given back). */
const START_SETTLE_MS = 1000;
/** The first update check (update.check daily): after the start has settled, not during it. */
const UPDATE_CHECK_FIRST_MS = 60_000;

export interface GatewayOptions {
  /** --host and --port, when given: they replace gateway.host and gateway.port */
  host?: string;
  port?: number;
}

export interface RunningGateway {
  url: string;
  /** Drains (turns finish, replies are delivered, servers end) and closes everything; resolves when stopped. */
  drain(why: string): Promise<void>;
}

/** Whether the home holds records of running MCP servers (cheap: one readdir; see leftovers.ts). */
function mcpRecords(home: string): boolean {
  try {
    return readdirSync(join(home, 'run', 'mcp')).length > 0;
  } catch {
    return false;
  }
}

export async function startGateway(ctx: ProcessContext, o: GatewayOptions): Promise<RunningGateway> {
  let scheduling: Scheduling | undefined;
  let sandboxDetection: ReturnType<typeof execSandbox> | undefined;
  // A gateway without a secret it was given (a token, a key) would run half-deaf or unguarded:
  // refused. Every configuration error (exit 78) before anything starts, the same checks `config
  // set` runs; among them: beyond this machine (gateway.host or --host) never without a token.
  const { config, db } = await openProcess(ctx, {
    secrets: 'required',
    startChecks: { host: o.host },
    logLevel: true,
    beforeStore(config) {
      scheduling = prepareScheduling({ config, workspace: ctx.paths.workspace });
      // Under systemd the journal keeps the lines; otherwise `pinclaw logs` reads this file.
      if (!stderrIsJournal(ctx.env)) addLogSink(logFileSink(ctx.paths.logFile));
      // A backup killed midway leaves a full copy of the database and workspace; it is not kept past a restart.
      for (const p of removeBackupLeftovers(ctx.paths.home)) log.info(`removed ${p}, left by a backup that did not finish`);
      // Whether exec runs in an OS sandbox here: a bwrap probe run (a process) that goes on while the
      // database and the hardware are made ready, instead of after them (~9 ms of a start). After
      // configureNative: Landlock's check loads the addon, which native.enabled may forbid.
      sandboxDetection = execSandbox(config.sandbox.backend);
      sandboxDetection.catch(() => {}); // awaited below; a start that fails before then drops it
      // One malloc arena from now on, and glibc's first thresholds (128 KiB) kept: what turns free
      // can then be given back when the gateway goes quiet (native/memory.cc has the figures). The
      // same settings in the environment (MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_,
      // MALLOC_TRIM_THRESHOLD_) are the user's choice.
      if (!ctx.env.MALLOC_ARENA_MAX) limitMallocArenas(1);
      if (!ctx.env.MALLOC_MMAP_THRESHOLD_ && !ctx.env.MALLOC_TRIM_THRESHOLD_) fixMallocThresholds(128 * 1024);
    },
  });
  const host = o.host ?? config.gateway.host;
  const port = o.port ?? config.gateway.port;
  const startedAt = Date.now();
  // What must end with the gateway (hardware triggers, held GPIO lines), last started first stopped.
  const stops: (() => void)[] = [];
  const closeAll = () => {
    for (const stop of stops.reverse()) {
      try {
        stop();
      } catch (err) {
        log.warn(`stopping: ${errorMessage(err)}`);
      }
    }
    db.close();
  };
  try {
    nativeInfo();
    // One commit for the three: each commit of a start is a WAL write and its locks.
    db.transaction(() => {
      setState(db, 'gateway.started_at', new Date().toISOString());
      setState(db, 'gateway.version', pinclawVersion());
      recordGatewayStart(db);
    })();
    const bus = createBus();
    const confirmations = createConfirmations(bus, config.tools.confirmTimeoutMs);
    // Readings of sensors and lines go to the bounded ring the dashboard's Home view plots.
    const hardware = await startHardware(config, ctx, { onReading: (kind, name, value) => recordReading(db, kind, name, value) });
    stops.push(() => hardware.close());
    const outside = await createOutsideChannels({ config, db, bus, workspace: ctx.paths.workspace, home: ctx.paths.home });
    // MQTT runs when it has a broker; its code and the mqtt package are loaded only then.
    const mqtt = config.mqtt.url ? (await import('../channels/mqtt/start.js')).prepareMqtt({ config, db, bus, home: ctx.paths.home }) : undefined;
    const channels: ChannelAdapter[] = [httpChannel(confirmations), ...hardware.channels, ...outside.list, ...(mqtt?.channels ?? []), ...scheduling!.channels];
    if (mqtt?.needsHardwareChannel && !channels.some((c) => c.name === HARDWARE_CHANNEL)) channels.push(hardwareChannel());
    const connecting = new Set<ChannelAdapter>([...outside.list, ...(mqtt?.channels ?? [])]);
    const channelStatus = trackChannelStatus(bus, db, channels.map((c) => ({ name: c.name, connects: connecting.has(c) })));
    stops.push(channelStatus.stop);
    // The MCP client runs when a server is enabled; its code is loaded only then. Its servers start
    // in the background: a slow or broken one does not hold the gateway's start.
    const sandboxForExec = await sandboxDetection!;
    let reserved: readonly string[] = [];
    // Records of running servers left in the home (run/mcp) mean a pinclaw that was killed: what
    // its servers left running is ended now, before any server starts (src/mcp/client/leftovers.ts).
    const mcpEnabled = Object.values(config.mcp.servers).some((s) => s.enabled);
    const mcpChunk = mcpEnabled || mcpRecords(ctx.paths.home) ? await import('../mcp/client/index.js') : undefined;
    mcpChunk?.sweepLeftovers(mcpChunk.mcpRunDir(ctx.paths.home));
    const mcp = mcpEnabled ? mcpChunk?.startMcpClient(config, { workspace: ctx.paths.workspace, home: ctx.paths.home, reserved: () => reserved }) : undefined;
    // On the way out after a failed start; the drain below awaits the same close (it is idempotent).
    if (mcp) stops.push(() => void mcp.close());
    const { conductor, memory, tools, hooks } = createRuntime({ db, config, paths: ctx.paths, env: ctx.env, channels, bus, extraTools: [...hardware.tools, ...(mqtt?.tools ?? [])], ...(mcp ? { toolSources: [mcp] } : {}), board: hardware.promptText, execSandbox: sandboxForExec });
    reserved = tools.list({ sessionKey: 'mcp', channel: 'cli', chatId: 'mcp' }).filter((l) => l.tool.mcpServer === undefined).map((l) => l.tool.name);
    // The memory opens on first use; its files are watched from just after "listening" (a watcher
    // is 1-1.5 ms of a start, and a file changed before it is read by the memory's first use
    // anyway), and its index is saved at the end.
    let unwatchMemory = (): void => undefined;
    stops.push(() => memory.close(), () => unwatchMemory());
    conductor.start();
    // Jobs and the heartbeat submit through the conductor, so they start once it runs.
    stops.push(scheduling!.start({ db, conductor, channels: channels.map((c) => c.name) }));
    // A failing trigger, sensor or board makes the hardware channel degraded, naming it, until it recovers.
    stops.push(await hardware.start(conductor, channels.map((c) => c.name), (problems) =>
      bus.emit({ type: 'channel_status', channel: HARDWARE_CHANNEL, state: problems.length ? 'degraded' : 'up', detail: problems.length ? problemsText(problems) : 'ready' }), hooks));
    // The broker connection, the MQTT chat, triggers, Home Assistant and the fleet; a broker that is
    // down or refuses is logged and retried, the rest of the gateway goes on.
    if (mqtt) {
      mqtt.start({ conductor, tools, knownChannels: channels.map((c) => c.name), hardware: hardware.haSources(), startedAt, ...(hooks ? { hooks } : {}) });
      // On the way out after a failed start; the drain below closes it first (close is idempotent).
      stops.push(() => void mqtt.close());
    }
    // A refused token or an unreachable service is logged and shown as the channel's state; the
    // gateway and the other channels go on, and do not wait for them to answer before listening.
    outside.start(conductor);
    let server: RunningHttpServer | undefined;
    const api = apiRoutes(conductor, bus, () => metricsText(db, startedAt, { channels: channelStatus.list(), guard: server?.guardStatus(), connections: server?.connectionStatus(), hardware: hardware.health(), ...(mcp && mcpChunk ? { extra: (l, ls) => mcpChunk.mcpMetricLines(mcp.status(), l, ls) } : {}) }), confirmations);
    server = await startHttpServer({
      host,
      port,
      token: config.gateway.token,
      api,
      guard: { ratePerSecond: config.gateway.rateLimit.perSecond, burst: config.gateway.rateLimit.burst, maxFailures: config.gateway.rateLimit.maxBadTokens, maxGlobalFailures: config.gateway.rateLimit.maxBadTokensTotal },
      connections: { max: config.gateway.connections.max, perAddress: config.gateway.connections.perAddress, firstRequestMs: config.gateway.connections.firstRequestSeconds * 1000 },
      // The dashboard: its login sessions and pairing requests live in the store.
      web: {
        db,
        home: ctx.paths.home,
        dashboard: dashboardOptions({
          ctx, config, startedAt, hardware, memory, tools, conductor, confirmations,
          channels: channels.map((c) => c.name),
          channelStatus: () => channelStatus.list(),
          ...(mcp ? { mcp: () => mcp.status() } : {}),
          checkConfigSet: (key, valueText) => checkConfigSet(key, valueText, ctx),
        }),
      },
    });
    const listening = server;
    log.info(`gateway listening on ${listening.url}`);
    // Where `pinclaw status` finds it, also when --host or --port replaced the config's.
    setState(db, 'gateway.url', listening.url);
    sdNotify(`READY=1\nSTATUS=listening on ${listening.url}`, ctx.env);
    unwatchMemory = memory.watchFiles();
    // A first start loaded its addons from files not yet flushed: flushed and named now, off the
    // path to listening (src/native/extract.ts says why no later start can load a torn one).
    setImmediate(settleExtractions);
    // What start-up allocated and dropped (the config checks build the tools and read the board
    // profiles once more, the channels' setup) leaves V8's heap grown by about 0.5 MiB of pages it
    // keeps until the first idle release (conductor.releaseAfterIdleSeconds): one low-memory
    // collection once listening gives them back now (bench:footprint's idle figure, docs/operations.md).
    const settled = setTimeout(collectStartGarbage, START_SETTLE_MS).unref();
    stops.push(() => clearTimeout(settled));
    // Under systemd with WatchdogSec=: WATCHDOG=1 only while the loop keeps up and the database takes writes.
    const watchdog = startWatchdog({ env: ctx.env, write: aliveWriter(db) });
    if (watchdog) stops.push(watchdog.stop);
    // Other processes share the queue: a reply `pinclaw cron run` queued for a channel served here.
    const waker = setInterval(() => conductor.wake(), WAKE_MS).unref();
    stops.push(() => clearInterval(waker));
    // update.check daily: the check (src/update/daily-check.ts, the update chunk) is loaded only when it
    // runs, a minute after the start and then once a day; it tells owner.notify, it never installs.
    if (config.update.check === 'daily') {
      const owner = ownerTarget(config);
      const check = () =>
        void import('../update/daily-check.js')
          .then((m) => m.dailyUpdateCheck({ config, db, currentVersion: pinclawVersion(), tell: (text) => (owner ? conductor.send({ channel: owner.channel, chatId: owner.chatId, text }) : log.warn(text)) }))
          .catch((err: unknown) => log.warn(`update check: ${errorMessage(err)}`));
      // PINCLAW_TEST_UPDATE_CHECK_MS: the tests' first check sooner.
      const first = setTimeout(check, Number(ctx.env.PINCLAW_TEST_UPDATE_CHECK_MS) || UPDATE_CHECK_FIRST_MS).unref();
      const daily = setInterval(check, 86_400_000).unref();
      stops.push(() => (clearTimeout(first), clearInterval(daily)));
    }

    return {
      url: listening.url,
      async drain(why) {
        try {
          log.info(`${why}: draining`);
          sdNotify('STOPPING=1', ctx.env);
          // The dashboards are told first, and their live streams closed: an open stream would hold
          // the server's drain to its end.
          api.stopping();
          // The outside channels stop taking messages; the turns in flight then finish, so the
          // requests waiting for them can be answered before the server closes.
          await outside.stop();
          await conductor.stop(DRAIN_MS);
          // After the drain, so the replies of the last turns are published; then `offline`.
          await mqtt?.close();
          // Every server's process group is killed and reaped before the gateway says it stopped.
          await mcp?.close();
          // A chat whose turn was interrupted by the shutdown gets no reply: its stream ends here.
          api.endAll();
          await listening.close(DRAIN_MS);
        } finally {
          closeAll();
        }
        log.info('gateway stopped');
      },
    };
  } catch (err) {
    closeAll();
    throw err;
  }
}
