// The lazy chunk 'camera' (scripts/build.mjs): loaded only when hardware.cameras names a camera.
import type { PinclawConfig } from '../../config/schema.js';
import type { Tool } from '../../tools/types.js';
import { checkCameraConfig } from './config-check.js';
import { sourceFor } from './source.js';
import { cameraTools } from './tools.js';

export { checkCameras, type CameraCheck } from './doctor.js';
export { checkCameraConfig, cameraConfigIssues } from './config-check.js';

/** camera_snapshot for the configured cameras; throws a ConfigError naming a bad camera entry (exit 78). */
export function startCameras(config: PinclawConfig, o: { configPath: string; workspace: string; board?: { id: string; interfaces?: readonly string[] } }): Tool[] {
  const cameras = config.hardware.cameras;
  checkCameraConfig(cameras, o.configPath, o.board);
  return cameraTools({
    // Checked above: every camera has a name and a device.
    cameras: cameras.map((c) => ({ name: c.name!, device: c.device!, width: c.width, height: c.height, source: sourceFor(c.device!) })),
    workspace: o.workspace,
    images: () => import('../../images/index.js'),
  });
}
