// Prometheus text exposition of the runtime: process figures and the queue, read when scraped.
import type { Db } from '../store/db.js';
import { sql } from '../store/statements.js';
import { pinclawVersion } from '../version.js';

function line(name: string, help: string, type: 'gauge' | 'counter', samples: [labels: string, value: number][]): string {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...samples.map(([l, v]) => `${name}${l} ${v}`)].join('\n');
}

export function metricsText(db: Db, startedAt: number): string {
  const mem = process.memoryUsage();
  const inbound = sql(db, `select state, count(*) as n from inbound group by state`).all() as { state: string; n: number }[];
  const outbound = sql(db, `select state, kind, count(*) as n from outbound group by state, kind`).all() as { state: string; kind: string; n: number }[];
  const byState = new Map(inbound.map((r) => [r.state, r.n]));
  return [
    line('pinclaw_info', 'pinclaw version', 'gauge', [[`{version="${pinclawVersion()}",node="${process.version}",arch="${process.arch}"}`, 1]]),
    line('pinclaw_uptime_seconds', 'seconds since the gateway started', 'gauge', [['', Math.round((Date.now() - startedAt) / 1000)]]),
    line('pinclaw_resident_memory_bytes', 'resident set size', 'gauge', [['', mem.rss]]),
    line('pinclaw_heap_used_bytes', 'V8 heap in use', 'gauge', [['', mem.heapUsed]]),
    line('pinclaw_inbound_messages', 'inbound messages by state', 'gauge', ['pending', 'processing', 'done', 'failed'].map((s) => [`{state="${s}"}`, byState.get(s) ?? 0])),
    line('pinclaw_outbound_messages', 'replies and notices by state', 'gauge', outbound.map((r) => [`{state="${r.state}",kind="${r.kind}"}`, r.n])),
  ].join('\n') + '\n';
}
