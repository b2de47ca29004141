// Code an idle gateway never runs (the Anthropic SDK, undici, the HTML parser) is not part of the
// main bundle: every KiB there is parsed and held at start whether or not it is used (measured, see
// bench/README.md). scripts/build.mjs builds each such package as its own CommonJS file, a "lazy
// chunk": next to the bundle as dist/lazy/<name>.cjs, and inside the single executable as the asset
// lazy/<name>.cjs. The bundle reaches a chunk only through a dynamic import(), which the build turns
// into a call of loadLazyChunk, so the chunk is read and evaluated on first use. A chunk is a leaf:
// it holds no module of src/ other than its own entry, so no state is ever duplicated between the
// bundle and a chunk (the build checks this). Under tsx and tap the import() is an ordinary import.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileFunction } from 'node:vm';
import { isSea, seaTextAsset } from './native/sea.js';

const loaded = new Map<string, unknown>();

function source(name: string): { code: string; filename: string } {
  if (isSea()) return { code: seaTextAsset(`lazy/${name}.cjs`), filename: `${process.execPath}/lazy/${name}.cjs` };
  const filename = join(dirname(fileURLToPath(import.meta.url)), 'lazy', `${name}.cjs`);
  try {
    return { code: readFileSync(filename, 'utf8'), filename };
  } catch (err) {
    throw new Error(`the lazy chunk ${name} is missing (${filename}): rebuild with npm run build`, { cause: err });
  }
}

/** The module.exports of a chunk, evaluated once. Throws when the chunk is missing. */
export function loadLazyChunk(name: string): unknown {
  if (loaded.has(name)) return loaded.get(name);
  const { code, filename } = source(name);
  const module = { exports: {} as unknown };
  // Chunks need only Node's built-in modules; a require relative to the chunk resolves those.
  const req = createRequire(filename);
  const fn = compileFunction(code, ['exports', 'require', 'module', '__filename', '__dirname'], { filename });
  fn(module.exports, req, module, filename, dirname(filename));
  loaded.set(name, module.exports);
  return module.exports;
}
