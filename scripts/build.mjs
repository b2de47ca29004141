// Bundles src/ into one CommonJS file (dist/pinclaw.cjs): what `npm start` runs and what the single
// executable embeds. Native addons are never bundled: every package's own loader (`bindings`,
// `node-gyp-build`) is replaced by pinclaw's loader, which finds the .node file in a dev tree or
// extracts it from the executable's assets.
import { build } from 'esbuild';
import { cpSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const loaderPath = join(root, 'src', 'native', 'loader.ts');
const lazyLoaderPath = join(root, 'src', 'lazy-chunk.ts');
/** The dashboard's static files (src/channels/http/dashboard.ts serves them), copied as they are. */
export const dashboardDir = join(root, 'src', 'channels', 'http', 'dashboard');

/**
 * Lazy chunks (see src/lazy-chunk.ts): what the bundle's dynamic import() of `specifier` becomes, and
 * the entry each chunk is built from. Code an idle gateway never runs belongs here: every KiB in the
 * main bundle costs idle memory. A chunk must be a leaf (no src/ module besides its entry).
 */
export const lazyChunks = [
  { name: 'undici', specifier: 'undici', entry: 'undici' },
  { name: 'anthropic-sdk', specifier: '@anthropic-ai/sdk', entry: '@anthropic-ai/sdk' },
  { name: 'html', specifier: join(root, 'src', 'tools', 'web', 'html.ts'), entry: join(root, 'src', 'tools', 'web', 'html.ts') },
  // Telegram's Markdown renderer (marked): loaded with the first Telegram reply.
  { name: 'telegram-format', specifier: join(root, 'src', 'channels', 'telegram', 'format.ts'), entry: join(root, 'src', 'channels', 'telegram', 'format.ts') },
];

const lazyShim = {
  name: 'pinclaw-lazy-chunks',
  setup(b) {
    const bySpecifier = new Map(lazyChunks.filter((c) => !c.specifier.startsWith('/')).map((c) => [c.specifier, c]));
    const byPath = new Map(lazyChunks.filter((c) => c.specifier.startsWith('/')).map((c) => [c.specifier, c]));
    b.onResolve({ filter: /.*/ }, (args) => {
      if (args.namespace !== 'file' || args.importer === '' || args.path.startsWith('node:')) return undefined;
      let chunk = bySpecifier.get(args.path);
      if (!chunk && args.path.startsWith('.')) {
        const abs = join(args.resolveDir, args.path).replace(/\.js$/, '.ts');
        chunk = byPath.get(abs);
      }
      if (!chunk) return undefined;
      // A static import would evaluate the chunk when the importing module starts, which defeats it.
      if (args.kind !== 'dynamic-import') {
        return { errors: [{ text: `${args.importer} imports ${args.path} statically; it is the lazy chunk '${chunk.name}': use await import() (a type-only import is fine)` }] };
      }
      return { path: chunk.name, namespace: 'pinclaw-lazy' };
    });
    b.onLoad({ filter: /.*/, namespace: 'pinclaw-lazy' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(lazyLoaderPath)}).loadLazyChunk(${JSON.stringify(args.path)});`,
      loader: 'js',
      resolveDir: root,
    }));
  },
};

const common = (version) => ({
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
  // usearch's never-taken `require(__dirname + ...)` hints for other bundlers are harmless here.
  logOverride: { 'unsupported-require-call': 'silent' },
  define: { __PINCLAW_VERSION__: JSON.stringify(version) },
});

/** Builds the chunks next to the bundle; refuses a chunk that is not a leaf. */
async function buildChunks(dir, version) {
  mkdirSync(dir, { recursive: true });
  const out = [];
  for (const c of lazyChunks) {
    const file = join(dir, `${c.name}.cjs`);
    const r = await build({
      ...common(version),
      entryPoints: [c.entry.startsWith('/') ? c.entry : createRequire(join(root, 'package.json')).resolve(c.entry)],
      outfile: file,
      metafile: true,
      banner: { js: 'var __pinclaw_import_meta_url = require("url").pathToFileURL(__filename).href;' },
      define: { ...common(version).define, 'import.meta.url': '__pinclaw_import_meta_url' },
    });
    const own = Object.keys(r.metafile.inputs).filter((f) => f.startsWith('src/') && join(root, f) !== c.entry);
    if (own.length) throw new Error(`the lazy chunk '${c.name}' is not a leaf: it holds ${own.join(', ')}, which the main bundle may hold too`);
    out.push({ name: c.name, file });
  }
  return out;
}

// Which addon a package's loader call stands for, by the path of the file that makes the call.
const owners = [
  [/[\\/]better-sqlite3[\\/]/, 'better_sqlite3'],
  [/[\\/]usearch[\\/]/, 'usearch'],
  [/[\\/]@serialport[\\/]bindings-cpp[\\/]/, 'serialport'],
  [/[\\/]i2c-bus[\\/]/, 'i2c'],
];

const nativeShim = {
  name: 'pinclaw-native-shim',
  setup(b) {
    b.onResolve({ filter: /^(bindings|node-gyp-build)$/ }, (args) => {
      const owner = owners.find(([re]) => re.test(args.importer));
      if (!owner) return { errors: [{ text: `${args.importer} loads a native addon pinclaw does not know; add it to src/native/loader.ts` }] };
      return { path: owner[1], namespace: 'pinclaw-addon' };
    });
    b.onLoad({ filter: /.*/, namespace: 'pinclaw-addon' }, (args) => ({
      // CommonJS on purpose: i2c-bus calls require('bindings')(...) directly.
      contents: `const { loadAddon } = require(${JSON.stringify(loaderPath)});
module.exports = function () { return loadAddon(${JSON.stringify(args.path)}); };
module.exports.default = module.exports;`,
      loader: 'js',
      resolveDir: root,
    }));
    // One copy of usearch, the CommonJS one, whose loader call is patched below.
    b.onResolve({ filter: /^usearch$/ }, () => ({ path: createRequire(join(root, 'package.json')).resolve('usearch') }));
    // usearch walks up from __dirname looking for its build directory before calling node-gyp-build;
    // in a bundle that walk fails, so the call is reduced to the loader alone.
    b.onLoad({ filter: /[\\/]usearch[\\/]javascript[\\/]dist[\\/]cjs[\\/]usearch\.js$/ }, (args) => {
      const src = readFileSync(args.path, 'utf8');
      const call = '(0, node_gyp_build_1.default)(getBuildDir(getDirName()))';
      if (!src.includes(call)) return { errors: [{ text: `usearch changed: '${call}' not found in ${args.path}` }] };
      return { contents: src.replace(call, '(0, node_gyp_build_1.default)()'), loader: 'js' };
    });
  },
};

export async function bundle({ outfile = join(root, 'dist', 'pinclaw.cjs'), quiet = false } = {}) {
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  const started = Date.now();
  await build({
    ...common(version),
    entryPoints: [join(root, 'src', 'main.ts')],
    outfile,
    banner: { js: 'var __pinclaw_import_meta_url = require("url").pathToFileURL(__filename).href;' },
    define: { ...common(version).define, 'import.meta.url': '__pinclaw_import_meta_url' },
    plugins: [lazyShim, nativeShim],
  });
  const chunks = await buildChunks(join(dirname(outfile), 'lazy'), version);
  // Next to the bundle, where dashboard.ts looks; cleared first so a file deleted from the source does not linger.
  rmSync(join(dirname(outfile), 'dashboard'), { recursive: true, force: true });
  cpSync(dashboardDir, join(dirname(outfile), 'dashboard'), { recursive: true });
  if (!quiet) {
    const kb = (f) => `${(statSync(f).size / 1024).toFixed(0)} KiB`;
    console.error(`bundle: ${outfile} (${kb(outfile)}) in ${Date.now() - started} ms; lazy chunks: ${chunks.map((c) => `${c.name} ${kb(c.file)}`).join(', ')}`);
  }
  return { outfile, chunks };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  bundle({ quiet: process.argv.includes('--quiet') }).catch((err) => {
    console.error(err.message ?? err);
    process.exit(1);
  });
}
