// The container of `pinclaw backup`: a gzip-compressed POSIX tar (ustar) of regular files and
// directories, written and read by the small code below rather than a library. node_modules holds
// `tar` and `tar-stream`, but only as dependencies of the dev tools (tap, pacote) and of
// better-sqlite3's install-time downloader: none is a runtime dependency, and making one so would put
// its stream stack (minipass or readable-stream + bl) in the bundle for the one thing a backup needs.
// That thing is small and fully specified (POSIX.1-2001 ustar + pax): 512-byte headers with octal
// fields and a checksum, data padded to 512, two zero blocks at the end; pax records for a path that
// does not fit the name/prefix fields, and GNU's base-256 size field for a file of 8 GiB or more, which
// GNU tar and bsdtar both read. `tar -tzvf backup.tar.gz` lists what a backup holds.
// Corruption is caught twice: by gzip's CRC-32 over the whole stream and by each header's checksum.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { PinclawError, errorMessage } from './errors.js';

const BLOCK = 512;
const READ_CHUNK = 1 << 20;

export interface TarEntry {
  /** relative, '/'-separated, no trailing slash */
  path: string;
  type: 'file' | 'dir';
  mode: number;
  /** seconds since the epoch */
  mtime: number;
  /** files: the bytes, either in memory or read from `file` (exactly `size` of them) */
  data?: Uint8Array;
  file?: string;
  size?: number;
}

/** What the archive reader found wrong: a corrupt, truncated or foreign file. */
export class ArchiveError extends PinclawError {
  constructor(message: string) {
    super(message);
    this.name = 'ArchiveError';
  }
}

// ---- writing ----

function octal(buf: Buffer, off: number, len: number, n: number, what: string): void {
  const digits = n.toString(8);
  if (digits.length > len - 1) throw new Error(`tar: ${what} ${n} does not fit its field`);
  buf.write(digits.padStart(len - 1, '0') + '\0', off, len, 'latin1');
}

/** The size field: octal up to 8 GiB - 1, GNU base-256 (high bit set, big-endian) above. */
function sizeField(buf: Buffer, n: number): void {
  if (n < 8 ** 11) return octal(buf, 124, 12, n, 'size');
  buf[124] = 0x80;
  let v = BigInt(n);
  for (let i = 135; i > 124; i--) {
    buf[i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

function checksum(block: Buffer): number {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
  return sum;
}

/** ustar keeps a path in name (100 bytes) or prefix (155) + '/' + name; null when it cannot. */
function splitPath(path: string): { name: string; prefix: string } | null {
  if (Buffer.byteLength(path) <= 100) return { name: path, prefix: '' };
  for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100 && name) return { name, prefix };
  }
  return null;
}

function headerBlock(o: { name: string; prefix: string; mode: number; size: number; mtime: number; type: string }): Buffer {
  const b = Buffer.alloc(BLOCK);
  b.write(o.name, 0, 100, 'utf8');
  octal(b, 100, 8, o.mode & 0o7777, 'mode');
  octal(b, 108, 8, 0, 'uid');
  octal(b, 116, 8, 0, 'gid');
  sizeField(b, o.size);
  octal(b, 136, 12, Math.max(0, Math.floor(o.mtime)), 'mtime');
  b.write(o.type, 156, 1, 'latin1');
  b.write('ustar\0' + '00', 257, 8, 'latin1');
  octal(b, 329, 8, 0, 'devmajor');
  octal(b, 337, 8, 0, 'devminor');
  b.write(o.prefix, 345, 155, 'utf8');
  // six octal digits, NUL, space: the form every tar writes and reads
  b.write(checksum(b).toString(8).padStart(6, '0') + '\0 ', 148, 8, 'latin1');
  return b;
}

/** "%d key=value\n", the length counting itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body);
  while (String(len).length + Buffer.byteLength(body) !== len) len = String(len).length + Buffer.byteLength(body);
  return `${len}${body}`;
}

const padding = (size: number) => (BLOCK - (size % BLOCK)) % BLOCK;

function* entryHeaders(e: TarEntry, size: number): Generator<Buffer> {
  const path = e.type === 'dir' ? `${e.path}/` : e.path;
  const type = e.type === 'dir' ? '5' : '0';
  const split = splitPath(path);
  if (!split) {
    const pax = Buffer.from(paxRecord('path', path));
    yield headerBlock({ name: 'PaxHeader', prefix: '', mode: 0o644, size: pax.length, mtime: e.mtime, type: 'x' });
    yield Buffer.concat([pax, Buffer.alloc(padding(pax.length))]);
  }
  const short = split ?? { name: Buffer.from(path).subarray(0, 100).toString('utf8').replace(/\uFFFD+$/, ''), prefix: '' };
  yield headerBlock({ ...short, mode: e.mode, size, mtime: e.mtime, type });
}

async function* fileData(e: TarEntry, size: number, counted: (n: number) => void): AsyncGenerator<Buffer> {
  if (e.data) {
    if (e.data.length) yield Buffer.from(e.data);
    counted(e.data.length);
    return;
  }
  const fh = await open(e.file!, 'r');
  try {
    let left = size;
    while (left > 0) {
      const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK, left));
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) throw new PinclawError(`${e.file} became shorter while it was being archived`);
      left -= bytesRead;
      counted(bytesRead);
      yield buf.subarray(0, bytesRead);
    }
  } finally {
    await fh.close();
  }
}

/**
 * Writes the entries, in order, as a gzip-compressed tar to `dest` (created with mode 0600; it must
 * not exist). `onBytes` gets the running count of file bytes archived. Returns the bytes written.
 */
export async function writeTarGz(dest: string, entries: readonly TarEntry[], onBytes?: (done: number) => void): Promise<number> {
  let done = 0;
  const counted = (n: number) => {
    done += n;
    onBytes?.(done);
  };
  async function* blocks(): AsyncGenerator<Buffer> {
    for (const e of entries) {
      const size = e.type === 'file' ? (e.data ? e.data.length : e.size ?? 0) : 0;
      yield* entryHeaders(e, size);
      if (e.type !== 'file') continue;
      yield* fileData(e, size, counted);
      if (padding(size)) yield Buffer.alloc(padding(size));
    }
    yield Buffer.alloc(2 * BLOCK);
  }
  const out = createWriteStream(dest, { flags: 'wx', mode: 0o600 });
  let written = 0;
  const count = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      written += chunk.length;
      cb(null, chunk);
    },
  });
  await pipeline(blocks(), createGzip(), count, out);
  return written;
}

// ---- reading ----

export interface TarHeader {
  path: string;
  type: 'file' | 'dir';
  mode: number;
  mtime: number;
  size: number;
}

/** What to do with an entry's bytes; returned by the caller for each entry (undefined: skip them). */
export interface EntrySink {
  data(chunk: Buffer): void | Promise<void>;
  end(): void | Promise<void>;
}

/** Thrown by a caller's onEntry to stop reading early (e.g. after the manifest). */
export class StopReading extends Error {}

function readOctal(b: Buffer, off: number, len: number, what: string): number {
  if (what === 'size' && b[off]! & 0x80) {
    // GNU base-256: the remaining bits, big-endian
    let v = BigInt(b[off]! & 0x7f);
    for (let i = off + 1; i < off + len; i++) v = (v << 8n) | BigInt(b[i]!);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new ArchiveError(`tar header: ${what} out of range`);
    return Number(v);
  }
  const text = b.toString('latin1', off, off + len).replace(/[\0 ]+$/, '').replace(/^ +/, '');
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new ArchiveError(`tar header: ${what} field is not a number`);
  return parseInt(text, 8);
}

function cString(b: Buffer, off: number, len: number): string {
  const end = b.indexOf(0, off);
  return b.toString('utf8', off, end === -1 || end > off + len ? off + len : end);
}

function parsePax(body: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < body.length) {
    const sp = body.indexOf(0x20, i);
    const len = sp === -1 ? NaN : Number(body.toString('latin1', i, sp));
    if (!Number.isInteger(len) || len <= 0 || i + len > body.length) throw new ArchiveError('tar: malformed pax header');
    const rec = body.toString('utf8', sp + 1, i + len - 1);
    const eq = rec.indexOf('=');
    if (eq > 0) out[rec.slice(0, eq)] = rec.slice(eq + 1);
    i += len;
  }
  return out;
}

/** The largest pax or GNU long-name header read (they are held in memory). */
const MAX_META_BYTES = 1 << 20;

/** What the entry types this reader refuses are, for its error. */
const TYPE_NAMES: Record<string, string> = { '1': 'a hard link', '2': 'a symbolic link', '3': 'a character device', '4': 'a block device', '6': 'a FIFO', K: 'a GNU long link' };

/** A push parser over the decompressed bytes. */
class TarReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private state: 'header' | 'data' | 'pax' | 'end' = 'header';
  private zeroBlocks = 0;
  private left = 0;
  private pad = 0;
  private sink: EntrySink | undefined;
  private current: TarHeader | undefined;
  private paxBody: Buffer[] = [];
  private longName = false;
  private pax: Record<string, string> = {};

  constructor(private readonly onEntry: (h: TarHeader) => EntrySink | undefined | Promise<EntrySink | undefined>) {}

  private take(n: number): Buffer | undefined {
    if (this.pendingBytes < n) return undefined;
    const all = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    const head = all.subarray(0, n);
    const rest = all.subarray(n);
    this.pending = rest.length ? [rest] : [];
    this.pendingBytes = rest.length;
    return head;
  }

  async feed(chunk: Buffer): Promise<void> {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    for (;;) {
      if (this.state === 'end') {
        this.pending = [];
        this.pendingBytes = 0;
        return;
      }
      if (this.state === 'header') {
        const block = this.take(BLOCK);
        if (!block) return;
        await this.header(block);
        continue;
      }
      // data or pax body, then its padding
      if (this.left > 0) {
        if (this.pendingBytes === 0) return;
        const n = Math.min(this.left, this.pendingBytes);
        const part = this.take(n)!;
        this.left -= n;
        if (this.state === 'pax') this.paxBody.push(Buffer.from(part));
        else await this.sink?.data(part);
        if (this.left > 0) return;
      }
      if (this.pad > 0) {
        const n = Math.min(this.pad, this.pendingBytes);
        this.take(n);
        this.pad -= n;
        if (this.pad > 0) return;
      }
      // GNU tar's long name (its default format, for a path over 100 bytes): the next entry's path.
      if (this.state === 'pax') this.pax = this.longName ? { ...this.pax, path: cString(Buffer.concat(this.paxBody), 0, Infinity) } : { ...this.pax, ...parsePax(Buffer.concat(this.paxBody)) };
      else await this.sink?.end();
      this.sink = undefined;
      this.current = undefined;
      this.state = 'header';
    }
  }

  private async header(block: Buffer): Promise<void> {
    if (block.every((x) => x === 0)) {
      if (++this.zeroBlocks === 2) this.state = 'end';
      return;
    }
    if (this.zeroBlocks) throw new ArchiveError('tar: data after an end-of-archive block');
    const magic = block.toString('latin1', 257, 263);
    if (magic !== 'ustar\0' && magic !== 'ustar ') throw new ArchiveError('not a tar archive (no ustar header)');
    const stored = readOctal(block, 148, 8, 'checksum');
    if (stored !== checksum(block)) throw new ArchiveError('tar: header checksum mismatch');
    const type = String.fromCharCode(block[156]!);
    const size = this.pax.size !== undefined ? Number(this.pax.size) : readOctal(block, 124, 12, 'size');
    if (!Number.isSafeInteger(size) || size < 0) throw new ArchiveError('tar: bad size');
    if (type === 'x' || type === 'g' || type === 'L') {
      // Held in memory whole: a header of more is no real archive's, only a way to exhaust memory.
      if (size > MAX_META_BYTES) throw new ArchiveError(`tar: a ${type === 'L' ? 'GNU long name' : 'pax'} header of ${size} bytes (at most ${MAX_META_BYTES})`);
      this.longName = type === 'L';
      this.state = 'pax';
      this.left = size;
      this.pad = padding(size);
      this.paxBody = [];
      if (type === 'g') this.state = 'data'; // global records do not concern a backup: skipped
      return;
    }
    const name = cString(block, 0, 100);
    const prefix = magic === 'ustar\0' ? cString(block, 345, 155) : '';
    let path = this.pax.path ?? (prefix ? `${prefix}/${name}` : name);
    this.pax = {};
    const kind = type === '0' || type === '\0' ? 'file' : type === '5' ? 'dir' : undefined;
    if (!kind) throw new ArchiveError(`tar: ${path}: entry type '${type}'${TYPE_NAMES[type] ? ` (${TYPE_NAMES[type]})` : ''} is not a file or a directory`);
    if (kind === 'dir') path = path.replace(/\/+$/, '');
    const header: TarHeader = { path, type: kind, mode: readOctal(block, 100, 8, 'mode'), mtime: readOctal(block, 136, 12, 'mtime'), size: kind === 'file' ? size : 0 };
    this.current = header;
    this.sink = await this.onEntry(header);
    this.left = header.size;
    this.pad = padding(header.size);
    this.state = 'data';
    if (this.left === 0 && this.pad === 0) {
      await this.sink?.end();
      this.sink = undefined;
      this.state = 'header';
    }
  }

  finish(): void {
    if (this.state !== 'end') {
      throw new ArchiveError(this.current ? `the archive ends inside ${this.current.path}` : 'the archive ends without its end-of-archive blocks');
    }
  }
}

/** gzip's own words for what is wrong, as a reason the user can act on. */
function gzipReason(err: NodeJS.ErrnoException): string | undefined {
  switch (err.code) {
    case 'Z_BUF_ERROR':
      return `it is truncated (gzip: ${err.message})`;
    case 'Z_DATA_ERROR':
      return /incorrect header check/.test(err.message) ? 'it is not gzip data' : `it is corrupt (gzip: ${err.message})`;
    default:
      return undefined;
  }
}

/**
 * Reads a gzip-compressed tar: `onEntry` is called for each entry and returns where its bytes go.
 * `onBytes` gets the running count of compressed bytes read. Errors name the file and what is wrong
 * with it (ArchiveError); an onEntry may throw StopReading to end early, or its own error.
 */
export async function readTarGz(file: string, onEntry: (h: TarHeader) => EntrySink | undefined | Promise<EntrySink | undefined>, onBytes?: (done: number) => void): Promise<void> {
  return readTarGzFrom(createReadStream(file), file, onEntry, onBytes);
}

/** readTarGz over any byte stream (a download held in memory); `file` names it in errors. */
export async function readTarGzFrom(input: NodeJS.ReadableStream, file: string, onEntry: (h: TarHeader) => EntrySink | undefined | Promise<EntrySink | undefined>, onBytes?: (done: number) => void): Promise<void> {
  const reader = new TarReader(onEntry);
  let read = 0;
  const count = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      read += chunk.length;
      onBytes?.(read);
      cb(null, chunk);
    },
  });
  // Set when the caller stopped early: the streams are then torn down, and what pipeline says about
  // that (an abort, a premature close) is no error.
  let stopped = false;
  try {
    await pipeline(input, count, createGunzip(), async (source: AsyncIterable<Buffer>) => {
      try {
        for await (const chunk of source) await reader.feed(chunk);
      } catch (err) {
        if (!(err instanceof StopReading)) throw err;
        stopped = true;
        return;
      }
      reader.finish();
    });
  } catch (err) {
    if (stopped || err instanceof StopReading) return;
    if (err instanceof ArchiveError) throw new ArchiveError(`${file} cannot be used: ${err.message}`);
    const gz = gzipReason(err as NodeJS.ErrnoException);
    if (gz) throw new ArchiveError(`${file} cannot be used: ${gz}`);
    if (err instanceof PinclawError) throw err;
    throw new PinclawError(`cannot read ${file}: ${errorMessage(err)}`);
  }
}

/** SHA-256 of a file, read in chunks. */
export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file, { highWaterMark: READ_CHUNK }), async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) hash.update(chunk);
  });
  return hash.digest('hex');
}
