// A voice note from the owner: saved into the workspace like any file (so that nothing is lost,
// whatever happens next), then transcribed (src/voice/). The outcome is the text the turn gets, or a
// sentence telling the owner why there is none. Part of the voice chunk, not of the Telegram one: a
// gateway with a bot token but no voice notes never loads it (inbound.ts imports it on the first note).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Message } from '@grammyjs/types';
import type { PinclawConfig } from '../../config/schema.js';
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import { hear } from '../../voice/hear.js';
import type { TelegramApi } from './api.js';

export type VoiceOutcome = { transcript: string } | { refusal: string };

const minutes = (s: number) => (s >= 90 ? `${Math.round(s / 60)} minutes` : `${Math.round(s)} seconds`);

export async function handleVoiceNote(m: Message & { voice: NonNullable<Message['voice']> }, o: { api: TelegramApi; config: PinclawConfig; workspace: string; maxFileBytes: number }): Promise<VoiceOutcome> {
  const v = m.voice;
  const max = o.config.voice.maxSeconds;
  if ((v.file_size ?? 0) > o.maxFileBytes) return { refusal: `That voice note is ${v.file_size} bytes, more than the ${o.maxFileBytes} bytes I accept (channels.telegram.maxFileBytes).` };
  const file = await o.api.getFile(v.file_id);
  if (!file.file_path) throw new Error(`getFile gave no file_path for a voice note of ${v.file_size ?? '?'} bytes`);
  const bytes = await o.api.download(file.file_path, o.maxFileBytes);
  const day = new Date((m.date ?? Date.now() / 1000) * 1000).toISOString().slice(0, 10);
  const rel = join('inbox', 'telegram', day, `${m.message_id}-voice-${v.file_unique_id.replace(/[^\w-]+/g, '_')}.ogg`);
  mkdirSync(join(o.workspace, 'inbox', 'telegram', day), { recursive: true });
  writeFileSync(join(o.workspace, rel), bytes);
  const saved = `It is saved in the workspace as ${rel}.`;
  // Telegram says how long the note is: a note over the limit is refused before any conversion.
  if (v.duration > max) return { refusal: `Your voice note is ${minutes(v.duration)} long; I transcribe up to ${minutes(max)} (voice.maxSeconds). ${saved} Please send it in shorter parts.` };
  try {
    const heard = await hear(o.config, join(o.workspace, rel));
    switch (heard.kind) {
      case 'text':
        log.info(`telegram: voice note ${m.message_id} in chat ${m.chat.id}: ${heard.seconds.toFixed(1)} s transcribed`);
        return { transcript: heard.text };
      case 'silence':
        return { refusal: `I heard nothing in your voice note (${minutes(heard.seconds)} of silence, or no words I could make out), so I did nothing with it. ${saved}` };
      case 'too-long':
        return { refusal: `Your voice note is ${minutes(heard.seconds)} long; I transcribe up to ${minutes(heard.maxSeconds)} (voice.maxSeconds). ${saved} Please send it in shorter parts.` };
      case 'not-set-up':
        return { refusal: `I cannot listen to voice notes yet: ${heard.why}. ${saved}` };
    }
  } catch (err) {
    log.warn(`telegram: voice note ${m.message_id} in chat ${m.chat.id} could not be transcribed: ${errorMessage(err)}`);
    return { refusal: `I could not transcribe your voice note: ${errorMessage(err)}. ${saved} Send it again once that is fixed, or write to me.` };
  }
}
