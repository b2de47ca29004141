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
  const frames = w.data.length / (2 * w.channels);
  const win = Math.max(1, Math.round(w.sampleRate / 10));
  let best = 0;
  for (let start = 0; start < frames; start += win) {
    const end = Math.min(frames, start + win);
    let sum = 0;
    for (let f = start; f < end; f++) {
      for (let c = 0; c < w.channels; c++) {
        const s = w.data.readInt16LE(2 * (f * w.channels + c)) / 32768;
        sum += s * s;
      }
    }
    best = Math.max(best, sum / ((end - start) * w.channels));
  }
  return best === 0 ? -Infinity : 10 * Math.log10(best);
}
