// A reply becomes a voice note: the configured text-to-speech backend speaks it, ffmpeg encodes it
// as the OGG/Opus Telegram plays as a voice note. Throws an Error whose message is for the owner.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PinclawConfig } from '../config/schema.js';
import { toSpeechWav, toVoiceNote } from './ffmpeg.js';
import { synthesizerFor } from './tts.js';
import { readWav } from './wav.js';

export interface Spoken {
  /** OGG/Opus */
  ogg: Buffer;
  seconds: number;
}

export class NotSetUp extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotSetUp';
  }
}

export async function speak(config: PinclawConfig, text: string, signal?: AbortSignal): Promise<Spoken> {
  const cfg = config.voice;
  const tts = synthesizerFor(cfg.tts);
  if ('missing' in tts) throw new NotSetUp(tts.missing);
  if (text.length > cfg.tts.maxChars) throw new Error(`the reply has ${text.length} characters, more than voice.tts.maxChars (${cfg.tts.maxChars})`);
  const dir = await mkdtemp(join(tmpdir(), 'pinclaw-voice-'));
  try {
    const raw = join(dir, 'speech.wav');
    await tts.synthesize(text, raw, signal);
    // Whatever the backend wrote, its length is read from a WAV of our own making.
    const plain = join(dir, 'plain.wav');
    await toSpeechWav(cfg.ffmpeg, raw, plain, signal);
    const seconds = readWav(await readFile(plain)).seconds;
    if (seconds === 0) throw new Error(`${tts.name} produced no sound`);
    const ogg = join(dir, 'voice.ogg');
    await toVoiceNote(cfg.ffmpeg, raw, ogg, signal);
    return { ogg: await readFile(ogg), seconds };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
