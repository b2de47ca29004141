// Jobs and runs as `pinclaw cron list|runs` and the cron_list tool show them: one JSON shape, and
// one line of text per job.
import { CRON_CHANNEL, type CronJob, type RunView } from './jobs.js';

/** Reply excerpts in lists: enough to recognise the answer, not pages of it. */
const EXCERPT = 120;

const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

export function excerpt(text: string | null, max = EXCERPT): string | null {
  if (text === null) return null;
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function describeSchedule(job: Pick<CronJob, 'kind' | 'expr' | 'tz' | 'at_ms'>): string {
  if (job.kind === 'cron') return `cron '${job.expr}' (${job.tz})`;
  if (job.kind === 'every') return `every ${job.expr}`;
  return `at ${iso(job.at_ms)}`;
}

/** Where the job's replies go, as --deliver takes it; null: logged by the gateway. */
export function deliverOf(job: Pick<CronJob, 'channel' | 'chat_id'>): string | null {
  return job.channel === CRON_CHANNEL ? null : `${job.channel}:${job.chat_id}`;
}

export function runJson(r: RunView) {
  return {
    id: r.id,
    scheduledAt: iso(r.scheduled_at),
    firedAt: iso(r.fired_at),
    kind: r.kind,
    missed: r.missed,
    inboundId: r.inbound_id,
    outcome: r.outcome,
    reply: excerpt(r.reply),
  };
}

export function jobJson(job: CronJob, last: RunView | undefined) {
  return {
    id: job.id,
    schedule: describeSchedule(job),
    kind: job.kind,
    expr: job.expr,
    tz: job.tz,
    state: job.state,
    nextRun: iso(job.next_run_at),
    lastRun: last ? runJson(last) : null,
    message: job.message,
    session: job.session_key,
    deliver: deliverOf(job),
    createdBy: job.created_by,
  };
}

export function runLine(r: RunView): string {
  const missed = r.missed ? `, ${r.missed} more missed` : '';
  return `${iso(r.fired_at)} ${r.kind}${missed} (for ${iso(r.scheduled_at)}): ${r.outcome}${r.reply ? ` — ${excerpt(r.reply)}` : ''}`;
}

export function jobLine(job: CronJob, last: RunView | undefined): string {
  const next = job.state === 'active' ? `next ${iso(job.next_run_at)}` : job.state;
  const lastText = last ? `last ${iso(last.fired_at)} ${last.kind}: ${last.outcome}` : 'never run';
  return `${job.id}  ${describeSchedule(job)}  ${next}  ${lastText}  → ${deliverOf(job) ?? 'log'}  [${job.session_key}]  ${excerpt(job.message, 60)}`;
}
