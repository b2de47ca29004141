// `pinclaw cron add|list|remove|run|runs|pause|resume`: scheduled jobs, in the store the gateway's
// scheduler reads (it notices a change within its poll interval, 10 s). In the bundle this module is
// in the lazy chunk 'scheduler' with croner, which only `add` and `resume` evaluate.
//
// `run ID` is the owner trying a job out: it runs once now in this process, through the queue and a
// conductor as `pinclaw agent` does, in the job's session, and the reply is printed here; a job with
// --deliver also gets it on its channel, queued for the gateway (which serves that channel). The run
// log records it as manual.
import { loadConfig } from '../config/index.js';
import type { PinclawConfig } from '../config/schema.js';
import { ConfigError, PinclawError, UsageError } from '../errors.js';
import { ensureWritableDir } from '../fsutil.js';
import type { ChannelAdapter } from '../conductor/conductor.js';
import { openProcess, openStore, withTurns } from '../setup/process.js';
import { recordOutbound, type OutboundRow } from '../store/queue.js';
import type { ConfirmRequest } from '../tools/types.js';
import { JobInputError, pauseJob, prepareJob, resumeJob, type JobField } from '../scheduler/job-input.js';
import { CRON_CHANNEL, getJob } from '../scheduler/jobs.js';
import { insertJob, lastRun, listJobs, recordRun, removeJob, runById, runsOf } from '../scheduler/runs.js';
import { runText } from '../scheduler/fire.js';
import { jobJson, jobLine, runJson, runLine } from '../scheduler/view.js';
import { LOG_TARGET, ownerNotifyProblem } from '../scheduler/targets.js';
import { parseCommandArgs } from './args.js';
import { cronOptions } from './options.js';
import { cliConfirm } from './confirm.js';
import type { CliContext } from './context.js';

const USAGE: Record<string, string> = {
  add: 'pinclaw cron add (--cron EXPR | --every DURATION | --at TIME) --message TEXT [--session KEY] [--deliver CHANNEL:CHAT|log] [--tz ZONE] [--json]',
  list: 'pinclaw cron list [--json]',
  remove: 'pinclaw cron remove ID',
  run: 'pinclaw cron run ID [--json]',
  runs: 'pinclaw cron runs ID [--limit N] [--json]',
  pause: 'pinclaw cron pause ID',
  resume: 'pinclaw cron resume ID',
};
const ADD_FLAGS = ['cron', 'every', 'at', 'message', 'session', 'deliver', 'tz'] as const;

type Values = ReturnType<typeof parseCommandArgs<typeof cronOptions>>['values'];

function jobId(text: string | undefined, usage: string): number {
  if (text === undefined) throw new UsageError(`missing the job id\nusage: ${usage}`);
  if (!/^[1-9]\d{0,15}$/.test(text)) throw new UsageError(`expected a job id (a number that pinclaw cron list shows), got '${text}'\nusage: ${usage}`);
  return Number(text);
}

export async function runCron(sub: string, rawArgs: string[], ctx: CliContext): Promise<number> {
  const usage = USAGE[sub]!;
  const { values, positionals } = parseCommandArgs(rawArgs, cronOptions, usage);
  // The flags of `add` mean nothing elsewhere; saying so beats ignoring them.
  for (const flag of sub === 'add' ? [] : ADD_FLAGS) {
    if (values[flag] !== undefined) throw new UsageError(`--${flag} is only for 'cron add'\nusage: ${usage}`);
  }
  if (values.limit !== undefined && sub !== 'runs') throw new UsageError(`--limit is only for 'cron runs'\nusage: ${usage}`);
  if (sub === 'add') {
    if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${usage}`);
    return add(values, usage, ctx);
  }
  if (sub === 'list') {
    if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${usage}`);
  } else if (positionals.length > 1) {
    throw new UsageError(`unexpected argument '${positionals[1]}'\nusage: ${usage}`);
  }
  const id = sub === 'list' ? 0 : jobId(positionals[0], usage);
  let limit = 20;
  if (values.limit !== undefined) {
    if (!/^\d+$/.test(values.limit) || Number(values.limit) < 1 || Number(values.limit) > 100) throw new UsageError(`--limit: expected an integer from 1 to 100, got '${values.limit}'\nusage: ${usage}`);
    limit = Number(values.limit);
  }
  if (sub === 'run') return run(id, ctx);

  const { db } = await openProcess(ctx);
  try {
    if (sub === 'list') {
      const jobs = listJobs(db).map((j) => ({ job: j, last: lastRun(db, j.id) }));
      if (ctx.json) ctx.out(JSON.stringify(jobs.map((j) => jobJson(j.job, j.last)), null, 2));
      else if (jobs.length === 0) ctx.out('no jobs');
      else for (const j of jobs) ctx.out(jobLine(j.job, j.last));
      return 0;
    }
    const job = getJob(db, id);
    if (!job) throw new PinclawError(`no job ${id}; pinclaw cron list shows the jobs`);
    if (sub === 'remove') {
      removeJob(db, id);
      ctx.out(`removed job ${id}`);
      return 0;
    }
    if (sub === 'runs') {
      const runs = runsOf(db, id, limit);
      if (ctx.json) ctx.out(JSON.stringify(runs.map(runJson), null, 2));
      else if (runs.length === 0) ctx.out(`job ${id} has not run yet`);
      else for (const r of runs) ctx.out(runLine(r));
      return 0;
    }
    const now = Date.now();
    const changed = sub === 'pause' ? pauseJob(db, id, now)! : await resumeJob(db, id, now).catch((err: unknown) => {
      throw err instanceof JobInputError ? new PinclawError(err.message) : err;
    });
    ctx.out(changed!.state === 'active' ? `job ${id} is active; next run ${new Date(changed!.next_run_at!).toISOString()}` : `job ${id} is ${changed!.state}`);
    return 0;
  } finally {
    db.close();
  }
}

/**
 * Where a new job's replies go: --deliver as given; `--deliver log` the log; none given, the owner
 * (owner.notify) when set, else the log. A broken owner.notify is named rather than blamed on --deliver.
 */
function deliverOrOwner(given: string | undefined, config: PinclawConfig): string | undefined {
  if (given === LOG_TARGET) return undefined;
  if (given !== undefined) return given;
  const owner = config.owner.notify;
  if (owner === undefined || owner === '') return undefined;
  const problem = ownerNotifyProblem(config);
  if (problem) throw new ConfigError(`${problem}; or give --deliver CHANNEL:CHAT, or --deliver log`);
  return owner;
}

async function add(values: Values, usage: string, ctx: CliContext): Promise<number> {
  if (values.message === undefined) throw new UsageError(`--message is required: what the agent is told at each run\nusage: ${usage}`);
  const config = loadConfig(ctx.paths, ctx.env);
  const now = Date.now();
  const deliver = deliverOrOwner(values.deliver, config);
  let job;
  try {
    // Everything is checked before the store is opened: bad input leaves no trace.
    job = await prepareJob(
      { cron: values.cron, every: values.every, at: values.at, message: values.message, session: values.session, deliver, tz: values.tz },
      { config, now, createdBy: 'cli', name: (f: JobField) => `--${f}` },
    );
  } catch (err) {
    if (err instanceof JobInputError) throw new UsageError(`${err.message}\nusage: ${usage}`);
    throw err;
  }
  ensureWritableDir(ctx.paths.home, 'PINCLAW_HOME');
  const db = openStore(ctx, config);
  try {
    const stored = insertJob(db, job, now);
    if (ctx.json) ctx.out(JSON.stringify(jobJson(stored, undefined), null, 2));
    else ctx.out(jobLine(stored, undefined));
    return 0;
  } finally {
    db.close();
  }
}

async function run(id: number, ctx: CliContext): Promise<number> {
  const proc = await openProcess(ctx, { turns: true, logLevel: true });
  const { db } = proc;
  try {
    const job = getJob(db, id);
    if (!job) throw new PinclawError(`no job ${id}; pinclaw cron list shows the jobs`);
    const confirm = cliConfirm(ctx);
    // The owner at the terminal: the reply is printed here, as `pinclaw agent` prints it.
    const cli: ChannelAdapter = {
      name: 'cli',
      debounceMs: 0,
      async send(o: OutboundRow) {
        if (!ctx.json) ctx.out(o.text);
      },
      ...(confirm ? { confirm: (_chatId: string, request: ConfirmRequest) => confirm(request) } : {}),
    };
    const turns = await withTurns(ctx, proc, { channels: [cli], sessions: [job.session_key] });
    const { conductor } = turns;
    try {
      conductor.start();
      const now = Date.now();
      const fired = recordRun(db, { jobId: id, expectedNextRunAt: null, scheduledAt: now, firedAt: now, kind: 'manual', missed: 0, nextRunAt: null }, (runId) =>
        conductor.submit({ sessionKey: job.session_key, channel: 'cli', chatId: 'local', sender: 'cron', text: runText(job, 'manual', 0), meta: { cron: { jobId: id, runId, scheduledAt: now, kind: 'manual' } } }).id);
      if (fired.status !== 'fired' || fired.inboundId === null) throw new PinclawError(`job ${id} could not be run now (${fired.status}); try again`);
      const out = await conductor.delivered(fired.inboundId);
      // The job's readers are on its --deliver channel, which the gateway serves: the reply is also
      // queued there, for a running gateway to deliver within its wake interval (10 s) or at its start.
      const queuedFor = job.channel !== CRON_CHANNEL && out.kind === 'reply' ? `${job.channel}:${job.chat_id}` : undefined;
      if (queuedFor) {
        recordOutbound(db, { idempotencyKey: `cron-run:${fired.runId}`, inboundId: null, sessionKey: job.session_key, channel: job.channel, chatId: job.chat_id, text: out.text, kind: 'reply' });
        if (!ctx.json) ctx.err(`queued for ${queuedFor}: a running gateway delivers it within 10 s, or when it starts`);
      }
      if (ctx.json) {
        const r = runById(db, fired.runId);
        ctx.out(JSON.stringify({ ...(r ? runJson(r) : {}), reply: out.text, ...(queuedFor ? { queuedFor } : {}) }, null, 2));
      }
      return out.kind === 'reply' ? 0 : 1;
    } finally {
      await turns.stop(5000);
    }
  } finally {
    proc.close();
  }
}
