// File-system helpers with the guarantees the rest of pinclaw relies on: writes are atomic
// (temp file + fsync + rename, so a crash leaves the old file or the new one, never half of one)
// and directory errors name the path and the reason.
import { closeSync, fchmodSync, fsyncSync, mkdirSync, openSync, renameSync, lstatSync, unlinkSync, writeSync, accessSync, constants } from 'node:fs';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { PinclawError } from './errors.js';

/**
 * `fsync: false` only for a file whose loss or staleness after a power cut is harmless and noticed
 * (a cache's stamp): the rename still makes it whole or absent, but it may not survive the cut.
 */
export function writeFileAtomic(file: string, data: string | Uint8Array, defaultMode = 0o600, opts: { fsync?: boolean } = {}): void {
  let mode = defaultMode;
  try {
    // lstat: a symlink at the target is replaced by the rename, never written through, so its
    // target's mode (a 0755 script, a 0666 file elsewhere) must not be copied onto the new file.
    const st = lstatSync(file);
    if (st.isFile()) mode = st.mode & 0o7777;
  } catch {
    // a new file gets the default mode
  }
  const dir = dirname(file);
  const tmp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let fd: number | undefined;
  try {
    fd = openSync(tmp, 'wx', mode);
    fchmodSync(fd, mode); // the umask must not narrow the mode we keep
    const buf = typeof data === 'string' ? Buffer.from(data) : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    if (opts.fsync !== false) fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, file);
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      // the temp file may never have been created
    }
    throw err;
  }
}

/**
 * Why a write under `dir` failed and what to do, for a message that already names the file: a
 * full disk or a read-only file system is the owner's to fix, not a bug to print a stack trace for.
 */
export function writeFailure(err: unknown, dir: string): string {
  const e = err as NodeJS.ErrnoException;
  switch (e.code) {
    case 'ENOSPC': return `no space left on the device of ${dir} (ENOSPC); free some space there (df -h ${dir}) and try again`;
    case 'EDQUOT': return `the disk quota of ${dir} is used up (EDQUOT); free some space and try again`;
    case 'EROFS': return `${dir} is on a read-only file system (EROFS); remount it read-write and try again`;
    case 'EACCES':
    case 'EPERM': return `permission denied (${e.code}); check the owner and mode of ${dir}`;
    case 'EFBIG': return 'the file is larger than this process may write (EFBIG, ulimit -f)';
    case 'EIO': return `an I/O error (EIO): the storage of ${dir} may be failing`;
    default: return e.code ? `${e.message}` : String(err);
  }
}

/** Creates `dir` if needed and checks that it is writable; the error names the path and the reason. */
export function ensureWritableDir(dir: string, what: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why = e.code === 'EACCES' || e.code === 'EPERM' ? 'permission denied'
      : e.code === 'EROFS' ? 'read-only file system'
      : e.code === 'ENOTDIR' || e.code === 'EEXIST' ? 'a path component is not a directory'
      : e.message;
    throw new PinclawError(`${what} ${dir} is not writable: ${why}`);
  }
}
