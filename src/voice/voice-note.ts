// A voice note a channel saved into the workspace becomes the owner's text, in the turn of that
// message (./burst.ts calls this): transcription can take as long as
// voice.stt.timeoutSeconds, and a channel's poller must not wait for it. The outcome is the
// transcript, or a sentence telling the owner why there is none (naming the cause and the way out).
import { join } from 'node:path';
import type { PinclawConfig } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import { log } from '../log.js';
import { hear } from './hear.js';

export type VoiceOutcome = { transcript: string } | { refusal: string };

export interface SavedVoiceNote {
  /** the note's path relative to the workspace */
  file: string;
  /** its length as the sender's app reported it (0 when unknown) */
  seconds: number;
}

const minutes = (s: number) => (s >= 90 ? `${Math.round(s / 60)} minutes` : `${Math.round(s)} seconds`);

/** `where` names the note in the log ("voice note 12 in chat 42"). Never throws. */
export async function transcribeVoiceNote(config: PinclawConfig, workspace: string, note: SavedVoiceNote, where: string, signal?: AbortSignal): Promise<VoiceOutcome> {
  const max = config.voice.maxSeconds;
  const saved = `It is saved in the workspace as ${note.file}.`;
  // The app says how long the note is: a note over the limit is refused before any conversion.
  if (note.seconds > max) return { refusal: `Your voice note is ${minutes(note.seconds)} long; I transcribe up to ${minutes(max)} (voice.maxSeconds). ${saved} Please send it in shorter parts.` };
  try {
    const heard = await hear(config, join(workspace, note.file), signal);
    switch (heard.kind) {
      case 'text':
        log.info(`${where}: ${heard.seconds.toFixed(1)} s transcribed`);
        return { transcript: heard.text };
      case 'silence':
        return { refusal: `I heard nothing in your voice note (${minutes(heard.seconds)} of silence, or no words I could make out), so I did nothing with it. ${saved}` };
      case 'too-long':
        return { refusal: `Your voice note is ${minutes(heard.seconds)} long; I transcribe up to ${minutes(heard.maxSeconds)} (voice.maxSeconds). ${saved} Please send it in shorter parts.` };
      case 'not-set-up':
        return { refusal: `I cannot listen to voice notes yet: ${heard.why}. ${saved}` };
    }
  } catch (err) {
    // A shutdown stops the turn: it is not the owner's note that failed, and it runs again at the next start.
    if (signal?.aborted) throw err;
    log.warn(`${where} could not be transcribed: ${errorMessage(err)}`);
    return { refusal: `I could not transcribe your voice note: ${errorMessage(err)}. ${saved} Send it again once that is fixed, or write to me.` };
  }
}
