// An OpenClaw cron job (src/cron/types.ts of openclaw: {id, name, enabled, schedule: {kind: "cron",
// expr, tz} | {kind: "every", everyMs} | {kind: "at", at}, payload: {kind: "agentTurn", message} |
// {kind: "systemEvent", text}, delivery: {mode, channel, to}}) → a row of pinclaw's cron_jobs.
// The schedule is checked and its first run computed by pinclaw's own scheduler code (the lazy
// chunk 'scheduler'), so a job brought over behaves as one added with `pinclaw cron add`.
import { formatDuration } from '../../scheduler/duration.js';
import { CRON_CHANNEL, type CronJob } from '../../scheduler/jobs.js';
import { isObject, str, type SourceJob } from './source.js';

/**
 * The columns of cron_jobs the migration writes (src/store/schema.ts). session_key and chat_id are
 * empty until the row's id is known (`cron:<id>` and the id, as `pinclaw cron add` does); created_by
 * is `openclaw:<job id>`: how a second run knows the job is already here.
 */
export interface JobRow extends Omit<CronJob, 'id' | 'state' | 'created_at' | 'updated_at'> {
  state: 'active' | 'paused';
}

/** Channels a job's replies can go to in pinclaw. */
const DELIVERABLE = ['telegram', 'discord', 'signal'];

export async function mapJob(job: SourceJob, defaultTz: string, now: number): Promise<{ row: JobRow; label: string; notes: string[] } | { label: string; why: string }> {
  const j = job.raw;
  const id = str(j.id) ?? str(j.jobId) ?? (typeof j.id === 'number' ? String(j.id) : undefined);
  const label = `"${str(j.name) ?? id ?? '?'}" (${job.where})`;
  if (!id) return { label, why: 'it has no id' };
  const payload = isObject(j.payload) ? j.payload : {};
  const message = str(payload.message) ?? str(payload.text) ?? str(j.message);
  if (!message) return { label, why: `its payload (${str(payload.kind) ?? 'none'}) has no message text` };
  const s = isObject(j.schedule) ? j.schedule : undefined;
  const kind = str(s?.kind);
  const tz = str(s?.tz) ?? defaultTz;
  let input: { cron?: string; every?: string; at?: string };
  if (kind === 'cron' && str(s?.expr)) input = { cron: str(s!.expr)! };
  else if (kind === 'every' && typeof s?.everyMs === 'number' && s.everyMs > 0) input = { every: formatDuration(s.everyMs) };
  else if (kind === 'at' && (str(s?.at) || typeof s?.atMs === 'number')) {
    const at = typeof s!.atMs === 'number' ? s!.atMs : Date.parse(str(s!.at)!);
    if (!Number.isFinite(at)) return { label, why: `its time ${JSON.stringify(s!.at)} is not a date` };
    if (at <= now) return { label, why: `a one-shot whose time (${new Date(at).toISOString()}) has passed` };
    input = { at: new Date(at).toISOString() };
  } else return { label, why: `its schedule (${JSON.stringify(j.schedule)}) is not one this reader knows` };
  // croner and the schedule checks: the scheduler's lazy chunk.
  const { parseSchedule, ScheduleInputError } = await import('../../scheduler/schedule.js');
  let spec;
  try {
    spec = parseSchedule(input, tz, now);
  } catch (err) {
    if (err instanceof ScheduleInputError) return { label, why: err.message };
    if (err instanceof RangeError) return { label, why: `its time zone ${JSON.stringify(tz)} is unknown` };
    throw err;
  }
  const notes: string[] = [];
  // Where the replies go: delivery {mode: "announce", channel, to}, or the older payload.deliver.
  const d = isObject(j.delivery) ? j.delivery : {};
  const mode = str(d.mode) ?? (payload.deliver === true ? 'announce' : 'none');
  const channel = str(d.channel) ?? str(payload.channel);
  let to = str(d.to) ?? str(payload.to);
  let target: { channel: string; chatId: string } | undefined;
  if (mode === 'announce' && channel && to && DELIVERABLE.includes(channel)) {
    to = to.replace(/^(channel|user|group|dm|chat):/i, '');
    const topic = /^(-?\d+):topic:\d+$/.exec(to);
    if (topic) {
      notes.push(`cron job ${label}: replies go to the Telegram chat ${topic[1]}, not to its forum topic`);
      to = topic[1]!;
    }
    target = { channel, chatId: to };
  } else if (mode !== 'none') {
    notes.push(`cron job ${label}: its replies ${mode === 'webhook' ? 'went to a webhook' : `went to ${channel ?? 'the last chat'}${to ? ` ${to}` : ''}`}; in pinclaw they are logged (pinclaw cron list shows the job)`);
  }
  const paused = j.enabled === false;
  return {
    label,
    notes,
    row: {
      kind: spec.kind, expr: spec.expr, tz: spec.tz, every_ms: spec.everyMs, at_ms: spec.atMs, anchor_at: spec.anchorAt, message,
      session_key: target ? `${target.channel}:${target.chatId}` : '', channel: target?.channel ?? CRON_CHANNEL, chat_id: target?.chatId ?? '',
      state: paused ? 'paused' : 'active', next_run_at: paused ? null : spec.first, created_by: `openclaw:${id}`,
    },
  };
}
