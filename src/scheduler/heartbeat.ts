// The heartbeat: every heartbeat.every the gateway reads HEARTBEAT.md in the workspace. A file that
// holds no task (missing, or only headings, HTML comments and blank lines) costs nothing: no
// message, no model call. Otherwise its content becomes one turn in heartbeat.session, and a reply
// that is exactly HEARTBEAT_OK ("nothing to report") is dropped instead of delivered.
//
// The heartbeat is for periodic review ("anything in the calendar I should know about?"). Reacting
// to the world is what hardware triggers and cron jobs are for: they fire when something happens
// or at a set time, without polling the model (docs/operations.md#heartbeat).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { count } from '../counters.js';
import type { ChannelAdapter } from '../conductor/conductor.js';
import { errorMessage } from '../errors.js';
import { log as defaultLog, type Logger } from '../log.js';
import type { Db } from '../store/db.js';
import { inboundById, type NewInbound, type OutboundRow } from '../store/queue.js';
import { getState, setState } from '../store/state.js';
import { oneLine } from './cron-channel.js';
import { formatDuration } from './duration.js';

export const HEARTBEAT_CHANNEL = 'heartbeat';
export const HEARTBEAT_FILE = 'HEARTBEAT.md';
/** The reply that means "nothing to report": not delivered. */
export const HEARTBEAT_OK = 'HEARTBEAT_OK';

/** The starter file of earlier versions said this in plain text; it is no task either. */
const OLD_STARTER_LINE = '(Tasks to check periodically. Empty means nothing to do.)';
/** Node's timers take at most ~24.8 days; longer waits are taken in steps. */
const MAX_TIMER_MS = 86_400_000;

/**
 * The tasks in a HEARTBEAT.md, or undefined when it holds none: missing, or nothing but headings,
 * HTML comments, rules and blank lines.
 */
export function heartbeatTask(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  // An unclosed comment runs to the end of the file, as in a browser.
  const stripped = text.replace(/^\uFEFF/, '').replace(/<!--[\s\S]*?(?:-->|$)/g, '');
  const meaningful = stripped.split(/\r?\n/).some((raw) => {
    const line = raw.trim();
    return line !== '' && !/^#{1,6}(\s|$)/.test(line) && !/^(=+|-+|\*+|_+)$/.test(line) && line !== OLD_STARTER_LINE;
  });
  return meaningful ? stripped.trim() : undefined;
}

export function isHeartbeatOk(reply: string): boolean {
  return reply.trim() === HEARTBEAT_OK;
}


export interface HeartbeatDeps {
  db: Db;
  workspace: string;
  everyMs: number;
  session: string;
  /** the conductor's submit */
  submit(msg: NewInbound): { id: number };
  now?: () => number;
  log?: Logger;
}

export type BeatResult =
  | { status: 'idle' }
  /** the previous heartbeat is still waiting for its answer */
  | { status: 'busy'; inboundId: number }
  | { status: 'submitted'; inboundId: number }
  | { status: 'failed'; error: string };

export interface Heartbeat {
  start(): void;
  stop(): void;
  /** One heartbeat now. */
  beat(): BeatResult;
}

export function heartbeatText(task: string, everyMs: number): string {
  return `[heartbeat: the periodic check (every ${formatDuration(everyMs)}) of the tasks in ${HEARTBEAT_FILE}, which follow. Do what they ask now. If nothing needs the owner's attention, reply with exactly ${HEARTBEAT_OK} and nothing else.]\n${task}`;
}

export function createHeartbeat(deps: HeartbeatDeps): Heartbeat {
  const { db } = deps;
  const clock = deps.now ?? Date.now;
  const log = deps.log ?? defaultLog;
  let timer: NodeJS.Timeout | undefined;
  let stopped = true;
  let dueAt = 0;

  function readTask(): string | undefined {
    try {
      return heartbeatTask(readFileSync(join(deps.workspace, HEARTBEAT_FILE), 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log.warn(`heartbeat: cannot read ${HEARTBEAT_FILE}: ${errorMessage(err)}`);
      return undefined;
    }
  }

  function beat(): BeatResult {
    const now = clock();
    try {
      setState(db, 'heartbeat.last_at', String(now));
      const task = readTask();
      if (task === undefined) {
        log.debug(`heartbeat: ${HEARTBEAT_FILE} holds no task; nothing to do`);
        return { status: 'idle' };
      }
      // One heartbeat at a time: a slow or failing provider must not pile them up in the queue.
      const previous = Number(getState(db, 'heartbeat.inbound_id') ?? NaN);
      const row = Number.isInteger(previous) ? inboundById(db, previous) : undefined;
      if (row && (row.state === 'pending' || row.state === 'processing')) {
        log.info(`heartbeat: skipped; the previous one (message ${row.id}) is still waiting for its answer`);
        return { status: 'busy', inboundId: row.id };
      }
      const id = deps.submit({ sessionKey: deps.session, channel: HEARTBEAT_CHANNEL, chatId: HEARTBEAT_CHANNEL, sender: HEARTBEAT_CHANNEL, text: heartbeatText(task, deps.everyMs) }).id;
      setState(db, 'heartbeat.inbound_id', String(id));
      count('triggers', { source: 'heartbeat' });
      return { status: 'submitted', inboundId: id };
    } catch (err) {
      log.error(`heartbeat: ${errorMessage(err)}`);
      return { status: 'failed', error: errorMessage(err) };
    }
  }

  function arm(): void {
    if (stopped) return;
    const wait = Math.max(0, Math.min(dueAt - clock(), MAX_TIMER_MS));
    timer = setTimeout(() => {
      if (clock() >= dueAt) {
        beat();
        dueAt = clock() + deps.everyMs;
      }
      arm();
    }, wait);
    timer.unref();
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      // Counted from the last heartbeat, also across restarts: a gateway restarted often neither
      // beats at every start nor never. One that was down longer than the interval beats at once.
      const last = Number(getState(db, 'heartbeat.last_at') ?? NaN);
      const now = clock();
      dueAt = Number.isFinite(last) && last <= now ? last + deps.everyMs : now + deps.everyMs;
      arm();
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
    beat,
  };
}

/** What the heartbeat channel hands a reply worth reading to: the conductor's send. */
export type Forward = (m: { channel: string; chatId: string; text: string; sessionKey?: string; idempotencyKey?: string }) => unknown;

export interface HeartbeatChannelOptions {
  /** heartbeat.deliver: the chat that gets replies other than HEARTBEAT_OK; undefined: logged */
  deliver?: { channel: string; chatId: string };
  /** the conductor's send, once it exists (the channel is made before the conductor) */
  forward(): Forward | undefined;
  log?: Pick<Logger, 'debug' | 'info' | 'warn'>;
}

/**
 * The 'heartbeat' channel: the heartbeat's turns are answered here. HEARTBEAT_OK is dropped; any
 * other reply is logged, or handed to heartbeat.deliver's chat as a new outbound message (recorded
 * once per reply, so a retried delivery does not send it twice). A failure notice is only logged:
 * the owner is not told every half hour that the provider is down.
 */
export function heartbeatChannel(opts: HeartbeatChannelOptions): ChannelAdapter {
  const log = opts.log ?? defaultLog;
  return {
    name: HEARTBEAT_CHANNEL,
    debounceMs: 0,
    async send(o: OutboundRow) {
      if (o.kind === 'notice') {
        log.warn(`heartbeat could not be answered: ${oneLine(o.text)}`);
        return;
      }
      if (isHeartbeatOk(o.text)) {
        log.debug('heartbeat: nothing to report');
        return;
      }
      const forward = opts.deliver && opts.forward();
      if (!opts.deliver || !forward) {
        log.info(`heartbeat replied: ${oneLine(o.text)}`);
        return;
      }
      forward({ ...opts.deliver, text: o.text, sessionKey: o.session_key, idempotencyKey: `heartbeat:${o.id}` });
    },
  };
}
