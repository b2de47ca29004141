// The voice side of a reply: the transcripts of the owner's voice notes quoted above the answer,
// and the answer spoken as a voice note (chats with /voice on). Speaking loads the voice chunk.
import type { PinclawConfig } from '../../config/schema.js';
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import { TelegramError, type TelegramApi } from './api.js';
import { targetOf } from './topic.js';

/** Backslash-escapes what Markdown would read as formatting: the transcript is the owner's words. */
const escapeMarkdown = (s: string) => s.replace(/[\\`*_{}[\]()#+\-.!|>~<&]/g, (c) => `\\${c}`);

/** A quoted line per transcript ("🎤 …"), then a blank line; empty without transcripts. */
export function quoteTranscripts(transcripts: readonly string[]): string {
  if (transcripts.length === 0) return '';
  return `${transcripts.map((t) => `> 🎤 ${escapeMarkdown(t.replace(/\s+/g, ' ').trim())}`).join('\n>\n')}\n\n`;
}

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', '#39': "'" };

/**
 * The words of a formatted reply, as a voice reads them: Telegram's HTML without its tags (the
 * Markdown source would have the voice say "asterisk"). List markers go with the tags.
 */
export function speakable(parts: readonly { html: string }[]): string {
  return parts
    .map((p) => p.html.replace(/<[^>]*>/g, '').replace(/&(lt|gt|amp|quot|#39);/g, (_m, e: string) => ENTITIES[e]!))
    .join('\n')
    // List bullets are layout, not words.
    .replace(/^[ \t]*[\u2022\u25e6\u25aa\u2023][ \t]*/gm, '')
    .replace(/[ \t]+\n/g, '\n')
    .trim();
}

export interface VoiceReplyOptions {
  api: TelegramApi;
  config: PinclawConfig;
  chatId: string;
  /** the reply as plain text (no Markdown marks to read out) */
  text: string;
  replyTo?: number;
  withFloodWait<T>(fn: () => Promise<T>): Promise<T>;
}

/**
 * Sends the spoken reply, or, when it cannot be made, a short note saying why; returns the id of
 * the message sent. Throws only when Telegram itself is out of reach (the delivery retries later).
 */
export async function sendVoiceReply(o: VoiceReplyOptions): Promise<string> {
  void o.api.call('sendChatAction', { ...targetOf(o.chatId), action: 'record_voice' }).catch(() => {});
  let why: string;
  try {
    const { speak } = await import('../../voice/index.js');
    const spoken = await speak(o.config, o.text);
    const m = await o.withFloodWait(() => o.api.sendVoice(o.chatId, spoken.ogg, { duration: spoken.seconds, replyTo: o.replyTo }));
    return String(m.message_id);
  } catch (err) {
    // Telegram down or failing: retried with the delivery (the text parts are not sent again).
    if (err instanceof TelegramError && (err.code === 0 || err.code >= 500 || err.code === 429)) throw err;
    why = errorMessage(err);
  }
  log.warn(`telegram: no voice reply in chat ${o.chatId}: ${why}`);
  const note = await o.withFloodWait(() => o.api.sendMessage({ ...targetOf(o.chatId), text: `(No voice note for this reply: ${why})` }));
  return String(note.message_id);
}
