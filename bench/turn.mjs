// npm run bench:turn [-- --turns N]: bundles the benchmark (esbuild), starts the stand-in provider in
// its own process, and prints the orchestrator's overhead per turn against direct SDK calls.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { turns: { type: 'string', default: '1000' } } });
const out = join(root, 'dist', '.bench');
mkdirSync(out, { recursive: true });
// The version baked in as the real bundle bakes it (scripts/build.mjs): a dev tree would read
// package.json for it on every turn, which the executable never does.
const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
for (const name of ['turn-main', 'stand-in-main']) {
  await build({
    entryPoints: [join(root, 'bench', 'support', `${name}.ts`)], outfile: join(out, `${name}.mjs`), bundle: true, platform: 'node', format: 'esm',
    target: 'node20', packages: 'external', logLevel: 'warning', define: { __PINCLAW_VERSION__: JSON.stringify(version) },
  });
}
const server = spawn(process.execPath, [join(out, 'stand-in-main.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((r) => server.stdout.once('data', (d) => r(d.toString().trim())));
const bench = spawn(process.execPath, ['--expose-gc', join(out, 'turn-main.mjs'), url, values.turns], { stdio: 'inherit' });
const code = await new Promise((r) => bench.on('exit', r));
server.kill('SIGTERM');
process.exit(code ?? 1);
