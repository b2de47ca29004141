// V8 code caches of the lazy chunks (src/lazy-chunk.ts), kept in the home's cache folder. A chunk is
// compiled from its source on first use, and the Anthropic SDK's again after every idle unload
// (conductor.unloadCodeAfterIdleSeconds): 15-22 ms to compile it and another 25-42 ms of its first use compiling
// the functions it runs, on x64 under the executable's flags. From a cache made after that use: 4-6 ms
// and 7-8 ms (measured with the 0.6 MiB chunk; the cache is 0.65 MB). So a chunk that was compiled
// from source has its cache written once the gateway is quiet (the idle release) or exits, and the
// next compile of the same chunk, in this process or a later one, takes it.
//
// A cache file is `<chunk>-<crc32 of the source>.v8c`: 8 bytes of magic, the payload's CRC-32, the
// payload. V8 checks that a cache fits its version, its flags and the source, and refuses one that
// does not (the chunk is then compiled from source and a new cache written), but a release build of
// V8 does not checksum the payload, and a torn or flipped file on an SD card could crash it: the CRC
// is checked first, and a file that fails it is removed. Written under a temporary name and renamed,
// so a reader sees a whole file or none; older files of the same chunk (another build) are removed
// when a new one is written. Any failure here is logged and costs only the compile.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Script } from 'node:vm';
import { errorMessage } from './errors.js';
import { log } from './log.js';
import { pidAlive } from './pid-alive.js';
import { onRelease, onUnload } from './release.js';
import { underHeldFlags } from './v8-flags.js';

const MAGIC = Buffer.from('PCLV8C01', 'latin1');
const HEADER = MAGIC.length + 4;

let dir: string | undefined;
/** Chunks compiled from source whose cache is not written yet: their scripts, until it is. */
const pending = new Map<string, { script: Script; file: string }>();

// Loaded on the first chunk, not at start (node:zlib is not otherwise loaded by a warm start).
let zlib: typeof import('node:zlib') | undefined;
const crc32 = (data: Uint8Array | string): number => (zlib ??= createRequire(import.meta.url)('node:zlib') as typeof import('node:zlib')).crc32(data) >>> 0;

/**
 * Where the caches live (the home's cache folder); until this is called nothing is read or written.
 * Called by the processes that run turns or the start checks (src/setup/process.ts openProcess: the
 * gateway, `pinclaw agent`, `pinclaw cron run`); other commands compile their chunks from source.
 * The pending caches are also written at exit.
 */
export function setChunkCacheDir(cacheDir: string): void {
  if (dir === undefined) process.once('exit', writeChunkCaches);
  dir = join(cacheDir, 'lazy');
}

/** The cache file for this source of the chunk, and its payload when a sound one is there. */
export function readChunkCache(name: string, code: string): { file: string; data?: Buffer } | undefined {
  if (dir === undefined) return undefined;
  const file = join(dir, `${name}-${crc32(code).toString(16).padStart(8, '0')}.v8c`);
  let raw: Buffer;
  try {
    raw = readFileSync(file);
  } catch {
    return { file };
  }
  if (raw.length > HEADER && raw.subarray(0, MAGIC.length).equals(MAGIC) && raw.readUInt32LE(MAGIC.length) === crc32(raw.subarray(HEADER))) {
    return { file, data: raw.subarray(HEADER) };
  }
  log.warn(`lazy chunk ${name}: its code cache ${file} is damaged; removed, compiled from source`);
  try {
    rmSync(file, { force: true });
  } catch (err) {
    // A folder made read-only: the next write fails too, and the chunk is compiled from source each time.
    log.debug(`lazy chunk ${name}: ${errorMessage(err)}`);
  }
  return { file };
}

/** A chunk compiled without a (usable) cache: its cache is written at the next release or at exit. */
export function chunkCompiled(name: string, file: string, script: Script): void {
  pending.set(name, { script, file });
}

// At the caches' release and at the code's unload, whichever comes first (an owner may set the
// unload shorter). A pending Script makes its cache whether or not its chunk is still loaded.
onRelease('lazy chunk code caches', () => writeChunkCaches());
onUnload('lazy chunk code caches', () => writeChunkCaches());

/** Writes the pending caches (the idle release, the exit); each after the functions its use compiled. */
export function writeChunkCaches(): void {
  for (const [name, { script, file }] of pending) {
    pending.delete(name);
    try {
      const payload = underHeldFlags(() => script.createCachedData());
      const header = Buffer.alloc(HEADER);
      MAGIC.copy(header);
      header.writeUInt32LE(crc32(payload), MAGIC.length);
      mkdirSync(dir!, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, Buffer.concat([header, payload]));
      renameSync(tmp, file);
      // Another build's cache of this chunk, and a temporary file a killed process left. Not one a
      // live process is writing: a one-shot turn may write while the gateway does.
      const base = file.slice(dir!.length + 1);
      const ours = new RegExp(`^${name}-[0-9a-f]{8}\\.v8c(?:\\.(\\d+)\\.tmp)?$`);
      for (const other of readdirSync(dir!)) {
        const m = ours.exec(other);
        if (!m || other === base) continue;
        const writer = m[1];
        if (writer === undefined || !pidAlive(Number(writer))) rmSync(join(dir!, other), { force: true });
      }
    } catch (err) {
      log.debug(`lazy chunk ${name}: its code cache was not written: ${errorMessage(err)}`);
    }
  }
}
