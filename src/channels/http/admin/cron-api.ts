// The Cron view: the jobs with their last run, pause and resume, run now, a job's run history, and
// a new job. The scheduler's own functions do the work (the lazy chunk 'scheduler', loaded here on
// first use, as the cron tools load it), so a job changed here is changed as `pinclaw cron` and
// the model's cron tools change it; a bad schedule is refused in their words.
import type { Db } from '../../../store/db.js';
import { Refusal } from './refusal.js';
import type { AdminSources } from './sources.js';

const actions = () => import('../../../scheduler/cron-actions.js');
/**
 * The scheduler's refusals of bad input (a schedule that does not parse, no such job) are 400s.
 * Known by name: its class lives in the scheduler's chunk, which this one must not import statically.
 */
async function asInput<T>(run: () => Promise<T> | T): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof Error && err.name === 'JobInputError') throw new Refusal(400, `${String((err as Error & { field?: unknown }).field)}: ${err.message}`);
    throw err;
  }
}

export async function cronJobs(db: Db) {
  return { jobs: (await actions()).cronJobsJson({ db }) };
}

export async function cronRuns(db: Db, id: number) {
  const a = await actions();
  return { runs: await asInput(() => a.cronRunsJson({ db }, id)) };
}

export async function cronAct(db: Db, s: AdminSources, id: number, act: string) {
  const a = await actions();
  const d = { db, config: s.config, now: Date.now() };
  if (act === 'pause') return { message: await asInput(() => a.cronPause(d, id)) };
  if (act === 'resume') return { message: await asInput(() => a.cronResume(d, id)) };
  if (act === 'run') return { message: await asInput(() => a.cronRunNow(d, id, { channels: s.channels, submit: s.submit })) };
  throw new Refusal(404, `no cron action '${act}' (pause, resume, run)`);
}

/** POST /api/cron {"cron":"0 7 * * *","message":"..."}: a new job, checked as cron_add checks it. */
export async function cronCreate(db: Db, s: AdminSources, body: unknown) {
  const b = (body ?? {}) as Record<string, unknown>;
  const text = (k: string) => (typeof b[k] === 'string' && (b[k] as string).trim() ? (b[k] as string).trim() : undefined);
  const cron = text('cron');
  const message = text('message');
  if (!cron) throw new Refusal(400, 'cron: expected a cron expression such as "0 7 * * *"; no job was added');
  if (!message) throw new Refusal(400, 'message: expected what the job should ask; no job was added');
  const a = await actions();
  const tz = text('tz');
  return { message: await asInput(() => a.cronAdd({ db, config: s.config, now: Date.now() }, { cron, message, ...(tz ? { tz } : {}) }, { sessionKey: 'dashboard', channel: 'http', chatId: 'dashboard', caller: 'dashboard' })) };
}
