// A reader of .zip skill archives: the central directory (APPNOTE.TXT 4.3.12, 4.3.16) and each
// entry's data, stored or deflated (inflateRaw from node:zlib). Hand-written because no zip reader
// is a runtime dependency (jszip is in node_modules only for a dev tool), and a skill needs little of
// the format: no zip64 (a skill is far below 4 GiB), no encryption, no spanning. Reading the central
// directory first gives every entry's path, type and size before any data is inflated, so a hostile
// archive (a `..` path, a symlink, a bomb of zeros) is refused without inflating a byte of it; each
// entry is then inflated to at most the size it declares and checked against its CRC-32.
import { PinclawError } from '../errors.js';
import { crc32, inflateRawSync } from 'node:zlib';

export interface ZipEntry {
  path: string;
  type: 'file' | 'dir';
  /** Unix permission bits when the archive was made on Unix, else 0o644 / 0o755 */
  mode: number;
  size: number;
  /** the entry's bytes, inflated and checked on call */
  read(): Buffer;
}

export class ZipError extends PinclawError {
  constructor(message: string) {
    super(message);
    this.name = 'ZipError';
  }
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const S_IFMT = 0o170000;
const TYPES: Record<number, string> = { 0o120000: 'a symbolic link', 0o020000: 'a character device', 0o060000: 'a block device', 0o010000: 'a FIFO', 0o140000: 'a socket' };

function findEnd(buf: Buffer): number {
  // The end record is 22 bytes plus a comment of at most 65535.
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--) {
    if (buf.readUInt32LE(i) === EOCD) return i;
  }
  throw new ZipError('not a zip archive (no end of central directory record)');
}

/** The entries of a zip held in memory, in central-directory order. */
export function zipEntries(buf: Buffer): ZipEntry[] {
  const end = findEnd(buf);
  const disk = buf.readUInt16LE(end + 4);
  const count = buf.readUInt16LE(end + 10);
  const cdSize = buf.readUInt32LE(end + 12);
  const cdOffset = buf.readUInt32LE(end + 16);
  if (disk !== 0 || buf.readUInt16LE(end + 6) !== 0) throw new ZipError('a zip split over several files is not supported');
  if (count === 0xffff || cdOffset === 0xffffffff || cdSize === 0xffffffff) throw new ZipError('zip64 archives are not supported (a skill is far smaller than what needs them)');
  if (cdOffset + cdSize > end) throw new ZipError('the central directory lies outside the file (truncated or corrupt)');
  const out: ZipEntry[] = [];
  let at = cdOffset;
  for (let n = 0; n < count; n++) {
    if (at + 46 > end || buf.readUInt32LE(at) !== CENTRAL) throw new ZipError(`central directory entry ${n + 1} is corrupt`);
    const madeBy = buf.readUInt16LE(at + 4) >> 8;
    const flags = buf.readUInt16LE(at + 8);
    const method = buf.readUInt16LE(at + 10);
    const crc = buf.readUInt32LE(at + 16);
    const packed = buf.readUInt32LE(at + 20);
    const size = buf.readUInt32LE(at + 24);
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    const external = buf.readUInt32LE(at + 38);
    const local = buf.readUInt32LE(at + 42);
    // Bit 11: UTF-8 names; others are CP437, of which ASCII (what skills use) is the same.
    const path = buf.toString(flags & 0x800 ? 'utf8' : 'latin1', at + 46, at + 46 + nameLen);
    at += 46 + nameLen + extraLen + commentLen;
    // Made on Unix (3): the high 16 bits of the external attributes are st_mode.
    const unixMode = madeBy === 3 ? external >>> 16 : 0;
    const fmt = unixMode & S_IFMT;
    if (TYPES[fmt]) throw new ZipError(`${path}: ${TYPES[fmt]}, not a file or a directory`);
    const isDir = fmt === 0o040000 || path.endsWith('/') || (fmt === 0 && (external & 0x10) !== 0);
    if (flags & 1) throw new ZipError(`${path}: encrypted entries are not supported`);
    if (!isDir && method !== 0 && method !== 8) throw new ZipError(`${path}: compression method ${method} is not supported (stored or deflate)`);
    const mode = unixMode & 0o7777 ? unixMode & 0o7777 : isDir ? 0o755 : 0o644;
    out.push({
      path: isDir ? path.replace(/\/+$/, '') : path,
      type: isDir ? 'dir' : 'file',
      mode,
      size: isDir ? 0 : size,
      read: () => {
        if (local + 30 > buf.length || buf.readUInt32LE(local) !== LOCAL) throw new ZipError(`${path}: its local header is missing (corrupt archive)`);
        const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
        if (start + packed > buf.length) throw new ZipError(`${path}: its data runs past the end of the archive (truncated)`);
        const raw = buf.subarray(start, start + packed);
        let data: Buffer;
        try {
          // At most what the entry declares (+1 to see that it is more): an entry cannot inflate past its size.
          data = method === 0 ? Buffer.from(raw) : inflateRawSync(raw, { maxOutputLength: size + 1 });
        } catch (err) {
          throw new ZipError(`${path}: cannot inflate (${(err as Error).message}); the archive is corrupt or its sizes lie`);
        }
        if (data.length !== size) throw new ZipError(`${path}: holds ${data.length} bytes, its header says ${size}`);
        if (crc32(data) >>> 0 !== crc) throw new ZipError(`${path}: CRC-32 mismatch (corrupt archive)`);
        return data;
      },
    });
  }
  return out;
}
