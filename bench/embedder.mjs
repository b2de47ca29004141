// npm run bench:embedder [-- --words 60000,100000 --rounds 5 --json]: the memory's local
// embedder (docs/memory-embedder.md) at each vocabulary size: data size, ms per 400-token chunk for
// the addon (the dev build in build/Release, dlopen'ed directly) and the TypeScript reference with
// their ratio, RSS growth when loaded (each in a child process of its own), and quality (retrieval,
// paraphrases, typos, vocabulary coverage). Missing data files are built first (scripts/
// embedder-assets.mjs, ~35 s each). Bundles bench/support/embedder-main.ts with esbuild and runs it.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
if (!existsSync(join(root, 'build', 'Release', 'pinclaw.node'))) {
  console.error('bench:embedder: build/Release/pinclaw.node is missing; run npm run install first');
  process.exit(1);
}
const out = join(root, 'dist', '.bench');
mkdirSync(out, { recursive: true });
const main = join(out, 'embedder-main.mjs');
await build({
  entryPoints: [join(root, 'bench', 'support', 'embedder-main.ts')], outfile: main, bundle: true, platform: 'node', format: 'esm',
  target: 'node20', packages: 'external', logLevel: 'warning',
});
const child = spawn(process.execPath, [main, '--root', root, ...process.argv.slice(2)], { stdio: 'inherit', cwd: root });
process.exit((await new Promise((r) => child.on('exit', r))) ?? 1);
