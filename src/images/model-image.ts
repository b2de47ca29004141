// A saved image (a photo the owner sent, a camera snapshot) as image content for the model: scaled
// down by ffmpeg to what every provider takes, as a JPEG. The file itself is never changed.
import { statSync } from 'node:fs';
import type { ImageBlock } from '../agent/types.js';
import { runImageCommand } from './ffmpeg.js';
import { jpegSize } from './jpeg.js';

/**
 * The longest edge sent: Anthropic scales anything larger down to 1568 px itself (its vision guide),
 * so more only costs upload and tokens; OpenAI's high detail tiles within 2048 × 768 short side.
 */
export const MAX_EDGE = 1568;
/** Anthropic refuses an image over 5 MB; base64 adds a third, so the bytes stay under 3.75 MB. */
export const MAX_BYTES = 3_750_000;
/** Larger than any photo Telegram serves (20 MB): more is no photo worth decoding on a Pi. */
export const MAX_INPUT_BYTES = 50 * 1024 * 1024;
const TIMEOUT_MS = 30_000;

export interface ModelImage {
  block: ImageBlock;
  width: number;
  height: number;
  bytes: number;
}

/** Qualities tried in turn (ffmpeg's -q:v, 2 best): the first result under MAX_BYTES is taken. */
const QUALITIES = [4, 10, 20];

/**
 * The image at `file` as an ImageBlock within MAX_EDGE and MAX_BYTES, with `note` (what it is and
 * where it is kept) for the stored session and for models without vision. Throws an Error that
 * names the file and the cause (not an image, too large, ffmpeg missing).
 */
export async function modelImage(file: string, note: string, signal?: AbortSignal): Promise<ModelImage> {
  const size = statSync(file).size;
  if (size > MAX_INPUT_BYTES) throw new Error(`${file} has ${size} bytes, more than the ${MAX_INPUT_BYTES} an image may have to be shown to the model`);
  if (size === 0) throw new Error(`${file} is empty`);
  // Only ever smaller: a picture already within the limit keeps its size.
  const scale = `scale=w='min(${MAX_EDGE},iw)':h='min(${MAX_EDGE},ih)':force_original_aspect_ratio=decrease`;
  for (const q of QUALITIES) {
    const { stdout } = await runImageCommand('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-nostdin', '-i', file, '-frames:v', '1', '-vf', scale, '-c:v', 'mjpeg', '-q:v', String(q), '-f', 'image2pipe', 'pipe:1'], {
      timeoutMs: TIMEOUT_MS, maxBytes: 4 * MAX_BYTES, signal, what: `${file} could not be read as an image`,
    });
    const dims = jpegSize(stdout);
    if (!dims) throw new Error(`${file} could not be read as an image: ffmpeg gave no JPEG`);
    if (stdout.length <= MAX_BYTES) return { block: { type: 'image', mediaType: 'image/jpeg', data: stdout.toString('base64'), note }, ...dims, bytes: stdout.length };
  }
  throw new Error(`${file} stays larger than ${MAX_BYTES} bytes even at the lowest JPEG quality`);
}
