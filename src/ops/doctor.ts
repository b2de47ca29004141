// `doctor`: every check the runtime can make about itself, as data. The CLI prints it.
import { errorMessage } from '../errors.js';
import { loadConfig, readConfigFile, unreadableSecrets, unreadableText } from '../config/index.js';
import { secretSlots } from '../config/schema.js';
import { clearSecrets } from '../config/write.js';
import { MISSING_PROVIDER, resolveModels } from '../agent/providers/models.js';
import type { PinclawConfig } from '../config/schema.js';
import { ensureWritableDir } from '../fsutil.js';
import { ADDONS, addonStatus, configureNative, settleExtractions, tryAddon, type AddonName, type AddonStatus } from '../native/loader.js';
import { nativeInfo, type NativeInfo } from '../native/index.js';
import { isSea } from '../native/sea.js';
import { pidAlive } from '../pid-alive.js';
import type { Paths } from '../paths.js';
import { damagedDatabaseMessage, openDatabase, sqliteReport, type Db, type SqliteReport } from '../store/db.js';
import { diskSpace, humanBytes } from '../store/disk.js';
import { recordedChannelStatus } from '../channels/status.js';
import { currentVersion } from '../store/migrations.js';
import { pinclawVersion } from '../version.js';

export type CheckState = 'ok' | 'warn' | 'fail';
export interface Check {
  name: string;
  state: CheckState;
  detail: string;
}

export interface DoctorReport {
  ok: boolean;
  version: string;
  node: string;
  arch: string;
  singleExecutable: boolean;
  checks: Check[];
  native: { info: NativeInfo | null; addons: Record<AddonName, AddonStatus & { works?: boolean }> };
  sqlite?: SqliteReport & { schemaVersion: number };
}

/** A loaded addon is also exercised once, so "loaded" means "usable". */
async function exercise(name: AddonName): Promise<string> {
  switch (name) {
    case 'pinclaw': {
      // The ranking self-test builds an HNSW graph (usearch's headers, compiled into this addon).
      const info = nativeInfo();
      const ranking = info?.features.includes('ranking') ? `; ${(await import('../native/ranking-selftest.js')).rankingSelfTest()}` : '';
      return `v${info?.version} (${info?.features.join(', ')})${ranking}`;
    }
    case 'better_sqlite3':
      return 'opened the database';
    case 'serialport': {
      const binding = tryAddon<{ open?: unknown }>('serialport');
      if (typeof binding?.open !== 'function') throw new Error('binding has no open()');
      return 'binding ready';
    }
    case 'i2c': {
      const binding = tryAddon<{ i2cFuncsSync?: unknown }>('i2c');
      if (typeof binding?.i2cFuncsSync !== 'function') throw new Error('binding has no i2cFuncsSync()');
      return 'binding ready';
    }
  }
}

/** Which models have credentials; no request is made (doctor must work offline). */
function providerCheck(config: PinclawConfig, env: NodeJS.ProcessEnv): Check {
  try {
    const models = resolveModels(config, env);
    const usable = models.filter((m) => m.usable).map((m) => `${m.provider}/${m.model}`);
    const missing = models.filter((m) => !m.usable).map((m) => `${m.provider}/${m.model}`);
    if (usable.length === 0) return { name: 'provider', state: 'warn', detail: `${MISSING_PROVIDER} Or run \`pinclaw onboard\`.` };
    return { name: 'provider', state: 'ok', detail: `${usable.join(' > ')}${missing.length ? `; no credentials for ${missing.join(', ')}` : ''}` };
  } catch (err) {
    return { name: 'provider', state: 'fail', detail: errorMessage(err) };
  }
}

/** The channels as the running (or last) gateway recorded them, and the replies each has not delivered. */
function channelsCheck(db: Db, config: PinclawConfig | undefined): Check | undefined {
  const rec = recordedChannelStatus(db);
  if (!rec) {
    const configured = [config?.channels.telegram.token && 'telegram', config?.channels.signal.url && 'signal', config?.channels.discord.token && 'discord', config?.channels.matrix.homeserver && 'matrix'].filter(Boolean);
    return configured.length ? { name: 'channels', state: 'warn', detail: `${configured.join(' and ')} ${configured.length > 1 ? 'are' : 'is'} configured; no gateway has run yet` } : undefined;
  }
  const alive = pidAlive(rec.pid);
  const states = rec.channels.map((c) => `${c.channel} ${c.state}${c.state === 'up' ? '' : ` (${c.detail})`}`);
  const waiting = rec.backlog.map((b) => `${b.pending} repl${b.pending === 1 ? 'y' : 'ies'} waiting for ${b.channel} (oldest ${Math.round(b.oldestAgeMs / 1000)} s)`);
  const down = alive && rec.channels.some((c) => c.state !== 'up');
  const detail = `${alive ? 'gateway running' : `gateway not running (last seen ${rec.at})`}: ${states.join(', ')}${waiting.length ? `; ${waiting.join(', ')}` : ''}`;
  return { name: 'channels', state: down || waiting.length ? 'warn' : 'ok', detail };
}

/** Below this nothing can be saved: a turn's commit needs a few pages. */
const DISK_FULL_BYTES = 1 << 20;

/** The free space of the home's file system: a full one leaves every turn unsaved. */
function diskCheck(home: string, warnMb: number): Check {
  const disk = diskSpace(home);
  if (!disk) return { name: 'disk', state: 'warn', detail: `cannot read the free space of ${home}` };
  const detail = `${humanBytes(disk.freeBytes)} free of ${humanBytes(disk.totalBytes)} on the file system of ${home}`;
  if (disk.freeBytes < DISK_FULL_BYTES) return { name: 'disk', state: 'fail', detail: `${detail}: full, turns cannot be saved; free some space on it` };
  if (disk.freeBytes < warnMb * 1024 * 1024) return { name: 'disk', state: 'warn', detail: `${detail}: less than store.diskWarnMb (${warnMb} MiB); free some space before it fills` };
  return { name: 'disk', state: 'ok', detail };
}

/**
 * Secrets this home cannot decrypt (fail: the gateway and the agent refuse to start) and secrets the
 * file holds in clear (warn, until the next write of the config encrypts them). None: no check.
 */
function secretsCheck(paths: Paths, config: PinclawConfig | undefined): Check | undefined {
  let clear: string[];
  let stored: number;
  try {
    const raw = readConfigFile(paths.config);
    clear = clearSecrets(raw);
    stored = secretSlots(raw).filter(({ parent, key }) => typeof parent[key] === 'string' && parent[key] !== '').length;
  } catch {
    return undefined; // the config check says what is wrong with the file
  }
  const lost = config ? unreadableSecrets(config) : [];
  if (lost.length) {
    return { name: 'secrets', state: 'fail', detail: `cannot decrypt ${lost.map((u) => u.path).join(', ')}: the gateway and pinclaw agent refuse to start until then; every other command works without them. ${unreadableText(lost, paths.secretKey).replace(/\n/g, '; ')}` };
  }
  if (clear.length) {
    return { name: 'secrets', state: 'warn', detail: `stored in clear in ${paths.config}: ${clear.join(', ')}; the next write of the config encrypts them (pinclaw config set KEY VALUE, for these or any key)` };
  }
  return stored ? { name: 'secrets', state: 'ok', detail: `${stored} stored encrypted (${paths.secretKey})` } : undefined;
}

/** The running gateway's hardware, when a trigger, sensor or board fails: warn, naming it (the gateway records it). */
function hardwareCheck(db: Db): Check | undefined {
  const rec = recordedChannelStatus(db);
  const hw = rec?.channels.find((c) => c.channel === 'hardware');
  if (!rec || !hw || !pidAlive(rec.pid)) return undefined;
  return hw.state === 'up' ? { name: 'hardware', state: 'ok', detail: 'triggers, sensors and boards work' } : { name: 'hardware', state: 'warn', detail: `${hw.state} since ${hw.since}: ${hw.detail}` };
}

export async function runChecks(paths: Paths, env: NodeJS.ProcessEnv): Promise<DoctorReport> {
  const checks: Check[] = [];
  let config: PinclawConfig | undefined;
  try {
    config = loadConfig(paths, env);
    checks.push({ name: 'config', state: 'ok', detail: paths.config });
  } catch (err) {
    checks.push({ name: 'config', state: 'fail', detail: errorMessage(err) });
  }
  const secrets = secretsCheck(paths, config);
  if (secrets) checks.push(secrets);
  // Byte for byte, whatever the stamps say: the one check that sees a cached addon corrupted
  // under an unchanged inode, size and ctime (see src/native/extract.ts).
  configureNative({ cacheDir: paths.cache, enabled: config?.native.enabled ?? true, compareBytes: true });
  // Not a start to hurry: each addon is flushed and named before it loads, so the report names it as it stays.
  settleExtractions();

  let homeOk = false;
  try {
    ensureWritableDir(paths.home, 'PINCLAW_HOME');
    homeOk = true;
    checks.push({ name: 'home', state: 'ok', detail: paths.home });
  } catch (err) {
    checks.push({ name: 'home', state: 'fail', detail: errorMessage(err) });
  }

  if (config) checks.push(providerCheck(config, env));
  if (homeOk) checks.push(diskCheck(paths.home, config?.store.diskWarnMb ?? 256));

  let sqlite: DoctorReport['sqlite'];
  let channels: Check | undefined;
  let hardware: Check | undefined;
  if (homeOk) {
    try {
      const db = openDatabase(paths.database, { busyTimeoutMs: config?.store.busyTimeoutMs ?? 5000 });
      try {
        sqlite = { ...sqliteReport(db), schemaVersion: currentVersion(db) };
        channels = channelsCheck(db, config);
        hardware = hardwareCheck(db);
      } finally {
        db.close();
      }
      checks.push({
        name: 'database',
        state: sqlite.fts5 ? 'ok' : 'fail',
        detail: `${paths.database}: SQLite ${sqlite.version}, ${sqlite.journalMode}, schema v${sqlite.schemaVersion}, FTS5 ${sqlite.fts5 ? 'present' : 'MISSING'}`,
      });
    } catch (err) {
      checks.push({ name: 'database', state: 'fail', detail: damagedDatabaseMessage(err, paths.database) ?? errorMessage(err) });
    }
  }
  if (channels) checks.push(channels);
  // The daemon the Signal channel needs (pinclaw does not start it); the check is in the Signal chunk.
  if (config?.channels.signal.url) checks.push({ name: 'signal', ...(await (await import('../channels/signal/daemon-check.js')).signalDaemonCheck(config.channels.signal.url, config.channels.signal.account)) });
  // The homeserver and the token the Matrix channel needs; the check is in the Matrix chunk.
  if (config?.channels.matrix.homeserver && config.channels.matrix.accessToken) checks.push({ name: 'matrix', ...(await (await import('../channels/matrix/check.js')).matrixHomeserverCheck(config.channels.matrix.homeserver, config.channels.matrix.accessToken)) });
  if (hardware) checks.push(hardware);

  const addons = {} as DoctorReport['native']['addons'];
  for (const name of ADDONS) {
    const status: AddonStatus & { works?: boolean } = addonStatus(name);
    let detail = status.error ?? '';
    if (status.loaded) {
      try {
        detail = `${await exercise(name)} (${status.source}: ${status.path})`;
        status.works = true;
      } catch (err) {
        status.works = false;
        detail = `loaded but failed: ${errorMessage(err)}`;
      }
    }
    // Without our own addon pinclaw still runs on the TypeScript fallbacks; the others are needed.
    const state: CheckState = status.works ? 'ok' : name === 'pinclaw' ? 'warn' : 'fail';
    checks.push({ name: `native ${name}`, state, detail: name === 'pinclaw' && !status.loaded ? `${detail}; using the TypeScript fallbacks` : detail });
    addons[name] = status;
  }
  // After the addons: the sandbox check reads the Landlock ABI through ours. Loaded on demand.
  checks.push(await (await import('../sandbox/doctor.js')).sandboxCheck(config?.sandbox));
  checks.push((await import('../hardware/boards/board-check.js')).boardCheck(paths, config));
  checks.push((await import('./service-check.js')).serviceCheck(env));
  // The broker, when one is configured: its code is the gateway's lazy MQTT chunk.
  if (config?.mqtt.url) checks.push(await (await import('../channels/mqtt/start.js')).mqttCheck(config.mqtt, config.tools));
  // The MCP servers, when any is configured: each started and listed once (the client's lazy chunk).
  if (config && Object.keys(config.mcp.servers).length) checks.push(await (await import('../mcp/client/index.js')).mcpCheck(config, paths.workspace));
  // One line per named camera: whether it opens (no picture is taken; the lazy chunk 'camera').
  if (config?.hardware.cameras.length) {
    for (const c of (await import('../hardware/camera/index.js')).checkCameras(config.hardware.cameras)) {
      checks.push({ name: `camera ${c.name}`, state: c.ok ? 'ok' : 'warn', detail: c.detail });
    }
  }
  // ffmpeg, when voice or a V4L2 camera needs it (the images chunk, ffmpeg's home).
  const ffmpeg = config && (config.voice.stt.backend || config.voice.tts.backend || config.hardware.cameras.length) ? (await import('../images/index.js')).ffmpegCheck(config) : undefined;
  if (ffmpeg) checks.push({ name: 'ffmpeg', ...ffmpeg });
  // The command hooks, when any is configured: each one's program, its sandbox, its onFailure (the hooks chunk).
  if (config && Object.values(config.hooks).some((list) => list.length)) checks.push(await (await import('../hooks/doctor.js')).hooksCheck(config, paths.workspace));

  return {
    ok: checks.every((c) => c.state !== 'fail'),
    version: pinclawVersion(),
    node: process.version,
    arch: process.arch,
    singleExecutable: isSea(),
    checks,
    native: { info: addons.pinclaw.loaded ? nativeInfo() : null, addons },
    sqlite,
  };
}

