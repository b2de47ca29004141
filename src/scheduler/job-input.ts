// Adding and changing jobs, as `pinclaw cron` and the cron tools both do: every field checked with
// an error that names it (the CLI says --deliver, a tool deliver), nothing stored unless all are
// good. Part of the lazy chunk 'scheduler'.
import type { PinclawConfig } from '../config/schema.js';
import { unknownZoneText } from '../time-zone-check.js';
import type { Db } from '../store/db.js';
import { getJob, jobsChanged, type CronJob, type NewJob } from './jobs.js';
import { insertJob, setJobState } from './runs.js';
import { chatProblem, deliverableChannels, splitTarget, undeliverable } from './targets.js';

export type JobField = 'cron' | 'every' | 'at' | 'message' | 'session' | 'deliver' | 'tz';

export class JobInputError extends Error {
  constructor(readonly field: JobField | 'schedule', message: string) {
    super(message);
    this.name = 'JobInputError';
  }
}

export interface JobInput {
  cron?: string;
  every?: string;
  at?: string;
  message: string;
  session?: string;
  /** CHANNEL:CHAT */
  deliver?: string;
  tz?: string;
}

export interface AddContext {
  config: PinclawConfig;
  now: number;
  /** who added it: 'cli', or the session of the tool call */
  createdBy: string;
  /** how a field is named in messages: `--deliver` on the command line, `deliver` for a tool */
  name: (field: JobField) => string;
  /** where the reply goes when deliver is not given (a tool's caller's chat); default: the log */
  defaultTarget?: { channel: string; chatId: string; sessionKey: string };
}

/** The longest session key accepted; keys are shown in logs and lists. */
const MAX_SESSION = 200;
/** Room left in agent.maxMessageChars for the line that says which job the message comes from. */
const FRAME_ROOM = 200;

export function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The zone a job without --tz uses: agent.timezone, else the system's. */
export function defaultZone(config: PinclawConfig): string {
  return config.agent.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** "telegram:12345" → the chat, checked against the channels that can take it. */
export function parseTarget(text: string, config: PinclawConfig, name: AddContext['name']): { channel: string; chatId: string } {
  const flag = name('deliver');
  const target = splitTarget(text);
  if (!target) throw new JobInputError('deliver', `${flag}: expected CHANNEL:CHAT such as telegram:12345, got '${text}'`);
  if (!deliverableChannels(config).includes(target.channel)) {
    throw new JobInputError('deliver', `${flag}: ${undeliverable(target.channel, config)} (without ${flag} the reply is logged)`);
  }
  const problem = chatProblem(target);
  if (problem) throw new JobInputError('deliver', `${flag}: ${problem}`);
  return target;
}

/** Checks the input and computes the first run, touching nothing. Throws JobInputError. */
export async function prepareJob(input: JobInput, ctx: AddContext): Promise<NewJob> {
  const { name } = ctx;
  const given = (['cron', 'every', 'at'] as const).filter((k) => input[k] !== undefined);
  if (given.length !== 1) {
    throw new JobInputError('schedule', `give exactly one of ${name('cron')}, ${name('every')} or ${name('at')}${given.length ? ` (got ${given.map(name).join(' and ')})` : ''}`);
  }
  const message = input.message.trim();
  if (message === '') throw new JobInputError('message', `${name('message')}: the message is empty`);
  const maxChars = Math.max(1, ctx.config.agent.maxMessageChars - FRAME_ROOM);
  if (message.length > maxChars) throw new JobInputError('message', `${name('message')}: ${message.length} characters is more than the limit of ${maxChars} (agent.maxMessageChars less room for the job's heading)`);
  const badTz = input.tz !== undefined && !validZone(input.tz) ? unknownZoneText(input.tz) : undefined;
  if (badTz) throw new JobInputError('tz', `${name('tz')}: ${badTz}`);
  const tz = input.tz ?? defaultZone(ctx.config);
  if (!validZone(tz)) throw new JobInputError('tz', `agent.timezone: ${unknownZoneText(tz) ?? `unknown time zone '${tz}'`}, or give ${name('tz')}`);
  const target = input.deliver !== undefined ? parseTarget(input.deliver, ctx.config, name) : ctx.defaultTarget;
  let sessionKey = input.session ?? (input.deliver !== undefined ? `${target!.channel}:${target!.chatId}` : ctx.defaultTarget?.sessionKey);
  if (sessionKey !== undefined) {
    sessionKey = sessionKey.trim();
    if (sessionKey === '' || sessionKey.length > MAX_SESSION) throw new JobInputError('session', `${name('session')}: expected a session key of 1 to ${MAX_SESSION} characters`);
  }
  // The cron arithmetic (croner) is a lazy chunk: loaded here, where a schedule is parsed.
  const { parseSchedule, ScheduleInputError } = await import('./schedule.js');
  let spec;
  try {
    spec = parseSchedule(input, tz, ctx.now);
  } catch (err) {
    if (err instanceof ScheduleInputError) throw new JobInputError(err.field, `${name(err.field)}: ${err.message}`);
    throw err;
  }
  return {
    kind: spec.kind, expr: spec.expr, tz: spec.tz, everyMs: spec.everyMs, atMs: spec.atMs, anchorAt: spec.anchorAt,
    message, sessionKey, target: target && { channel: target.channel, chatId: target.chatId }, nextRunAt: spec.first, createdBy: ctx.createdBy,
  };
}

/** Checks the input, computes the first run and stores the job. Throws JobInputError. */
export async function addJob(db: Db, input: JobInput, ctx: AddContext): Promise<CronJob> {
  const job = insertJob(db, await prepareJob(input, ctx), ctx.now);
  jobsChanged();
  return job;
}

/** Pauses an active job: it keeps its place in the list and its run log, and fires nothing. */
export function pauseJob(db: Db, id: number, now: number): CronJob | undefined {
  const job = getJob(db, id);
  if (!job) return undefined;
  if (job.state === 'active') {
    setJobState(db, id, 'paused', null, now);
    jobsChanged();
  }
  return getJob(db, id);
}

/**
 * Resumes a paused job from now on: the times that passed while it was paused are not missed runs.
 * A one-shot keeps its time (past by now, it runs at once, late). Throws for a one-shot that has run.
 */
export async function resumeJob(db: Db, id: number, now: number): Promise<CronJob | undefined> {
  const job = getJob(db, id);
  if (!job) return undefined;
  if (job.state === 'done') throw new JobInputError('schedule', `job ${id} ran at its time and is done; add a new one`);
  if (job.state === 'paused') {
    const next = job.kind === 'at' ? job.at_ms : (await import('./schedule.js')).nextAfter(job, now);
    if (next === null) throw new JobInputError('schedule', `job ${id} has no time left to run`);
    setJobState(db, id, 'active', next, now);
    jobsChanged();
  }
  return getJob(db, id);
}
