// Reads the 16-bit PCM WAV ffmpeg writes (ffmpeg.ts) and measures it: its length, and whether any
// of it is louder than silence. Walks the RIFF chunks rather than assuming a 44-byte header, since
// ffmpeg and TTS programs may add LIST or fact chunks before the data.

export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** the PCM samples, interleaved */
  data: Buffer;
  seconds: number;
}

export function readWav(buf: Buffer): WavInfo {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a WAV file (no RIFF/WAVE header)');
  let fmt: { channels: number; sampleRate: number; bits: number; format: number } | undefined;
  let at = 12;
  while (at + 8 <= buf.length) {
    const id = buf.toString('ascii', at, at + 4);
    let size = buf.readUInt32LE(at + 4);
    const body = at + 8;
    // A WAV written to a pipe has unknown sizes (0 or 0xFFFFFFFF): the data runs to the end.
    if (id === 'data' && (size === 0 || size === 0xffffffff || body + size > buf.length)) size = buf.length - body;
    if (id === 'fmt ') fmt = { format: buf.readUInt16LE(body), channels: buf.readUInt16LE(body + 2), sampleRate: buf.readUInt32LE(body + 4), bits: buf.readUInt16LE(body + 14) };
    if (id === 'data') {
      if (!fmt) throw new Error('WAV data before its fmt chunk');
      // 0xFFFE: WAVE_FORMAT_EXTENSIBLE, which ffmpeg writes for some layouts; PCM all the same here.
      if ((fmt.format !== 1 && fmt.format !== 0xfffe) || fmt.bits !== 16) throw new Error(`WAV is not 16-bit PCM (format ${fmt.format}, ${fmt.bits} bits)`);
      const data = buf.subarray(body, body + size - (size % (2 * fmt.channels)));
      return { sampleRate: fmt.sampleRate, channels: fmt.channels, bitsPerSample: fmt.bits, data, seconds: data.length / (2 * fmt.channels * fmt.sampleRate) };
    }
    at = body + size + (size % 2);
  }
  throw new Error('WAV without a data chunk');
}

/**
 * The level, in dBFS, of the loudest 100 ms window: speech anywhere in the note lifts it, while a
 * note of silence (a pocket recording, a muted microphone) stays near the noise floor. -Infinity
 * for digital silence.
 */
export function loudestWindowDb(w: WavInfo): number {
  // A typed view (a copy only when the data is not 2-byte aligned): minutes of audio are millions of
  // samples, and readInt16LE per sample costs several times more. WAV and x86/ARM are little-endian.
  const d = w.data.byteOffset % 2 === 0 ? w.data : Buffer.from(w.data);
  const samples = new Int16Array(d.buffer, d.byteOffset, d.length >> 1);
  const win = Math.max(1, Math.round(w.sampleRate / 10)) * w.channels;
  let best = 0;
  for (let start = 0; start < samples.length; start += win) {
    const end = Math.min(samples.length, start + win);
    let sum = 0;
    for (let i = start; i < end; i++) sum += samples[i]! * samples[i]!;
    best = Math.max(best, sum / (end - start) / (32768 * 32768));
  }
  return best === 0 ? -Infinity : 10 * Math.log10(best);
}
