// Firing one due job: how many of its times have passed, what kind of run that makes (the missed-run
// policy, docs/operations.md#scheduler), and the run recorded with its message in one transaction.
// Part of the lazy chunk 'scheduler' (with croner): the gateway's loop (scheduler.ts) loads it the
// first time a job is due.
import { count } from '../counters.js';
import { errorMessage } from '../errors.js';
import type { Db } from '../store/db.js';
import type { NewInbound } from '../store/queue.js';
import { CRON_SENDER, type CronJob, type RunKind } from './jobs.js';
import { recordRun, setJobState, unfinishedRun, type FireResult } from './runs.js';
import { dueSlots } from './schedule.js';
import type { Logger } from '../log.js';
import { describeSchedule } from './view.js';

export interface FireContext {
  db: Db;
  submit(msg: NewInbound): { id: number };
  channels: readonly string[];
  log: Logger;
  graceMs: number;
}

export interface Fired {
  jobId: number;
  kind: RunKind;
  /** scheduled times folded into this run besides the one it is recorded for */
  missed: number;
  result: FireResult | { status: 'failed'; error: string };
}

const iso = (t: number) => new Date(t).toISOString();

/** The message a run submits: which job it is, then the job's own words. */
export function runText(job: Pick<CronJob, 'id' | 'kind' | 'expr' | 'tz' | 'at_ms' | 'message'>, kind: RunKind, missed: number): string {
  const note = kind === 'missed' ? `, run late: ${missed ? `${missed + 1} scheduled times` : 'its time'} passed while pinclaw was not running`
    : kind === 'late' ? ', run late: its time passed while pinclaw was not running'
    : kind === 'manual' ? ', run by hand now' : '';
  return `[scheduled job #${job.id}, ${describeSchedule(job)}${note}]\n${job.message}`;
}

/**
 * Fires a job whose next run has come. Several passed times (the gateway was down, the clock jumped
 * forward) or one passed by more than graceMs make one run, kind 'missed' (a one-shot: 'late');
 * the job then goes on from the first time after now. Returns undefined when the job's schedule
 * cannot be computed; it is then paused.
 */
export function fireJob(ctx: FireContext, job: CronJob, now: number): Fired | undefined {
  const { db, log } = ctx;
  const from = job.next_run_at!;
  let due;
  try {
    due = dueSlots(job, from, now);
  } catch (err) {
    // A row changed by hand? Paused, so it does not fail at every pass; `pinclaw cron list` shows
    // it, and removing and adding it again mends it.
    log.error(`cron job ${job.id}: its schedule cannot be computed (${errorMessage(err)}); the job is paused`);
    setJobState(db, job.id, 'paused', null, now);
    return undefined;
  }
  const missed = due.count - 1;
  let kind: RunKind = job.kind === 'at'
    ? now - due.latest > ctx.graceMs ? 'late' : 'scheduled'
    : missed > 0 || now - due.latest > ctx.graceMs ? 'missed' : 'scheduled';
  if (kind === 'missed') {
    log.warn(`cron job ${job.id}: ${missed ? `${due.count}${due.capped ? '+' : ''} scheduled times passed` : `its time ${iso(due.latest)} passed`} since ${iso(from)} (the gateway was down, or the clock jumped); running once now, then from ${due.next === null ? 'nothing' : iso(due.next)} on`);
  } else if (kind === 'late') {
    log.warn(`cron job ${job.id}: its time ${iso(due.latest)} passed while the gateway was not running; running it now`);
  }
  let error: string | undefined;
  if (!ctx.channels.includes(job.channel)) {
    error = `channel ${job.channel} does not run in this gateway (channels: ${ctx.channels.join(', ')})`;
    log.warn(`cron job ${job.id}: not run: ${error}`);
  } else if (unfinishedRun(db, job.id)) {
    // A job must not pile turns up behind a slow or failing provider: one waits at a time.
    kind = 'skipped';
    error = 'the previous run was still waiting for its answer';
    log.info(`cron job ${job.id}: skipped the run for ${iso(due.latest)}: ${error}`);
  }
  const firing = { jobId: job.id, expectedNextRunAt: from, scheduledAt: due.latest, firedAt: now, kind, missed, nextRunAt: due.next, error };
  try {
    const result = recordRun(db, firing, (runId) => ctx.submit({
      sessionKey: job.session_key, channel: job.channel, chatId: job.chat_id, sender: CRON_SENDER,
      text: runText(job, kind, missed),
      meta: { cron: { jobId: job.id, runId, scheduledAt: due.latest, kind } },
    }).id);
    if (result.status === 'fired' && result.inboundId !== null) count('triggers', { source: 'cron' });
    if (result.status === 'duplicate') log.info(`cron job ${job.id}: the run for ${iso(due.latest)} is already recorded; not firing it again`);
    return { jobId: job.id, kind, missed, result };
  } catch (err) {
    // The run could not be queued (the message was refused, the database was busy): recorded as an
    // error run, so the job moves on instead of failing again at every pass.
    const reason = errorMessage(err);
    log.error(`cron job ${job.id}: the run for ${iso(due.latest)} could not be queued: ${reason}`);
    try {
      recordRun(db, { ...firing, error: reason }, () => null);
    } catch (again) {
      log.error(`cron job ${job.id}: recording the failed run failed too: ${errorMessage(again)}`);
    }
    return { jobId: job.id, kind, missed, result: { status: 'failed', error: reason } };
  }
}
