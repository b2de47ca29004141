// Bundles src/ into one CommonJS file (dist/pinclaw.cjs): what `npm start` runs and what the single
// executable embeds. Native addons are never bundled: every package's own loader (`bindings`,
// `node-gyp-build`) is replaced by pinclaw's loader, which finds the .node file in a dev tree or
// extracts it from the executable's assets.
import { build } from 'esbuild';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const loaderPath = join(root, 'src', 'native', 'loader.ts');

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
  const result = await build({
    entryPoints: [join(root, 'src', 'main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    // usearch's never-taken `require(__dirname + ...)` hints for other bundlers are harmless here.
    logOverride: { 'unsupported-require-call': 'silent' },
    banner: { js: 'var __pinclaw_import_meta_url = require("url").pathToFileURL(__filename).href;' },
    define: { 'import.meta.url': '__pinclaw_import_meta_url', __PINCLAW_VERSION__: JSON.stringify(version) },
    plugins: [nativeShim],
  });
  if (!quiet) {
    const kb = (statSync(outfile).size / 1024).toFixed(0);
    console.error(`bundle: ${outfile} (${kb} KiB) in ${Date.now() - started} ms`);
  }
  return result;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  bundle({ quiet: process.argv.includes('--quiet') }).catch((err) => {
    console.error(err.message ?? err);
    process.exit(1);
  });
}
