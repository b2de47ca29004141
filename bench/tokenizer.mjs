// npm run bench:tokenizer [-- --rounds N --budget SECONDS --mb SIZE --encoding NAME --text FILE --mode whole|chunked
//   --only "tiktoken (WASM),baseline encode" --baseline OTHER/pinclaw.node]: tokens per second of the addon
// (the dev build in build/Release, dlopen'ed directly), tiktoken (WASM), js-tiktoken and the
// TypeScript reference on the same generated corpus, with ratios. Bundles bench/support/
// tokenizer-main.ts with esbuild (dependencies stay external) and runs it.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
if (!existsSync(join(root, 'build', 'Release', 'pinclaw.node'))) {
  console.error('bench:tokenizer: build/Release/pinclaw.node is missing; run npm run install first');
  process.exit(1);
}
const out = join(root, 'dist', '.bench');
mkdirSync(out, { recursive: true });
const main = join(out, 'tokenizer-main.mjs');
await build({
  entryPoints: [join(root, 'bench', 'support', 'tokenizer-main.ts')], outfile: main, bundle: true, platform: 'node', format: 'esm',
  target: 'node20', packages: 'external', logLevel: 'warning',
});
const child = spawn(process.execPath, [main, '--root', root, ...process.argv.slice(2)], { stdio: 'inherit', cwd: root });
process.exit((await new Promise((r) => child.on('exit', r))) ?? 1);
