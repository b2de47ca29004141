// The scheduler's jobs (cron_jobs) as the gateway's loop reads them. A job stores the time of its
// next run, so an idle gateway finds what is due with one indexed query and computes nothing. What
// changes jobs and records runs is in runs.ts, part of the lazy chunk 'scheduler' with croner:
// loaded when a job is added or changed, or falls due.
import type { Db } from '../store/db.js';
import { sql } from '../store/statements.js';

export type JobKind = 'cron' | 'every' | 'at';
export type JobState = 'active' | 'paused' | 'done';
/**
 * scheduled: on time; missed: the times missed while the gateway was down (or the clock jumped
 * forward), folded into one run; late: a one-shot whose time passed while the gateway was down;
 * manual: `pinclaw cron run`; skipped: not submitted, the previous run was still unanswered.
 */
export type RunKind = 'scheduled' | 'missed' | 'late' | 'manual' | 'skipped';

/** The channel that logs the replies of jobs without --deliver (src/scheduler/cron-channel.ts). */
export const CRON_CHANNEL = 'cron';
/** The sender of every message a job submits. */
export const CRON_SENDER = 'cron';
/** Runs kept per job: the log answers "did it run, what came of it", not a full history. */
export const RUNS_KEPT = 100;

export interface CronJob {
  id: number;
  kind: JobKind;
  /** the cron expression, or the --every / --at text as given */
  expr: string;
  /** IANA zone of a cron expression and of an --at time without offset */
  tz: string | null;
  every_ms: number | null;
  at_ms: number | null;
  /** --every counts from here (when the job was added) */
  anchor_at: number;
  message: string;
  session_key: string;
  /** where replies go: 'cron' (logged) or the --deliver channel */
  channel: string;
  chat_id: string;
  state: JobState;
  /** ms epoch; null when paused or done */
  next_run_at: number | null;
  created_by: string;
  created_at: number;
  updated_at: number;
}

export interface CronRun {
  id: number;
  job_id: number;
  scheduled_at: number;
  fired_at: number;
  kind: RunKind;
  /** scheduled times skipped and folded into this run (kind missed) */
  missed: number;
  inbound_id: number | null;
  /** why nothing was submitted (a channel that does not run here, a refused message) */
  error: string | null;
}

export type RunOutcome = 'pending' | 'running' | 'retrying' | 'ok' | 'undelivered' | 'failed' | 'error' | 'skipped';

/** A run with what became of it, read from its inbound row and the reply recorded for it. */
export interface RunView extends CronRun {
  outcome: RunOutcome;
  /** the reply (or the failure notice), or the error */
  reply: string | null;
}

export interface NewJob {
  kind: JobKind;
  expr: string;
  tz: string | null;
  everyMs: number | null;
  atMs: number | null;
  anchorAt: number;
  message: string;
  /** default: `cron:<id>` */
  sessionKey?: string;
  /** default: the cron channel, chat `<id>` */
  target?: { channel: string; chatId: string };
  nextRunAt: number;
  createdBy: string;
}

// In-process notification: a job added by a tool in the gateway is picked up at once, not at the
// next poll (which is what notices the CLI's changes, made in another process).
const listeners = new Set<() => void>();
export function onJobsChanged(fn: () => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}
export function jobsChanged(): void {
  for (const fn of listeners) fn();
}

export function getJob(db: Db, id: number): CronJob | undefined {
  return sql(db, 'select * from cron_jobs where id = ?').get(id) as CronJob | undefined;
}

export function nextDueAt(db: Db): number | null {
  return (sql(db, `select min(next_run_at) as t from cron_jobs where state = 'active'`).get() as { t: number | null }).t;
}

export function dueJobs(db: Db, now: number): CronJob[] {
  return sql(db, `select * from cron_jobs where state = 'active' and next_run_at <= ? order by next_run_at, id`).all(now) as CronJob[];
}

/** Active jobs: the gateway says at start how many it will run. */
export function activeJobCount(db: Db): number {
  return (sql(db, `select count(*) as n from cron_jobs where state = 'active'`).get() as { n: number }).n;
}
