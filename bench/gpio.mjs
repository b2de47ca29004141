// npm run bench:gpio: GPIO tool calls per second through the whole tool layer and the time from an
// edge in the kernel to its trigger's row committed in the durable queue, each against a bare
// baseline in the same run (ioctls from JavaScript; the addon's edge callback), inside the raspi3b
// VM with the arm64 single executable. Target: edge -> queued row <= 5 ms median.
// Bundles bench/support/gpio-main.ts with esbuild and runs it; --n, --edges, --json.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', '.bench');
mkdirSync(out, { recursive: true });
const main = join(out, 'gpio-main.mjs');
await build({
  entryPoints: [join(root, 'bench', 'support', 'gpio-main.ts')], outfile: main, bundle: true, platform: 'node', format: 'esm',
  target: 'node20', packages: 'external', logLevel: 'warning',
});
// The VM harness finds its cache from its own location, which bundling moves: name it.
const env = { ...process.env, PINCLAW_VM_CACHE: process.env.PINCLAW_VM_CACHE || join(root, '.cache', 'vm') };
const child = spawn(process.execPath, [main, ...process.argv.slice(2)], { stdio: 'inherit', cwd: root, env });
process.exit((await new Promise((r) => child.on('exit', r))) ?? 1);
