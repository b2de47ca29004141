// The scheduler's loop in the gateway: it sleeps until the next job is due (at most pollMs, so jobs
// added by another process and jumps of the wall clock are noticed), then fires what is due through
// the conductor's submit, which it is handed (it never imports the conductor). Only this loop and
// one indexed query are in the main bundle; firing is in the lazy chunk 'scheduler' (fire.ts).
//
// Missed runs (docs/operations.md#scheduler): when a job's next run has passed by more than
// graceMs, or several of its times have passed (the gateway was down, or the clock jumped forward),
// it runs once, marked 'missed' (a one-shot: 'late'), and goes on from the next time after now.
// A clock that jumps backwards fires nothing again: next_run_at only moves forward, and a scheduled
// time already in the run log is never submitted twice (runs.ts recordRun).
import { errorMessage } from '../errors.js';
import { log as defaultLog, type Logger } from '../log.js';
import type { Db } from '../store/db.js';
import type { NewInbound } from '../store/queue.js';
import type { Fired } from './fire.js';
import { dueJobs, nextDueAt, onJobsChanged } from './jobs.js';

export type { Fired } from './fire.js';


export interface SchedulerDeps {
  db: Db;
  /** the conductor's submit: commits the inbound row (called inside the run's transaction) */
  submit(msg: NewInbound): { id: number };
  /** the channels this process runs: a job delivering elsewhere is recorded as an error, not queued for nobody */
  channels: readonly string[];
  /** wall clock, ms epoch; default Date.now */
  now?: () => number;
  log?: Logger;
  /** the longest sleep between two looks at the jobs; default 10 s */
  pollMs?: number;
  /** a run later than this after its time counts as missed (a one-shot: late); default 60 s */
  graceMs?: number;
}

export interface Scheduler {
  start(): void;
  stop(): void;
  /** Looks at the jobs now (a job was added or changed in this process). */
  wake(): void;
  /** One pass: fires every due job; what it did. Passes never overlap. */
  tick(): Promise<Fired[]>;
}

export const DEFAULT_POLL_MS = 10_000;
export const DEFAULT_GRACE_MS = 60_000;

export function createScheduler(deps: SchedulerDeps): Scheduler {
  const { db } = deps;
  const clock = deps.now ?? Date.now;
  const log = deps.log ?? defaultLog;
  const pollMs = deps.pollMs ?? DEFAULT_POLL_MS;
  const graceMs = deps.graceMs ?? DEFAULT_GRACE_MS;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<Fired[]> | undefined;
  let again = false;
  let stopped = true;
  let troubled = false;
  let unsubscribe: (() => void) | undefined;

  async function pass(): Promise<Fired[]> {
    const now = clock();
    const due = dueJobs(db, now);
    if (due.length === 0) return [];
    // Firing (croner, the run log): a lazy chunk, loaded the first time a job is due.
    const { fireJob } = await import('./fire.js');
    const ctx = { db, submit: deps.submit, channels: deps.channels, log, graceMs };
    const fired: Fired[] = [];
    for (const job of due) {
      try {
        const f = fireJob(ctx, job, now);
        if (f) fired.push(f);
        if (!f || f.result.status === 'failed') troubled = true;
      } catch (err) {
        troubled = true;
        log.error(`cron job ${job.id}: ${errorMessage(err)}`);
      }
    }
    return fired;
  }

  function tick(): Promise<Fired[]> {
    if (running) {
      again = true;
      return running;
    }
    running = pass().finally(() => {
      running = undefined;
      if (again) {
        again = false;
        void tick();
      }
    });
    return running;
  }

  function arm(): void {
    if (stopped) return;
    clearTimeout(timer);
    let delay = pollMs;
    try {
      const next = nextDueAt(db);
      if (next !== null) delay = Math.min(pollMs, Math.max(0, next - clock()));
    } catch (err) {
      log.warn(`scheduler: cannot read the jobs: ${errorMessage(err)}`);
    }
    // After a failure, not at once again: a job that cannot be recorded must not spin the loop.
    if (troubled) delay = Math.max(delay, 1000);
    troubled = false;
    timer = setTimeout(loop, delay);
    // The gateway lives on its server and signals; the scheduler alone keeps no process alive.
    timer.unref();
  }

  async function loop(): Promise<void> {
    try {
      await tick();
    } catch (err) {
      troubled = true;
      log.error(`scheduler: ${errorMessage(err)}`);
    }
    arm();
  }

  function wake(): void {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(loop, 0);
    timer.unref();
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      unsubscribe = onJobsChanged(wake);
      // The first pass at once: what fell due while the gateway was down runs now (missed-run policy).
      wake();
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      unsubscribe?.();
    },
    wake,
    tick,
  };
}
