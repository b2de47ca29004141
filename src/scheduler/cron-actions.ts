// What the cron tools do (src/scheduler/tools.ts declares them): in the bundle part of the lazy chunk
// 'scheduler', loaded by the first call of one of them, so a runtime that offers the tools but never
// schedules anything does not hold this code.
import type { PinclawConfig } from '../config/schema.js';
import type { Db } from '../store/db.js';
import type { ToolContext } from '../tools/types.js';
import { addJob, JobInputError, pauseJob, resumeJob, type JobInput } from './job-input.js';
import type { NewInbound } from '../store/queue.js';
import { runText } from './fire.js';
import { CRON_SENDER, getJob, jobsChanged, type CronJob } from './jobs.js';
import { lastRun, listJobs, recordRun, removeJob, runsOf, unfinishedRun } from './runs.js';
import { deliverableChannels } from './targets.js';
import { deliverOf, describeSchedule, excerpt, jobJson, runJson } from './view.js';

export interface CronActionDeps {
  db: Db;
  config: PinclawConfig;
  now: number;
}

const iso = (t: number | null) => (t === null ? 'none' : new Date(t).toISOString());

function describe(db: Db, job: CronJob): string {
  const last = lastRun(db, job.id);
  const lastText = last ? `last run ${iso(last.fired_at)} (${last.kind}): ${last.outcome}${last.reply ? ` — ${excerpt(last.reply)}` : ''}` : 'never run';
  const state = job.state === 'active' ? `next run ${iso(job.next_run_at)}` : job.state;
  return `#${job.id} ${describeSchedule(job)}; ${state}; ${lastText}; replies to ${deliverOf(job) ?? 'the log'} in session ${job.session_key}; message: ${excerpt(job.message, 300)}`;
}

function missing(id: number): never {
  throw new JobInputError('schedule', `no job #${id}; cron_list shows the jobs`);
}

/** cron_add; throws JobInputError for bad input. */
export async function cronAdd(d: CronActionDeps, input: JobInput, ctx: ToolContext): Promise<string> {
  // A job started in a chat answers there, in that chat's session, unless it says otherwise.
  const own = deliverableChannels(d.config).includes(ctx.channel) ? { channel: ctx.channel, chatId: ctx.chatId, sessionKey: ctx.sessionKey } : undefined;
  const job = await addJob(d.db, input, { config: d.config, now: d.now, createdBy: ctx.sessionKey, name: (f) => f, defaultTarget: own });
  return `Added job #${job.id}: ${describeSchedule(job)}; first run ${iso(job.next_run_at)}; answers go to ${deliverOf(job) ?? 'the log'} (session ${job.session_key}).`;
}

export function cronList(d: CronActionDeps): string {
  const jobs = listJobs(d.db);
  return jobs.length ? jobs.map((j) => describe(d.db, j)).join('\n') : 'No scheduled jobs.';
}

export function cronRemove(d: CronActionDeps, id: number): string {
  const job = getJob(d.db, id) ?? missing(id);
  removeJob(d.db, id);
  jobsChanged();
  return `Removed job #${id} (${describeSchedule(job)}).`;
}

export function cronPause(d: CronActionDeps, id: number): string {
  const job = pauseJob(d.db, id, d.now) ?? missing(id);
  return `Job #${id} is ${job.state}.`;
}

export async function cronResume(d: CronActionDeps, id: number): Promise<string> {
  const job = (await resumeJob(d.db, id, d.now)) ?? missing(id);
  return `Job #${id} is ${job.state}; next run ${iso(job.next_run_at)}.`;
}

// ---- the dashboard's Cron view (src/channels/http/admin/cron-api.ts) ----------------------------

/** Every job with its last run, as `pinclaw cron list --json` shows them. */
export function cronJobsJson(d: Pick<CronActionDeps, 'db'>) {
  return listJobs(d.db).map((j) => jobJson(j, lastRun(d.db, j.id)));
}

/** A job's last runs, newest first, as `pinclaw cron runs --json` shows them. */
export function cronRunsJson(d: Pick<CronActionDeps, 'db'>, id: number, limit = 20) {
  if (!getJob(d.db, id)) missing(id);
  return runsOf(d.db, id, limit).map(runJson);
}

export interface RunNowDeps {
  /** the channels the gateway runs: the job's answer goes to its own channel, which must be one */
  channels: readonly string[];
  submit(msg: NewInbound): { id: number };
}

/**
 * A job run by hand in the gateway: a 'manual' run in the run log and its message queued for the
 * conductor, answered on the job's own channel like a scheduled run. Its schedule does not move.
 */
export function cronRunNow(d: CronActionDeps, id: number, r: RunNowDeps): string {
  const job = getJob(d.db, id) ?? missing(id);
  if (!r.channels.includes(job.channel)) throw new JobInputError('deliver', `job #${id} answers on channel ${job.channel}, which does not run in this gateway (channels: ${r.channels.join(', ')}); not run`);
  if (unfinishedRun(d.db, id)) throw new JobInputError('schedule', `job #${id} is still waiting for the answer of its previous run; not run again`);
  const now = d.now;
  const fired = recordRun(d.db, { jobId: id, expectedNextRunAt: null, scheduledAt: now, firedAt: now, kind: 'manual', missed: 0, nextRunAt: null }, (runId) =>
    r.submit({ sessionKey: job.session_key, channel: job.channel, chatId: job.chat_id, sender: CRON_SENDER, text: runText(job, 'manual', 0), meta: { cron: { jobId: id, runId, scheduledAt: now, kind: 'manual' } } }).id);
  if (fired.status !== 'fired') throw new JobInputError('schedule', `job #${id} could not be run now (${fired.status}); try again`);
  return `Job #${id} runs now (run ${fired.runId}); the answer goes to ${deliverOf(job) ?? 'the log'}.`;
}
