// The Signal channel: the adapter the conductor delivers through (replies cut at 4000 characters,
// each part's Signal timestamp committed as it is sent, so a restart sends only the rest), typing
// while a turn runs, read receipts, confirmations as a "reply yes or no" question, and the event
// stream with its status. Started by the gateway when channels.signal.url is set; pinclaw does not
// start signal-cli: a daemon that is down makes this channel down, and only this one.
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Bus } from '../../conductor/bus.js';
import type { ChannelAdapter, Conductor } from '../../conductor/conductor.js';
import type { Delivery } from '../../conductor/delivery.js';
import type { PinclawConfig } from '../../config/schema.js';
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import type { Db } from '../../store/db.js';
import { inboundById, type OutboundRow } from '../../store/queue.js';
import type { ConfirmRequest } from '../../tools/types.js';
import { signalParts } from './chunks.js';
import { isGroupChat, senderKey, senderOf, targetOf } from './envelope.js';
import { createInbound } from './inbound.js';
import { runReceiver } from './receiver.js';
import { signalRpc, type SignalRpc } from './rpc.js';
import { openSeen } from './seen.js';
import type { ExternalChannel, ExternalChannelOptions } from '../external.js';

export type SignalChannel = ExternalChannel;

export interface SignalChannelOptions extends ExternalChannelOptions {
  rpc?: SignalRpc;
}

/** signal-cli's answer to send: the message's timestamp, and per recipient how it went. */
interface SendResult {
  timestamp: number;
  results?: { type?: string; recipientAddress?: { number?: string | null; uuid?: string | null } }[];
}

/** Signal shows "typing" for 15 s; it is renewed while the turn runs. */
const TYPING_RENEW_MS = 10_000;
const YES = /^(yes|y|allow|ok)[.!]*$/i;
const NO = /^(no|n|deny)[.!]*$/i;

export function createSignalChannel(o: SignalChannelOptions): SignalChannel {
  const cfg = o.config.channels.signal;
  if (!cfg.url || !cfg.account) throw new Error('channels.signal.url and channels.signal.account must both be set');
  const account = cfg.account;
  const rpc = o.rpc ?? signalRpc(cfg.url, account);
  const abort = new AbortController();
  const confirmations = new Map<string, (yes: boolean) => void>();
  const typing = new Map<string, NodeJS.Timeout>();
  const offs: (() => void)[] = [];
  let receiving: Promise<void> | undefined;

  const status = (state: 'up' | 'down', detail: string) => o.bus.emit({ type: 'channel_status', channel: 'signal', state, detail });
  const quietly = (what: string) => (err: unknown) => log.debug(`signal: ${what}: ${errorMessage(err)}`);

  async function send(row: OutboundRow, delivery: Delivery): Promise<void> {
    const parts = signalParts(row.text);
    let quote: Record<string, unknown> = {};
    if (row.inbound_id !== null && isGroupChat(row.chat_id)) {
      // In a group the answer quotes the message it answers; in a direct chat that is noise.
      const meta = inboundById(o.db, row.inbound_id)?.meta;
      const m = meta ? (JSON.parse(meta) as { timestamp?: number; author?: string }) : {};
      if (m.timestamp && m.author) quote = { quoteTimestamp: m.timestamp, quoteAuthor: m.author };
    }
    for (let i = delivery.sentParts.length; i < parts.length; i++) {
      const r = await rpc.call<SendResult>('send', { ...targetOf(row.chat_id), message: parts[i], ...(i === 0 ? quote : {}) }, { signal: abort.signal });
      const failed = (r.results ?? []).filter((x) => x.type && x.type !== 'SUCCESS');
      // A direct message that reached nobody was not delivered: retried later. A group where some
      // members could not be reached counts as sent (Signal itself retries them).
      if (failed.length && failed.length === r.results!.length) throw new Error(`Signal did not take the message: ${[...new Set(failed.map((x) => x.type))].join(', ')}`);
      delivery.partSent(String(r.timestamp));
    }
  }

  async function confirm(chatId: string, request: ConfirmRequest): Promise<boolean> {
    // Signal has no buttons: the question is a message, and the next "yes" or "no" from an allowed
    // sender in that chat answers it (./inbound.ts hands it here instead of starting a turn).
    confirmations.get(chatId)?.(false);
    const seconds = Math.round(o.config.tools.confirmTimeoutMs / 1000);
    const text = `Allow ${request.tool}?\n${request.reason ? `${request.reason}\n` : ''}${request.summary}\n\nReply yes or no (within ${seconds} s).`;
    try {
      await rpc.call('send', { ...targetOf(chatId), message: text }, { signal: abort.signal });
    } catch (err) {
      log.warn(`signal: could not ask for confirmation in chat ${chatId}: ${errorMessage(err)}`);
      return false;
    }
    const answer = await new Promise<boolean | 'timeout'>((resolve) => {
      const timer = setTimeout(() => done('timeout'), o.config.tools.confirmTimeoutMs);
      const done = (a: boolean | 'timeout') => {
        clearTimeout(timer);
        if (confirmations.get(chatId) === settle) confirmations.delete(chatId);
        resolve(a);
      };
      const settle = (yes: boolean) => done(yes);
      confirmations.set(chatId, settle);
    });
    const outcome = answer === 'timeout' ? 'no answer in time: not allowed' : answer ? 'allowed' : 'denied';
    if (!abort.signal.aborted) await rpc.call('send', { ...targetOf(chatId), message: `${request.tool}: ${outcome}` }).catch(quietly('confirmation outcome'));
    return answer === true;
  }

  function answer(chatId: string, text: string): boolean {
    const pending = confirmations.get(chatId);
    if (!pending) return false;
    const t = text.trim();
    if (!YES.test(t) && !NO.test(t)) return false;
    pending(YES.test(t));
    return true;
  }

  function startTyping(chatId: string): void {
    stopTyping(chatId, false);
    const tick = () => void rpc.call('sendTyping', { ...targetOf(chatId) }, { timeoutMs: 10_000 }).catch(quietly('sendTyping'));
    tick();
    typing.set(chatId, setInterval(tick, TYPING_RENEW_MS).unref());
  }

  function stopTyping(chatId: string, tell: boolean): void {
    const timer = typing.get(chatId);
    if (!timer) return;
    clearInterval(timer);
    typing.delete(chatId);
    if (tell) void rpc.call('sendTyping', { ...targetOf(chatId), stop: true }, { timeoutMs: 10_000 }).catch(quietly('sendTyping stop'));
  }

  return {
    name: 'signal',
    debounceMs: cfg.debounceMs,
    send,
    confirm,
    async start(conductor) {
      status('down', 'connecting');
      const seen = openSeen(o.db);
      const prepare = createInbound({
        db: o.db, conductor, account, allowFrom: cfg.allowFrom, maxFileBytes: cfg.maxFileBytes,
        attachmentsDir: cfg.attachmentsDir ?? join(homedir(), '.local', 'share', 'signal-cli', 'attachments'),
        maxMessageChars: o.config.agent.maxMessageChars, workspace: o.workspace, home: o.home, answer,
      });
      offs.push(
        o.bus.on('turn_start', (e) => void (e.channel === 'signal' && startTyping(e.chatId))),
        o.bus.on('turn_end', (e) => void (e.channel === 'signal' && stopTyping(e.chatId, true))),
      );
      const prune = setInterval(() => seen.prune(), 6 * 3600_000).unref();
      offs.push(() => clearInterval(prune));
      receiving = runReceiver({
        url: cfg.url!, account, db: o.db, seen, prepare, signal: abort.signal,
        taken: (ev) => {
          const to = senderKey(senderOf(ev.envelope));
          if (!to) return;
          // recipient is a single value for sendReceipt (SendReceiptCommand), a list for send and sendTyping.
          void rpc.call('sendReceipt', { recipient: to.replace(/^uuid:/, ''), targetTimestamp: [ev.envelope.timestamp], type: 'read' }, { timeoutMs: 10_000 }).catch(quietly('sendReceipt'));
        },
        onStatus: (state, detail) => {
          status(state, detail);
          // Back up: the replies that waited for the daemon go now, not at their next retry time.
          if (state === 'up') conductor.retryDelivery('signal');
        },
      }).catch((err: unknown) => log.error(`signal: receiving stopped: ${errorMessage(err)}`));
    },
    async stop() {
      abort.abort();
      for (const off of offs) off();
      for (const chatId of [...typing.keys()]) stopTyping(chatId, false);
      for (const c of confirmations.values()) c(false);
      await receiving;
    },
  };
}
