// `pinclaw status [--json]`: one screen on the owner's installation. The running gateway is asked
// (GET /healthz, and GET /api/status with gateway.token when one is set); what it cannot answer, or
// everything when it is down, comes from the home: the config, the channels and provider outcomes
// the gateway recorded in the state table, the queue's counts and the last errors in the database.
// No model call is made here (that costs money): whether the provider answers is what the gateway
// last saw; `pinclaw doctor --probe` makes a real request. In the bundle: the lazy chunk 'cli-info'.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { defaults, loadConfig, readConfigFile, type PinclawConfig } from '../config/index.js';
import { localFallback, resolveModels, missingProvider } from '../agent/providers/models.js';
import { recordedChannelStatus, type ChannelStatus } from '../channels/status.js';
import { lastProviderOutcomes, type ProviderOutcome } from '../conductor/provider-outcome.js';
import { ConfigError, EXIT, UsageError, errorMessage } from '../errors.js';
import { configureNative } from '../native/loader.js';
import type { Db } from '../store/db.js';
import { openStore } from '../setup/process.js';
import { lockHolders } from '../proc-locks.js';
import { getState } from '../store/state.js';
import { sql } from '../store/statements.js';
import { parseCommandArgs } from './args.js';
import type { CliContext } from './context.js';
import { httpFetch } from '../net/fetch.js';

const USAGE = 'pinclaw status [--json]';
/** How long the gateway gets to answer: it is on this machine, so a slow answer is itself news. */
const ASK_TIMEOUT_MS = 3000;
const LAST_ERRORS = 3;

export interface StatusReport {
  home: string;
  config: { file: string; exists: boolean; keysSet: number; problems: string[] };
  gateway: { state: 'up' | 'down' | 'not answering'; url: string; pid?: number; version?: string; uptimeS?: number; rssBytes?: number; detail: string };
  provider: { models: string[]; credentials: boolean; note?: string; lastOk?: ProviderOutcome; lastError?: ProviderOutcome };
  channels: { source: 'gateway' | 'recorded' | 'none'; list: ChannelStatus[] };
  board: { state: string; detail: string };
  triggers: { gpio: number; mqtt: number; cron: { active: number; paused: number; nextRunAt?: string } };
  queue: { inbound: Record<string, number>; outboundPending: Record<string, number> } | null;
  errors: { at: string; where: string; error: string }[];
}

interface ApiStatus {
  version: string;
  uptimeS: number;
  rssBytes: number;
  queue: { inbound: Record<string, number>; outboundPending: Record<string, number> };
  channels: ChannelStatus[] | null;
}

/** The address a client on this machine reaches a gateway bound to `host` at. */
function localUrl(host: string, port: number): string {
  const h = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${port}`;
}

/** A recorded listening URL as a client reaches it: a gateway bound to every address is asked on loopback. */
function reachableUrl(recorded: string): string {
  try {
    const u = new URL(recorded);
    if (u.hostname === '0.0.0.0') u.hostname = '127.0.0.1';
    else if (u.hostname === '[::]') u.hostname = '[::1]';
    return u.origin;
  } catch {
    return recorded;
  }
}

async function ask(url: string, token?: string): Promise<{ status: number; body: unknown } | { failed: string }> {
  try {
    const res = await httpFetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(ASK_TIMEOUT_MS) });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    return { status: res.status, body };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return { failed: cause === 'ECONNREFUSED' ? 'connection refused' : (err as Error).name === 'TimeoutError' ? `no answer within ${ASK_TIMEOUT_MS / 1000} s` : errorMessage(err) };
  }
}

function queueCounts(db: Db): NonNullable<StatusReport['queue']> {
  const inbound: Record<string, number> = { pending: 0, processing: 0, done: 0, failed: 0 };
  for (const r of sql(db, 'select state, count(*) as n from inbound group by state').all() as { state: string; n: number }[]) inbound[r.state] = r.n;
  const outbound = sql(db, `select channel, count(*) as n from outbound where state = 'pending' group by channel`).all() as { channel: string; n: number }[];
  return { inbound, outboundPending: Object.fromEntries(outbound.map((r) => [r.channel, r.n])) };
}

/** The newest errors of turns and of deliveries, newest first. */
function lastErrors(db: Db): StatusReport['errors'] {
  const rows = sql(db, `select * from (
      select updated_at as at, 'turn in ' || session_key as where_, last_error as error from inbound where last_error is not null
      union all
      select coalesce(next_attempt_at, created_at) as at, 'delivery to ' || channel || ':' || chat_id as where_, last_error as error from outbound where last_error is not null and state = 'pending'
    ) order by at desc limit ?`).all(LAST_ERRORS) as { at: number; where_: string; error: string }[];
  return rows.map((r) => ({ at: new Date(r.at).toISOString(), where: r.where_, error: r.error }));
}

function cronCounts(db: Db): StatusReport['triggers']['cron'] {
  const rows = sql(db, `select state, count(*) as n, min(next_run_at) as next from cron_jobs where state in ('active', 'paused') group by state`).all() as { state: string; n: number; next: number | null }[];
  const active = rows.find((r) => r.state === 'active');
  return { active: active?.n ?? 0, paused: rows.find((r) => r.state === 'paused')?.n ?? 0, ...(active?.next ? { nextRunAt: new Date(active.next).toISOString() } : {}) };
}

/**
 * The pid holding the home's gateway lock, read from /proc/locks without taking the lock (taking it,
 * even for a moment, could make a gateway starting right then refuse to start).
 */
function lockHolder(file: string): { pid: number } | undefined {
  try {
    const st = statSync(file);
    const pid = lockHolders(readFileSync('/proc/locks', 'utf8'), st.dev, st.ino, 'POSIX')[0];
    return pid === undefined ? undefined : { pid };
  } catch {
    return undefined; // no lock file yet, or no /proc: nothing holds it that can be seen
  }
}

function countLeaves(v: unknown): number {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 1;
  return Object.values(v).reduce<number>((n, x) => n + countLeaves(x), 0);
}

export async function statusReport(ctx: CliContext): Promise<StatusReport> {
  const { paths } = ctx;
  const problems: string[] = [];
  let config: PinclawConfig;
  let keysSet = 0;
  try {
    keysSet = countLeaves(readConfigFile(paths.config));
    config = loadConfig(paths, ctx.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.message.split('\n'));
    config = defaults(); // still say what can be said; the problems lead the report
  }
  configureNative({ cacheDir: paths.cache, enabled: config.native.enabled });
  // No database yet: nothing has run in this home. Opening one would create it: not for a look.
  const db = existsSync(paths.database) ? openStore({ paths, env: ctx.env }, config) : undefined;
  try {
    const recordedUrl = db && getState(db, 'gateway.url');
    const url = recordedUrl ? reachableUrl(recordedUrl) : localUrl(config.gateway.host, config.gateway.port);
    const holder = lockHolder(paths.lock);
    const health = await ask(`${url}/healthz`);
    let api: ApiStatus | undefined;
    let gateway: StatusReport['gateway'];
    if ('status' in health && health.status === 200) {
      let detail = '';
      if (config.gateway.token) {
        const r = await ask(`${url}/api/status`, config.gateway.token);
        if ('status' in r && r.status === 200) api = r.body as ApiStatus;
        else detail = `its /api/status did not answer (${'status' in r ? `HTTP ${r.status}` : r.failed}); the rest is from the database`;
      } else detail = 'no gateway.token is set, so its API is closed; the rest is from the database';
      gateway = { state: 'up', url, ...(holder?.pid ? { pid: holder.pid } : {}), ...(api ? { version: api.version, uptimeS: api.uptimeS, rssBytes: api.rssBytes } : {}), detail };
    } else {
      const why = 'failed' in health ? health.failed : `HTTP ${health.status}`;
      gateway = holder
        ? { state: 'not answering', url, pid: holder.pid, detail: `a gateway holds this home (pid ${holder.pid}) but ${url}/healthz gave ${why}` }
        : { state: 'down', url, detail: `no gateway runs for this home (${url}: ${why}); start it: pinclaw gateway, or pinclaw service install` };
    }

    let models: string[] = [];
    let note: string | undefined;
    try {
      const resolved = resolveModels(config, ctx.env);
      models = resolved.map((m) => `${m.provider}/${m.model}`);
      const local = localFallback(config);
      if (local) models.push(`local/${local.model} (only when none of these can be reached)`);
      note = missingProvider(resolved);
    } catch (err) {
      note = errorMessage(err);
    }
    const outcomes = db ? lastProviderOutcomes(db) : {};
    const recorded = db ? recordedChannelStatus(db) : undefined;
    const channels: StatusReport['channels'] = api?.channels
      ? { source: 'gateway', list: api.channels }
      : recorded && gateway.state !== 'down'
        ? { source: 'recorded', list: recorded.channels }
        : recorded
          ? { source: 'recorded', list: recorded.channels.map((c) => ({ ...c, state: 'down', detail: `was ${c.state} when the gateway last ran (${recorded.at})` })) }
          : { source: 'none', list: [] };
    const board = (await import('../hardware/boards/board-check.js')).boardCheck(paths, config);
    return {
      home: paths.home,
      config: { file: paths.config, exists: existsSync(paths.config), keysSet, problems },
      gateway,
      provider: { models, credentials: note === undefined, ...(note ? { note } : {}), ...(outcomes.ok ? { lastOk: outcomes.ok } : {}), ...(outcomes.error ? { lastError: outcomes.error } : {}) },
      channels,
      board: { state: board.state, detail: board.detail },
      triggers: { gpio: config.hardware.triggers.length, mqtt: config.mqtt.triggers.length, cron: db ? cronCounts(db) : { active: 0, paused: 0 } },
      queue: api?.queue ?? (db ? queueCounts(db) : null),
      errors: db ? lastErrors(db) : [],
    };
  } finally {
    db?.close();
  }
}

function duration(s: number): string {
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return d ? `${d}d ${h}h` : h ? `${h}h ${m}m` : m ? `${m}m` : `${s}s`;
}

const cut = (s: string, n = 160) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The report as the screen shows it: one labelled line (or a few) per part. */
export function statusLines(r: StatusReport): string[] {
  const out: string[] = [];
  const row = (label: string, text: string) => out.push(`${label.padEnd(9)} ${text}`);
  const g = r.gateway;
  const facts = [g.pid ? `pid ${g.pid}` : '', g.version ? `pinclaw ${g.version}` : '', g.uptimeS !== undefined ? `up ${duration(g.uptimeS)}` : '', g.rssBytes ? `${(g.rssBytes / 1048576).toFixed(1)} MiB` : ''].filter(Boolean);
  row('gateway', g.state === 'up' ? `up at ${g.url}${facts.length ? ` (${facts.join(', ')})` : ''}${g.detail ? `; ${g.detail}` : ''}` : `${g.state.toUpperCase()}: ${g.detail}`);
  const p = r.provider;
  const seen = [p.lastOk ? `last answer ${p.lastOk.at} (${p.lastOk.provider})` : '', p.lastError && (!p.lastOk || p.lastError.at > p.lastOk.at) ? `last failure ${p.lastError.at}: ${cut(p.lastError.error ?? '')}` : ''].filter(Boolean);
  row('model', `${p.models.join(' > ') || 'none'}${p.note ? `; ${cut(p.note.split('\n')[0]!)}` : ''}${seen.length ? `; ${seen.join('; ')}` : p.credentials ? '; no call made yet' : ''}`);
  if (r.channels.list.length === 0) row('channels', 'none recorded yet (no gateway has run in this home)');
  for (const [i, c] of r.channels.list.entries()) row(i === 0 ? 'channels' : '', `${c.channel}: ${c.state}${c.detail ? ` (${cut(c.detail, 100)})` : ''}${c.since ? ` since ${c.since}` : ''}`);
  row('board', `${r.board.state === 'ok' ? '' : `${r.board.state}: `}${cut(r.board.detail)}`);
  const t = r.triggers;
  row('triggers', `${t.gpio} GPIO, ${t.mqtt} MQTT; cron: ${t.cron.active} active${t.cron.paused ? `, ${t.cron.paused} paused` : ''}${t.cron.nextRunAt ? `, next at ${t.cron.nextRunAt}` : ''}`);
  if (r.queue) {
    const q = r.queue.inbound;
    const outPending = Object.entries(r.queue.outboundPending);
    row('queue', `inbound ${q.pending ?? 0} pending, ${q.processing ?? 0} processing, ${q.done ?? 0} done, ${q.failed ?? 0} failed; replies waiting: ${outPending.length ? outPending.map(([ch, n]) => `${n} ${ch}`).join(', ') : 'none'}`);
  } else row('queue', 'no database yet');
  if (r.errors.length === 0) row('errors', 'none recorded');
  for (const [i, e] of r.errors.entries()) row(i === 0 ? 'errors' : '', `${e.at} ${e.where}: ${cut(e.error)}`);
  const c = r.config;
  row('config', `${c.file}${c.exists ? ` (${c.keysSet} key${c.keysSet === 1 ? '' : 's'} set; pinclaw config show)` : ' (none: defaults)'}`);
  for (const line of c.problems) row('', `problem: ${line}`);
  return out;
}

export async function runStatus(args: string[], ctx: CliContext): Promise<number> {
  const { positionals } = parseCommandArgs(args, {}, USAGE);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${USAGE}`);
  const report = await statusReport(ctx);
  if (ctx.json) ctx.out(JSON.stringify(report, null, 2));
  else statusLines(report).forEach((l) => ctx.out(l));
  // Scripts can ask "is it up?" by the exit code: 0 up, 1 down or not answering (the report is printed either way).
  return report.gateway.state === 'up' ? EXIT.ok : EXIT.failure;
}
