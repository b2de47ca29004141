// A voice note becomes text: converted to 16 kHz mono WAV, measured (too long, or nothing but
// silence, ends here before any engine runs), then transcribed by the configured backend. Every
// way this can fail ends in a sentence for the owner that names the cause and what to set.
import { mkdtemp, rm } from 'node:fs/promises';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PinclawConfig } from '../config/schema.js';
import { toSpeechWav } from './ffmpeg.js';
import { transcriberFor } from './stt.js';
import { loudestWindowDb, readWav } from './wav.js';

/**
 * Below this level the loudest tenth of a second holds no speech: a phone's microphone with its
 * automatic gain puts speech at -30 to -10 dBFS and a quiet room near -60. Engines given silence
 * invent text ("Thank you."), so silence never reaches them.
 */
export const SILENCE_DB = -45;

export type Heard =
  | { kind: 'text'; text: string; seconds: number }
  | { kind: 'silence'; seconds: number }
  | { kind: 'too-long'; seconds: number; maxSeconds: number }
  | { kind: 'not-set-up'; why: string };

/** Transcribes an audio file of any format ffmpeg reads. Throws an Error whose message is for the owner. */
export async function hear(config: PinclawConfig, audioPath: string, signal?: AbortSignal): Promise<Heard> {
  const cfg = config.voice;
  const stt = transcriberFor(cfg.stt);
  if ('missing' in stt) return { kind: 'not-set-up', why: stt.missing };
  const dir = await mkdtemp(join(tmpdir(), 'pinclaw-voice-'));
  try {
    const wavPath = join(dir, 'speech.wav');
    await toSpeechWav(cfg.ffmpeg, audioPath, wavPath, signal);
    const wav = readWav(await readFile(wavPath));
    if (wav.seconds > cfg.maxSeconds) return { kind: 'too-long', seconds: wav.seconds, maxSeconds: cfg.maxSeconds };
    if (loudestWindowDb(wav) < SILENCE_DB) return { kind: 'silence', seconds: wav.seconds };
    const text = await stt.transcribe(wavPath, signal);
    // An engine may mark what it could not make out ([BLANK_AUDIO], (silence)): no words either.
    const words = text.replace(/\[[^\]]*\]|\([^)]*\)/g, '').trim();
    if (!words) return { kind: 'silence', seconds: wav.seconds };
    return { kind: 'text', text, seconds: wav.seconds };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
