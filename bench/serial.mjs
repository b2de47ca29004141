// npm run bench:serial: an MCU round trip through the whole protocol stack against a raw echo over
// the same kind of link (a socat pty pair, the far end in its own process), in one run; target
// <= 2x raw. Also requests per second sustained. Bundles bench/support/serial-{main,peer}.ts.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', '.bench');
mkdirSync(out, { recursive: true });
for (const name of ['serial-main', 'serial-peer']) {
  await build({ entryPoints: [join(root, 'bench', 'support', `${name}.ts`)], outfile: join(out, `${name}.mjs`), bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'warning' });
}
const child = spawn(process.execPath, [join(out, 'serial-main.mjs'), '--peer', join(out, 'serial-peer.mjs'), ...process.argv.slice(2)], { stdio: 'inherit', cwd: root });
process.exit((await new Promise((r) => child.on('exit', r))) ?? 1);
