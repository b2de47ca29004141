// The scheduler and the heartbeat in-process: times from croner with zones and DST, --every and
// --at, input errors that store nothing, exactly-once firing under a clock that jumps both ways, the
// missed-run policy, the heartbeat's empty-file rule and HEARTBEAT_OK, and the cron tools through the
// registry (policy, audit). Real SQLite files; the clock is injected, never read.
import t, { type Test } from 'tap';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Provider } from '../src/agent/types.js';
import { defaults, type PinclawConfig } from '../src/config/schema.js';
import type { ChannelAdapter } from '../src/conductor/conductor.js';
import { createRuntime } from '../src/setup/runtime.js';
import { resolvePaths } from '../src/paths.js';
import { queryAudit } from '../src/store/audit.js';
import { getState, setState } from '../src/store/state.js';
import { openDatabase, type Db } from '../src/store/db.js';
import { enqueue, type NewInbound, type OutboundRow } from '../src/store/queue.js';
import { formatDuration, parseDuration } from '../src/scheduler/duration.js';
import { fireJob } from '../src/scheduler/fire.js';
import { createHeartbeat, heartbeatChannel, heartbeatTask, HEARTBEAT_CHANNEL } from '../src/scheduler/heartbeat.js';
import { addJob, JobInputError, pauseJob, prepareJob, resumeJob, type JobField, type JobInput } from '../src/scheduler/job-input.js';
import { getJob, onJobsChanged, type CronJob } from '../src/scheduler/jobs.js';
import { lastRun, listJobs, recordRun, runsOf } from '../src/scheduler/runs.js';
import { dueSlots, nextAfter, parseSchedule, ScheduleInputError } from '../src/scheduler/schedule.js';
import { prepareScheduling } from '../src/scheduler/gateway.js';
import { createScheduler, type Fired } from '../src/scheduler/scheduler.js';
import { configuredRegistry } from '../src/setup/registry.js';
import type { ToolContext } from '../src/tools/types.js';
import { startAnthropicServer, textReply } from './support/anthropic-server.js';
import { bundle, cleanEnv, runPinclaw, runPinclawAsync, start, tempDir } from './support/proc.js';
import { recordingClient, startBroker, until as untilSeen } from './support/mosquitto.js';
import { startTelegramApi } from './support/telegram-api.js';
import { reply, scriptedProvider } from './support/scripted-provider.js';

const iso = (t: number | null | undefined) => (t == null ? null : new Date(t).toISOString());
const at = (s: string) => Date.parse(s);
const MIN = 60_000;
const DAY = 86_400_000;

t.test('durations', async (t) => {
  t.equal(parseDuration('90s'), 90_000);
  t.equal(parseDuration('1h30m'), 5_400_000);
  t.equal(parseDuration('2d'), 2 * DAY);
  t.equal(parseDuration('0'), 0);
  for (const bad of ['5', '1.5h', 'h', '', '-1m', '1 h', '30x']) t.equal(parseDuration(bad), undefined, `'${bad}' is no duration`);
  t.equal(formatDuration(5_400_000), '1h30m');
  t.equal(formatDuration(1000), '1s');
});

t.test('cron times in a zone, across both DST changes', async (t) => {
  const spec = parseSchedule({ cron: '0 9 * * *' }, 'Europe/Berlin', at('2026-03-27T12:00:00Z'));
  t.equal(iso(spec.first), '2026-03-28T08:00:00.000Z', '9:00 CET is 08:00 UTC');
  const job = { kind: 'cron' as const, expr: '0 9 * * *', tz: 'Europe/Berlin', every_ms: null, at_ms: null, anchor_at: 0 };
  t.equal(iso(nextAfter(job, spec.first)), '2026-03-29T07:00:00.000Z', 'after the spring change 9:00 CEST is 07:00 UTC');
  t.equal(iso(nextAfter(job, at('2026-03-29T07:00:00Z'))), '2026-03-30T07:00:00.000Z', 'strictly after: the same time is not next');
  t.equal(iso(nextAfter(job, at('2026-10-24T12:00:00Z'))), '2026-10-25T08:00:00.000Z', 'after the autumn change 9:00 CET is 08:00 UTC again');
  // Fixed-time jobs in the hour that happens twice run once.
  const twice = { ...job, expr: '30 2 * * *' };
  t.equal(iso(nextAfter(twice, at('2026-10-24T12:00:00Z'))), '2026-10-25T00:30:00.000Z');
  t.equal(iso(nextAfter(twice, at('2026-10-25T00:30:00Z'))), '2026-10-26T01:30:00.000Z', '02:30 of the repeated hour is not run a second time');
  // A zone without DST: the same UTC time all year.
  t.equal(iso(parseSchedule({ cron: '0 9 * * *' }, 'Asia/Tokyo', at('2026-03-28T12:00:00Z')).first), '2026-03-29T00:00:00.000Z');
  t.equal(iso(parseSchedule({ cron: '@hourly' }, 'UTC', at('2026-03-28T12:10:00Z')).first), '2026-03-28T13:00:00.000Z', 'nicknames');
});

t.test('--every counts from when the job was added; --at in a zone, with an offset, or from now', async (t) => {
  const now = at('2026-01-10T10:00:00Z');
  const every = parseSchedule({ every: '90m' }, 'UTC', now);
  t.match(every, { kind: 'every', everyMs: 90 * MIN, anchorAt: now, first: now + 90 * MIN, tz: null });
  const job = { kind: 'every' as const, expr: '90m', tz: null, every_ms: 90 * MIN, at_ms: null, anchor_at: now };
  t.equal(nextAfter(job, now + 100 * MIN), now + 180 * MIN, 'on the grid from the anchor, not from the last run');
  t.equal(nextAfter(job, now + 180 * MIN), now + 270 * MIN);
  t.equal(iso(parseSchedule({ at: '2026-03-01T09:00' }, 'Europe/Berlin', now).first), '2026-03-01T08:00:00.000Z', 'a wall-clock time in the zone');
  t.equal(iso(parseSchedule({ at: '2026-07-01 09:00' }, 'Europe/Berlin', now).first), '2026-07-01T07:00:00.000Z', 'summer time that day');
  t.equal(iso(parseSchedule({ at: '2026-03-01T09:00:00+02:00' }, 'Europe/Berlin', now).first), '2026-03-01T07:00:00.000Z', 'an offset wins over the zone');
  t.equal(iso(parseSchedule({ at: '2026-03-01T09:00Z' }, 'Europe/Berlin', now).first), '2026-03-01T09:00:00.000Z');
  t.equal(parseSchedule({ at: '20m' }, 'UTC', now).first, now + 20 * MIN);
  const once = { kind: 'at' as const, expr: 'x', tz: 'UTC', every_ms: null, at_ms: now + MIN, anchor_at: now };
  t.equal(nextAfter(once, now), now + MIN);
  t.equal(nextAfter(once, now + MIN), null, 'a one-shot has no time after its own');
});

t.test('bad schedules: each names its field and says what was expected', async (t) => {
  const now = at('2026-01-10T10:00:00Z');
  const cases: [Record<string, string>, string, RegExp][] = [
    [{ cron: '0 9 * *' }, 'cron', /'0 9 \* \*' is not a cron expression: .*five, six, or seven/],
    [{ cron: '61 * * * *' }, 'cron', /Invalid value for minute: 61/],
    [{ cron: '0 0 30 2 *' }, 'cron', /never runs/],
    [{ every: '5' }, 'every', /'5' is not a duration; expected 30s, 15m/],
    [{ every: '500ms' }, 'every', /shorter than the shortest interval, 1s/],
    [{ at: 'tomorrow' }, 'at', /'tomorrow' is not a time; expected an ISO date/],
    [{ at: '2026-02-30T09:00' }, 'at', /not a valid date and time/],
    [{ at: '2026-01-10T09:00Z' }, 'at', /is in the past/],
  ];
  for (const [input, field, message] of cases) {
    const err = t.throws(() => parseSchedule(input, 'Europe/Berlin', now), ScheduleInputError);
    t.match(err, { field, message }, JSON.stringify(input));
  }
});

/** A store in a temp dir; the config as a test wants it. */
function store(t: Test, configure?: (c: PinclawConfig) => void) {
  const home = tempDir();
  const paths = resolvePaths({ home }, {});
  const db = openDatabase(paths.database);
  t.teardown(() => db.close());
  const config = defaults();
  config.agent.timezone = 'Europe/Berlin';
  configure?.(config);
  return { home, paths, db, config };
}

const flag = (f: JobField) => `--${f}`;

t.test('adding a job: every bad field is refused by name, and nothing is stored', async (t) => {
  const { db, config } = store(t);
  const now = at('2026-01-10T10:00:00Z');
  const ctx = { config, now, createdBy: 'cli', name: flag };
  const bad: [JobInput, string, RegExp][] = [
    [{ message: 'x' }, 'schedule', /^give exactly one of --cron, --every or --at$/],
    [{ every: '1h', at: '20m', message: 'x' }, 'schedule', /\(got --every and --at\)/],
    [{ every: '1h', message: '  ' }, 'message', /^--message: the message is empty/],
    [{ every: '1h', message: 'x', tz: 'Mars/Base' }, 'tz', /^--tz: unknown time zone 'Mars\/Base'/],
    [{ every: '1h', message: 'x', deliver: 'telegram:42' }, 'deliver', /^--deliver: channel telegram is not set up \(channels\.telegram\.token is unset\)/],
    [{ every: '1h', message: 'x', deliver: 'telegram' }, 'deliver', /^--deliver: expected CHANNEL:CHAT/],
    [{ cron: 'every day', message: 'x' }, 'cron', /^--cron: 'every day' is not a cron expression/],
    [{ every: 'often', message: 'x' }, 'every', /^--every: 'often' is not a duration/],
    [{ at: '2026-13-01T09:00', message: 'x' }, 'at', /^--at: '2026-13-01T09:00' is not a valid date and time/],
    [{ every: '1h', message: 'x'.repeat(config.agent.maxMessageChars) }, 'message', /more than the limit/],
  ];
  for (const [input, field, message] of bad) {
    await t.rejects(addJob(db, input, ctx), { name: 'JobInputError', field, message }, JSON.stringify(input).slice(0, 80));
  }
  t.same(listJobs(db), [], 'nothing stored');
  // With Telegram set up, an unknown channel is still refused; telegram is accepted.
  const withTelegram = { ...ctx, config: { ...config, channels: { ...config.channels, telegram: { ...config.channels.telegram, token: '1:x' } } } };
  await t.rejects(addJob(db, { every: '1h', message: 'x', deliver: 'matrix:1' }, withTelegram), /--deliver: unknown channel 'matrix'; channels it can deliver to: telegram/);
  const job = await addJob(db, { every: '1h', message: 'hello', deliver: 'telegram:42' }, withTelegram);
  t.match(job, { channel: 'telegram', chat_id: '42', session_key: 'telegram:42', next_run_at: now + 3_600_000, state: 'active', created_by: 'cli' });
  // MQTT: a chat session on chat/out, once a broker is set and the MQTT chat is on.
  await t.rejects(addJob(db, { every: '1h', message: 'x', deliver: 'mqtt:kitchen' }, withTelegram), /--deliver: channel mqtt is not set up \(mqtt\.url is unset\); channels it can deliver to: telegram/);
  const withMqtt = (enabled: boolean) => ({ ...ctx, config: { ...config, mqtt: { ...config.mqtt, url: 'mqtt://127.0.0.1:1883', chat: { ...config.mqtt.chat, enabled } } } });
  await t.rejects(addJob(db, { every: '1h', message: 'x', deliver: 'mqtt:kitchen' }, withMqtt(false)), /--deliver: channel mqtt is not set up \(mqtt\.chat\.enabled is false\); channels it can deliver to: none/);
  await t.rejects(addJob(db, { every: '1h', message: 'x', deliver: 'mqtt:the kitchen' }, withMqtt(true)), { field: 'deliver', message: '--deliver: the MQTT session "the kitchen" must be 1-64 letters, digits or _ . : @ -' });
  const onMqtt = await addJob(db, { every: '1h', message: 'hello', deliver: 'mqtt:kitchen' }, withMqtt(true));
  t.match(onMqtt, { channel: 'mqtt', chat_id: 'kitchen', session_key: 'mqtt:kitchen' }, 'the session an MQTT chat message to "kitchen" has');
  const logged = await addJob(db, { cron: '0 9 * * *', message: 'brief' }, ctx);
  t.match(logged, { channel: 'cron', chat_id: String(logged.id), session_key: `cron:${logged.id}`, tz: 'Europe/Berlin' }, 'without --deliver: logged, in its own session, in agent.timezone');
  // prepareJob alone touches nothing.
  const before = listJobs(db).length;
  await prepareJob({ every: '1h', message: 'x' }, ctx);
  t.equal(listJobs(db).length, before);
});

t.test('bad heartbeat.* settings are configuration errors naming the key, found before anything starts', async (t) => {
  const workspace = tempDir();
  const withHeartbeat = (h: Partial<PinclawConfig['heartbeat']>, mqttUrl?: string) => {
    const config = defaults();
    config.heartbeat = { ...config.heartbeat, ...h };
    // The MQTT chat is off by default: a delivery there needs it on.
    if (mqttUrl) config.mqtt = { ...config.mqtt, url: mqttUrl, chat: { ...config.mqtt.chat, enabled: true } };
    return () => prepareScheduling({ config, workspace });
  };
  const bad: [() => unknown, RegExp | string][] = [
    [withHeartbeat({ every: 'often' }), /^heartbeat\.every: expected a duration .* or 0 to turn it off, got 'often'$/],
    [withHeartbeat({ every: '30s' }), "heartbeat.every: '30s' is shorter than a minute; every heartbeat with a task is a model call"],
    [withHeartbeat({ session: ' ' }), 'heartbeat.session: expected a session key, got an empty string'],
    [withHeartbeat({ deliver: 'telegram' }), "heartbeat.deliver: expected CHANNEL:CHAT such as telegram:12345, got 'telegram'"],
    [withHeartbeat({ deliver: 'telegram:42' }), 'heartbeat.deliver: channel telegram is not set up (channels.telegram.token is unset); channels it can deliver to: none'],
    [withHeartbeat({ deliver: 'mqtt:the kitchen' }, 'mqtt://127.0.0.1:1883'), 'heartbeat.deliver: the MQTT session "the kitchen" must be 1-64 letters, digits or _ . : @ -'],
    [withHeartbeat({ deliver: 'mqtt:homeassistant' }, 'mqtt://127.0.0.1:1883'), /^heartbeat\.deliver: the session name "homeassistant" is reserved/],
  ];
  for (const [prepare, message] of bad) t.throws(prepare, { name: 'ConfigError', message }, String(message));
  const ok = withHeartbeat({ deliver: 'mqtt:kitchen' }, 'mqtt://127.0.0.1:1883')() as { channels: ChannelAdapter[] };
  t.same(ok.channels.map((c) => c.name), ['cron', 'heartbeat'], 'mqtt:kitchen is taken');
});

t.test('heartbeat.deliver unset: the replies go to owner.notify; log keeps them in the log; a bad owner.notify names its key', async (t) => {
  const workspace = tempDir();
  const withOwner = (deliver: string | undefined, notify = 'telegram:42') => {
    const config = defaults();
    config.channels.telegram.token = '123:abc';
    config.owner.notify = notify;
    config.heartbeat = { ...config.heartbeat, deliver };
    return prepareScheduling({ config, workspace });
  };
  /** What the heartbeat channel hands on for a reply worth reading, once its conductor runs. */
  async function forwarded(sched: ReturnType<typeof prepareScheduling>): Promise<unknown[]> {
    const db = openDatabase(join(tempDir(), 'pinclaw.db'));
    const sent: unknown[] = [];
    const stop = sched.start({ db, conductor: { submit: () => ({ id: 0 }), send: (m) => void sent.push(m) }, channels: ['telegram'] });
    try {
      await sched.channels.find((c) => c.name === 'heartbeat')!.send({ id: 9, kind: 'reply', text: 'The shed door is open.', session_key: 'heartbeat' } as OutboundRow, undefined as never);
    } finally {
      stop();
      db.close();
    }
    return sent;
  }
  t.match(await forwarded(withOwner(undefined)), [{ channel: 'telegram', chatId: '42', text: 'The shed door is open.' }], 'unset: to the owner');
  t.same(await forwarded(withOwner('log')), [], 'log: not sent');
  t.match(await forwarded(withOwner('telegram:7')), [{ channel: 'telegram', chatId: '7' }], 'its own deliver wins');
  const config = defaults();
  config.owner.notify = 'telegram:42';
  const { configProblems } = await import('../src/setup/config-checks.js');
  t.match(await configProblems(config, { paths: resolvePaths({ home: tempDir() }), env: {} }), [/^owner\.notify: channel telegram is not set up \(channels\.telegram\.token is unset\)/]);
});

/** The conductor's submit as far as the scheduler sees it: the inbound row, committed. */
function submitter(db: Db) {
  const submitted: NewInbound[] = [];
  return { submitted, submit: (m: NewInbound) => (submitted.push(m), enqueue(db, m, 0)) };
}

function lines() {
  const out: string[] = [];
  const at = (level: string) => (m: string) => out.push(`${level}: ${m}`);
  return { out, log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

/** Marks the job's submitted messages answered, so its next run is not skipped as piling up. */
const answerAll = (db: Db) => db.prepare(`update inbound set state = 'done'`).run();

t.test('exactly once: a clock that jumps back fires nothing again, one that jumps forward fires once, marked missed', async (t) => {
  const { db, config } = store(t);
  const t0 = at('2026-01-10T10:00:00Z');
  let now = t0;
  const { submitted, submit } = submitter(db);
  const l = lines();
  const job = await addJob(db, { every: '1m', message: 'tick' }, { config, now: t0, createdBy: 'cli', name: flag });
  const sched = createScheduler({ db, submit, channels: ['cron'], now: () => now, log: l.log });
  const tick = async () => (await sched.tick()).map((f: Fired) => ({ kind: f.kind, missed: f.missed, status: f.result.status }));

  now = t0 + 30_000;
  t.same(await tick(), [], 'not due yet');
  now = t0 + MIN;
  t.same(await tick(), [{ kind: 'scheduled', missed: 0, status: 'fired' }]);
  t.same(await tick(), [], 'the same moment again: nothing');
  answerAll(db);
  now = t0 + 10_000; // backwards, before the run that just happened
  t.same(await tick(), [], 'after a backward jump nothing fires again');
  now = t0 + MIN + 500;
  t.same(await tick(), [], 'back at the time of the last run: still nothing');
  now = t0 + 2 * MIN;
  t.same(await tick(), [{ kind: 'scheduled', missed: 0, status: 'fired' }], 'the next time fires as usual');
  answerAll(db);
  now = t0 + 2 * MIN + 3_600_000 + 5000; // forward by an hour
  t.same(await tick(), [{ kind: 'missed', missed: 59, status: 'fired' }], 'an hour of minutes: one run, the other 59 counted as missed');
  t.match(l.out.join('\n'), /warn: cron job 1: 60 scheduled times passed since 2026-01-10T10:03:00\.000Z \(the gateway was down, or the clock jumped\); running once now, then from 2026-01-10T11:03:00\.000Z on/);
  t.equal(getJob(db, job.id)!.next_run_at, t0 + 63 * MIN, 'then on the grid again, after now');
  const runs = runsOf(db, job.id);
  t.same(runs.map((r) => [iso(r.scheduled_at), r.kind, r.missed]), [
    ['2026-01-10T11:02:00.000Z', 'missed', 59],
    ['2026-01-10T10:02:00.000Z', 'scheduled', 0],
    ['2026-01-10T10:01:00.000Z', 'scheduled', 0],
  ]);
  t.equal(submitted.length, 3, 'three messages in all');
  t.match(submitted[2]!, { sessionKey: 'cron:1', channel: 'cron', chatId: '1', sender: 'cron', text: /^\[scheduled job #1, every 1m, run late: 60 scheduled times passed while pinclaw was not running\]\ntick$/ });
  t.same(submitted[0]!.meta, { cron: { jobId: 1, runId: runs[2]!.id, scheduledAt: t0 + MIN, kind: 'scheduled' } });

  // A scheduled time already in the run log is never submitted again, even when the job is set
  // back to it (a resume computed under a clock that went back, a restored copy of the store).
  answerAll(db);
  db.prepare('update cron_jobs set next_run_at = ? where id = ?').run(t0 + 2 * MIN, job.id);
  now = t0 + 2 * MIN;
  t.same(await tick(), [{ kind: 'scheduled', missed: 0, status: 'duplicate' }]);
  t.equal(submitted.length, 3, 'nothing submitted');
  t.equal(getJob(db, job.id)!.next_run_at, t0 + 3 * MIN, 'the job moved on');
  t.match(l.out.join('\n'), /info: cron job 1: the run for 2026-01-10T10:02:00\.000Z is already recorded; not firing it again/);

  // Two schedulers (two processes) deciding from the same read: the second finds the job moved.
  const seen = getJob(db, job.id)!;
  now = t0 + 3 * MIN;
  const ctx = { db, submit, channels: ['cron'], log: l.log, graceMs: 60_000 };
  t.match(fireJob(ctx, seen, now), { result: { status: 'fired' } });
  t.match(fireJob(ctx, seen, now), { result: { status: 'stale' } }, 'the same decision again records nothing');
  t.equal(submitted.length, 4);
});

t.test('the run row, the message and the next run are one transaction', async (t) => {
  const { db, config } = store(t);
  const t0 = at('2026-01-10T10:00:00Z');
  const job = await addJob(db, { every: '1m', message: 'x' }, { config, now: t0, createdBy: 'cli', name: flag });
  const firing = { jobId: job.id, expectedNextRunAt: job.next_run_at, scheduledAt: job.next_run_at!, firedAt: job.next_run_at!, kind: 'scheduled' as const, missed: 0, nextRunAt: job.next_run_at! + MIN };
  t.throws(() => recordRun(db, firing, () => {
    enqueue(db, { sessionKey: 's', channel: 'cron', chatId: '1', sender: 'cron', text: 'x' }, 0);
    throw new Error('the message was refused');
  }), /refused/);
  t.equal(runsOf(db, job.id).length, 0, 'no run row');
  t.equal((db.prepare('select count(*) as n from inbound').get() as { n: number }).n, 0, 'no inbound row');
  t.equal(getJob(db, job.id)!.next_run_at, job.next_run_at, 'the job did not move');
  // The scheduler records a refused message as an error run, so the job moves on.
  const l = lines();
  const sched = createScheduler({ db, submit: () => { throw new Error('message refused: too long'); }, channels: ['cron'], now: () => firing.firedAt, log: l.log });
  t.match(await sched.tick(), [{ result: { status: 'failed', error: 'message refused: too long' } }]);
  t.match(lastRun(db, job.id), { outcome: 'error', reply: 'message refused: too long', inbound_id: null });
  t.equal(getJob(db, job.id)!.next_run_at, firing.nextRunAt);
});

t.test('missed-run policy after downtime: a recurring job runs once, a past one-shot runs late, then done', async (t) => {
  const { db, config } = store(t);
  const added = at('2026-01-05T12:00:00Z');
  const ctx = { config, now: added, createdBy: 'cli', name: flag };
  const daily = await addJob(db, { cron: '0 9 * * *', message: 'brief' }, ctx);
  const once = await addJob(db, { at: '2026-01-06T18:00', message: 'call mum' }, ctx);
  const soon = await addJob(db, { at: '2026-01-08T09:00:30', message: 'on time' }, ctx);
  const { submitted, submit } = submitter(db);
  const l = lines();
  // The gateway was down from the 5th to the 8th, 09:00:20 Berlin time.
  const now = at('2026-01-08T08:00:20Z');
  const sched = createScheduler({ db, submit, channels: ['cron'], now: () => now, log: l.log });
  const fired = await sched.tick();
  t.same(fired.map((f) => [f.jobId, f.kind, f.missed, f.result.status]), [
    [daily.id, 'missed', 2, 'fired'],
    [once.id, 'late', 0, 'fired'],
  ], 'one run each; the one-shot due in 10 s is not touched');
  t.match(lastRun(db, daily.id), { kind: 'missed', missed: 2, scheduled_at: at('2026-01-08T08:00:00Z') }, 'recorded for the last of the missed times');
  t.equal(iso(getJob(db, daily.id)!.next_run_at), '2026-01-09T08:00:00.000Z', 'then its schedule');
  t.match(getJob(db, once.id), { state: 'done', next_run_at: null });
  t.match(submitted[1]!.text, /^\[scheduled job #2, at 2026-01-06T17:00:00\.000Z, run late: its time passed while pinclaw was not running\]\ncall mum$/);
  t.match(l.out.join('\n'), /warn: cron job 2: its time 2026-01-06T17:00:00\.000Z passed while the gateway was not running; running it now/);
  t.equal(getJob(db, soon.id)!.state, 'active');
  // A time passed by less than the grace is on time, not missed.
  const later = createScheduler({ db, submit, channels: ['cron'], now: () => at('2026-01-08T08:00:40Z'), log: l.log });
  t.same((await later.tick()).map((f) => [f.jobId, f.kind]), [[soon.id, 'scheduled']]);
});

t.test('a job does not pile up behind its unanswered run, and a channel that does not run is an error', async (t) => {
  const { db, config } = store(t, (c) => (c.channels.telegram.token = '1:x'));
  const t0 = at('2026-01-10T10:00:00Z');
  let now = t0;
  const job = await addJob(db, { every: '1m', message: 'x' }, { config, now: t0, createdBy: 'cli', name: flag });
  const tg = await addJob(db, { every: '1m', message: 'y', deliver: 'telegram:42' }, { config, now: t0, createdBy: 'cli', name: flag });
  const { submitted, submit } = submitter(db);
  const sched = createScheduler({ db, submit, channels: ['cron', 'http'], now: () => now, log: lines().log });
  now = t0 + MIN;
  await sched.tick();
  now = t0 + 2 * MIN;
  await sched.tick();
  t.same(runsOf(db, job.id).map((r) => [r.kind, r.outcome]), [['skipped', 'skipped'], ['scheduled', 'pending']]);
  t.match(runsOf(db, tg.id), [{ outcome: 'error', reply: /channel telegram does not run in this gateway/ }, { outcome: 'error' }]);
  t.equal(submitted.length, 1, 'one message: the first run of the logged job');
});

t.test('pause and resume; the loop wakes when a job is added in this process', async (t) => {
  const { db, config } = store(t);
  const t0 = at('2026-01-10T10:00:00Z');
  const job = await addJob(db, { every: '1h', message: 'x' }, { config, now: t0, createdBy: 'cli', name: flag });
  t.match(pauseJob(db, job.id, t0 + 1000), { state: 'paused', next_run_at: null });
  const resumed = await resumeJob(db, job.id, t0 + 5 * 3_600_000 + 1000);
  t.match(resumed, { state: 'active', next_run_at: t0 + 6 * 3_600_000 }, 'from now on: the paused hours are not made up');
  t.equal(pauseJob(db, 99, t0), undefined);
  const once = await addJob(db, { at: '20m', message: 'x' }, { config, now: t0, createdBy: 'cli', name: flag });
  db.prepare(`update cron_jobs set state = 'done', next_run_at = null where id = ?`).run(once.id);
  await t.rejects(resumeJob(db, once.id, t0), /ran at its time and is done/);

  let woken = 0;
  const off = onJobsChanged(() => woken++);
  await addJob(db, { every: '1h', message: 'x' }, { config, now: t0, createdBy: 'cli', name: flag });
  off();
  t.equal(woken, 1, 'adding tells the scheduler of this process');
});

t.test('HEARTBEAT.md: what counts as a task', async (t) => {
  t.equal(heartbeatTask(undefined), undefined, 'no file');
  t.equal(heartbeatTask(''), undefined);
  t.equal(heartbeatTask('# Heartbeat\n\n## Daily\n\n   \n'), undefined, 'headings only');
  t.equal(heartbeatTask('# Heartbeat\n<!-- check the plants\nand the mail -->\n'), undefined, 'a comment over lines');
  t.equal(heartbeatTask('<!-- never closed\n- water the plants'), undefined, 'an unclosed comment runs to the end');
  t.equal(heartbeatTask('# Heartbeat\n\n(Tasks to check periodically. Empty means nothing to do.)\n'), undefined, 'the starter of earlier versions');
  t.equal(heartbeatTask('# Heartbeat\n---\n'), undefined, 'a rule');
  t.equal(heartbeatTask('# Heartbeat\n<!-- a note -->\n- If the greenhouse is above 35 °C, tell me.\n'), '# Heartbeat\n\n- If the greenhouse is above 35 °C, tell me.', 'a task: the file without its comments');
});

/** A provider stand-in that counts its calls and answers from a list. */
function countingProvider(replies: string[]): Provider & { calls: number } {
  const p = scriptedProvider([], async () => reply(replies.shift() ?? 'HEARTBEAT_OK'));
  const counted = {
    id: p.id,
    calls: 0,
    complete: async (req: Parameters<Provider['complete']>[0]) => {
      counted.calls++;
      return p.complete(req);
    },
  };
  return counted;
}

function heartbeatFixture(t: Test, replies: string[]) {
  // No memories in the prompt: the heartbeat's turns need none, and the memory would load for them.
  const { db, config, paths } = store(t, (c) => (c.memory.promptTokens = 0));
  const provider = countingProvider(replies);
  const delivered: OutboundRow[] = [];
  const owner: ChannelAdapter = { name: 'test', debounceMs: 0, send: async (o) => void delivered.push(o) };
  let forward: ((m: { channel: string; chatId: string; text: string; sessionKey?: string; idempotencyKey?: string }) => unknown) | undefined;
  const hbChannel = heartbeatChannel({ deliver: { channel: 'test', chatId: 'owner' }, forward: () => forward, log: lines().log });
  const rt = createRuntime({ db, config, paths, env: {}, channels: [hbChannel, owner], provider });
  forward = (m) => rt.conductor.send(m);
  rt.conductor.start();
  t.teardown(() => rt.conductor.stop(1000));
  const l = lines();
  const hb = createHeartbeat({ db, workspace: paths.workspace, everyMs: 30 * MIN, session: 'heartbeat', submit: (m) => rt.conductor.submit(m), log: l.log });
  const file = join(paths.workspace, 'HEARTBEAT.md');
  const inboundCount = () => (db.prepare('select count(*) as n from inbound').get() as { n: number }).n;
  /** Waits until the owner's channel has been handed `n` messages. */
  const deliveredCount = async (n: number) => {
    for (let i = 0; delivered.length < n; i++) {
      if (i > 500) throw new Error(`only ${delivered.length} messages delivered`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  return { db, rt, provider, delivered, hb, file, inboundCount, deliveredCount, log: l.out };
}

t.test('heartbeat: a file without a task makes no message and no model call', async (t) => {
  const f = heartbeatFixture(t, []);
  t.same(f.hb.beat(), { status: 'idle' }, 'the starter file of a fresh workspace');
  for (const text of ['', '# Heartbeat\n\n## Later\n', '<!-- nothing for now -->\n', '# Heartbeat\n<!--\n- water the plants\n-->\n']) {
    writeFileSync(f.file, text);
    t.same(f.hb.beat(), { status: 'idle' }, JSON.stringify(text));
  }
  rmSync(f.file);
  t.same(f.hb.beat(), { status: 'idle' }, 'no file');
  t.equal(f.inboundCount(), 0, 'no inbound row');
  t.equal(f.provider.calls, 0, 'no provider call');
});

t.test('heartbeat: a task makes one turn; HEARTBEAT_OK is not delivered, anything else is', async (t) => {
  const f = heartbeatFixture(t, ['HEARTBEAT_OK', 'The greenhouse is at 37 °C.']);
  writeFileSync(f.file, '# Heartbeat\n\n- If the greenhouse is above 35 °C, tell me.\n');
  const first = f.hb.beat();
  t.match(first, { status: 'submitted' });
  const id = (first as { inboundId: number }).inboundId;
  t.same(f.hb.beat(), { status: 'busy', inboundId: id }, 'a second beat while the first waits is skipped');
  const answer = await f.rt.conductor.delivered(id);
  t.equal(answer.text, 'HEARTBEAT_OK');
  t.equal(answer.channel, HEARTBEAT_CHANNEL);
  t.equal(f.provider.calls, 1, 'one model call');
  t.equal(f.inboundCount(), 1);
  t.match(f.db.prepare('select session_key, channel, sender, text from inbound').get(), {
    session_key: 'heartbeat', channel: 'heartbeat', sender: 'heartbeat',
    text: /^\[heartbeat: the periodic check \(every 30m\) of the tasks in HEARTBEAT\.md.*reply with exactly HEARTBEAT_OK and nothing else\.\]\n# Heartbeat\n\n- If the greenhouse is above 35 °C, tell me\.$/,
  });
  t.same(f.delivered, [], 'HEARTBEAT_OK reached nobody');
  t.equal((f.db.prepare(`select count(*) as n from outbound where channel = 'test'`).get() as { n: number }).n, 0, 'not even recorded for the owner');

  const second = f.hb.beat();
  t.match(second, { status: 'submitted' });
  await f.rt.conductor.delivered((second as { inboundId: number }).inboundId);
  await f.deliveredCount(1);
  t.match(f.delivered, [{ channel: 'test', chat_id: 'owner', text: 'The greenhouse is at 37 °C.', session_key: 'heartbeat' }]);
  t.equal(f.provider.calls, 2);
});

t.test('heartbeat timer: it beats every interval, counted from the last beat also across a restart', async (t) => {
  const { db, paths } = store(t);
  mkdirSync(paths.workspace, { recursive: true });
  writeFileSync(join(paths.workspace, 'HEARTBEAT.md'), '- look around\n');
  const beats: number[] = [];
  // Each beat is noted with the time it stored as its own (read back at submit), so that the
  // intervals below are the heartbeat's, not the machine's delay between its store write and this.
  const make = (everyMs: number) => createHeartbeat({ db, workspace: paths.workspace, everyMs, session: 'heartbeat', submit: () => ({ id: beats.push(Number(getState(db, 'heartbeat.last_at'))) }), log: lines().log });
  const hb = make(40);
  hb.start();
  t.teardown(() => hb.stop());
  const until = async (ok: () => boolean) => {
    for (let i = 0; !ok(); i++) {
      if (i > 500) throw new Error(`condition not met; ${beats.length} beats`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  await until(() => beats.length >= 2);
  hb.stop();
  const n = beats.length;
  t.ok(beats[1]! - beats[0]! >= 40, `an interval apart (${beats[1]! - beats[0]!} ms)`);
  t.equal(Number(getState(db, 'heartbeat.last_at')), beats[n - 1], 'the time of the last beat is kept in the store');
  // Restarted with an interval of an hour, an hour and more after the last beat: it beats at once
  // (nothing else could make it beat within this test).
  setState(db, 'heartbeat.last_at', String(Date.now() - 3_600_000 - 1000));
  const restarted = make(3_600_000);
  restarted.start();
  t.teardown(() => restarted.stop());
  await until(() => beats.length > n);
  restarted.stop();
  t.equal(beats.length, n + 1, 'once');
});

t.test('the cron tools through the registry: policy, input errors, audit', async (t) => {
  const { db, config, paths } = store(t, (c) => {
    c.channels.telegram.token = '1:x';
    c.tools.controlChats = ['cli:local'];
  });
  const { registry } = configuredRegistry({ config, paths, env: {}, db });
  const owner: ToolContext = { sessionKey: 'cli:main', channel: 'cli', chatId: 'local', caller: 'owner' };
  const chat: ToolContext = { sessionKey: 'telegram:42', channel: 'telegram', chatId: '42', caller: '42' };
  const call = async (name: string, input: unknown, ctx = owner) => (await registry.call({ name, input }, ctx));

  const added = await call('cron_add', { every: '1h', message: 'drink water' }, chat);
  t.equal(added.outcome, 'ok', added.result.content);
  t.match(added.result.content, /^Added job #1: every 1h; first run .*; answers go to telegram:42 \(session telegram:42\)\.$/, 'a job added in a chat answers there');
  const logged = await call('cron_add', { cron: '0 9 * * 1-5', message: 'brief', tz: 'Europe/Berlin' });
  t.match(logged.result.content, /^Added job #2: cron '0 9 \* \* 1-5' \(Europe\/Berlin\).*answers go to the log \(session cron:2\)/, 'from the CLI (no chat to answer in): logged');

  const bad = await call('cron_add', { every: 'often', message: 'x' });
  t.match(bad, { outcome: 'error', result: { isError: true, content: "cron_add: every: 'often' is not a duration; expected 30s, 15m, 2h, 1d, 1w or a sum such as 1h30m" } });
  t.match(await call('cron_add', { message: 'x' }), { result: { content: 'cron_add: give exactly one of cron, every or at' } });
  t.match(await call('cron_add', { every: '1h', message: 'x', tz: 'Nowhere/City' }), { result: { content: /cron_add: tz: unknown time zone 'Nowhere\/City'/ } });
  t.match(await call('cron_add', { every: '1h', message: 'x', deliver: 'matrix:1' }), { result: { content: /cron_add: deliver: unknown channel 'matrix'/ } });
  t.match(await call('cron_add', { every: '1h', message: 'x', deliver: 'mqtt:1' }), { result: { content: /cron_add: deliver: channel mqtt is not set up \(mqtt\.url is unset\)/ } });
  t.match(await call('cron_add', { every: '1h', message: 'x', session: 'telegram:7' }), { outcome: 'error', rule: 'inputSchema' }, 'a tool cannot pick another session');
  t.match(await call('cron_add', { every: '1h', message: 'x', deliver: 'telegram:7' }, chat), { outcome: 'denied', rule: 'tools.controlChats' }, 'delivering to another chat needs a control chat');
  t.equal(listJobs(db).length, 2, 'refused calls stored nothing');

  const list = await call('cron_list', {}, chat);
  t.match(list.result.content, /^#1 every 1h; next run \S+; never run; replies to telegram:42 in session telegram:42; message: drink water\n#2 cron/);
  t.match(await call('cron_pause', { id: 1 }, chat), { outcome: 'ok', result: { content: 'Job #1 is paused.' } });
  t.match(await call('cron_resume', { id: 1 }, chat), { outcome: 'ok', result: { content: /^Job #1 is active; next run / } });
  t.match(await call('cron_remove', { id: 2 }, chat), { outcome: 'denied', rule: 'tools.controlChats' }, "a chat cannot remove another chat's job");
  t.match(await call('cron_remove', { id: 2 }), { outcome: 'ok', result: { content: "Removed job #2 (cron '0 9 * * 1-5' (Europe/Berlin))." } });
  t.match(await call('cron_remove', { id: 2 }), { outcome: 'error', result: { content: 'cron_remove: no job #2; cron_list shows the jobs' } });
  t.same(listJobs(db).map((j) => j.id), [1]);

  const audit = queryAudit(db, {}).filter((r) => r.tool.startsWith('cron_'));
  t.ok(audit.length >= 12, 'every call is an audit row');
  t.match(audit.find((r) => r.tool === 'cron_remove' && r.outcome === 'denied'), { chat_id: '42', rule: 'tools.controlChats' });

  // Profiles: cron_list is read-only (minimal), the others change things (standard).
  const minimal = configuredRegistry({ config: { ...config, tools: { ...config.tools, profile: 'minimal' } }, paths, env: {}, db }).registry;
  const verdicts = Object.fromEntries(minimal.list(owner).map((l) => [l.tool.name, l.decision.allowed]));
  t.match(verdicts, { cron_list: true, cron_add: false, cron_remove: false, cron_pause: false, cron_resume: false });
});

t.test('a job that cannot be computed is paused, not retried at every pass', async (t) => {
  const { db, config } = store(t);
  const t0 = at('2026-01-10T10:00:00Z');
  const job = await addJob(db, { cron: '0 9 * * *', message: 'x' }, { config, now: t0, createdBy: 'cli', name: flag });
  db.prepare(`update cron_jobs set expr = 'garbage', next_run_at = ? where id = ?`).run(t0, job.id);
  const l = lines();
  const sched = createScheduler({ db, submit: submitter(db).submit, channels: ['cron'], now: () => t0 + 1000, log: l.log });
  t.same(await sched.tick(), []);
  t.match(getJob(db, job.id) as CronJob, { state: 'paused', next_run_at: null });
  t.match(l.out.join('\n'), /error: cron job 1: its schedule cannot be computed .*; the job is paused/);
  t.type(dueSlots, 'function');
  t.ok(JobInputError);
});

// ---- Through the bundle: the command line and a gateway process. ----

const schedulerChunk = join(bundle, '..', 'lazy', 'scheduler.cjs');

t.test('croner and the code that fires jobs are in the lazy chunk, not in the main bundle', { skip: !existsSync(schedulerChunk) && 'no bundle: node scripts/build.mjs' }, async (t) => {
  const main = readFileSync(bundle, 'utf8');
  const chunk = readFileSync(schedulerChunk, 'utf8');
  // Strings each module writes (minified code keeps string literals).
  const where: [string, string][] = [['croner', 'space separated parts are required'], ['schedule.ts', 'is not a cron expression'], ['fire.ts', '(the gateway was down, or the clock jumped); running once now'], ['runs.ts', 'its message is no longer in the queue'], ['cron-command.ts', 'pinclaw cron runs ID']];
  for (const [what, text] of where) {
    t.ok(chunk.includes(text), `${what} is in the chunk`);
    t.notOk(main.includes(text), `${what} is not in the main bundle`);
  }
  t.ok(main.includes('holds no task; nothing to do'), 'the heartbeat, which every gateway runs, is in the bundle');
});

interface JobView {
  id: number;
  schedule: string;
  state: string;
  nextRun: string | null;
  lastRun: RunJson | null;
  session: string;
  deliver: string | null;
}
interface RunJson { kind: string; outcome: string; reply: string | null; inboundId: number | null; missed: number }

function cronJson<T>(env: NodeJS.ProcessEnv, ...args: string[]): T {
  const r = runPinclaw(['cron', ...args, '--json'], { env });
  if (r.code !== 0) throw new Error(`cron ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

t.test('pinclaw cron: bad input exits 2 naming the flag and stores nothing; add, list, remove', async (t) => {
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home, PINCLAW_AGENT_TIMEZONE: 'Europe/Berlin' });
  const bad: [string[], RegExp][] = [
    [['--cron', '0 9 * *'], /^pinclaw: --cron: '0 9 \* \*' is not a cron expression: /],
    [['--every', '5'], /^pinclaw: --every: '5' is not a duration; expected 30s, 15m/],
    [['--at', '2026-02-30T09:00'], /^pinclaw: --at: '2026-02-30T09:00' is not a valid date and time/],
    [['--at', '2001-01-01T09:00'], /^pinclaw: --at: '2001-01-01T09:00' \(2001-01-01T08:00:00\.000Z\) is in the past/],
    [['--every', '1h', '--tz', 'Mars/Base'], /^pinclaw: --tz: unknown time zone 'Mars\/Base'/],
    [['--every', '1h', '--deliver', 'telegram:42'], /^pinclaw: --deliver: channel telegram is not set up \(channels\.telegram\.token is unset\)/],
    [['--every', '1h', '--deliver', 'nowhere:1'], /^pinclaw: --deliver: unknown channel 'nowhere'/],
    [['--every', '1h', '--cron', '* * * * *'], /^pinclaw: give exactly one of --cron, --every or --at \(got --cron and --every\)/],
    [['--every', '1h', '--message'], /Option '-m, --message <value>' argument missing/],
  ];
  for (const [args, message] of bad) {
    const r = runPinclaw(['cron', 'add', '--message', 'x', ...args], { env });
    t.equal(r.code, 2, args.join(' '));
    t.match(r.stderr, message);
    t.match(r.stderr, /usage: pinclaw cron add/);
  }
  t.equal(runPinclaw(['cron', 'add', '--every', '1h'], { env }).code, 2, '--message is required');
  t.notOk(existsSync(join(home, 'pinclaw.db')), 'nothing stored, not even a database');

  const added = cronJson<JobView>(env, 'add', '--cron', '0 9 * * 1-5', '-m', 'the morning brief');
  t.match(added, { id: 1, schedule: "cron '0 9 * * 1-5' (Europe/Berlin)", state: 'active', session: 'cron:1', deliver: null, lastRun: null });
  t.match(added.nextRun, /T0[78]:00:00\.000Z$/, '9:00 in Berlin');
  const text = runPinclaw(['cron', 'add', '--every', '2h', '--message', 'stretch', '--session', 'health'], { env });
  t.equal(text.code, 0, text.stderr);
  t.match(text.stdout, /^2  every 2h  next \S+  never run  → log  \[health\]  stretch\n$/);
  const list = cronJson<JobView[]>(env, 'list');
  t.same(list.map((j) => [j.id, j.schedule, j.session]), [[1, "cron '0 9 * * 1-5' (Europe/Berlin)", 'cron:1'], [2, 'every 2h', 'health']]);
  t.match(runPinclaw(['cron', 'pause', '2'], { env }).stdout, 'job 2 is paused');
  t.match(runPinclaw(['cron', 'resume', '2'], { env }).stdout, /^job 2 is active; next run /);
  t.match(runPinclaw(['cron', 'remove', '1'], { env }), { code: 0, stdout: 'removed job 1\n' });
  t.match(runPinclaw(['cron', 'remove', '1'], { env }), { code: 1, stderr: 'pinclaw: no job 1; pinclaw cron list shows the jobs\n' });
  t.match(runPinclaw(['cron', 'remove', 'one'], { env }), { code: 2, stderr: /expected a job id \(a number that pinclaw cron list shows\), got 'one'/ });
  t.match(runPinclaw(['cron', 'list', '--every', '1h'], { env }), { code: 2, stderr: /--every is only for 'cron add'/ });
  t.match(runPinclaw(['cron', 'frobnicate'], { env }), { code: 2, stderr: /unknown subcommand 'frobnicate'/ });
  t.same(cronJson<JobView[]>(env, 'list').map((j) => j.id), [2]);
});

t.test('pinclaw cron add without --deliver: to owner.notify when set; --deliver log keeps the log', async (t) => {
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home });
  writeFileSync(join(home, 'config.json'), JSON.stringify({ channels: { telegram: { token: '123:abc' } }, owner: { notify: 'telegram:42' } }));
  t.match(cronJson<JobView>(env, 'add', '--every', '1h', '-m', 'water the plants'), { deliver: 'telegram:42', session: 'telegram:42' });
  t.match(cronJson<JobView>(env, 'add', '--every', '1h', '-m', 'quiet', '--deliver', 'log'), { deliver: null, session: 'cron:2' });
  writeFileSync(join(home, 'config.json'), JSON.stringify({ owner: { notify: 'telegram:42' } }));
  const r = runPinclaw(['cron', 'add', '--every', '1h', '-m', 'x'], { env });
  t.equal(r.code, 78);
  t.match(r.stderr, /^pinclaw: owner\.notify: channel telegram is not set up \(channels\.telegram\.token is unset\).*; or give --deliver CHANNEL:CHAT, or --deliver log$/m);
  t.same(cronJson<JobView[]>(env, 'list').map((j) => j.id), [1, 2], 'nothing stored by the refused add');
});

t.test('pinclaw cron run: one turn now in the job\'s session, the reply printed, the run logged as manual', async (t) => {
  const llm = await startAnthropicServer(textReply('Stretched.'));
  t.teardown(() => llm.close());
  const env = cleanEnv({ PINCLAW_HOME: tempDir(), ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: llm.url });
  cronJson(env, 'add', '--every', '2h', '--message', 'time to stretch', '--session', 'health');
  const r = await runPinclawAsync(['cron', 'run', '1'], { env });
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout, 'Stretched.\n');
  t.equal(llm.requests.length, 1);
  t.match(JSON.stringify(llm.requests[0]!.body.messages.at(-1).content), /\[scheduled job #1, every 2h, run by hand now\]\\ntime to stretch/);
  t.match(cronJson<RunJson[]>(env, 'runs', '1'), [{ kind: 'manual', outcome: 'ok', reply: 'Stretched.' }]);
  t.match(cronJson<JobView[]>(env, 'list'), [{ lastRun: { kind: 'manual', outcome: 'ok' }, state: 'active' }]);
  const sessions = runPinclaw(['sessions', 'show', 'health'], { env });
  t.match(sessions.stdout, /assistant: Stretched\./, 'the turn is in the job\'s session');
  t.match(await runPinclawAsync(['cron', 'run', '7'], { env }), { code: 1, stderr: /no job 7/ });
});

/** Polls `ok` (the run log, read by the CLI) until it holds. */
async function eventually<T>(read: () => T, ok: (v: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = read();
    if (ok(v)) return v;
    if (Date.now() > until) throw new Error(`${what}: not after ${timeoutMs} ms; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

t.test('the gateway fires an --every 1s job through the queue; its reply is logged and its runs recorded', async (t) => {
  const llm = await startAnthropicServer(textReply('All backups are fine.'));
  t.teardown(() => llm.close());
  const env = cleanEnv({ PINCLAW_HOME: tempDir(), ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: llm.url, PINCLAW_HEARTBEAT_EVERY: '0' });
  cronJson(env, 'add', '--every', '1s', '--message', 'check the backups');
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env });
  t.teardown(() => gw.child.kill('SIGKILL'));
  await gw.waitFor(/gateway listening on/);
  t.match(gw.stderr(), /scheduler: 1 active job/);
  await gw.waitFor(/cron job 1 \(session cron:1\) replied: All backups are fine\.[\s\S]*cron job 1 \(session cron:1\) replied/);
  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0);
  const runs = cronJson<RunJson[]>(env, 'runs', '1');
  const answered = runs.filter((r) => r.outcome === 'ok');
  t.ok(answered.length >= 2, `${answered.length} runs answered`);
  t.match(answered[0], { reply: 'All backups are fine.', inboundId: Number });
  t.ok(runs.every((r) => ['scheduled', 'missed', 'skipped'].includes(r.kind)), 'on time, missed at start-up, or skipped behind an unanswered run');
  t.ok(llm.requests.length >= 2);
  t.match(JSON.stringify(llm.requests[0]!.body.messages.at(-1).content), /\[scheduled job #1, every 1s.*\]\\ncheck the backups/);
  const list = cronJson<JobView[]>(env, 'list');
  t.match(list, [{ lastRun: { outcome: String }, state: 'active' }]);
  t.ok(Date.parse(list[0]!.nextRun!) > 0);
});

/** A home with Telegram set up against the stand-in (chat 42 opened) and a model stand-in. */
async function withTelegram(t: Test, reply: string, pollTimeoutSeconds: number) {
  const tg = await startTelegramApi();
  // The owner's chat with the bot (Telegram delivers only to chats a user opened).
  tg.addChat({ id: 42, type: 'private', first_name: 'Ada' });
  const llm = await startAnthropicServer(textReply(reply));
  t.teardown(async () => Promise.all([tg.close(), llm.close()]));
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ channels: { telegram: { token: tg.token, apiBaseUrl: tg.url, allowFrom: ['42'], pollTimeoutSeconds, debounceMs: 0, streaming: false } } }));
  const env = cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: llm.url, PINCLAW_HEARTBEAT_EVERY: '0' });
  return { tg, llm, env };
}

t.test('--deliver telegram:42: the gateway delivers the job\'s reply to that chat', async (t) => {
  const { tg, env } = await withTelegram(t, 'Time to water the plants.', 2);
  const job = cronJson<JobView>(env, 'add', '--every', '1s', '--message', 'remind the owner to water the plants', '--deliver', 'telegram:42');
  t.match(job, { deliver: 'telegram:42', session: 'telegram:42' });
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env });
  t.teardown(() => gw.child.kill('SIGKILL'));
  await tg.waitFor(() => tg.sent.some((m) => m.chatId === 42 && m.text === 'Time to water the plants.'), 30_000);
  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0, gw.stderr());
  const runs = await eventually(() => cronJson<RunJson[]>(env, 'runs', '1'), (rs) => rs.some((r) => r.outcome === 'ok'), 'an answered run');
  t.match(runs.find((r) => r.outcome === 'ok'), { reply: 'Time to water the plants.' });
});

t.test('--deliver mqtt:kitchen: the gateway publishes the job\'s reply on chat/out in that session', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.stop());
  const llm = await startAnthropicServer(textReply('The bread is ready.'));
  t.teardown(() => llm.close());
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ mqtt: { url: b.url, nodeId: 'oven', homeAssistant: { enabled: false }, chat: { enabled: true } } }));
  const env = cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: llm.url, PINCLAW_HEARTBEAT_EVERY: '0' });
  const watch = await recordingClient(b, ['pinclaw/oven/chat/out']);
  t.teardown(() => watch.client.endAsync());
  const job = cronJson<JobView>(env, 'add', '--at', '1s', '--message', 'tell the kitchen when the bread is done', '--deliver', 'mqtt:kitchen');
  t.match(job, { deliver: 'mqtt:kitchen', session: 'mqtt:kitchen' });
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env });
  t.teardown(() => gw.child.kill('SIGKILL'));
  const got = await untilSeen('the reply on chat/out', () => watch.got.find((m) => m.json?.text === 'The bread is ready.'), 30_000, gw.stderr);
  t.match(got.json, { session: 'kitchen', kind: 'reply' });
  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0, gw.stderr());
  t.match(cronJson<RunJson[]>(env, 'runs', '1'), [{ outcome: 'ok', reply: 'The bread is ready.' }]);
});

t.test('cron run ID on a job with --deliver: printed here, and delivered to its chat by the gateway (at its start, or running)', async (t) => {
  // Long polls of 50 s: the running gateway finds the second reply through its 10 s wake, not a poll.
  const { tg, llm, env } = await withTelegram(t, 'unused', 50);
  cronJson(env, 'add', '--every', '1h', '--message', 'remind the owner to water the plants', '--deliver', 'telegram:42');
  // No gateway yet: the reply waits in the queue.
  llm.enqueue(textReply('Water the plants.'));
  const first = await runPinclawAsync(['cron', 'run', '1'], { env });
  t.equal(first.code, 0, first.stderr);
  t.equal(first.stdout, 'Water the plants.\n');
  t.match(first.stderr, /queued for telegram:42: a running gateway delivers it within 10 s, or when it starts/);
  t.notOk(tg.sent.some((m) => m.chatId === 42), 'nothing reached the chat without a gateway');
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env });
  t.teardown(() => gw.child.kill('SIGKILL'));
  await tg.waitFor(() => tg.sent.some((m) => m.chatId === 42 && m.text === 'Water the plants.'), 30_000);
  t.pass('the gateway delivered it when it started');
  // With the gateway running: it finds the queued reply at its next wake.
  llm.enqueue(textReply('Water them again.'));
  const second = await runPinclawAsync(['cron', 'run', '1', '--json'], { env });
  t.equal(second.code, 0, second.stderr);
  t.match(JSON.parse(second.stdout), { kind: 'manual', reply: 'Water them again.', queuedFor: 'telegram:42' });
  await tg.waitFor(() => tg.sent.some((m) => m.chatId === 42 && m.text === 'Water them again.'), 30_000);
  t.equal(tg.sent.filter((m) => m.chatId === 42).length, 2, 'each reply once');
  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0, gw.stderr());
  t.match(cronJson<RunJson[]>(env, 'runs', '1'), [{ kind: 'manual', outcome: 'ok' }, { kind: 'manual', outcome: 'ok' }]);
});
