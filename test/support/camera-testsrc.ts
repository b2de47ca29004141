// The host's stand-in camera: ffmpeg's test source (lavfi testsrc) behind the same CameraSource
// interface a V4L2 device uses, so the capture, the save and the image path are pinclaw's own
// (no v4l2loopback module on the host). Plus the independent check of a JPEG: decoded by ffmpeg.
import { spawnSync } from 'node:child_process';
import { ffmpegStill, type CameraSource } from '../../src/hardware/camera/source.js';

export function testsrcSource(): CameraSource {
  return {
    label: 'ffmpeg testsrc',
    commands: (width, height) => [ffmpegStill(['-f', 'lavfi', '-i', `testsrc=size=${width}x${height}:rate=1`], width, height)],
    install: 'install it with: sudo apt-get install ffmpeg',
    explain: () => undefined,
  };
}

/** Decodes a JPEG (a file or bytes) to RGB with ffmpeg: its width × height × 3 bytes, or the decoder's complaint. */
export function decodeJpeg(input: Buffer | string, width: number, height: number): { ok: true } | { ok: false; why: string } {
  const args = ['-hide_banner', '-loglevel', 'error', '-nostdin', '-f', 'image2pipe', '-c:v', 'mjpeg', '-i', typeof input === 'string' ? input : 'pipe:0', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'];
  const r = spawnSync('ffmpeg', args, { input: typeof input === 'string' ? undefined : input, maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0) return { ok: false, why: `ffmpeg exit ${r.status}: ${r.stderr.toString()}` };
  const want = width * height * 3;
  return r.stdout.length === want ? { ok: true } : { ok: false, why: `decoded ${r.stdout.length} bytes, expected ${want} (${width} × ${height} RGB)` };
}
