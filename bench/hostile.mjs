// npm run bench:hostile: the longest event-loop block while pinclaw handles each hostile input of
// issue "hostile input never freezes the runtime" (HTML pages, glob patterns, regexes, tool inputs,
// an SSE stream), against JSON.parse of the same bytes measured the same way in the same run.
// Target: no block above 100 ms. Bundles bench/support/hostile-main.ts with esbuild and runs it.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', '.bench');
mkdirSync(out, { recursive: true });
const main = join(out, 'hostile-main.mjs');
await build({
  entryPoints: [join(root, 'bench', 'support', 'hostile-main.ts')], outfile: main, bundle: true, platform: 'node', format: 'esm',
  target: 'node20', packages: 'external', logLevel: 'warning',
});
const child = spawn(process.execPath, [main, ...process.argv.slice(2)], { stdio: 'inherit', cwd: root });
process.exit((await new Promise((r) => child.on('exit', r))) ?? 1);
