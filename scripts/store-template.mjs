// The database a new home starts from, made at build time: src/store/db.ts's openDatabase on an
// empty file (every migration of src/store/schema.ts), compacted with VACUUM INTO. The single
// executable carries it (the asset store/pinclaw.db, zstd-compressed) and a first start copies it
// instead of running the migrations: they were 4-5 ms of a first gateway start's ~70 (SQLite
// parsing each table, index, trigger and FTS5 table it creates; docs/performance.md). Run by the
// Node the executable embeds (the dev tree's better-sqlite3 is built for it).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const STORE_TEMPLATE_KEY = 'store/pinclaw.db';

const ENTRY = `
import { openDatabase } from './src/store/db.ts';
const [work, out] = process.argv.slice(2);
const db = openDatabase(work + '/pinclaw.db');
db.prepare('vacuum into ?').run(out);
db.close();
`;

/** Writes the template to `out` with `node` (a Node 24 of this host). */
export async function buildStoreTemplate(node, out) {
  // Inside the tree, so that the script finds node_modules.
  mkdirSync(join(root, 'dist', '.build'), { recursive: true });
  const work = mkdtempSync(join(root, 'dist', '.build', 'store-template-'));
  try {
    const script = join(work, 'make.mjs');
    const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
    await build({
      stdin: { contents: ENTRY, resolveDir: root, loader: 'ts', sourcefile: 'store-template-entry.ts' },
      outfile: script, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'warning',
      define: { __PINCLAW_VERSION__: JSON.stringify(version) },
    });
    rmSync(out, { force: true });
    execFileSync(node, [script, work, out], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return out;
}
