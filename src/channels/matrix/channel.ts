// The Matrix channel: the adapter the conductor delivers through (replies cut at MATRIX_MAX_CHARS by
// the splitter Telegram's plain replies use; each part sent with a transaction id made of the
// durable outbound row and the part's index, so a send repeated after a SIGKILL is the same
// transaction to the homeserver, which answers it with the first event instead of posting it
// again), typing while a turn runs, confirmations as a "reply yes or no" question, and the /sync
// loop with its status. Started by the gateway when channels.matrix.homeserver and accessToken are
// set; a refused token stops this channel, and only it.
import type { Delivery } from '../../conductor/delivery.js';
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import { inboundById, type OutboundRow } from '../../store/queue.js';
import type { ConfirmRequest } from '../../tools/types.js';
import type { ExternalChannel, ExternalChannelOptions } from '../external.js';
import { enc, isRefusedToken, matrixApi, refusedTokenText, sleep, type MatrixApi } from './api.js';
import { createInbound } from './inbound.js';
import { openRooms } from './rooms.js';
import { FatalSyncError, runSync } from './sync.js';

export type MatrixChannel = ExternalChannel;

export interface MatrixChannelOptions extends ExternalChannelOptions {
  api?: MatrixApi;
}

/**
 * A Matrix event may be 65536 bytes of JSON (the spec's limit, envelope included). 10000 UTF-16
 * units stay under it even when every one is a control character JSON spells as \u00XX (6 bytes):
 * 60000 bytes plus an envelope of a few hundred.
 */
export const MATRIX_MAX_CHARS = 10_000;
/** Typing is announced for 30 s and renewed while the turn runs. */
const TYPING_TIMEOUT_MS = 30_000;
const TYPING_RENEW_MS = 20_000;
const YES = /^(yes|y|allow|ok)[.!]*$/i;
const NO = /^(no|n|deny)[.!]*$/i;

/** The transaction id of a part: the row (its id and creation time, so a new database never reuses one) and the part. */
export const txnIdOf = (row: Pick<OutboundRow, 'id' | 'created_at'>, part: number) => `pinclaw.${row.id}.${row.created_at}.${part}`;

export function createMatrixChannel(o: MatrixChannelOptions): MatrixChannel {
  const cfg = o.config.channels.matrix;
  if (!cfg.homeserver || !cfg.accessToken) throw new Error('channels.matrix.homeserver and channels.matrix.accessToken must both be set');
  const api = o.api ?? matrixApi(cfg.homeserver, cfg.accessToken);
  const abort = new AbortController();
  const confirmations = new Map<string, (yes: boolean) => void>();
  const typing = new Map<string, NodeJS.Timeout>();
  const offs: (() => void)[] = [];
  let botId = '';
  let displayName: string | undefined;
  let running: Promise<void> | undefined;

  const status = (state: 'up' | 'down', detail: string) => o.bus.emit({ type: 'channel_status', channel: 'matrix', state, detail });
  const quietly = (what: string) => (err: unknown) => log.debug(`matrix: ${what}: ${errorMessage(err)}`);
  const post = (roomId: string, txnId: string, content: Record<string, unknown>, signal?: AbortSignal) =>
    api.call<{ event_id: string }>('PUT', `/rooms/${enc(roomId)}/send/m.room.message/${enc(txnId)}`, content, signal ? { signal } : {});

  async function send(row: OutboundRow, delivery: Delivery): Promise<void> {
    // The splitter Telegram's plain replies use (paragraph, line, word, character), at Matrix's limit.
    const { plainParts } = await import('../telegram/format.js');
    const parts = plainParts(row.text, MATRIX_MAX_CHARS);
    // A reply with text has at least one part. Were there none, the loop below would post nothing
    // and the row would be marked sent: a reply lost in silence. Thrown, it stays pending and the
    // error is logged and kept on the row (doctor, /metrics) instead.
    if (parts.length === 0 && row.text.trim() !== '') throw new Error(`reply ${row.id} (${row.text.length} characters) was cut into no part to send; it stays pending`);
    let reply: Record<string, unknown> = {};
    if (row.inbound_id !== null) {
      // In a room of more than two the answer replies to the message it answers; in a DM that is noise.
      const meta = inboundById(o.db, row.inbound_id)?.meta;
      const m = meta ? (JSON.parse(meta) as { eventId?: string; group?: boolean }) : {};
      if (m.group && m.eventId) reply = { 'm.relates_to': { 'm.in_reply_to': { event_id: m.eventId } } };
    }
    for (let i = delivery.sentParts.length; i < parts.length; i++) {
      const r = await post(row.chat_id, txnIdOf(row, i), { msgtype: 'm.text', body: parts[i], ...(i === 0 ? reply : {}) }, abort.signal);
      delivery.partSent(r.event_id);
    }
  }

  async function confirm(roomId: string, request: ConfirmRequest): Promise<boolean> {
    // No buttons without a client extension: the question is a message, and the next "yes" or "no"
    // from an allowed sender in that room answers it (./inbound.ts hands it here instead of a turn).
    confirmations.get(roomId)?.(false);
    const seconds = Math.round(o.config.tools.confirmTimeoutMs / 1000);
    const text = `Allow ${request.tool}?\n${request.reason ? `${request.reason}\n` : ''}${request.summary}\n\nReply yes or no (within ${seconds} s).`;
    const txn = `pinclaw.confirm.${Date.now()}.${Math.random().toString(36).slice(2)}`;
    try {
      await post(roomId, txn, { msgtype: 'm.text', body: text }, abort.signal);
    } catch (err) {
      log.warn(`matrix: could not ask for confirmation in ${roomId}: ${errorMessage(err)}`);
      return false;
    }
    const answer = await new Promise<boolean | 'timeout'>((resolve) => {
      const timer = setTimeout(() => done('timeout'), o.config.tools.confirmTimeoutMs);
      const done = (a: boolean | 'timeout') => {
        clearTimeout(timer);
        if (confirmations.get(roomId) === settle) confirmations.delete(roomId);
        resolve(a);
      };
      const settle = (yes: boolean) => done(yes);
      confirmations.set(roomId, settle);
    });
    const outcome = answer === 'timeout' ? 'no answer in time: not allowed' : answer ? 'allowed' : 'denied';
    if (!abort.signal.aborted) await post(roomId, `${txn}.outcome`, { msgtype: 'm.notice', body: `${request.tool}: ${outcome}` }).catch(quietly('confirmation outcome'));
    return answer === true;
  }

  function answer(roomId: string, text: string): boolean {
    const pending = confirmations.get(roomId);
    if (!pending) return false;
    const t = text.trim();
    if (!YES.test(t) && !NO.test(t)) return false;
    pending(YES.test(t));
    return true;
  }

  const typingPath = (roomId: string) => `/rooms/${enc(roomId)}/typing/${enc(botId)}`;

  function startTyping(roomId: string): void {
    if (!botId) return;
    stopTyping(roomId, false);
    const tick = () => void api.call('PUT', typingPath(roomId), { typing: true, timeout: TYPING_TIMEOUT_MS }, { timeoutMs: 10_000 }).catch(quietly('typing'));
    tick();
    typing.set(roomId, setInterval(tick, TYPING_RENEW_MS).unref());
  }

  function stopTyping(roomId: string, tell: boolean): void {
    const timer = typing.get(roomId);
    if (!timer) return;
    clearInterval(timer);
    typing.delete(roomId);
    if (tell) void api.call('PUT', typingPath(roomId), { typing: false }, { timeoutMs: 10_000 }).catch(quietly('typing stop'));
  }

  /** Who the token belongs to; a homeserver that does not answer is asked again with a backoff. */
  async function whoami(): Promise<string | undefined> {
    for (let failures = 0; !abort.signal.aborted; ) {
      try {
        return (await api.call<{ user_id: string }>('GET', '/account/whoami', undefined, { signal: abort.signal })).user_id;
      } catch (err) {
        if (isRefusedToken(err)) throw new FatalSyncError(refusedTokenText(api.homeserver));
        if (abort.signal.aborted) return undefined;
        failures++;
        const wait = Math.min(30_000, 500 * 2 ** Math.min(failures - 1, 6)) * (0.75 + Math.random() / 2);
        if (failures === 1) status('down', errorMessage(err));
        log.warn(`matrix: ${errorMessage(err)}; asking again in ${(wait / 1000).toFixed(1)} s (the other channels go on)`);
        await sleep(wait, abort.signal);
      }
    }
    return undefined;
  }

  return {
    name: 'matrix',
    debounceMs: cfg.debounceMs,
    send,
    confirm,
    async start(conductor) {
      status('down', 'connecting');
      offs.push(
        o.bus.on('turn_start', (e) => void (e.channel === 'matrix' && startTyping(e.chatId))),
        o.bus.on('turn_end', (e) => void (e.channel === 'matrix' && stopTyping(e.chatId, true))),
      );
      const run = async () => {
        const id = await whoami();
        if (!id) return;
        botId = id;
        displayName = await api
          .call<{ displayname?: string }>('GET', `/profile/${enc(botId)}/displayname`, undefined, { signal: abort.signal, timeoutMs: 10_000 })
          .then((r) => r.displayname, () => undefined);
        const prepare = createInbound({
          db: o.db, api, conductor, rooms: openRooms(o.db, api), botId, displayName: () => displayName, allowFrom: cfg.allowFrom,
          maxMessageChars: o.config.agent.maxMessageChars, home: o.home, signal: abort.signal, answer,
        });
        await runSync({
          api, db: o.db, signal: abort.signal, prepare,
          onStatus: (state, detail) => {
            status(state, detail);
            // Back up: the replies that waited for the homeserver go now, not at their next retry time.
            if (state === 'up') conductor.retryDelivery('matrix');
          },
        });
      };
      running = run().catch((err: unknown) => {
        const why = err instanceof FatalSyncError ? err.message : `syncing stopped: ${errorMessage(err)}`;
        log.error(`matrix: ${why}; this channel stays down until the gateway is restarted (the other channels go on)`);
        status('down', why);
      });
    },
    async stop() {
      abort.abort();
      for (const off of offs) off();
      for (const roomId of [...typing.keys()]) stopTyping(roomId, false);
      for (const c of confirmations.values()) c(false);
      await running;
    },
  };
}
