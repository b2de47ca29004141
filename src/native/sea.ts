// Access to the assets of a single executable application. In a dev tree `isSea()` is false and
// nothing here is used; node:sea exists on every Node this project runs on (>= 20).
import { createRequire } from 'node:module';
import { zstdDecompressSync } from 'node:zlib';

interface SeaModule {
  isSea(): boolean;
  getRawAsset(key: string): ArrayBuffer;
  getAsset(key: string, encoding: string): string;
  /** Node >= 24.8 (every single executable pinclaw builds). */
  getAssetKeys?(): string[];
}

let sea: SeaModule | null | undefined;
let keys: Set<string> | undefined;

function seaModule(): SeaModule | null {
  if (sea === undefined) {
    try {
      sea = createRequire(import.meta.url)('node:sea') as SeaModule;
    } catch {
      sea = null;
    }
  }
  return sea;
}

export function isSea(): boolean {
  return seaModule()?.isSea() ?? false;
}

/** Bytes of an embedded asset, without a copy. */
export function seaAsset(key: string): Uint8Array {
  const m = seaModule();
  if (!m) throw new Error('not a single executable');
  return new Uint8Array(m.getRawAsset(key));
}

/** Whether the build stored `key` compressed, as `<key>.zst` (scripts/compress-assets.mjs). */
function compressed(m: SeaModule, key: string): boolean {
  if (m.getAssetKeys) return (keys ??= new Set(m.getAssetKeys())).has(`${key}.zst`);
  try {
    m.getRawAsset(`${key}.zst`);
    return true;
  } catch {
    return false;
  }
}

/**
 * An embedded binary asset the build may have compressed (the addons: read only when one is
 * extracted or checked, so a copy then costs nothing at idle). Without compression, no copy.
 */
export function seaBinaryAsset(key: string): Uint8Array {
  const m = seaModule();
  if (!m) throw new Error('not a single executable');
  if (compressed(m, key)) return zstdDecompressSync(new Uint8Array(m.getRawAsset(`${key}.zst`)));
  return new Uint8Array(m.getRawAsset(key));
}

/**
 * An embedded text asset. The build compresses the large text assets that are read once and kept
 * as a string (the tokenizer's ranks, the lazy chunks); decompressing costs the same memory as the
 * copy getAsset makes anyway, for ~2.5 MB less executable.
 */
export function seaTextAsset(key: string): string {
  const m = seaModule();
  if (!m) throw new Error('not a single executable');
  if (compressed(m, key)) return zstdDecompressSync(new Uint8Array(m.getRawAsset(`${key}.zst`))).toString('utf8');
  return m.getAsset(key, 'utf8');
}
