// Prometheus text exposition of the runtime: process figures and the queue, read when scraped.
import type { GuardStatus } from '../channels/http/guard.js';
import type { ConnectionStatus } from '../channels/http/connections.js';
import type { ChannelStatus } from '../channels/status.js';
import type { Db } from '../store/db.js';
import { getHeapStatistics } from 'node:v8';
import { diskSpace, homeOf } from '../store/disk.js';
import { outboundBacklog } from '../store/queue.js';
import { getState } from '../store/state.js';
import { sql } from '../store/statements.js';
import { pinclawVersion } from '../version.js';
import { counterSeries, type CounterName } from '../counters.js';
import { labels, line } from '../prometheus.js';

/** The process's counters (src/counters.ts), as `pinclaw_<name>_total`. */
const COUNTERS: [CounterName, string][] = [
  ['messages_received', 'messages committed to the queue since the gateway started, per channel'],
  ['turns', 'agent turns finished since the gateway started, by outcome (ok, failed)'],
  ['provider_calls', 'model calls since the gateway started (retries and fallbacks inside a call are not extra calls)'],
  ['provider_errors', 'failed model attempts: retried (the provider tried again) or failed (the call gave up), aborted'],
  ['tool_calls', 'tool calls through the registry, by tool and outcome (ok, error, denied)'],
  ['deliveries', 'replies and notices handed to a channel (sent) or refused by it (failed)'],
  ['triggers', 'messages the hardware, camera, scheduler or MQTT triggers queued'],
  ['fleet_refused', 'remote tool calls this node refused before any tool ran, by code (bad-signature, replay, ...); beyond 10 a minute they are counted here and summed up in one audit row'],
  ['maixcam_refused', 'connections to the MaixCam listener closed on arrival (full: the connection cap reached by cameras) or to make room (evicted: the oldest one that had not said hello)'],
];

export interface LiveFigures {
  channels?: readonly ChannelStatus[];
  /** what of the hardware is failing now (src/hardware/health.ts) */
  hardware?: readonly { component: string; reason: string }[];
  guard?: GuardStatus;
  connections?: ConnectionStatus;
  /**
   * Lines of a part loaded on demand, written by that part with `line` and `labels` (the MCP
   * client's, src/mcp/client/metrics.ts): its code stays out of the bundle of a gateway without it.
   */
  extra?: (l: typeof line, ls: typeof labels) => string[];
}

export function metricsText(db: Db, startedAt: number, live: LiveFigures = {}): string {
  const channels = live.channels ?? [];
  const guard = live.guard;
  const conns = live.connections;
  const backlog = outboundBacklog(db);
  const mem = process.memoryUsage();
  const inbound = sql(db, `select state, count(*) as n from inbound group by state`).all() as { state: string; n: number }[];
  const outbound = sql(db, `select state, kind, count(*) as n from outbound group by state, kind`).all() as { state: string; kind: string; n: number }[];
  const byState = new Map(inbound.map((r) => [r.state, r.n]));
  // The file system of the home (the database's directory): a full one stops every turn.
  const home = homeOf(db.name);
  const disk = diskSpace(home);
  return [
    line('pinclaw_info', 'pinclaw version', 'gauge', [[labels({ version: pinclawVersion(), node: process.version, arch: process.arch }), 1]]),
    line('pinclaw_uptime_seconds', 'seconds since the gateway started', 'gauge', [['', Math.round((Date.now() - startedAt) / 1000)]]),
    line('pinclaw_resident_memory_bytes', 'resident set size', 'gauge', [['', mem.rss]]),
    line('pinclaw_heap_used_bytes', 'V8 heap in use', 'gauge', [['', mem.heapUsed]]),
    line('pinclaw_heap_limit_bytes', 'V8 heap limit (NODE_OPTIONS --max-old-space-size, set by the service unit from the memory budget)', 'gauge', [['', getHeapStatistics().heap_size_limit]]),
    line('pinclaw_gateway_starts_total', 'gateway starts recorded in this home (restarts by systemd included)', 'counter', [['', Number(getState(db, 'gateway.starts') ?? 0)]]),
    ...(disk ? [
      line('pinclaw_disk_free_bytes', 'bytes free for pinclaw on the file system of its home (the database, the workspace); turns cannot be saved when it reaches 0', 'gauge', [[labels({ path: home }), disk.freeBytes]]),
      line('pinclaw_disk_size_bytes', 'size of the file system of the pinclaw home', 'gauge', [[labels({ path: home }), disk.totalBytes]]),
    ] : []),
    line('pinclaw_inbound_messages', 'inbound messages by state', 'gauge', ['pending', 'processing', 'done', 'failed'].map((s) => [labels({ state: s }), byState.get(s) ?? 0])),
    line('pinclaw_outbound_messages', 'replies and notices by state', 'gauge', outbound.map((r) => [labels({ state: r.state, kind: r.kind }), r.n])),
    line('pinclaw_channel_up', 'whether the channel is connected (1) or not (0)', 'gauge', channels.map((c) => [labels({ channel: c.channel }), c.state === 'up' ? 1 : 0])),
    line('pinclaw_channel_undelivered', 'replies recorded but not yet delivered, per channel', 'gauge', backlog.map((b) => [labels({ channel: b.channel }), b.pending])),
    line('pinclaw_channel_oldest_undelivered_seconds', 'age of the oldest undelivered reply, per channel', 'gauge', backlog.map((b) => [labels({ channel: b.channel }), Math.round(b.oldestAgeMs / 1000)])),
    line('pinclaw_channel_failed_deliveries', 'failed delivery attempts of the undelivered replies, per channel', 'gauge', backlog.map((b) => [labels({ channel: b.channel }), b.failedAttempts])),
    line('pinclaw_hardware_degraded', 'a hardware trigger, sensor or board failing now (1), by component and reason; no sample when all work', 'gauge', (live.hardware ?? []).map((p) => [labels({ component: p.component, reason: p.reason }), 1])),
    ...(live.extra?.(line, labels) ?? []),
    ...COUNTERS.map(([name, help]) => line(`pinclaw_${name}_total`, help, 'counter', counterSeries(name).map((s) => [labels(s.labels), s.value]))),
    ...(guard ? [
      line('pinclaw_gateway_refused_requests', 'requests the gateway refused since it started: over the rate, from a client locked out after wrong tokens, or a token attempt while they are paused for everyone (global)', 'counter', (['rate', 'lockout', 'global'] as const).map((r) => [labels({ reason: r }), guard.refused[r]])),
      line('pinclaw_gateway_locked_clients', 'clients locked out now after wrong tokens', 'gauge', [['', guard.lockedClients]]),
      line('pinclaw_gateway_token_attempts_paused_seconds', 'seconds left of the pause on token attempts after too many wrong tokens from all clients together (0: none)', 'gauge', [['', guard.globalLockedSeconds]]),
    ] : []),
    ...(conns ? [
      line('pinclaw_gateway_connections', 'connections open now', 'gauge', [['', conns.open]]),
      line('pinclaw_gateway_connections_max', 'the cap on open connections (gateway.connections.max, or derived from the open-files limit)', 'gauge', [['', conns.max]]),
      line('pinclaw_gateway_refused_connections_total', 'connections closed on arrival since the gateway started: the gateway full, or the client over its share (address)', 'counter', (['full', 'address'] as const).map((r) => [labels({ reason: r }), conns.refused[r]])),
      line('pinclaw_gateway_closed_connections_total', 'connections the gateway closed since it started: idle ones to make room for a client holding fewer (evicted), silent ones (timeout)', 'counter', [[labels({ reason: 'evicted' }), conns.evicted], [labels({ reason: 'timeout' }), conns.timedOut]]),
    ] : []),
  ].join('\n') + '\n';
}
