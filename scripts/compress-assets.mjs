// Compresses some assets of the single executable: each selected `key` becomes `<key>.zst`
// (zstd), which src/native/sea.ts's seaTextAsset(key) and seaBinaryAsset(key) decompress with
// node:zlib. Worth it for what is read once and kept as a copy anyway (the tokenizer's ranks, the
// lazy chunks: getAsset copies them) and for the addons, which are read only when they are extracted
// into the cache (a start whose cached copy's stamp matches reads none of them; src/native/loader.ts).
// The embedder's data stay as they are: they are used in place, in the executable's pages, which the
// kernel can drop; a decompressed copy would be the process's own memory.
//
// zstd, not brotli (until 2026-11-29): at level 19 the addons come out 6% smaller (better_sqlite3:
// 994 against 1,054 KB) and decompress in about a third of the time (8-10 against 13-23 ms here),
// which a first start, extracting them, waits for. The build's Node (20) has no zstd; the zstd
// program (Debian's zstd, in scripts/setup.mjs) compresses, the executable's Node 24 decompresses.
// `--check` (zstd's default, said so it stays): each frame carries its content checksum, which the
// decompression verifies, so an extracted addon needs no hash of its own (src/native/extract.ts).
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Replaces each asset `select` picks by its zstd-compressed copy under `dir`, keyed `<key>.zst`. */
export function compressAssets(assets, dir, select) {
  for (const [key, file] of Object.entries(assets)) {
    if (!select(key)) continue;
    const out = join(dir, `${key}.zst`);
    mkdirSync(dirname(out), { recursive: true });
    try {
      execFileSync('zstd', ['-q', '-f', '-19', '--check', file, '-o', out], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (err) {
      const why = err.code === 'ENOENT' ? 'the zstd program is missing: apt-get install zstd (or node scripts/setup.mjs)' : String(err.stderr ?? err.message).trim();
      throw new Error(`cannot compress ${file}: ${why}`);
    }
    delete assets[key];
    assets[`${key}.zst`] = out;
  }
  return assets;
}
