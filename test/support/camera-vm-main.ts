// Runs inside the x64 VM (test/camera-vm.test.ts bundles it with esbuild and runs it with this
// host's node): camera_snapshot as the gateway builds it (startCameras: the config check of
// hardware.cameras, the tool, the images chunk) and doctor's camera check, against the vivid
// driver's /dev/video0. Usage: node camera-vm-main.mjs CASE where CASE is
//   doctor            doctor's check of /dev/video0 and /dev/video9
//   snap W H          a snapshot of "shelf" (/dev/video0) at W × H (or the configured size without W H)
//   missing           a snapshot of "gone" (/dev/video9)
// Each prints one JSON line: the tool's result, and the saved JPEG as base64 for the host to decode.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaults } from '../../src/config/schema.js';
import { checkCameras, startCameras } from '../../src/hardware/camera/index.js';
import type { ToolContext } from '../../src/tools/types.js';

const workspace = process.env.WORKSPACE ?? '/tmp/ws';
const config = defaults();
config.hardware.cameras = [
  { name: 'shelf', device: '/dev/video0', width: 640, height: 480 },
  { name: 'gone', device: '/dev/video9', width: 640, height: 480 },
] as typeof config.hardware.cameras;
const ctx: ToolContext = { sessionKey: 'cli:owner', channel: 'cli', chatId: 'owner', caller: 'owner' };

const [what, w, h] = process.argv.slice(2);
if (what === 'doctor') {
  console.log(JSON.stringify({ doctor: checkCameras(config.hardware.cameras) }));
} else {
  const [tool] = startCameras(config, { configPath: '/tmp/config.json', workspace });
  const input = what === 'missing' ? { camera: 'gone' } : { camera: 'shelf', ...(w ? { width: Number(w), height: Number(h) } : {}) };
  const r = await tool!.execute(input, ctx);
  const file = /saved in the workspace as (\S+);/.exec(r.content)?.[1];
  console.log(JSON.stringify({
    content: r.content,
    isError: r.isError ?? false,
    physical: r.physical,
    saved: file ? readFileSync(join(workspace, file)).toString('base64') : undefined,
    image: r.images?.[0],
  }));
}
