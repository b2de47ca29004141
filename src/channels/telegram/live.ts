// What a chat sees while a turn runs: "typing…" and, with streaming on, a draft message edited as
// the reply is written, at most once a second (Telegram's edit limits). Both are best effort: a
// failure here is logged at debug level and never touches the reply, which is sent on its own path.
import type { Bus } from '../../conductor/bus.js';
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import type { TelegramApi } from './api.js';
import { targetOf } from './topic.js';

const TYPING_EVERY_MS = 4500; // Telegram shows the action for 5 s
const EDIT_EVERY_MS = 1000;
const DRAFT_LIMIT = 4000;

interface Live {
  chatId: string;
  text: string;
  shown: string;
  draftId?: number;
  /** the draft send or edit in flight; the reply waits for it so it can take the draft over */
  inflight: Promise<void>;
  typing?: NodeJS.Timeout;
  flush?: NodeJS.Timeout;
  lastEdit: number;
  open: boolean;
}

export interface LiveView {
  /** the draft message of this chat's last turn, handed over once (the reply replaces its text) */
  takeDraft(chatId: string): Promise<number | undefined>;
  stop(): void;
}

export function startLiveView(bus: Bus, api: TelegramApi, streaming: boolean): LiveView {
  const bySession = new Map<string, Live>();
  const drafts = new Map<string, Promise<number | undefined>>();
  const quiet = (what: string) => (err: unknown) => log.debug(`telegram: ${what} failed (best effort): ${errorMessage(err)}`);

  const typing = (l: Live) => void api.call('sendChatAction', { ...targetOf(l.chatId), action: 'typing' }, { timeoutMs: 10_000 }).catch(quiet('typing indicator'));

  function flush(l: Live): void {
    l.flush = undefined;
    if (!l.open) return;
    const text = l.text.length > DRAFT_LIMIT ? `${l.text.slice(0, DRAFT_LIMIT)}…` : l.text;
    if (text.trim() === '' || text === l.shown) return;
    l.lastEdit = Date.now();
    l.shown = text;
    l.inflight = l.inflight.then(async () => {
      if (l.draftId === undefined) {
        const m = await api.sendMessage({ ...targetOf(l.chatId), text, link_preview_options: { is_disabled: true } });
        l.draftId = m.message_id;
      } else {
        await api.editMessageText({ chat_id: targetOf(l.chatId).chat_id, message_id: l.draftId, text, link_preview_options: { is_disabled: true } });
      }
    }).catch(quiet('draft update'));
  }

  function schedule(l: Live): void {
    if (l.flush || !l.open) return;
    l.flush = setTimeout(() => flush(l), Math.max(0, l.lastEdit + EDIT_EVERY_MS - Date.now()));
  }

  function end(sessionKey: string): void {
    const l = bySession.get(sessionKey);
    if (!l) return;
    bySession.delete(sessionKey);
    l.open = false;
    clearInterval(l.typing);
    clearTimeout(l.flush);
    if (streaming) drafts.set(l.chatId, l.inflight.then(() => l.draftId));
  }

  const offs = [
    bus.on('turn_start', (e) => {
      if (e.channel !== 'telegram') return;
      end(e.sessionKey);
      const l: Live = { chatId: e.chatId, text: '', shown: '', inflight: Promise.resolve(), lastEdit: 0, open: true };
      bySession.set(e.sessionKey, l);
      typing(l);
      l.typing = setInterval(() => typing(l), TYPING_EVERY_MS);
      l.typing.unref();
    }),
    bus.on('text_delta', (e) => {
      const l = bySession.get(e.sessionKey);
      if (!l || !streaming) return;
      l.text += e.text;
      schedule(l);
    }),
    bus.on('retry', (e) => {
      // The text streamed so far is void; the draft keeps what it shows until new text arrives.
      const l = bySession.get(e.sessionKey);
      if (l) l.text = '';
    }),
    bus.on('turn_end', (e) => end(e.sessionKey)),
  ];

  return {
    takeDraft(chatId) {
      const d = drafts.get(chatId);
      drafts.delete(chatId);
      return d ?? Promise.resolve(undefined);
    },
    stop() {
      for (const off of offs) off();
      for (const key of [...bySession.keys()]) end(key);
    },
  };
}
