// Changing jobs and keeping their run log (cron_runs): in the bundle part of the lazy chunk
// 'scheduler', loaded when a job is added, listed or changed, or falls due (src/scheduler/jobs.ts
// holds what an idle gateway reads).
//
// Exactly once: a run is the row (job_id, scheduled_at), unique, written in the same transaction as
// the inbound message it submits and the job's next run. Whatever the clock does, a scheduled time
// already recorded is never submitted again, and a crash leaves either all three or none.
import type { Db } from '../store/db.js';
import { sql } from '../store/statements.js';
import { CRON_CHANNEL, getJob, RUNS_KEPT, type CronJob, type CronRun, type NewJob, type RunKind, type RunOutcome, type RunView } from './jobs.js';

export function insertJob(db: Db, j: NewJob, now = Date.now()): CronJob {
  return db.transaction(() => {
    const info = sql(db,
      `insert into cron_jobs (kind, expr, tz, every_ms, at_ms, anchor_at, message, session_key, channel, chat_id, next_run_at, created_by, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, '', ?, ?, ?, ?, ?, ?)`,
    ).run(j.kind, j.expr, j.tz, j.everyMs, j.atMs, j.anchorAt, j.message, j.target?.channel ?? CRON_CHANNEL, j.target?.chatId ?? '', j.nextRunAt, j.createdBy, now, now);
    const id = Number(info.lastInsertRowid);
    // Defaults that name the job's own id, known only now.
    sql(db, `update cron_jobs set session_key = ?, chat_id = case when chat_id = '' then ? else chat_id end where id = ?`)
      .run(j.sessionKey ?? `cron:${id}`, String(id), id);
    return getJob(db, id)!;
  })();
}

export function listJobs(db: Db): CronJob[] {
  return sql(db, 'select * from cron_jobs order by id').all() as CronJob[];
}

/** Deletes the job and its run log; false when there was no such job. */
export function removeJob(db: Db, id: number): boolean {
  return db.transaction(() => {
    sql(db, 'delete from cron_runs where job_id = ?').run(id);
    return sql(db, 'delete from cron_jobs where id = ?').run(id).changes > 0;
  })();
}

/** Pauses (next run cleared) or resumes (with the next run the caller computed from now). */
export function setJobState(db: Db, id: number, state: 'active' | 'paused', nextRunAt: number | null, now = Date.now()): void {
  sql(db, 'update cron_jobs set state = ?, next_run_at = ?, updated_at = ? where id = ?').run(state, nextRunAt, now, id);
}

/** When the next active job is due (ms epoch), or null when none is. */
export interface Firing {
  jobId: number;
  /**
   * The job's next_run_at this firing was decided from. When it has changed since (another process
   * fired the job, or it was paused or edited) nothing is recorded. Ignored for manual runs.
   */
  expectedNextRunAt: number | null;
  scheduledAt: number;
  firedAt: number;
  kind: RunKind;
  missed: number;
  /** the job's next_run_at after this run; null: done (a one-shot). Ignored for manual runs. */
  nextRunAt: number | null;
  /** recorded instead of submitting (the run cannot be delivered here) */
  error?: string;
}

export type FireResult =
  | { status: 'fired'; runId: number; inboundId: number | null }
  /** this scheduled time was recorded before: nothing submitted, the job moved on */
  | { status: 'duplicate' }
  /** the job changed under the decision: nothing recorded */
  | { status: 'stale' };

/**
 * Records one run in one transaction: the run row (unique per job and scheduled time), the inbound
 * message `submit` commits (its id, or null when it submits nothing), the job's next run. A
 * throwing `submit` rolls all of it back.
 */
export function recordRun(db: Db, f: Firing, submit: (runId: number) => number | null): FireResult {
  return db.transaction((): FireResult => {
    const manual = f.kind === 'manual';
    const job = getJob(db, f.jobId);
    if (!job) return { status: 'stale' };
    if (!manual && (job.state !== 'active' || job.next_run_at !== f.expectedNextRunAt)) return { status: 'stale' };
    const moveOn = () => {
      if (manual) return;
      sql(db, `update cron_jobs set next_run_at = ?, state = ?, updated_at = ? where id = ?`)
        .run(f.nextRunAt, f.nextRunAt === null ? 'done' : job.state, f.firedAt, f.jobId);
    };
    const info = sql(db,
      `insert into cron_runs (job_id, scheduled_at, fired_at, kind, missed, error) values (?, ?, ?, ?, ?, ?)
       on conflict (job_id, scheduled_at) do nothing`,
    ).run(f.jobId, f.scheduledAt, f.firedAt, f.kind, f.missed, f.error ?? null);
    if (info.changes === 0) {
      moveOn();
      return { status: 'duplicate' };
    }
    const runId = Number(info.lastInsertRowid);
    const inboundId = f.error !== undefined || f.kind === 'skipped' ? null : submit(runId);
    if (inboundId !== null) sql(db, 'update cron_runs set inbound_id = ? where id = ?').run(inboundId, runId);
    moveOn();
    sql(db,
      `delete from cron_runs where job_id = ? and id <= (select id from cron_runs where job_id = ? order by id desc limit 1 offset ?)`,
    ).run(f.jobId, f.jobId, RUNS_KEPT);
    return { status: 'fired', runId, inboundId };
  }).immediate();
}

interface RunJoin extends CronRun {
  inbound_state: string | null;
  inbound_attempts: number | null;
  inbound_error: string | null;
  reply_text: string | null;
  reply_kind: 'reply' | 'notice' | null;
  reply_state: 'pending' | 'sent' | null;
}

const RUN_VIEW = `select r.*, i.state as inbound_state, i.attempts as inbound_attempts, i.last_error as inbound_error,
    o.text as reply_text, o.kind as reply_kind, o.state as reply_state
  from cron_runs r
  left join inbound i on i.id = r.inbound_id
  left join outbound o on o.id = (select max(id) from outbound where inbound_id = coalesce(i.burst_id, i.id))`;

function view(r: RunJoin): RunView {
  const { inbound_state, inbound_attempts, inbound_error, reply_text, reply_kind, reply_state, ...run } = r;
  const out = (outcome: RunOutcome, reply: string | null): RunView => ({ ...run, outcome, reply });
  if (run.kind === 'skipped') return out('skipped', run.error);
  if (run.error !== null || inbound_state === null) return out('error', run.error ?? 'its message is no longer in the queue');
  if (inbound_state === 'failed') return out('failed', reply_text ?? inbound_error);
  if (inbound_state === 'pending') return out((inbound_attempts ?? 0) > 0 ? 'retrying' : 'pending', inbound_error);
  if (inbound_state === 'processing') return out('running', null);
  if (reply_kind === 'reply') return out(reply_state === 'sent' ? 'ok' : 'undelivered', reply_text);
  return out('failed', reply_text ?? inbound_error);
}

/** The newest runs of a job first. */
export function runsOf(db: Db, jobId: number, limit = 20): RunView[] {
  return (sql(db, `${RUN_VIEW} where r.job_id = ? order by r.id desc limit ?`).all(jobId, limit) as RunJoin[]).map(view);
}

export function lastRun(db: Db, jobId: number): RunView | undefined {
  return runsOf(db, jobId, 1)[0];
}

export function runById(db: Db, runId: number): RunView | undefined {
  const r = sql(db, `${RUN_VIEW} where r.id = ?`).get(runId) as RunJoin | undefined;
  return r && view(r);
}

/** Whether the job's newest run is still waiting for its answer (its next one is then skipped). */
export function unfinishedRun(db: Db, jobId: number): boolean {
  const r = sql(db,
    `select i.state from cron_runs r join inbound i on i.id = r.inbound_id where r.job_id = ? order by r.id desc limit 1`,
  ).get(jobId) as { state: string } | undefined;
  return r !== undefined && (r.state === 'pending' || r.state === 'processing');
}
