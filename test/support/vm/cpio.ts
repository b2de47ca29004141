// A writer for "newc" cpio archives, the format the kernel unpacks as an initramfs. Written here
// rather than shelling out to cpio(1) so that entries can come from memory, host files or nothing
// (directories, device nodes, symlinks) with exactly the guest path, mode and owner we choose, and
// so that large files are streamed rather than staged in a directory tree first.
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';

const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
const S_IFCHR = 0o020000;
const CHUNK = 8 * 1024 * 1024;

function hex8(n: number): string {
  return n.toString(16).padStart(8, '0');
}

export class CpioWriter {
  private ino = 1;
  private written = 0;
  /** Parents already emitted, so every file's directories exist before it (the kernel needs them). */
  private readonly dirs: Set<string>;

  /**
   * `fd` must be open for writing; the archive starts at its current end. `existingDirs` are
   * directories an earlier archive created: re-emitting one would reset its mode (say /tmp's 1777).
   */
  constructor(private readonly fd: number, existingDirs: string[] = []) {
    this.dirs = new Set(['/', ...existingDirs]);
  }

  get bytes(): number {
    return this.written;
  }

  private out(buf: Buffer): void {
    let off = 0;
    while (off < buf.length) off += writeSync(this.fd, buf, off, buf.length - off);
    this.written += buf.length;
  }

  private pad(): void {
    const rem = this.written % 4;
    if (rem) this.out(Buffer.alloc(4 - rem));
  }

  private header(name: string, mode: number, size: number, rdev: [number, number] = [0, 0]): void {
    const path = name.replace(/^\/+/, '');
    const nameBytes = Buffer.from(`${path}\0`);
    const fields = [this.ino++, mode, 0, 0, (mode & S_IFDIR) === S_IFDIR ? 2 : 1, 0, size, 0, 0, rdev[0], rdev[1], nameBytes.length, 0];
    this.out(Buffer.from(`070701${fields.map(hex8).join('')}`, 'ascii'));
    this.out(nameBytes);
    this.pad();
  }

  private parents(path: string): void {
    const parts = path.split('/').filter(Boolean);
    for (let i = 1; i < parts.length; i++) this.dir(`/${parts.slice(0, i).join('/')}`);
  }

  dir(path: string, mode = 0o755): void {
    if (this.dirs.has(path)) return;
    this.parents(path);
    this.dirs.add(path);
    this.header(path, S_IFDIR | mode, 0);
  }

  file(path: string, data: Buffer, mode = 0o644): void {
    this.parents(path);
    this.header(path, S_IFREG | mode, data.length);
    this.out(data);
    this.pad();
  }

  /** Streams a host file into the archive; mode defaults to the host file's permission bits. */
  hostFile(path: string, hostPath: string, mode?: number): void {
    const src = openSync(hostPath, 'r');
    try {
      const st = fstatSync(src);
      this.parents(path);
      this.header(path, S_IFREG | (mode ?? st.mode & 0o7777), st.size);
      const buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(st.size, 1)));
      let copied = 0;
      while (copied < st.size) {
        const got = readSync(src, buf, 0, Math.min(buf.length, st.size - copied), copied);
        if (got === 0) throw new Error(`${hostPath} shrank while being archived`);
        this.out(got === buf.length ? buf : buf.subarray(0, got));
        copied += got;
      }
      this.pad();
    } finally {
      closeSync(src);
    }
  }

  symlink(path: string, target: string): void {
    this.parents(path);
    const data = Buffer.from(target);
    this.header(path, S_IFLNK | 0o777, data.length);
    this.out(data);
    this.pad();
  }

  charDevice(path: string, major: number, minor: number, mode = 0o600): void {
    this.parents(path);
    this.header(path, S_IFCHR | mode, 0, [major, minor]);
  }

  /** Ends the archive. Another archive may follow: the kernel unpacks concatenated archives in order. */
  finish(): void {
    this.header('TRAILER!!!', 0, 0);
  }
}

/**
 * Writes one archive to `path`, returning its size in bytes. With `appendTo`, the archive goes
 * after the existing content, whose archives created `appendTo.dirs`.
 */
export function writeCpio(path: string, fill: (w: CpioWriter) => void, appendTo?: { dirs: string[] }): number {
  const fd = openSync(path, appendTo ? 'a' : 'w');
  try {
    const w = new CpioWriter(fd, appendTo?.dirs);
    fill(w);
    w.finish();
    return w.bytes;
  } finally {
    closeSync(fd);
  }
}
