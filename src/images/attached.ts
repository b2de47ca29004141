// The images a message brought (a photo the owner sent on Telegram, saved in the workspace by the
// channel and named in the queued row's meta.images) as image content of the turn's user message.
import { isAbsolute, join, normalize, sep } from 'node:path';
import type { ContentBlock } from '../agent/types.js';
import { errorMessage } from '../errors.js';
import { log } from '../log.js';
import { modelImage } from './model-image.js';

/**
 * One block per image: the image itself, or, when it cannot be shown (unreadable, ffmpeg missing),
 * a text naming the file and the cause so the model can tell the owner; the file stays as saved.
 */
export async function attachedImages(workspace: string, files: readonly string[], signal?: AbortSignal): Promise<ContentBlock[]> {
  const out: ContentBlock[] = [];
  for (const rel of files) {
    const clean = normalize(rel);
    // meta is written by pinclaw's channels; a path outside the workspace is never read all the same.
    if (isAbsolute(clean) || clean === '..' || clean.startsWith(`..${sep}`)) {
      out.push({ type: 'text', text: `[an attached image was not shown: its path ${rel} is outside the workspace]` });
      continue;
    }
    try {
      const img = await modelImage(join(workspace, clean), `a picture the sender attached, saved in the workspace as ${clean}`, signal);
      out.push(img.block);
    } catch (err) {
      signal?.throwIfAborted();
      log.warn(`images: ${clean} could not be shown to the model: ${errorMessage(err)}`);
      out.push({ type: 'text', text: `[the picture the sender attached (saved in the workspace as ${clean}) could not be shown to you: ${errorMessage(err)}. Tell the sender so.]` });
    }
  }
  return out;
}
