// camera_command: sends a command to a connected MaixCam and returns its result. What commands a
// camera knows is up to its script (docs/hardware.md#maixcam lists the reference script's).
import type { Tool } from '../../tools/types.js';
import type { MaixcamServer } from './server.js';
import { defineTool } from '../../tools/define.js';

export function cameraCommandTool(server: () => MaixcamServer | undefined): Tool {
  return defineTool({
    name: 'camera_command',
    description: 'Send a command to a connected MaixCam camera (e.g. "snapshot", "set_model") and return its result. Omit camera when only one is connected.',
    inputSchema: {
      type: 'object',
      properties: {
        camera: { type: 'string', minLength: 1, maxLength: 64 },
        command: { type: 'string', minLength: 1, maxLength: 64 },
        args: { type: 'object' },
        timeoutMs: { type: 'integer', minimum: 100, maximum: 30000, description: 'default 5000' },
      },
      required: ['command'],
      additionalProperties: false,
    },
    sequential: true,
    async execute(input) {
      const { camera, command, args, timeoutMs = 5000 } = input;
      const s = server();
      if (!s) return { content: 'camera_command: the MaixCam server is not running (hardware.maixcam.port; the gateway runs it)', isError: true };
      const r = await s.command(camera, command, args ?? {}, timeoutMs);
      if (!r.ok) return { content: `camera_command ${command}: ${r.error ?? 'the camera reported a failure'}`, isError: true };
      return { content: r.data === undefined ? `${command}: done` : `${command}: ${JSON.stringify(r.data)}` };
    },
  });
}
