// `pinclaw audit [--since DURATION|ISO] [--tool NAME] [--limit N] [--json]`: the tool-call log, oldest
// first, the newest N rows.
import { UsageError } from '../errors.js';
import { queryAudit, type AuditRow } from '../store/audit.js';
import { openProcess } from '../setup/process.js';
import { parseCommandArgs } from './args.js';
import { auditOptions } from './options.js';
import type { CliContext } from './context.js';

const USAGE = 'pinclaw audit [--since DURATION|ISO] [--tool NAME] [--limit N] [--json]';
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const DEFAULT_LIMIT = 200;

/** "90s", "15m", "2h", "7d", "1w" before now, or an ISO 8601 time; ms since the epoch. */
export function parseSince(text: string, now: number): number {
  const d = /^(\d+)([smhdw])$/.exec(text);
  if (d) return now - Number(d[1]) * UNIT_MS[d[2]!]!;
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const t = Date.parse(text);
    if (Number.isFinite(t)) return t;
  }
  throw new UsageError(`--since: expected a duration (30s, 15m, 2h, 7d, 1w) or an ISO time (2026-01-31T12:00:00Z), got '${text}'\nusage: ${USAGE}`);
}

function view(r: AuditRow) {
  return {
    id: r.id,
    time: new Date(r.at).toISOString(),
    session: r.session_key,
    channel: r.channel,
    chat: r.chat_id,
    caller: r.caller,
    tool: r.tool,
    input: r.input,
    outcome: r.outcome,
    rule: r.rule,
    detail: r.detail,
    durationMs: r.duration_ms,
    outputBytes: r.output_bytes,
    // A physical action's device and values before and after (gpio_write, i2c_write).
    physical: r.physical === null ? null : (JSON.parse(r.physical) as unknown),
  };
}

function line(r: AuditRow): string {
  const v = view(r);
  const size = v.outcome === 'ok' || v.outcome === 'error' ? `  ${v.durationMs ?? '?'} ms  ${v.outputBytes ?? 0} B` : '';
  const why = v.outcome === 'ok' ? '' : v.outcome === 'allowed' ? '  (started; no end recorded yet)' : `  [${v.rule ?? '-'}] ${v.detail ?? ''}`;
  const physical = r.physical ? `  physical ${r.physical}` : '';
  return `${v.time}  ${v.outcome.padEnd(7)}  ${v.tool}  ${v.channel}:${v.chat}${size}  ${v.input}${why}${physical}`;
}

export async function runAudit(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, auditOptions, USAGE);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${USAGE}`);
  const since = values.since === undefined ? undefined : parseSince(values.since, Date.now());
  if (values.limit !== undefined && !/^[1-9]\d*$/.test(values.limit)) throw new UsageError(`--limit: expected a positive integer, got '${values.limit}'\nusage: ${USAGE}`);
  const limit = values.limit === undefined ? DEFAULT_LIMIT : Number(values.limit);

  const { config, db } = await openProcess(ctx);
  try {
    // One row more than shown tells whether older rows were left out.
    const rows = queryAudit(db, { since, tool: values.tool, limit: limit + 1 });
    const more = rows.length > limit;
    const shown = more ? rows.slice(1) : rows;
    if (ctx.json) ctx.out(JSON.stringify(shown.map(view), null, 2));
    else if (shown.length === 0) ctx.out('no tool calls recorded');
    else for (const r of shown) ctx.out(line(r));
    if (more) ctx.err(`(the newest ${limit} rows are shown; older ones match too: use --limit or --since)`);
    return 0;
  } finally {
    db.close();
  }
}
