// npm run bench:camera: snapshot-to-model latency on the host. A camera_snapshot call through the
// loop, from the model's tool call to the picture arriving at the Anthropic stand-in, against the
// bare floor of the same run: one `ffmpeg` still from its test source, and one ffmpeg start
// (`ffmpeg -version`), the cost a V4L2 path through the addon's ioctls would save at most.
// Bundles bench/support/camera-main.ts with esbuild and runs it; --n, --width, --height, --json.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', '.bench');
mkdirSync(out, { recursive: true });
const main = join(out, 'camera-main.mjs');
await build({
  entryPoints: [join(root, 'bench', 'support', 'camera-main.ts')], outfile: main, bundle: true, platform: 'node', format: 'esm',
  target: 'node20', packages: 'external', logLevel: 'warning',
});
const child = spawn(process.execPath, [main, ...process.argv.slice(2)], { stdio: 'inherit', cwd: root });
process.exit((await new Promise((r) => child.on('exit', r))) ?? 1);
