// hardware.cameras: each camera named once, with a device pinclaw can take a still from; a camera
// on the Pi camera's interface when the board profile says the board has none is named as well.
import { ConfigError } from '../../errors.js';
import type { PinclawConfig } from '../../config/schema.js';
import { deviceProblem, RPICAM } from './source.js';

type CameraConfig = PinclawConfig['hardware']['cameras'][number];

/** Every problem, each with its key; empty when the cameras are fine. */
export function cameraConfigIssues(cameras: readonly CameraConfig[], board?: { id: string; interfaces?: readonly string[] }): string[] {
  const issues: string[] = [];
  const seen = new Set<string>();
  cameras.forEach((c, i) => {
    const key = `hardware.cameras[${i}]`;
    if (!c.name) issues.push(`${key}.name: required (the name camera_snapshot uses, e.g. shelf)`);
    else if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/.test(c.name)) issues.push(`${key}.name: "${c.name}" must be letters, digits, _ or - (at most 32; it names the snapshots' folder)`);
    else if (seen.has(c.name)) issues.push(`${key}.name: "${c.name}" is already the name of another camera`);
    else seen.add(c.name);
    if (!c.device) issues.push(`${key}.device: required ("rpicam" or a /dev/videoN path)`);
    else {
      const bad = deviceProblem(c.device);
      if (bad) issues.push(`${key}.device: ${bad}`);
      else if (c.device === RPICAM && board?.interfaces && !board.interfaces.includes('csi')) issues.push(`${key}.device: "rpicam" needs a camera connector (CSI), and board ${board.id} has none (its camera interfaces: ${board.interfaces.join(', ')})`);
    }
  });
  return issues;
}

/** Throws a ConfigError (exit 78) listing every problem of hardware.cameras. */
export function checkCameraConfig(cameras: readonly CameraConfig[], configPath: string, board?: { id: string; interfaces?: readonly string[] }): void {
  const issues = cameraConfigIssues(cameras, board);
  if (issues.length) throw new ConfigError(`${configPath}: ${issues.join('; ')}`);
}
