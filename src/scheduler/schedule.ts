// Schedules as times: parsing a cron expression (croner), an --every duration or an --at time, and
// the next run after a moment. In the bundle this module and croner are the lazy chunk 'scheduler':
// loaded when a job is added, or when one is due and its following time must be computed; a gateway
// whose jobs are not due (or that has none) never evaluates it (see src/lazy-chunk.ts).
import { Cron } from 'croner';
import { DURATION_FORMS, formatDuration, parseDuration } from './duration.js';
import type { CronJob, JobKind } from './jobs.js';

export type ScheduleField = 'cron' | 'every' | 'at';

/** Bad schedule input, naming the field; the CLI shows it as --field, a tool as field. */
export class ScheduleInputError extends Error {
  constructor(readonly field: ScheduleField, message: string) {
    super(message);
    this.name = 'ScheduleInputError';
  }
}

export interface ScheduleSpec {
  kind: JobKind;
  expr: string;
  /** null for --every, which does not depend on a zone */
  tz: string | null;
  everyMs: number | null;
  atMs: number | null;
  anchorAt: number;
  /** the first run, ms epoch */
  first: number;
}

export type Timing = Pick<CronJob, 'kind' | 'expr' | 'tz' | 'every_ms' | 'at_ms' | 'anchor_at'>;

/** The shortest --every: a job submits a turn per run, and a turn takes longer than this anyway. */
export const MIN_EVERY_MS = 1000;

// Parsed patterns by zone and expression: a due job is re-computed after every run.
const patterns = new Map<string, Cron>();
function pattern(expr: string, tz: string | null): Cron {
  const key = `${tz ?? ''}\n${expr}`;
  let c = patterns.get(key);
  if (!c) {
    // Without a function croner schedules nothing: this object only answers nextRun().
    c = new Cron(expr, tz ? { timezone: tz } : {});
    if (patterns.size >= 64) patterns.clear();
    patterns.set(key, c);
  }
  return c;
}

/** croner's message without its class prefix ("CronPattern: ..."). */
function reason(err: unknown): string {
  const m = err instanceof Error ? err.message : String(err);
  return m.replace(/^Cron\w*:\s*/, '');
}

const AT_FORMS = 'an ISO date and time such as 2026-03-01T09:00 (in the job\'s time zone, or with Z or an offset such as +01:00), or a duration from now such as 20m';
const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:?\d{2})?$/i;

function parseAt(text: string, tz: string, now: number): number {
  const rel = parseDuration(text);
  if (rel !== undefined) {
    if (rel === 0) throw new ScheduleInputError('at', `'${text}' is now; give a time in the future`);
    return now + rel;
  }
  const m = ISO.exec(text.trim());
  if (!m) throw new ScheduleInputError('at', `'${text}' is not a time; expected ${AT_FORMS}`);
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map((v) => Number(v ?? 0)) as [number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  // croner (like Date) rolls 2026-02-30 over into March; a typo must not become another day.
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) {
    throw new ScheduleInputError('at', `'${text}' is not a valid date and time`);
  }
  const zone = m[7];
  if (zone) {
    const t = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6] ?? '00'}${zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone.toUpperCase()}`);
    if (!Number.isFinite(t)) throw new ScheduleInputError('at', `'${text}' is not a valid date and time`);
    return t;
  }
  // A wall-clock time in the zone: croner resolves the zone's offset on that day (and a time in a
  // DST gap to the first valid time after it).
  const local = `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6] ?? '00'}`;
  const t = new Cron(local, { timezone: tz }).nextRun(new Date(0));
  if (!t) throw new ScheduleInputError('at', `'${text}' is not a valid date and time`);
  return t.getTime();
}

/**
 * One of cron / every / at, checked and turned into a schedule starting after `now`. `tz` must be a
 * valid IANA zone (the caller checks it, to name its own flag). Throws ScheduleInputError.
 */
export function parseSchedule(input: { cron?: string; every?: string; at?: string }, tz: string, now: number): ScheduleSpec {
  if (input.cron !== undefined) {
    const expr = input.cron.trim();
    if (expr === '') throw new ScheduleInputError('cron', 'the cron expression is empty');
    let first: Date | null;
    try {
      first = pattern(expr, tz).nextRun(new Date(now));
    } catch (err) {
      throw new ScheduleInputError('cron', `'${expr}' is not a cron expression: ${reason(err)}`);
    }
    if (!first) throw new ScheduleInputError('cron', `'${expr}' never runs (no matching time from now on)`);
    return { kind: 'cron', expr, tz, everyMs: null, atMs: null, anchorAt: now, first: first.getTime() };
  }
  if (input.every !== undefined) {
    const ms = parseDuration(input.every);
    if (ms === undefined) throw new ScheduleInputError('every', `'${input.every}' is not a duration; expected ${DURATION_FORMS}`);
    if (ms < MIN_EVERY_MS) throw new ScheduleInputError('every', `'${input.every}' is shorter than the shortest interval, ${formatDuration(MIN_EVERY_MS)}`);
    return { kind: 'every', expr: input.every.trim(), tz: null, everyMs: ms, atMs: null, anchorAt: now, first: now + ms };
  }
  if (input.at !== undefined) {
    const at = parseAt(input.at, tz, now);
    if (at <= now) throw new ScheduleInputError('at', `'${input.at}' (${new Date(at).toISOString()}) is in the past`);
    return { kind: 'at', expr: input.at.trim(), tz, everyMs: null, atMs: at, anchorAt: now, first: at };
  }
  throw new ScheduleInputError('cron', 'no schedule given');
}

/** The first run strictly after `t`, or null when there is none (a one-shot that has had its time). */
export function nextAfter(job: Timing, t: number): number | null {
  if (job.kind === 'every') {
    const every = job.every_ms!;
    return job.anchor_at + (Math.floor((t - job.anchor_at) / every) + 1) * every;
  }
  if (job.kind === 'at') return job.at_ms! > t ? job.at_ms! : null;
  return pattern(job.expr, job.tz).nextRun(new Date(t))?.getTime() ?? null;
}

/** The last run at or before `t`, or null. */
function latestAtOrBefore(job: Timing, t: number): number | null {
  if (job.kind === 'every') {
    if (t < job.anchor_at + job.every_ms!) return null;
    return job.anchor_at + Math.floor((t - job.anchor_at) / job.every_ms!) * job.every_ms!;
  }
  if (job.kind === 'at') return job.at_ms! <= t ? job.at_ms! : null;
  return pattern(job.expr, job.tz).previousRuns(1, new Date(t + 1))[0]?.getTime() ?? null;
}

export interface Due {
  /** scheduled times from `from` up to `now`, at least 1; counted up to `cap` */
  count: number;
  /** more than `cap` times were due */
  capped: boolean;
  /** the last of them: the time the run is recorded for */
  latest: number;
  /** the first run after now, or null (a one-shot) */
  next: number | null;
}

/** What is due for a job whose next run `from` (<= now) has come: how many times, the last, and the next. */
export function dueSlots(job: Timing, from: number, now: number, cap = 1000): Due {
  let count = 1;
  let latest = from;
  let capped = false;
  for (let t = nextAfter(job, from); t !== null && t <= now; t = nextAfter(job, t)) {
    if (count === cap) {
      capped = true;
      latest = latestAtOrBefore(job, now) ?? latest;
      break;
    }
    count++;
    latest = t;
  }
  if (capped && job.kind === 'every') count = Math.floor((latest - from) / job.every_ms!) + 1;
  return { count, capped: capped && job.kind !== 'every', latest, next: nextAfter(job, now) };
}
