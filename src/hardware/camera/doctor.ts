// doctor's look at the cameras: each named camera, and whether it opens. Opening only, no picture:
// doctor runs unasked, and a snapshot is a privacy action.
import { closeSync, constants, openSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import type { PinclawConfig } from '../../config/schema.js';
import { RPICAM } from './source.js';

export interface CameraCheck {
  name: string;
  device: string;
  ok: boolean;
  detail: string;
}

function openV4l2(device: string): { ok: boolean; detail: string } {
  try {
    if (!statSync(device).isCharacterDevice()) return { ok: false, detail: `${device} is not a device node` };
    // O_NONBLOCK: a V4L2 open never waits; the open itself is what a snapshot needs first.
    closeSync(openSync(device, constants.O_RDWR | constants.O_NONBLOCK));
    return { ok: true, detail: `${device} opens` };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, detail: `${device} does not exist: the camera is not connected (ls /dev/video* lists those there are)` };
    if (code === 'EACCES' || code === 'EPERM') return { ok: false, detail: `${device}: permission denied (add the user pinclaw runs as to the group video)` };
    if (code === 'EBUSY') return { ok: false, detail: `${device} is busy: another program holds it` };
    return { ok: false, detail: `${device}: ${(err as Error).message}` };
  }
}

function listPiCameras(): { ok: boolean; detail: string } {
  for (const command of ['rpicam-still', 'libcamera-still']) {
    const r = spawnSync(command, ['--list-cameras'], { encoding: 'utf8', timeout: 15_000 });
    if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') continue;
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
    if (/No cameras available/i.test(out)) return { ok: false, detail: `${command} finds no camera: is the ribbon cable seated and the camera enabled (camera_auto_detect=1)?` };
    const first = /^\s*0\s*:\s*(.+)$/m.exec(out);
    if (r.status === 0 && first) return { ok: true, detail: `${command}: ${first[1]!.trim()}` };
    return { ok: false, detail: `${command} --list-cameras failed: ${out.trim().split('\n').at(-1) ?? `exit ${r.status}`}` };
  }
  return { ok: false, detail: 'neither rpicam-still nor libcamera-still is installed (sudo apt-get install rpicam-apps)' };
}

export function checkCameras(cameras: PinclawConfig['hardware']['cameras']): CameraCheck[] {
  return cameras.map((c) => {
    const name = c.name ?? '(unnamed)';
    if (!c.device) return { name, device: '', ok: false, detail: 'no device set (hardware.cameras: "rpicam" or a /dev/videoN path)' };
    return { name, device: c.device, ...(c.device === RPICAM ? listPiCameras() : openV4l2(c.device)) };
  });
}
