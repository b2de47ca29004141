// The voice notes of a burst become text at the start of its turn (src/conductor/turn.ts calls this
// when a message has meta.voice), not in the channel's poller: a note is saved and queued at once
// (nothing lost on a crash, the poller goes on with the next updates and other chats are answered
// meanwhile), and transcription, which may take up to
// voice.stt.timeoutSeconds, holds up only this session. The outcome is written into the inbound row
// (its text and meta.transcript, or meta.voiceRefusal), so a retried turn does not transcribe again
// and the channel shows the transcript above the reply. A crash while transcribing leaves the row
// 'processing': the next start takes it up and transcribes the note again.
import type { PinclawConfig } from '../config/schema.js';
import type { Db } from '../store/db.js';
import { setInboundText, type InboundRow } from '../store/queue.js';
import { transcribeVoiceNote } from './voice-note.js';

interface VoiceMeta {
  voice?: { file?: unknown; seconds?: unknown };
  transcript?: unknown;
  voiceRefusal?: unknown;
}

function metaOf(r: InboundRow): (VoiceMeta & Record<string, unknown>) | undefined {
  if (!r.meta) return undefined;
  try {
    return JSON.parse(r.meta) as VoiceMeta & Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** A row with a voice note not yet transcribed (nor refused). */
const waitsForTranscript = (m: VoiceMeta | undefined) => typeof m?.voice?.file === 'string' && m.transcript === undefined && m.voiceRefusal === undefined;

/**
 * The rows with their voice notes as text (the caption, then the transcript), and the sentences
 * telling the owner why a note has none.
 */
export async function hearVoiceNotes(deps: { db: Db; config: PinclawConfig; workspace: string }, rows: readonly InboundRow[], signal?: AbortSignal): Promise<{ rows: InboundRow[]; refusals: string[] }> {
  const out: InboundRow[] = [];
  const refusals: string[] = [];
  for (const r of rows) {
    const meta = metaOf(r);
    if (meta && waitsForTranscript(meta)) {
      const note = { file: String(meta.voice!.file), seconds: Number(meta.voice!.seconds) || 0 };
      const outcome = await transcribeVoiceNote(deps.config, deps.workspace, note, `voice note ${r.id} in chat ${r.chat_id}`, signal);
      const next = 'transcript' in outcome ? { ...meta, transcript: outcome.transcript } : { ...meta, voiceRefusal: outcome.refusal };
      const text = 'transcript' in outcome ? [r.text, outcome.transcript].filter(Boolean).join('\n\n') : r.text;
      setInboundText(deps.db, r.id, text, JSON.stringify(next));
      out.push({ ...r, text, meta: JSON.stringify(next) });
      if ('refusal' in outcome) refusals.push(outcome.refusal);
      continue;
    }
    if (typeof meta?.voiceRefusal === 'string') refusals.push(meta.voiceRefusal);
    out.push(r);
  }
  return { rows: out, refusals };
}
