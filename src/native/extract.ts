// The cache of addons extracted from the single executable's assets: where each one is written,
// how a cached copy is trusted again (its stamp), and when an extraction is made durable.
//
// A first start used to write each addon with writeFileAtomic (write, fsync, rename) after hashing
// it, before loading it: the fsync and the hash were on the path to "listening". Now an extraction
// is written under a temporary name in the addon's directory and loaded from there at once;
// settleExtractions (the gateway calls it once it listens, every other process at its exit) flushes
// it, and only then gives it its name and its stamp. What that guarantees after a power cut or a
// kill at any moment:
// - The name `<name>.node` only ever appears through a rename issued after the file's bytes were
//   flushed (fsync), so a later start never finds a torn file under it. A cut before the rename
//   leaves only the temporary file, which no later start loads (it extracts again) and the next
//   extraction into that directory removes, once its writer is gone.
// - Whatever is under the name is loaded without a comparison only while its stamp matches (inode,
//   size, mtime, ctime, written after the bytes were found or made equal to the embedded ones);
//   otherwise it is compared with the embedded bytes and, if it differs, replaced, with a warning
//   that names it.
import { createHash } from 'node:crypto';
import { closeSync, fchmodSync, fsyncSync, lstatSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, unlinkSync, writeSync, type BigIntStats } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../fsutil.js';
import { errorMessage } from '../errors.js';
import { log } from '../log.js';
import { pidAlive } from '../pid-alive.js';
import { seaBinaryAsset, seaBinaryAssetAsync } from './sea.js';

export interface SeaManifestEntry {
  asset: string;
  sha256: string;
  size: number;
}

export interface ExtractOptions {
  cacheDir: string;
  /** Compare the cached file with the embedded bytes before loading it, stamp or not (doctor). */
  compareBytes: boolean;
}

/**
 * What a stamp records of a cached addon's file when its bytes were last found equal to the
 * embedded copy: any write to the file, or its replacement, changes the inode, the size or the
 * change time (ctime, which unlike mtime no one can set back without root).
 */
interface Stamp {
  sha256: string;
  dev: string;
  ino: string;
  size: string;
  mtimeNs: string;
  ctimeNs: string;
}
const stampOf = (sha256: string, st: BigIntStats): Stamp => ({
  sha256, dev: String(st.dev), ino: String(st.ino), size: String(st.size), mtimeNs: String(st.mtimeNs), ctimeNs: String(st.ctimeNs),
});
const sameStamp = (a: Stamp, b: Stamp): boolean => a.sha256 === b.sha256 && a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;

function lstatOrNull(path: string): BigIntStats | null {
  try {
    return lstatSync(path, { bigint: true });
  } catch {
    return null;
  }
}

/**
 * Only where no one else can write: the file and its directory ours and writable by us alone. A
 * stamp in a directory someone else controls (a cache left to a shared /tmp) proves nothing.
 */
function privatelyOwned(st: BigIntStats | null): boolean {
  const uid = process.getuid?.();
  return st !== null && (uid === undefined || st.uid === BigInt(uid)) && (st.mode & 0o022n) === 0n;
}

function stampValid(file: string, sha256: string): boolean {
  const st = lstatOrNull(file);
  if (!st?.isFile() || !privatelyOwned(st) || !privatelyOwned(lstatOrNull(dirname(file)))) return false;
  try {
    return sameStamp(JSON.parse(readFileSync(`${file}.verified`, 'utf8')) as Stamp, stampOf(sha256, st));
  } catch {
    return false;
  }
}

/** After a comparison of the bytes: `before` is the file's stat from before they were read. */
function writeStamp(file: string, sha256: string, before: BigIntStats): void {
  const after = lstatOrNull(file);
  // Changed while we read it: no stamp, so the next load compares again.
  if (!after || !sameStamp(stampOf(sha256, before), stampOf(sha256, after))) return;
  try {
    // Not flushed to the disk (two fsyncs fewer in a first start): the addon was flushed before this
    // is written, and a stamp lost or stale after a power cut only makes the next load compare the bytes.
    writeFileAtomic(`${file}.verified`, JSON.stringify(stampOf(sha256, after)), 0o600, { fsync: false });
  } catch {
    // A cache we cannot write stamps in still works: each load then compares the bytes.
  }
}

/**
 * The embedded addon's bytes, refused when damaged. A zstd frame with its content checksum is
 * checked by the decompression itself (src/native/sea.ts), which makes the separate SHA-256 of the
 * 2.2 MB SQLite addon (1.7-2 ms of a first start) redundant: what the hash guarded against is a
 * damaged executable, which the checksum detects as well (an attacker who can rewrite the
 * executable rewrites the manifest with it, so the hash was never a signature). The size is
 * checked in every case; the hash still when the asset is stored raw or without a checksum.
 */
function embeddedBytes(entry: SeaManifestEntry): Uint8Array {
  let got: { bytes: Uint8Array; checksummed: boolean } | undefined = ahead.get(entry.asset);
  ahead.delete(entry.asset);
  try {
    got ??= seaBinaryAsset(entry.asset);
  } catch (err) {
    throw new Error(`embedded asset ${entry.asset} is damaged (${errorMessage(err)})`);
  }
  if (got.bytes.length !== entry.size) throw new Error(`embedded asset ${entry.asset} is damaged (${got.bytes.length} bytes, expected ${entry.size})`);
  if (!got.checksummed) {
    const digest = createHash('sha256').update(got.bytes).digest('hex');
    if (digest !== entry.sha256) throw new Error(`embedded asset ${entry.asset} is damaged (sha256 ${digest.slice(0, 12)}…, expected ${entry.sha256.slice(0, 12)}…)`);
  }
  return got.bytes;
}

/** Embedded bytes decompressed ahead of their extraction (prefetchAddon), by asset key. */
const ahead = new Map<string, { bytes: Uint8Array; checksummed: boolean }>();

const cachedFile = (name: string, entry: SeaManifestEntry, cacheDir: string): string => join(cacheDir, 'native', entry.sha256.slice(0, 16), `${name}.node`);

/**
 * When the addon will have to be extracted (no valid stamp: a first start), decompresses it on the
 * thread pool now, so that the main thread's work until the extraction (the gateway command's
 * modules, ~6 ms) and the decompression (SQLite's: 5-8 ms) overlap. Resolves when done; never
 * rejects: a failure is left for the extraction, which decompresses again and says what failed.
 * A warm start pays one more stamp check (an lstat and a small read) and nothing else.
 */
export function prefetchAddon(name: string, entry: SeaManifestEntry, cacheDir: string): Promise<void> {
  if (ahead.has(entry.asset) || stampValid(cachedFile(name, entry, cacheDir), entry.sha256)) return Promise.resolve();
  return seaBinaryAssetAsync(entry.asset).then(
    (got) => void ahead.set(entry.asset, got),
    () => undefined,
  );
}

/** An addon loaded from its temporary file, not yet flushed nor named (see settleExtractions). */
interface Pending {
  fd: number;
  tmp: string;
  file: string;
  sha256: string;
  /** Told once the file loaded from `tmp` is named `file`. */
  onSettled: (tmp: string, file: string) => void;
}
const pending: Pending[] = [];
/** Until the first settleExtractions: a process's start, whose extractions wait for it. */
let deferring = true;

/** A temporary file of writeFileAtomic's or of an extraction: `.<name>.<pid>.<8 hex>.tmp`. */
const TEMP_NAME = /^\..+\.(\d+)\.[0-9a-f]{8}\.tmp$/;

/**
 * Removes what a killed or powered-off extraction left in `dir`. Only files of processes that are
 * gone: a live one's temporary file is the addon it runs (unlinking it would be harmless to its
 * mapping, but its rename would then fail and the next start would extract again).
 */
function removeLeftovers(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    const pid = Number(TEMP_NAME.exec(n)?.[1] ?? NaN);
    if (!Number.isInteger(pid) || pid === process.pid || pidAlive(pid)) continue;
    try {
      unlinkSync(join(dir, n));
      log.debug(`native: removed ${join(dir, n)}, left by an extraction that did not finish`);
    } catch {
      // gone already, or not ours to remove
    }
  }
}

/**
 * A new file under a temporary name in `dir`: `.<name>.node.<pid>.<8 hex>.tmp`. The suffix is not
 * from node:crypto: a warm start never loads that module, and its load, compiled under the
 * executable's V8 flags, was the largest single step of a first start's extraction. The name only
 * has to be new (`wx`, tried again on a clash with a file a dead process left under its pid).
 */
function openTemp(dir: string, name: string): { fd: number; tmp: string } {
  let suffix = Number(process.hrtime.bigint() & 0xffffffffn);
  for (;;) {
    const tmp = join(dir, `.${name}.node.${process.pid}.${suffix.toString(16).padStart(8, '0')}.tmp`);
    try {
      return { fd: openSync(tmp, 'wx', 0o700), tmp };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      suffix = (suffix + 1) >>> 0;
    }
  }
}

/** Writes `bytes` under a temporary name in `dir`, not flushed; the fd stays open for the flush. */
function writeTemp(dir: string, name: string, bytes: Uint8Array): { fd: number; tmp: string } {
  const { fd, tmp } = openTemp(dir, name);
  try {
    fchmodSync(fd, 0o700); // the umask must not narrow the mode
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    return { fd, tmp };
  } catch (err) {
    closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      // nothing to remove
    }
    throw err;
  }
}

/** Flushes, names and stamps one extraction; throws, with its temporary file removed, when it cannot. */
function settle(p: Pending): void {
  try {
    try {
      fsyncSync(p.fd);
    } finally {
      closeSync(p.fd);
    }
    renameSync(p.tmp, p.file);
  } catch (err) {
    try {
      unlinkSync(p.tmp);
    } catch {
      // already gone
    }
    throw err;
  }
  // Written from checked bytes and flushed before it got its name: as good as compared.
  const st = lstatOrNull(p.file);
  if (st) writeStamp(p.file, p.sha256, st);
  removeLeftovers(dirname(p.file));
  p.onSettled(p.tmp, p.file);
}

/**
 * Makes the extractions of this process's start durable under their names (see the top of this
 * file); any later extraction is then settled before it is loaded, as it is off the start's path.
 * Called by the gateway once it listens, and at the exit of every process that extracted.
 */
export function settleExtractions(): void {
  deferring = false;
  for (const p of pending.splice(0)) {
    try {
      settle(p);
    } catch (err) {
      // The process goes on with the addon it mapped from the file now unlinked.
      log.warn(`native: cannot keep the extracted addon as ${p.file} (${errorMessage(err)}); the next start extracts it again`);
    }
  }
}

/**
 * The path to load the embedded addon `name` from. The directory name carries the content hash, so
 * a new executable never reuses an old addon. While the cached file's stamp matches, a start reads
 * neither copy (a comparison read ~3 MB in full: the cached file and the asset's pages of the
 * executable, which on a Raspberry Pi after a reboot come from the SD card). What the stamp cannot
 * see is a change that leaves the metadata alone (media corruption under the file system); that is
 * the risk every page of the executable itself runs, and `doctor` compares the bytes regardless.
 * `onSettled` is told when a temporary path this returned is given the addon's name.
 */
export function extractAddon(name: string, entry: SeaManifestEntry, opts: ExtractOptions, onSettled: (tmp: string, file: string) => void): string {
  const file = cachedFile(name, entry, opts.cacheDir);
  const dir = dirname(file);
  if (!opts.compareBytes && stampValid(file, entry.sha256)) return file;
  const bytes = embeddedBytes(entry);
  const before = lstatOrNull(file);
  if (before?.isFile()) {
    const onDisk = readFileSync(file);
    if (onDisk.length === bytes.length && onDisk.equals(bytes)) {
      writeStamp(file, entry.sha256, before);
      return file;
    }
    log.warn(`native: ${file} is not the ${name} addon this executable carries (${onDisk.length} bytes, expected ${bytes.length}: truncated or corrupted); extracting it again`);
  }
  let written: { fd: number; tmp: string };
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    written = writeTemp(dir, name, bytes);
  } catch (err) {
    throw new Error(`cannot extract ${name} addon to ${file}: ${errorMessage(err)}`);
  }
  const p: Pending = { ...written, file, sha256: entry.sha256, onSettled };
  if (!deferring) {
    try {
      settle(p);
    } catch (err) {
      throw new Error(`cannot extract ${name} addon to ${file}: ${errorMessage(err)}`);
    }
    return file;
  }
  if (pending.length === 0) process.once('exit', settleExtractions);
  pending.push(p);
  return p.tmp;
}
