// `pinclaw gateway`: opens the store, serves HTTP, and drains on SIGTERM/SIGINT. Later capabilities
// attach their channels, the scheduler and the hardware triggers here.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { execSandbox } from '../sandbox/detect.js';
import { ConfigError, errorMessage, PinclawError, UsageError } from '../errors.js';
import { describeHolder, tryLockHome, type HomeLock } from '../store/home-lock.js';
import { loadConfig } from '../config/index.js';
import { ensureWritableDir } from '../fsutil.js';
import { addLogSink, log, recentLog, setLogLevel, stderrIsJournal } from '../log.js';
import { logFileSink } from '../log-file.js';
import { configureNative } from '../native/loader.js';
import { fixMallocThresholds, limitMallocArenas, nativeInfo, sdNotify } from '../native/index.js';
import { collectStartGarbage } from '../conductor/idle-memory.js';
import { openDatabase } from '../store/db.js';
import { setState } from '../store/state.js';
import { recordReading } from '../store/readings.js';
import { aliveWriter, recordGatewayStart, startWatchdog } from '../ops/watchdog.js';
import { removeBackupLeftovers } from '../ops/backup-leftovers.js';
import { HttpError } from '../channels/http/io.js';
import { startHttpServer, type RunningHttpServer } from '../channels/http/server.js';
import { memoryInputError } from '../memory/holder.js';
import { apiRoutes, httpChannel } from '../channels/http/api.js';
import { createConfirmations } from '../channels/http/confirmations.js';
import { createBus } from '../conductor/bus.js';
import { metricsText } from '../ops/metrics.js';
import { trackChannelStatus } from '../channels/status.js';
import { createRuntime } from '../setup/runtime.js';
import { pinclawVersion } from '../version.js';
import { parseCommandArgs, parsePort } from './args.js';
import { gatewayOptions } from './options.js';
import { startHardware } from '../setup/hardware.js';
import { checkConfig, checkConfigSet } from './config-checks.js';
import { prepareScheduling } from '../scheduler/gateway.js';
import { ownerTarget } from '../scheduler/targets.js';
import { HARDWARE_CHANNEL, hardwareChannel } from '../hardware/triggers/hardware-channel.js';
import { problemsText } from '../hardware/health.js';
import type { ChannelAdapter } from '../conductor/conductor.js';
import type { CliContext } from './context.js';

/** Whether the home holds records of running MCP servers (cheap: one readdir; see leftovers.ts). */
function mcpRecords(home: string): boolean {
  try {
    return readdirSync(join(home, 'run', 'mcp')).length > 0;
  } catch {
    return false;
  }
}

const USAGE = 'pinclaw gateway [--host H] [--port N]';
const DRAIN_MS = 10_000;
/** How often the gateway looks at the queue for what other processes put there (see conductor.wake). */
const WAKE_MS = 10_000;
/** After listening: when the start-up collection runs (what start-up dropped, given back). */
const START_SETTLE_MS = 1000;
/** The first update check (update.check daily): after the start has settled, not during it. */
const UPDATE_CHECK_FIRST_MS = 60_000;

function nextSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (sig: NodeJS.Signals) => {
      process.off('SIGTERM', on);
      process.off('SIGINT', on);
      resolve(sig);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  });
}

export async function runGateway(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, gatewayOptions, USAGE);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${USAGE}`);
  // Bad flags are reported before anything on disk is touched.
  const portFlag = values.port !== undefined ? parsePort(values.port, '--port') : undefined;
  ensureWritableDir(ctx.paths.home, 'PINCLAW_HOME');
  // Before anything else reads or writes the home: a second gateway stops here (src/store/home-lock.ts).
  configureNative({ cacheDir: ctx.paths.cache });
  const lock = lockHome(ctx.paths);
  try {
    return await serve(values, portFlag, ctx);
  } finally {
    lock.release();
  }
}

/** The gateway's lock on its home, or a PinclawError (exit 1) naming who holds it. */
function lockHome(paths: CliContext['paths']): HomeLock {
  const r = tryLockHome(paths.lock);
  if ('held' in r) return r.held;
  const kill = r.busy.pid !== undefined ? `, or kill ${r.busy.pid}` : '';
  throw new PinclawError(
    `${describeHolder(r.busy)} is already running on ${paths.home} (it holds ${paths.lock}); two gateways on one home would both poll Telegram, claim the same GPIO lines and write one queue. Stop it first (systemctl stop pinclaw${kill}), or run this one on another home (--home DIR)`,
  );
}

async function serve(values: { host?: string }, portFlag: number | undefined, ctx: CliContext): Promise<number> {
  // A gateway without a secret it was given (a token, a key) would run half-deaf or unguarded: refused.
  const config = loadConfig(ctx.paths, ctx.env, { secrets: 'required' });
  // Every configuration error (exit 78) before anything starts, the same checks `config set` runs;
  // among them: beyond this machine (gateway.host or --host) never without a token.
  await checkConfig(config, { ...ctx, host: values.host });
  const scheduling = prepareScheduling({ config, workspace: ctx.paths.workspace });
  setLogLevel(config.log.level);
  // Under systemd the journal keeps the lines; otherwise `pinclaw logs` reads this file.
  if (!stderrIsJournal(ctx.env)) addLogSink(logFileSink(ctx.paths.logFile));
  // A backup killed midway leaves a full copy of the database and workspace; it is not kept past a restart.
  for (const p of removeBackupLeftovers(ctx.paths.home)) log.info(`removed ${p}, left by a backup that did not finish`);
  configureNative({ cacheDir: ctx.paths.cache, enabled: config.native.enabled });
  // Whether exec runs in an OS sandbox here: a bwrap probe run (a process) that goes on while the
  // database and the hardware are made ready, instead of after them (~9 ms of a start).
  // After configureNative: Landlock's check loads the addon, which native.enabled may forbid.
  const sandboxDetection = execSandbox(config.sandbox.backend);
  sandboxDetection.catch(() => {}); // awaited below; a start that fails before then drops it
  // One malloc arena from now on, and glibc's first thresholds (128 KiB) kept: what turns free can
  // then be given back when the gateway goes quiet (native/memory.cc has the figures). The same
  // settings in the environment (MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_)
  // are the user's choice.
  if (!ctx.env.MALLOC_ARENA_MAX) limitMallocArenas(1);
  if (!ctx.env.MALLOC_MMAP_THRESHOLD_ && !ctx.env.MALLOC_TRIM_THRESHOLD_) fixMallocThresholds(128 * 1024);

  const host = values.host ?? config.gateway.host;
  const port = portFlag ?? config.gateway.port;
  const signal = nextSignal();
  const startedAt = Date.now();
  const db = openDatabase(ctx.paths.database, { busyTimeoutMs: config.store.busyTimeoutMs });
  // What must end with the gateway (hardware triggers, held GPIO lines), last started first stopped.
  const stops: (() => void)[] = [];
  try {
    nativeInfo();
    setState(db, 'gateway.started_at', new Date().toISOString());
    setState(db, 'gateway.version', pinclawVersion());
    recordGatewayStart(db);
    const bus = createBus();
    const confirmations = createConfirmations(bus, config.tools.confirmTimeoutMs);
    // Readings of sensors and lines go to the bounded ring the dashboard's Home view plots.
    const hardware = await startHardware(config, ctx, { onReading: (kind, name, value) => recordReading(db, kind, name, value) });
    stops.push(() => hardware.close());
    // Telegram runs when it has a token; its code is loaded only then.
    const telegram = config.channels.telegram.token
      ? (await import('../channels/telegram/channel.js')).createTelegramChannel({ config, db, bus, workspace: ctx.paths.workspace, home: ctx.paths.home })
      : undefined;
    // Signal runs when it has a signal-cli daemon to talk to; its code is loaded only then.
    const signalChannel = config.channels.signal.url
      ? (await import('../channels/signal/channel.js')).createSignalChannel({ config, db, bus, workspace: ctx.paths.workspace, home: ctx.paths.home })
      : undefined;
    // Discord runs when it has a bot token; its code is loaded only then.
    const discord = config.channels.discord.token
      ? (await import('../channels/discord/channel.js')).createDiscordChannel({ config, db, bus, workspace: ctx.paths.workspace, home: ctx.paths.home })
      : undefined;
    // Matrix runs when it has a homeserver and an access token; its code is loaded only then.
    const matrix = config.channels.matrix.homeserver && config.channels.matrix.accessToken
      ? (await import('../channels/matrix/channel.js')).createMatrixChannel({ config, db, bus, workspace: ctx.paths.workspace, home: ctx.paths.home })
      : undefined;
    // MQTT runs when it has a broker; its code and the mqtt package are loaded only then.
    const mqtt = config.mqtt.url ? (await import('../channels/mqtt/start.js')).prepareMqtt({ config, db, bus, home: ctx.paths.home }) : undefined;
    const channels = [httpChannel(confirmations), ...hardware.channels, ...(telegram ? [telegram] : []), ...(signalChannel ? [signalChannel] : []), ...(discord ? [discord] : []), ...(matrix ? [matrix] : []), ...(mqtt?.channels ?? []), ...scheduling.channels];
    if (mqtt?.needsHardwareChannel && !channels.some((c) => c.name === HARDWARE_CHANNEL)) channels.push(hardwareChannel());
    const connecting = new Set<ChannelAdapter>([...(telegram ? [telegram] : []), ...(signalChannel ? [signalChannel] : []), ...(discord ? [discord] : []), ...(matrix ? [matrix] : []), ...(mqtt?.channels ?? [])]);
    const channelStatus = trackChannelStatus(bus, db, channels.map((c) => ({ name: c.name, connects: connecting.has(c) })));
    stops.push(channelStatus.stop);
    // The MCP client runs when a server is enabled; its code is loaded only then. Its servers start
    // in the background: a slow or broken one does not hold the gateway's start.
    const sandboxForExec = await sandboxDetection;
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
    // The memory opens on first use; then its files are watched, and its index saved at the end.
    stops.push(() => memory.close(), memory.watchFiles());
    conductor.start();
    // Jobs and the heartbeat submit through the conductor, so they start once it runs.
    stops.push(scheduling.start({ db, conductor, channels: channels.map((c) => c.name) }));
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
    // A refused token or an unreachable Telegram is logged and shown as the channel's state; the
    // gateway and the other channels go on, and do not wait for Telegram to answer before listening.
    const telegramStarted = telegram?.start(conductor).catch((err: unknown) => log.error(`telegram: ${errorMessage(err)}`));
    // The same for Signal: a daemon that is down is retried behind the gateway.
    const signalStarted = signalChannel?.start(conductor).catch((err: unknown) => log.error(`signal: ${errorMessage(err)}`));
    // The same for Discord: a refused token stops this channel only; an unreachable Discord is retried.
    const discordStarted = discord?.start(conductor).catch((err: unknown) => log.error(`discord: ${errorMessage(err)}`));
    // The same for Matrix: a refused token stops this channel only; an unreachable homeserver is retried.
    const matrixStarted = matrix?.start(conductor).catch((err: unknown) => log.error(`matrix: ${errorMessage(err)}`));
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
        dashboard: {
          startedAt,
          channels: () => channelStatus.list(),
          ...(mcp ? { mcp: () => mcp.status() } : {}),
          memorySearch: async (q, limit) => {
            try {
              return await (await memory.get()).search(q, { limit });
            } catch (err) {
              const input = await memoryInputError(err);
              throw input ? new HttpError(400, input.message) : err;
            }
          },
          board:
            hardware.gpio || hardware.promptText !== undefined
              ? async () => ({
                  info: (await hardware.tools.find((t) => t.name === 'board_info')?.execute({}, { sessionKey: 'dashboard', channel: 'http', chatId: 'dashboard' }))?.content ?? null,
                  held: hardware.gpio?.held() ?? [],
                })
              : undefined,
          admin: {
            config,
            paths: ctx.paths,
            env: ctx.env,
            callTool: (call, toolCtx) => tools.call(call, toolCtx),
            // The Home view's questions: shown there and answered by POST /api/confirm.
            confirm: (chatId, request) => confirmations.ask(chatId, request),
            gpio: hardware.gpio,
            channels: channels.map((c) => c.name),
            submit: (msg) => conductor.submit(msg),
            recentLog: () => recentLog,
            checkConfigSet: (key, valueText) => checkConfigSet(key, valueText, ctx),
          },
        },
      },
    });
    log.info(`gateway listening on ${server.url}`);
    // Where `pinclaw status` finds it, also when --host or --port replaced the config's.
    setState(db, 'gateway.url', server.url);
    sdNotify(`READY=1\nSTATUS=listening on ${server.url}`, ctx.env);
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

    const sig = await signal;
    log.info(`${sig}: draining`);
    sdNotify('STOPPING=1', ctx.env);
    // The dashboards are told first, and their live streams closed: an open stream would hold the
    // server's drain to its end.
    api.stopping();
    // Turns finish first, so the requests waiting for them can be answered before the server closes.
    await telegram?.stop();
    await telegramStarted;
    await signalStarted;
    await signalChannel?.stop();
    await discordStarted;
    await discord?.stop();
    await matrixStarted;
    await matrix?.stop();
    await conductor.stop(DRAIN_MS);
    // After the drain, so the replies of the last turns are published; then `offline`.
    await mqtt?.close();
    // Every server's process group is killed and reaped before the gateway says it stopped.
    await mcp?.close();
    // A chat whose turn was interrupted by the shutdown gets no reply: its stream ends here.
    api.endAll();
    await server.close(DRAIN_MS);
  } finally {
    for (const stop of stops.reverse()) {
      try {
        stop();
      } catch (err) {
        log.warn(`stopping: ${errorMessage(err)}`);
      }
    }
    db.close();
  }
  log.info('gateway stopped');
  return 0;
}
