// The Telegram channel: the adapter the conductor delivers through (replies split and formatted,
// a plain-text fallback, each part's message id committed as it is sent), the confirmations as
// inline buttons, and the long-poll loop with its status. Started by the gateway when
// channels.telegram.token is set; a refused token stops this channel only.
import type { CallbackQuery, UserFromGetMe } from '@grammyjs/types';
import type { Bus } from '../../conductor/bus.js';
import type { ChannelAdapter, Conductor } from '../../conductor/conductor.js';
import type { Delivery } from '../../conductor/delivery.js';
import type { PinclawConfig } from '../../config/schema.js';
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import type { Db } from '../../store/db.js';
import { burstMembers, inboundById, type OutboundRow } from '../../store/queue.js';
import type { ConfirmRequest } from '../../tools/types.js';
import type { BotIdentity } from './access.js';
import { TelegramError, telegramApi, type TelegramApi } from './api.js';
import { createInbound } from './inbound.js';
import { startLiveView, type LiveView } from './live.js';
import { fatalReason, runPoller } from './poller.js';
import { chatKeyOf, targetOf } from './topic.js';
import { voiceRepliesOn } from '../../voice/chat-setting.js';
import { quoteTranscripts, sendVoiceReply, speakable } from './voice-reply.js';
import type { ExternalChannel, ExternalChannelOptions } from '../external.js';

export type TelegramChannel = ExternalChannel;

export interface TelegramChannelOptions extends ExternalChannelOptions {
  api?: TelegramApi;
}

type Format = typeof import('./format.js');
let format: Promise<Format> | undefined;
// The Markdown renderer (marked) is a lazy chunk: loaded with the first reply, not at start.
const loadFormat = () => (format ??= import('./format.js'));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sleepUnless = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

export function createTelegramChannel(o: TelegramChannelOptions): TelegramChannel {
  const cfg = o.config.channels.telegram;
  if (!cfg.token) throw new Error('channels.telegram.token is not set');
  const api = o.api ?? telegramApi(cfg.apiBaseUrl, cfg.token);
  const abort = new AbortController();
  const confirmations = new Map<string, { chatId: string; resolve: (yes: boolean) => void }>();
  let live: LiveView | undefined;
  let polling: Promise<void> | undefined;
  let confirmSeq = 0;

  const status = (state: 'up' | 'down', detail: string) => o.bus.emit({ type: 'channel_status', channel: 'telegram', state, detail });

  /** A Bot API call that waits out a 429 (what Telegram asks, up to a minute) and tries again. */
  async function withFloodWait<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (!(err instanceof TelegramError) || err.code !== 429 || attempt >= 3 || (err.retryAfter ?? 0) > 60) throw err;
        await sleep((err.retryAfter ?? 1) * 1000);
      }
    }
  }

  async function sendPart(chatId: string, part: { html: string; text: string }, draftId: number | undefined, replyTo: number | undefined): Promise<number> {
    const target = targetOf(chatId);
    const base = { link_preview_options: { is_disabled: true } };
    const attempt = async (body: Record<string, unknown>) => {
      if (draftId !== undefined) {
        try {
          await withFloodWait(() => api.editMessageText({ ...body, chat_id: target.chat_id, message_id: draftId }));
          return draftId;
        } catch (err) {
          if (err instanceof TelegramError && err.isNotModified) return draftId;
          // The draft is gone (deleted by the user) or too old to edit: the part is sent as new.
          if (!(err instanceof TelegramError) || err.isParseError || err.code !== 400) throw err;
        }
      }
      const m = await withFloodWait(() => api.sendMessage({ ...body, ...target, ...(replyTo ? { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } } : {}) }));
      return m.message_id;
    };
    try {
      return await attempt({ ...base, text: part.html, parse_mode: 'HTML' });
    } catch (err) {
      if (!(err instanceof TelegramError && err.isParseError)) throw err;
      log.warn(`telegram: formatting refused in chat ${chatId} (${err.description}); sent as plain text`);
      return attempt({ ...base, text: part.text });
    }
  }

  async function send(row: OutboundRow, delivery: Delivery): Promise<void> {
    const { telegramParts } = await loadFormat();
    // What the owner said in their voice notes is shown above the answer, so a misheard word shows.
    const heard = row.inbound_id === null ? [] : burstMembers(o.db, row.inbound_id).sort((a, b) => a - b).flatMap((id) => {
      const meta = inboundById(o.db, id)?.meta;
      const t = meta ? (JSON.parse(meta) as { transcript?: unknown }).transcript : undefined;
      return typeof t === 'string' ? [t] : [];
    });
    const parts = telegramParts(quoteTranscripts(heard) + row.text);
    if (parts.length === 0) return;
    // The streamed draft of this turn becomes the reply's first part (edited), so the chat does not
    // show the answer twice.
    let draftId = row.inbound_id !== null && live ? await live.takeDraft(row.chat_id) : undefined;
    let replyTo: number | undefined;
    if (row.inbound_id !== null) {
      const meta = inboundById(o.db, row.inbound_id)?.meta;
      const m = meta ? (JSON.parse(meta) as { messageId?: number; chatType?: string }) : {};
      // In a group the answer quotes the message it answers; in a private chat that is noise.
      if (m.chatType === 'group' || m.chatType === 'supergroup') replyTo = m.messageId;
    }
    for (let i = delivery.sentParts.length; i < parts.length; i++) {
      const id = await sendPart(row.chat_id, parts[i]!, i === 0 ? draftId : undefined, i === 0 ? replyTo : undefined);
      draftId = undefined;
      delivery.partSent(String(id));
    }
    // The voice note comes after the text, as one more part: a retry after it was sent does not
    // send it again, and a failure to speak never holds back the text, which is already out.
    // (sentParts is what earlier attempts delivered: more than the text parts means the voice went.)
    if (row.kind === 'reply' && row.inbound_id !== null && delivery.sentParts.length <= parts.length && voiceRepliesOn(o.db, 'telegram', row.chat_id)) {
      const spoken = speakable(telegramParts(row.text));
      delivery.partSent(await sendVoiceReply({ api, config: o.config, chatId: row.chat_id, text: spoken, replyTo, withFloodWait }));
    }
  }

  async function confirm(chatId: string, request: ConfirmRequest): Promise<boolean> {
    const id = `${Date.now().toString(36)}${(confirmSeq++).toString(36)}`;
    const { escapeHtml } = await loadFormat();
    const text = `<b>Allow ${escapeHtml(request.tool)}?</b>\n${request.reason ? `${escapeHtml(request.reason)}\n` : ''}<code>${escapeHtml(request.summary)}</code>`;
    const keyboard = { inline_keyboard: [[{ text: 'Allow', callback_data: `cf:${id}:y` }, { text: 'Deny', callback_data: `cf:${id}:n` }]] };
    let messageId: number;
    try {
      messageId = (await withFloodWait(() => api.sendMessage({ ...targetOf(chatId), text, parse_mode: 'HTML', reply_markup: keyboard }))).message_id;
    } catch (err) {
      log.warn(`telegram: could not ask for confirmation in chat ${chatId}: ${errorMessage(err)}`);
      return false;
    }
    const answer = await new Promise<boolean | 'timeout'>((resolve) => {
      const timer = setTimeout(() => {
        confirmations.delete(id);
        resolve('timeout');
      }, o.config.tools.confirmTimeoutMs);
      confirmations.set(id, { chatId, resolve: (yes) => (clearTimeout(timer), confirmations.delete(id), resolve(yes)) });
    });
    const outcome = answer === 'timeout' ? 'no answer in time: not allowed' : answer ? 'allowed' : 'denied';
    await api.editMessageText({ chat_id: targetOf(chatId).chat_id, message_id: messageId, text: `${escapeHtml(request.tool)}: ${outcome}`, parse_mode: 'HTML' }).catch((err: unknown) => log.debug(`telegram: ${errorMessage(err)}`));
    return answer === true;
  }

  function onCallback(q: CallbackQuery, allowed: boolean): void {
    const m = /^cf:([a-z0-9]+):([yn])$/.exec(q.data ?? '');
    const pending = m ? confirmations.get(m[1]!) : undefined;
    const chatId = q.message ? chatKeyOf(q.message) : undefined;
    let note = 'This question has expired.';
    if (pending && allowed && chatId === pending.chatId) {
      pending.resolve(m![2] === 'y');
      note = m![2] === 'y' ? 'Allowed' : 'Denied';
    } else if (pending) {
      note = 'Only the owner can answer this.';
    }
    void api.call('answerCallbackQuery', { callback_query_id: q.id, text: note }).catch((err: unknown) => log.debug(`telegram: ${errorMessage(err)}`));
  }

  /** getMe: who the bot is; 'stop' when the token is refused or the channel is stopping, undefined when Telegram is out of reach. */
  async function identify(): Promise<BotIdentity | 'stop' | undefined> {
    try {
      const u = await api.call<UserFromGetMe>('getMe', {}, { signal: abort.signal, timeoutMs: 15_000 });
      return { id: u.id, username: u.username };
    } catch (err) {
      if (abort.signal.aborted) return 'stop'; // stopping: nothing to report
      const fatal = fatalReason(err);
      if (fatal) {
        log.error(`telegram: ${fatal}`);
        status('down', fatal);
        return 'stop';
      }
      log.warn(`telegram: cannot reach the Bot API (${errorMessage(err)}); retrying`);
      status('down', errorMessage(err));
      return undefined;
    }
  }

  function run(conductor: Conductor, me: BotIdentity): void {
    log.info(`telegram: connected as @${me.username}`);
    void api.call('setMyCommands', { commands: [
      { command: 'status', description: 'how pinclaw is doing' },
      { command: 'reset', description: 'start a fresh conversation' },
      { command: 'compact', description: 'summarize a long conversation' },
      { command: 'voice', description: 'voice replies: /voice on or /voice off' },
    ] }).catch((err: unknown) => log.debug(`telegram: setMyCommands: ${errorMessage(err)}`));
    live = startLiveView(o.bus, api, cfg.streaming);
    const prepare = createInbound({
      api, db: o.db, conductor, bot: me, allowFrom: cfg.allowFrom, maxFileBytes: cfg.maxFileBytes,
      maxMessageChars: o.config.agent.maxMessageChars, workspace: o.workspace, config: o.config, home: o.home, onCallback,
    });
    polling = runPoller({
      api, db: o.db, timeoutSeconds: cfg.pollTimeoutSeconds, prepare, signal: abort.signal,
      onStatus: (state, detail) => {
        status(state, detail);
        // Back up: the replies that waited for Telegram go now, not at their next retry time.
        if (state === 'up') conductor.retryDelivery('telegram');
      },
    }).then((fatal) => {
      if (fatal) log.error(`telegram: ${fatal}`);
    }, (err: unknown) => log.error(`telegram: polling stopped: ${errorMessage(err)}`));
  }

  return {
    name: 'telegram',
    debounceMs: cfg.debounceMs,
    send,
    confirm,
    async start(conductor) {
      status('down', 'connecting');
      const first = await identify();
      if (first === 'stop') return;
      if (first) return run(conductor, first);
      // Telegram out of reach at start: the gateway goes on, and this channel keeps trying behind it.
      polling = (async () => {
        for (let attempt = 1; !abort.signal.aborted; attempt++) {
          await sleepUnless(Math.min(60_000, 1000 * 2 ** (attempt - 1)), abort.signal);
          if (abort.signal.aborted) return;
          const me = await identify();
          if (me === 'stop') return;
          if (me) return run(conductor, me);
        }
      })();
    },
    async stop() {
      abort.abort();
      live?.stop();
      for (const c of confirmations.values()) c.resolve(false);
      await polling;
    },
  };
}
