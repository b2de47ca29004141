// Compresses some assets of the single executable: each selected `key` becomes `<key>.br` (brotli),
// which src/native/sea.ts's seaTextAsset(key) and seaBinaryAsset(key) decompress. Worth it for
// what is read once and kept as a copy anyway (the tokenizer's ranks, the lazy chunks: getAsset
// copies them) and for the addons, which are read only when they are extracted into the cache (a
// start whose cached copy's stamp matches reads none of them; src/native/loader.ts). The embedder's
// data stay as they are: they are used in place, in the executable's pages, which the kernel can
// drop; a decompressed copy would be the process's own memory.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { brotliCompressSync, constants } from 'node:zlib';

/**
 * Replaces each asset `select` picks by its brotli-compressed copy under `dir`, keyed `<key>.br`.
 * Quality 9, not 11: within 6% of the size, ten times faster (under a second for all of them).
 */
export function compressAssets(assets, dir, select) {
  for (const [key, file] of Object.entries(assets)) {
    if (!select(key)) continue;
    const data = readFileSync(file);
    const out = join(dir, `${key}.br`);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_LGWIN]: 24, [constants.BROTLI_PARAM_SIZE_HINT]: data.length } }));
    delete assets[key];
    assets[`${key}.br`] = out;
  }
  return assets;
}
