// The conductor: consumes the durable queue. One lane per session (serial within it), up to
// `concurrency` sessions at once; each finished turn commits session, reply and row state in one
// transaction, then the reply is delivered through the channel it came from. `send` records
// messages that answer nothing (send_message) and delivers them the same way.
import { count } from '../counters.js';
import { randomUUID } from 'node:crypto';
import type { PinclawConfig } from '../config/schema.js';
import { errorMessage, PinclawError } from '../errors.js';
import { log } from '../log.js';
import type { Db } from '../store/db.js';
import {
  claimBurst, enqueue, markAttemptFailed, markDone, nextAvailableAt, readySessions, recordOutbound, recoverOrphans, release, burstMembers, deliveredFor, retryOutboundNow,
  type InboundRow, type NewInbound, type OutboundRow,
} from '../store/queue.js';
import { DiskFullError, homeOf, isDiskFull } from '../store/disk.js';
import { saveSession } from '../store/sessions.js';
import type { Bus } from './bus.js';
import { createDeliverer, defaultDeliveryRetryDelay, type Deliverer, type DeliveryChannel } from './delivery.js';
import { ownerAlive, selfOwner } from './owner.js';
import { runTurn, type TurnDeps, type TurnProgress } from './turn.js';
import { stoppedConversation } from './stopped-turn.js';
import { idleMemory } from './idle-memory.js';
import type { ConfirmRequest } from '../tools/types.js';

export interface ChannelAdapter extends DeliveryChannel {
  name: string;
  debounceMs: number;
  /** Asks the owner in that chat to confirm a tool call; channels that cannot ask leave it out. */
  confirm?(chatId: string, request: ConfirmRequest): Promise<boolean>;
}

export interface ConductorOptions extends Omit<TurnDeps, 'send'> {
  bus: Bus;
  channels: readonly ChannelAdapter[];
  /** only these sessions are claimed (a CLI process serves its own session) */
  sessions?: readonly string[];
  /** delay before retry `attempt` (1-based) of a failed turn */
  retryDelayMs?: (attempt: number) => number;
  /** delay before retry `attempt` (1-based) of a failed delivery */
  deliveryRetryDelayMs?: (attempt: number) => number;
}

/** A message to a chat that is not the reply to an inbound one. */
export interface OutgoingMessage {
  channel: string;
  chatId: string;
  text: string;
  /** the session it belongs to (the sender's); default `channel:chatId` */
  sessionKey?: string;
  /** one row per key: a sender that may repeat itself (a retried job) records the message once; default: every call is new */
  idempotencyKey?: string;
}

export interface Conductor {
  /** Commits the message (refusing one above agent.maxMessageChars) and wakes the lanes. */
  submit(msg: NewInbound): InboundRow;
  /**
   * Records the message as an outbound row, committed before anything is delivered, then starts a
   * delivery pass; returns the row. A crash before delivery leaves it pending for the next start.
   * Throws for a channel this process does not run and for a text above agent.maxMessageChars.
   */
  send(msg: OutgoingMessage): OutboundRow;
  start(): void;
  /** Stops claiming, waits up to `drainMs` for running turns, then aborts them. */
  stop(drainMs: number): Promise<void>;
  /**
   * Stops the session's running turn at the owner's word; false when none runs. Its messages are
   * done, not tried again, a notice says it was stopped, and `turn_aborted` is emitted.
   */
  abort(sessionKey: string): boolean;
  /**
   * Resolves with the reply or notice recorded for an inbound message once it has been delivered;
   * rejects (a DiskFullError when the disk is full) when its turn could not be saved at all: the
   * message stays queued and is tried again once the write succeeds, but nobody should wait for that.
   */
  delivered(inboundId: number): Promise<OutboundRow>;
  /** Tries the channel's undelivered replies now (it has just come back), not at their retry time. */
  retryDelivery(channel: string): void;
  /**
   * Looks at the queue again for what another process put there (a reply `pinclaw cron run` queued
   * for a channel only the gateway serves): a delivery pass per channel, then the pump.
   */
  wake(): void;
}

/**
 * Fault injection for the crash-recovery tests: PINCLAW_CRASH_AT names a point to die at. Read once
 * (the tests set it in a child's environment): each read of process.env is a call into C++, and a
 * turn passes two points.
 */
let crashAt: string | undefined | null = null;
function crashPoint(name: string): void {
  if (crashAt === null) crashAt = process.env.PINCLAW_CRASH_AT;
  if (crashAt === name) process.kill(process.pid, 'SIGKILL');
}

/** The abort reason of a turn the owner stopped, told apart from a shutdown's. */
class TurnAborted extends Error {
  constructor() {
    super('stopped by the owner');
  }
}

export const ABORTED_NOTICE = 'Stopped: you ended this turn before it was done.';

const defaultRetryDelay = (attempt: number) => Math.min(5 * 60_000, 5000 * 2 ** (attempt - 1));

export function createConductor(opts: ConductorOptions): Conductor {
  const { db, config, bus } = opts;
  const owner = selfOwner();
  const channels = new Map(opts.channels.map((c) => [c.name, c]));
  const channelNames = [...channels.keys()];
  const running = new Map<string, Promise<void>>();
  const aborts = new Map<string, AbortController>();
  const waiters = new Map<number, { resolve: (o: OutboundRow) => void; reject: (err: Error) => void }[]>();
  /** retries of failure records that could not be written (storeLater) */
  const storeRetries = new Set<NodeJS.Timeout>();
  /** Sessions with a turn's outcome not yet written (storeLater): none of their later messages runs before it. */
  const unsaved = new Set<string>();
  const home = homeOf(db.name);
  const retryDelay = opts.retryDelayMs ?? defaultRetryDelay;
  let started = false;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  const idle = idleMemory(config.conductor.releaseAfterIdleSeconds * 1000, config.conductor.unloadCodeAfterIdleSeconds * 1000);

  // A sub-agent's session (`<session>/spawn/<n>`) belongs to its parent: what it sends is
  // delivered by the process that serves the parent.
  const wanted = (key: string) => !opts.sessions || opts.sessions.some((s) => key === s || key.startsWith(`${s}/spawn/`));

  function checkLength(text: string): void {
    const limit = config.agent.maxMessageChars;
    if (text.length > limit) throw new PinclawError(`message refused: ${text.length} characters is more than the limit of ${limit} (agent.maxMessageChars)`);
  }

  function onSent(o: OutboundRow): void {
    bus.emit({ type: 'reply', sessionKey: o.session_key, outboundId: o.id, inboundId: o.inbound_id, channel: o.channel, text: o.text, kind: o.kind });
    // Only a caller of delivered() waits (the CLI, the HTTP API): a chat's reply asks nothing more.
    if (o.inbound_id === null || waiters.size === 0) return;
    for (const id of burstMembers(db, o.inbound_id)) {
      for (const w of waiters.get(id) ?? []) w.resolve(o);
      waiters.delete(id);
    }
  }

  /** Records a message the process sends on its own (send_message, a job's reply) and wakes its channel's delivery. */
  function send(msg: OutgoingMessage): OutboundRow {
    if (!channels.has(msg.channel)) {
      throw new PinclawError(`unknown channel '${msg.channel}'; channels in this process: ${channelNames.join(', ') || 'none'}`);
    }
    if (msg.chatId === '') throw new PinclawError('message refused: no chat id');
    if (msg.text.trim() === '') throw new PinclawError('message refused: the text is blank');
    checkLength(msg.text);
    const row = recordOutbound(db, {
      idempotencyKey: `send:${msg.idempotencyKey ?? randomUUID()}`,
      inboundId: null,
      sessionKey: msg.sessionKey ?? `${msg.channel}:${msg.chatId}`,
      channel: msg.channel,
      chatId: msg.chatId,
      text: msg.text,
      kind: 'reply',
    });
    deliver(row.channel);
    return row;
  }

  const deliverers = new Map<string, Deliverer>(
    opts.channels.map((channel) => [channel.name, createDeliverer({ db, channel, wanted, retryDelayMs: opts.deliveryRetryDelayMs ?? defaultDeliveryRetryDelay, onSent, crashPoint })]),
  );
  const deliver = (channel: string) => deliverers.get(channel)?.kick();

  // The turn's tools are lent the conductor's send (send_message) through their context.
  const turnDeps: TurnDeps = { ...opts, send };

  async function handle(rows: InboundRow[]): Promise<void> {
    const key = rows[0]!.session_key;
    const last = rows.at(-1)!;
    const ids = rows.map((r) => r.id);
    const ac = new AbortController();
    aborts.set(key, ac);
    const progress: TurnProgress = {};
    const where = { channel: last.channel, chatId: last.chat_id };
    bus.emit({ type: 'turn_start', sessionKey: key, inboundIds: ids, ...where });
    try {
      const outcome = await runTurn(turnDeps, rows, (e) => bus.emit({ ...e, sessionKey: key }), ac.signal, progress);
      const saveReply = db.transaction(() => {
        if (outcome.kind === 'reply' && outcome.session) saveSession(db, outcome.session);
        recordOutbound(db, { idempotencyKey: `reply:${last.id}`, inboundId: last.id, sessionKey: key, channel: last.channel, chatId: last.chat_id, text: outcome.text, kind: 'reply' });
        markDone(db, ids);
      });
      try {
        saveReply();
      } catch (writeErr) {
        // The turn ran (its tools acted: a GPIO write is not to be done twice) but its reply cannot
        // be written (a full disk, most often): the reply is kept and written again until that
        // succeeds, then sent; the turn is not run again.
        storeLater(key, ids, last.channel, saveReply, 'the reply is saved now and will be sent');
        const full = isDiskFull(writeErr);
        tellWaiters(ids, full ? new DiskFullError('the reply could not be saved; it is kept and sent once there is space', home)
          : new PinclawError(`the reply could not be saved (${errorMessage(writeErr)}); it is kept and sent once it can be written`));
        log.error(`session ${key}: the turn ran but its reply could not be saved (${errorMessage(writeErr)}); writing it again until it can be`);
        count('turns', { outcome: 'ok' });
        bus.emit({ type: 'turn_end', sessionKey: key, inboundIds: ids, ok: true, iterations: outcome.kind === 'reply' ? outcome.iterations : 0, ...where });
        return;
      }
      crashPoint('before-send');
      count('turns', { outcome: 'ok' });
      bus.emit({ type: 'turn_end', sessionKey: key, inboundIds: ids, ok: true, iterations: outcome.kind === 'reply' ? outcome.iterations : 0, ...where });
    } catch (err) {
      if (stopping && ac.signal.aborted) {
        release(db, ids);
        log.info(`session ${key}: turn interrupted by shutdown; the message will be handled on the next start`);
        return;
      }
      if (ac.signal.reason instanceof TurnAborted) {
        aborted(key, ids, last, progress);
        deliver(last.channel);
        return;
      }
      const reason = errorMessage(err);
      const attempt = rows[0]!.attempts;
      const recordFailure = db.transaction(() => {
        const s = markAttemptFailed(db, ids, reason, config.conductor.maxAttempts, retryDelay(attempt));
        // One notice when the trouble starts and one when pinclaw gives up: enough to know, not spam.
        if (attempt === 1 || s === 'failed') {
          const text = s === 'failed'
            ? `I gave up on your message after ${attempt} attempts (${reason}). Please send it again later.`
            : `I couldn't get an answer right now (${reason}). Your message is saved and I'll try again.`;
          recordOutbound(db, { idempotencyKey: `notice:${last.id}:${s}`, inboundId: last.id, sessionKey: key, channel: last.channel, chatId: last.chat_id, text, kind: 'notice' });
        }
        return s;
      });
      let state: string;
      try {
        state = recordFailure();
      } catch (writeErr) {
        // The failure could not be recorded either (a full disk, most often): the row would stay
        // 'processing' until a restart. It is written again until that succeeds, and whoever waits
        // is told now.
        storeLater(key, ids, last.channel, () => recordFailure(), 'the failure is recorded now; the message is queued again');
        const full = isDiskFull(err) || isDiskFull(writeErr);
        tellWaiters(ids, full ? new DiskFullError('the turn could not be saved; the message is kept and will be tried again once there is space', home)
          : new PinclawError(`the turn could not be saved (${errorMessage(writeErr)}); the message is kept and will be tried again`));
        state = 'unsaved';
        log.error(`session ${key}: turn failed (${reason}) and the failure could not be recorded (${errorMessage(writeErr)}); retrying the record until it can be written`);
      }
      log.warn(`session ${key}: turn failed (attempt ${attempt}, now ${state}): ${reason}`);
      bus.emit({ type: 'turn_error', sessionKey: key, message: reason });
      count('turns', { outcome: 'failed' });
      bus.emit({ type: 'turn_end', sessionKey: key, inboundIds: ids, ok: false, iterations: 0, ...where });
    } finally {
      aborts.delete(key);
      // TurnEnd observes only: it runs after the turn and holds nothing up.
      if (opts.hooks?.has('TurnEnd')) void opts.hooks.fire('TurnEnd', { sessionKey: key, ...where }, { message_ids: ids });
    }
    deliver(last.channel);
  }

  // A stopped turn is not run again (its messages are done); the session keeps the owner's message
  // and what the model and tools had done by then, closed by stoppedConversation.
  function aborted(key: string, ids: number[], last: InboundRow, progress: TurnProgress): void {
    const where = { channel: last.channel, chatId: last.chat_id };
    try {
      db.transaction(() => {
        // The owner's message and what was done before the stop stay in the session (stopped-turn.ts).
        if (progress.session) saveSession(db, { ...progress.session, messages: stoppedConversation(progress.session.messages) });
        recordOutbound(db, { idempotencyKey: `aborted:${last.id}`, inboundId: last.id, sessionKey: key, ...where, text: ABORTED_NOTICE, kind: 'notice' });
        markDone(db, ids);
      })();
    } catch (writeErr) {
      // Not recorded: the rows stay 'processing' and are taken up again at the next start.
      log.error(`session ${key}: the stopped turn could not be recorded (${errorMessage(writeErr)})`);
      tellWaiters(ids, new PinclawError(`the turn was stopped but that could not be saved (${errorMessage(writeErr)})`));
    }
    log.info(`session ${key}: turn stopped by the owner`);
    count('turns', { outcome: 'aborted' });
    bus.emit({ type: 'turn_aborted', sessionKey: key, inboundIds: ids });
    bus.emit({ type: 'turn_end', sessionKey: key, inboundIds: ids, ok: false, iterations: 0, ...where });
  }

  function tellWaiters(ids: readonly number[], err: Error): void {
    for (const id of ids) {
      for (const w of waiters.get(id) ?? []) w.reject(err);
      waiters.delete(id);
    }
  }

  /**
   * Writes `write` again, with growing pauses, until it succeeds (space is back); then the reply is
   * sent or the row is pending again, and the pump takes the session's next messages, which wait
   * until then (in order). A stop leaves it to the next start's orphan recovery.
   */
  function storeLater(key: string, ids: readonly number[], channel: string, write: () => void, done: string): void {
    let delay = 500;
    let failures = 0;
    unsaved.add(key);
    const tryWrite = () => {
      storeRetries.delete(t);
      if (stopping) return;
      try {
        write();
      } catch (err) {
        // Said again now and then, so a lasting cause (a read-only or damaged database) is seen.
        if (++failures % 10 === 0) log.warn(`message(s) ${ids.join(', ')}: still cannot be written (${errorMessage(err)}); trying again`);
        delay = Math.min(delay * 2, 30_000);
        t = setTimeout(tryWrite, delay);
        storeRetries.add(t);
        return;
      }
      unsaved.delete(key);
      log.info(`message(s) ${ids.join(', ')}: ${done}`);
      deliver(channel);
      pump();
    };
    let t = setTimeout(tryWrite, delay);
    storeRetries.add(t);
  }

  function pump(): void {
    if (!started || stopping) return;
    clearTimeout(timer);
    timer = undefined;
    try {
      pumpOnce();
    } catch (err) {
      // Claiming is a write: on a full disk it fails. Tried again shortly rather than thrown at
      // whoever called pump (a microtask, a finished turn).
      log.warn(`conductor: cannot claim messages (${errorMessage(err)}); trying again in 5 s`);
      timer = setTimeout(pump, 5000);
    }
  }

  function pumpOnce(): void {
    for (const key of readySessions(db, channelNames)) {
      if (running.size >= config.conductor.concurrency) break;
      if (running.has(key) || unsaved.has(key) || !wanted(key)) continue;
      const rows = claimBurst(db, key, owner);
      if (rows.length === 0) continue;
      const p = handle(rows)
        .catch((err) => log.error(`session ${key}: ${errorMessage(err)}`))
        .finally(() => {
          running.delete(key);
          pump();
        });
      running.set(key, p);
      idle.busy();
    }
    // Gone idle: hand back what the turns used (idle-memory.ts).
    if (running.size === 0) idle.quiet();
    // Wake up for debounced bursts and scheduled retries.
    const next = nextAvailableAt(db, channelNames);
    if (next !== null && running.size < config.conductor.concurrency) {
      // Not unref'd: a waiting message is work, and must keep a CLI process alive until it is handled.
      // A session waiting for storeLater has rows ready now that the pump skips: no 10 ms loop over them.
      timer = setTimeout(pump, Math.max(unsaved.size ? 1000 : 10, next - Date.now()));
    }
  }

  return {
    submit(msg) {
      checkLength(msg.text);
      const debounce = channels.get(msg.channel)?.debounceMs ?? 0;
      let row: InboundRow;
      try {
        row = enqueue(db, msg, debounce);
      } catch (err) {
        if (isDiskFull(err)) throw new DiskFullError('message not saved', home);
        throw err;
      }
      count('messages_received', { channel: row.channel });
      bus.emit({ type: 'message_received', inboundId: row.id, sessionKey: row.session_key, channel: row.channel, text: row.text });
      queueMicrotask(pump);
      return row;
    },
    send,
    start() {
      if (started) return;
      started = true;
      const recovered = recoverOrphans(db, ownerAlive);
      if (recovered) log.info(`recovered ${recovered} message(s) left unfinished by a stopped process`);
      for (const d of deliverers.values()) d.kick();
      pump();
    },
    async stop(drainMs) {
      stopping = true;
      clearTimeout(timer);
      for (const t of storeRetries) clearTimeout(t);
      storeRetries.clear();
      idle.stop();
      const all = Promise.all(running.values());
      const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), drainMs).unref());
      if ((await Promise.race([all.then(() => 'done' as const), timeout])) === 'timeout') {
        for (const ac of aborts.values()) ac.abort(new Error('shutting down'));
        await all;
      }
      // The replies of the turns that just finished go out before the process ends.
      for (const d of deliverers.values()) await d.idle();
      for (const d of deliverers.values()) d.stop();
    },
    abort(sessionKey) {
      const ac = aborts.get(sessionKey);
      if (!ac || ac.signal.aborted) return false;
      ac.abort(new TurnAborted());
      return true;
    },
    delivered(inboundId) {
      return new Promise((resolve, reject) => {
        const list = waiters.get(inboundId) ?? [];
        list.push({ resolve, reject });
        waiters.set(inboundId, list);
        const done = deliveredFor(db, inboundId);
        if (done) {
          waiters.delete(inboundId);
          resolve(done);
        }
      });
    },
    wake() {
      if (!started || stopping) return;
      for (const d of deliverers.values()) d.kick();
      pump();
    },
    retryDelivery(channel) {
      if (!started || stopping) return;
      retryOutboundNow(db, channel);
      deliver(channel);
    },
  };
}
