// Audio conversion through ffmpeg: whatever arrives (Telegram's OGG/Opus, a file the owner tests
// with, a TTS program's WAV) becomes the 16 kHz mono 16-bit WAV speech-to-text engines expect
// (whisper.cpp reads nothing else), and a spoken reply becomes the OGG/Opus that Telegram shows as
// a voice note (sendVoice plays nothing else as one).
import { runProgram } from './run-program.js';

/** ffmpeg on a minutes-long note takes seconds on a Pi; this bounds a hung one. */
const FFMPEG_TIMEOUT_MS = 120_000;
const QUIET = ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y'];

export function toSpeechWav(ffmpeg: string, input: string, output: string, signal?: AbortSignal): Promise<void> {
  // -map_metadata -1 and bitexact: a plain header, no LIST chunk with the encoder's name.
  const argv = [ffmpeg, ...QUIET, '-i', input, '-vn', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', '-map_metadata', '-1', '-fflags', '+bitexact', '-f', 'wav', output];
  return runProgram({ argv, timeoutMs: FFMPEG_TIMEOUT_MS, what: 'converting the audio (voice.ffmpeg)', signal }).then(() => {});
}

export function toVoiceNote(ffmpeg: string, input: string, output: string, signal?: AbortSignal): Promise<void> {
  // 48 kHz mono Opus at 32 kbit/s in the "voip" mode: what Telegram's own apps record.
  const argv = [ffmpeg, ...QUIET, '-i', input, '-vn', '-ac', '1', '-ar', '48000', '-c:a', 'libopus', '-b:a', '32k', '-application', 'voip', '-map_metadata', '-1', '-f', 'ogg', output];
  return runProgram({ argv, timeoutMs: FFMPEG_TIMEOUT_MS, what: 'encoding the voice note (voice.ffmpeg)', signal }).then(() => {});
}
