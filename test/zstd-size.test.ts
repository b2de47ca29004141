// zstdContentSize (src/native/sea.ts): the decompressed size a zstd frame declares, read from frames
// made by the zstd program (as scripts/compress-assets.mjs makes the executable's assets) and by Node.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { zstdChecksummed, zstdContentSize } from '../src/native/sea.js';
import { tempDir } from './support/proc.js';

const SIZES = [0, 1, 63, 64, 255, 256, 257, 300, 65535, 65791, 65792, 70_000, 1 << 20, 5_000_123];

// Half random, half repeated: each frame holds raw and compressed blocks alike.
function sample(n: number): Buffer {
  const b = Buffer.alloc(n, 'pinclaw ');
  randomBytes(Math.floor(n / 2)).copy(b);
  return b;
}

t.test('frames of the zstd program at the build\'s level: the declared size is the real one', async (t) => {
  // From a file, as the build compresses: the program knows the size then (from a pipe it does not).
  const dir = tempDir();
  for (const n of SIZES) {
    const data = sample(n);
    const file = join(dir, `asset-${n}`);
    writeFileSync(file, data);
    const frame = new Uint8Array(execFileSync('zstd', ['-19', '-q', '-c', file], { maxBuffer: 64 << 20 }));
    t.equal(zstdContentSize(frame), n, `${n} bytes`);
    t.ok(zstdDecompressSync(frame, { chunkSize: Math.max(64, n) }).equals(data), `${n} bytes come back whole with that chunk`);
  }
});

t.test('frames made by Node, and frames that declare no size', async (t) => {
  for (const n of SIZES) t.equal(zstdContentSize(new Uint8Array(zstdCompressSync(sample(n)))), n, `${n} bytes`);
  const piped = new Uint8Array(execFileSync('zstd', ['-q', '-c'], { input: sample(1000) }));
  t.equal(zstdContentSize(piped), undefined, 'a frame written from a pipe declares no size');
  t.ok(zstdDecompressSync(piped).length === 1000);
  t.equal(zstdContentSize(new Uint8Array([0x28, 0xb5, 0x2f])), undefined, 'too short');
  t.equal(zstdContentSize(new Uint8Array(Buffer.from('not a zstd frame at all'))), undefined, 'not zstd');
});

t.test('a header with a dictionary id and a window byte: the size is read after them', async (t) => {
  // Descriptor 0b10_0_0_0_0_01: a 4-byte size, not single-segment (a window byte), a 1-byte dictionary id.
  const frame = new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0b1000_0001, 0x58, 0x07, 0x78, 0x56, 0x34, 0x12]);
  t.equal(zstdContentSize(frame), 0x12345678);
  // A 2-byte size field counts from 256; an 8-byte one is read whole.
  t.equal(zstdContentSize(new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0b0110_0000, 0x01, 0x00])), 257);
  t.equal(zstdContentSize(new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0b1110_0000, 0, 0, 0, 0, 1, 0, 0, 0])), 2 ** 32);
  t.equal(zstdContentSize(new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0b1110_0000, 0, 0, 0])), undefined, 'a size field cut short');
});

t.test('zstdChecksummed: the build\'s frames carry their content checksum, and Node verifies it', async (t) => {
  const dir = tempDir();
  const file = join(dir, 'asset');
  const data = sample(70_000);
  writeFileSync(file, data);
  // As scripts/compress-assets.mjs compresses.
  const checked = new Uint8Array(execFileSync('zstd', ['-19', '-q', '--check', '-c', file]));
  t.equal(zstdChecksummed(checked), true, '--check sets the flag');
  t.equal(zstdChecksummed(new Uint8Array(execFileSync('zstd', ['-19', '-q', '--no-check', '-c', file]))), false, '--no-check does not');
  t.equal(zstdChecksummed(new Uint8Array(Buffer.from('not a zstd frame at all'))), false, 'not zstd');
  // Only the checksum field changed: the blocks decode to the same bytes, and the checksum refuses them.
  const bad = Buffer.from(checked);
  bad[bad.length - 1] = bad[bad.length - 1]! ^ 1;
  t.throws(() => zstdDecompressSync(bad), /checksum/, 'zstdDecompressSync verifies the checksum');
  t.ok(zstdDecompressSync(checked).equals(data), 'the intact frame decodes');
});
