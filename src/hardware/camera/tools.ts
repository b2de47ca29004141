// camera_snapshot {camera?, width?, height?}: a still from a named camera of hardware.cameras,
// saved in the workspace and shown to the model in the same turn (the result's image). A privacy
// action: audited before it runs (not readOnly), and outside the owner's own chats (the CLI and
// tools.controlChats) the owner confirms each call (src/tools/policy.ts).
import { errorMessage } from '../../errors.js';
import type { Tool } from '../../tools/types.js';
import { takeSnapshot, type Camera, type ImageKit } from './snapshot.js';
import { defineTool } from '../../tools/define.js';

export interface CameraToolDeps {
  cameras: readonly Camera[];
  workspace: string;
  /** the lazy chunk 'images', imported on the first snapshot */
  images: () => Promise<ImageKit>;
}

export function cameraTools(d: CameraToolDeps): Tool[] {
  const names = d.cameras.map((c) => c.name);
  const snapshot: Tool = defineTool({
    name: 'camera_snapshot',
    description: `Take a still picture with a camera (hardware.cameras) and see it: the image comes with the result, and the JPEG is saved in the workspace under snapshots/. Cameras: ${names.join(', ')}; the first is the default.`,
    inputSchema: {
      type: 'object',
      properties: {
        camera: { type: 'string', enum: names, description: 'the camera\'s name; omitted: the first' },
        width: { type: 'integer', minimum: 16, maximum: 4656, description: 'width in pixels; omitted: the camera\'s configured width' },
        height: { type: 'integer', minimum: 16, maximum: 3496, description: 'height in pixels; omitted: the camera\'s configured height' },
      },
      additionalProperties: false,
    },
    privacy: true,
    // One camera at a time: a second open of a V4L2 device mid-stream is refused as busy.
    sequential: true,
    async execute(input, ctx) {
      const i = input;
      const cam = i.camera === undefined ? d.cameras[0] : d.cameras.find((c) => c.name === i.camera);
      if (!cam) return { content: `no camera '${i.camera}' in hardware.cameras (cameras: ${names.join(', ') || 'none'})`, isError: true };
      try {
        const s = await takeSnapshot(cam, { width: i.width ?? cam.width, height: i.height ?? cam.height }, d.workspace, await d.images(), ctx.signal);
        return {
          content: `snapshot of camera ${cam.name}: ${s.width} × ${s.height} JPEG, ${s.bytes} bytes, saved in the workspace as ${s.file}; the picture follows.`,
          images: [s.image],
          // The audit row: which camera took which picture (the picture itself stays in the workspace).
          physical: { device: cam.device, camera: cam.name, file: s.file, width: s.width, height: s.height },
        };
      } catch (err) {
        ctx.signal?.throwIfAborted();
        return { content: errorMessage(err), isError: true };
      }
    },
  });
  return [snapshot];
}
