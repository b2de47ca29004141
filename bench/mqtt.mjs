// npm run bench:mqtt [-- --calls N] [--rounds N] [--output BYTES] [--duration S] [--sessions N] [--build] [--json]
// MQTT against a real mosquitto on loopback, in one run: a remote tool call between two nodes
// against a bare `mqtt` request/response of the same sizes and QoS (target <= 2x), and messages per
// second through the MQTT chat channel of the built gateway against POST /api/chat of the same
// gateway. Bundles bench/support/mqtt-main.ts; the chat part runs dist/pinclaw.cjs (built when
// missing or with --build). Prints figures and ratios, never asserts.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bundle = join(root, 'dist', 'pinclaw.cjs');
const args = process.argv.slice(2);
if (args.includes('--build') || !existsSync(bundle)) {
  process.stderr.write('bundling (node scripts/build.mjs --quiet)...\n');
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--quiet'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) {
    process.stderr.write('bench:mqtt: the build failed\n');
    process.exit(1);
  }
}
const out = join(root, 'dist', '.bench');
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(root, 'bench', 'support', 'mqtt-main.ts')], outfile: join(out, 'mqtt-main.mjs'), bundle: true, platform: 'node', format: 'esm',
  target: 'node20', packages: 'external', logLevel: 'warning',
});
const child = spawn(process.execPath, [join(out, 'mqtt-main.mjs'), '--bundle', bundle, ...args.filter((a) => a !== '--build')], { stdio: 'inherit', cwd: root });
process.exit((await new Promise((r) => child.on('exit', r))) ?? 1);
