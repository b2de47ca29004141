// Real audio for the voice tests: Debian's espeak-ng speaks a sentence, ffmpeg encodes it as the
// OGG/Opus a Telegram app records (48 kHz mono Opus), and decodes what the bot sends back.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { wavFormat } from './speech-server.js';

function run(cmd: string, args: string[], input?: string): Buffer {
  const r = spawnSync(cmd, args, { input, maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr.toString()}`);
  return r.stdout;
}

/** A spoken sentence as a voice note: its OGG/Opus bytes and the length of the speech in seconds. */
export function spokenNote(dir: string, text: string): { ogg: Buffer; path: string; seconds: number } {
  const wav = join(dir, `spoken-${Date.now()}-${Math.random().toString(36).slice(2)}.wav`);
  run('espeak-ng', ['-w', wav, text]);
  const seconds = wavFormat(readFileSync(wav))!.seconds;
  const path = wav.replace(/\.wav$/, '.ogg');
  run('ffmpeg', ['-nostdin', '-loglevel', 'error', '-y', '-i', wav, '-ac', '1', '-ar', '48000', '-c:a', 'libopus', '-b:a', '24k', '-application', 'voip', '-f', 'ogg', path]);
  return { ogg: readFileSync(path), path, seconds };
}

/** `seconds` of silence as a voice note (a pocket recording). */
export function silentNote(dir: string, seconds: number): { ogg: Buffer; path: string } {
  const path = join(dir, `silence-${seconds}-${Math.random().toString(36).slice(2)}.ogg`);
  run('ffmpeg', ['-nostdin', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'anullsrc=r=48000:cl=mono', '-t', String(seconds), '-c:a', 'libopus', '-b:a', '16k', '-application', 'voip', '-f', 'ogg', path]);
  return { ogg: readFileSync(path), path };
}

/** Decodes any audio (a voice note the bot sent) to 16 kHz mono WAV: its length and peak level. */
export function decode(dir: string, audio: Buffer): { seconds: number; peakDb: number } {
  const input = join(dir, `decode-${Math.random().toString(36).slice(2)}.bin`);
  writeFileSync(input, audio);
  // Raw samples, no container: nothing to parse.
  const data = run('ffmpeg', ['-nostdin', '-loglevel', 'error', '-i', input, '-ac', '1', '-ar', '16000', '-f', 's16le', '-']);
  let peak = 0;
  for (let i = 0; i + 1 < data.length; i += 2) peak = Math.max(peak, Math.abs(data.readInt16LE(i)));
  return { seconds: data.length / 32000, peakDb: peak ? 20 * Math.log10(peak / 32768) : -Infinity };
}

/** What ffprobe says the codec of an audio file is ("opus"), from its own parse of the container. */
export function codecOf(dir: string, audio: Buffer): string {
  const input = join(dir, `probe-${Math.random().toString(36).slice(2)}.bin`);
  writeFileSync(input, audio);
  return run('ffprobe', ['-v', 'error', '-select_streams', 'a:0', '-show_entries', 'stream=codec_name,channels', '-of', 'csv=p=0', input]).toString().trim();
}
