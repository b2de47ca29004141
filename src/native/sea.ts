// Access to the assets of a single executable application. In a dev tree `isSea()` is false and
// nothing here is used; node:sea exists on every Node this project runs on (>= 20).
import { createRequire } from 'node:module';
import { zstdDecompress, zstdDecompressSync } from 'node:zlib';

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
 * The decompressed size a zstd frame declares (Frame_Content_Size, RFC 8878 3.1.1.1), or undefined
 * when it declares none. Given to the decompressor as its output chunk, one allocation replaces a
 * growing list of 16 KiB chunks: the SQLite addon (2.2 MB) came out in 4.4 ms instead of 9.1, which a
 * first start waits for. Hand-written because it is a header field read at a fixed place; a wrong or
 * missing figure only costs the default chunking.
 */
export function zstdContentSize(frame: Uint8Array): number | undefined {
  if (frame.length < 6 || frame[0] !== 0x28 || frame[1] !== 0xb5 || frame[2] !== 0x2f || frame[3] !== 0xfd) return undefined;
  const descriptor = frame[4]!;
  const fcsFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  const fcsBytes = [singleSegment ? 1 : 0, 2, 4, 8][fcsFlag]!;
  if (fcsBytes === 0) return undefined;
  const at = 5 + (singleSegment ? 0 : 1) + [0, 1, 2, 4][descriptor & 3]!;
  if (frame.length < at + fcsBytes) return undefined;
  let size = 0;
  for (let i = fcsBytes - 1; i >= 0; i--) size = size * 256 + frame[at + i]!;
  return fcsBytes === 2 ? size + 256 : size;
}

/** Node's own lower bound for a zlib chunk, and an upper one so that a bad header cannot ask for much. */
const MIN_CHUNK = 64;
const MAX_CHUNK = 64 << 20;

function chunkOptions(frame: Uint8Array): { chunkSize?: number } {
  const size = zstdContentSize(frame);
  return size === undefined || size < MIN_CHUNK ? {} : { chunkSize: Math.min(size, MAX_CHUNK) };
}

function decompress(frame: Uint8Array): Buffer {
  return zstdDecompressSync(frame, chunkOptions(frame));
}

/**
 * Whether a zstd frame carries its content checksum (Content_Checksum_flag, bit 2 of the frame
 * header descriptor, RFC 8878 3.1.1.1.1): then libzstd, and so node:zlib's zstdDecompressSync,
 * compares it with the bytes it produced and throws ("Restored data doesn't match checksum") when
 * they differ. The build compresses with `--check` (scripts/compress-assets.mjs).
 */
export function zstdChecksummed(frame: Uint8Array): boolean {
  return frame.length >= 5 && frame[0] === 0x28 && frame[1] === 0xb5 && frame[2] === 0x2f && frame[3] === 0xfd && ((frame[4]! >> 2) & 1) === 1;
}

/**
 * An embedded binary asset the build may have compressed (the addons: read only when one is
 * extracted or checked, so a copy then costs nothing at idle). Without compression, no copy.
 * `checksummed`: the bytes came out of a zstd frame whose content checksum the decompression
 * verified, so they are the bytes the build compressed unless damage beat a 32-bit checksum.
 */
export function seaBinaryAsset(key: string): { bytes: Uint8Array; checksummed: boolean } {
  const m = seaModule();
  if (!m) throw new Error('not a single executable');
  if (compressed(m, key)) {
    const frame = new Uint8Array(m.getRawAsset(`${key}.zst`));
    return { bytes: decompress(frame), checksummed: zstdChecksummed(frame) };
  }
  return { bytes: new Uint8Array(m.getRawAsset(key)), checksummed: false };
}

/** seaBinaryAsset with the decompression on libuv's thread pool, while the main thread goes on. */
export function seaBinaryAssetAsync(key: string): Promise<{ bytes: Uint8Array; checksummed: boolean }> {
  const m = seaModule();
  if (!m) return Promise.reject(new Error('not a single executable'));
  if (!compressed(m, key)) return Promise.resolve({ bytes: new Uint8Array(m.getRawAsset(key)), checksummed: false });
  const frame = new Uint8Array(m.getRawAsset(`${key}.zst`));
  return new Promise((resolve, reject) => {
    zstdDecompress(frame, chunkOptions(frame), (err, bytes) => (err ? reject(err) : resolve({ bytes, checksummed: zstdChecksummed(frame) })));
  });
}

/**
 * An embedded text asset. The build compresses the large text assets that are read once and kept
 * as a string (the tokenizer's ranks, the lazy chunks); decompressing costs the same memory as the
 * copy getAsset makes anyway, for ~2.5 MB less executable.
 */
export function seaTextAsset(key: string): string {
  const m = seaModule();
  if (!m) throw new Error('not a single executable');
  if (compressed(m, key)) return decompress(new Uint8Array(m.getRawAsset(`${key}.zst`))).toString('utf8');
  return m.getAsset(key, 'utf8');
}
