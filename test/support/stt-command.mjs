// The speech-to-text command stand-in (voice.stt.command): no offline engine in Debian judges
// words well enough to test with, so this checks the audio it is given instead. Usage:
//   node stt-command.mjs WAV RECORD TEXT [GATE]
// With GATE, it holds (a slow engine) after recording what it got, until the file GATE exists.
// It reads WAV, refuses (exit 3, on stderr) anything but 16 kHz mono 16-bit PCM, appends what it got
// ({sampleRate, channels, bits, seconds, peakDb}) as a JSON line to RECORD, and prints TEXT, split
// over two lines as whisper.cpp prints segments.
import { appendFileSync, readFileSync } from 'node:fs';

const [wavPath, record, text = '', gate] = process.argv.slice(2);
const buf = readFileSync(wavPath);
if (buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') {
  console.error(`stt-command: ${wavPath} is not a WAV file`);
  process.exit(3);
}
let at = 12;
let fmt;
let data;
while (at + 8 <= buf.length) {
  const id = buf.toString('ascii', at, at + 4);
  const size = buf.readUInt32LE(at + 4);
  if (id === 'fmt ') fmt = { format: buf.readUInt16LE(at + 8), channels: buf.readUInt16LE(at + 10), sampleRate: buf.readUInt32LE(at + 12), bits: buf.readUInt16LE(at + 22) };
  if (id === 'data') data = buf.subarray(at + 8, at + 8 + size);
  at += 8 + size + (size % 2);
}
if (!fmt || !data) {
  console.error('stt-command: no fmt or data chunk');
  process.exit(3);
}
let peak = 0;
for (let i = 0; i + 1 < data.length; i += 2) peak = Math.max(peak, Math.abs(data.readInt16LE(i)));
const got = { pid: process.pid, sampleRate: fmt.sampleRate, channels: fmt.channels, bits: fmt.bits, format: fmt.format, seconds: data.length / (2 * fmt.channels * fmt.sampleRate), peakDb: peak ? 20 * Math.log10(peak / 32768) : null };
appendFileSync(record, `${JSON.stringify(got)}\n`);
if (fmt.sampleRate !== 16000 || fmt.channels !== 1 || fmt.bits !== 16 || fmt.format !== 1) {
  console.error(`stt-command: expected 16 kHz mono 16-bit PCM, got ${JSON.stringify(got)}`);
  process.exit(3);
}
if (gate) {
  const { existsSync } = await import('node:fs');
  while (!existsSync(gate)) await new Promise((r) => setTimeout(r, 20));
}
const words = text.split(' ');
const half = Math.ceil(words.length / 2);
process.stdout.write(` ${words.slice(0, half).join(' ')}\n ${words.slice(half).join(' ')}\n`);
