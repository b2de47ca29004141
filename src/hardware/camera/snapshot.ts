// One still from a named camera, saved in the workspace (snapshots/<camera>/<day>/<time>.jpg) and
// made image content for the model. A failure names the camera and the cause, and leaves nothing
// behind: the file appears (by rename) only once the whole JPEG is there.
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ImageBlock } from '../../agent/types.js';
import type { CameraSource } from './source.js';

/** A still larger than this is no still (a camera at 4656 × 3496 gives ~5 MB at rpicam's quality). */
const MAX_STILL_BYTES = 32 * 1024 * 1024;
/** rpicam-still's first frame waits for the sensor's exposure to settle: seconds, not milliseconds. */
const CAPTURE_TIMEOUT_MS = 20_000;

export interface Camera {
  name: string;
  device: string;
  width: number;
  height: number;
  source: CameraSource;
}

export interface Snapshot {
  /** workspace-relative path of the JPEG */
  file: string;
  width: number;
  height: number;
  bytes: number;
  /** the same picture within the providers' limits */
  image: ImageBlock;
}

/** The helpers of the lazy chunk 'images', passed in: this module stays free of a second copy. */
export type ImageKit = typeof import('../../images/index.js');

function stamp(d: Date): { day: string; time: string } {
  const iso = d.toISOString();
  return { day: iso.slice(0, 10), time: iso.slice(11, 23).replaceAll(':', '').replace('.', '-') };
}

export async function takeSnapshot(cam: Camera, size: { width: number; height: number }, workspace: string, kit: ImageKit, signal?: AbortSignal, now = new Date()): Promise<Snapshot> {
  let jpeg: Buffer | undefined;
  const commands = cam.source.commands(size.width, size.height);
  for (const { command, args } of commands) {
    try {
      jpeg = (await kit.runImageCommand(command, args, { timeoutMs: CAPTURE_TIMEOUT_MS, maxBytes: MAX_STILL_BYTES, signal, what: `camera '${cam.name}' (${cam.source.label})` })).stdout;
      break;
    } catch (err) {
      // Not installed: the next command of the list (libcamera-still before Bookworm's rpicam-still).
      if (err instanceof kit.FfmpegError && err.missing) continue;
      if (err instanceof kit.FfmpegError) {
        const why = cam.source.explain(err.stderr);
        if (why) throw new Error(`camera '${cam.name}': ${why} (${command}: ${err.reason})`, { cause: err });
      }
      throw err;
    }
  }
  if (!jpeg) throw new Error(`camera '${cam.name}' (${cam.source.label}): ${commands.map((c) => c.command).join(' and ')} ${commands.length > 1 ? 'are' : 'is'} not installed; ${cam.source.install}`);
  const dims = kit.jpegSize(jpeg);
  if (!dims) throw new Error(`camera '${cam.name}' (${cam.source.label}) gave ${jpeg.length} bytes that are not a JPEG`);
  const { day, time } = stamp(now);
  const rel = join('snapshots', cam.name, day, `${time}.jpg`);
  const abs = join(workspace, rel);
  mkdirSync(join(workspace, 'snapshots', cam.name, day), { recursive: true });
  const tmp = `${abs}.part`;
  try {
    writeFileSync(tmp, jpeg);
    renameSync(tmp, abs);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new Error(`camera '${cam.name}': the snapshot could not be saved as ${rel}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const img = await kit.modelImage(abs, `a snapshot of camera ${cam.name} (${dims.width} × ${dims.height}), saved in the workspace as ${rel}`, signal);
  return { file: rel, ...dims, bytes: jpeg.length, image: img.block };
}
