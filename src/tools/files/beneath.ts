// Reaching what the confinement checked, and nothing else. confine.ts resolves a path with every
// symlink followed and checks where it lands; between that check and the open, a process that can
// write in the workspace (a sandboxed exec) can swap a directory for a link to '..'. So every file
// tool opens the checked real path again from its root, one component at a time with no link
// followed (openBeneath), and works on the descriptor: fstat for its type and size, and the path
// /proc/self/fd/N for reading, listing, creating and renaming in exactly the directory that was
// opened, whatever happens to the names around it afterwards. A link found on the way means the
// tree changed after the check: refused, and nothing is read or written through it.
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, type Stats } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { relative, sep } from 'node:path';
import { O_PATH, openBeneath } from '../../native/index.js';
import { Refused, type RootSnapshot } from './confine.js';

/** A checked path held open: `path` (/proc/self/fd/N) reaches the very file or directory opened. */
export interface Held {
  fd: number;
  path: string;
  stat: Stats;
  /** set when the file is one pinclaw holds a lock on: openHeld refuses it (confine.ts, LockedFile) */
  locked?: Refused;
  close(): void;
}

/** The refusal to open a file this process holds a POSIX lock on. */
export function lockedRefusal(shown: string, what: string): Refused {
  return new Refused(
    "pinclaw's own lock",
    `${shown} is ${what}; pinclaw holds a lock on it, and opening it from this process would drop that lock (a POSIX lock goes with the close of any descriptor of the file), so the file tools leave it alone`,
  );
}

function markLocked(held: Held, snapshot: RootSnapshot, shown: string): Held {
  const f = snapshot.lockedFile(held.stat);
  if (f) held.locked = lockedRefusal(shown, f.what);
  return held;
}

const ERRNO_NAMES = new Map(Object.entries(osConstants.errno).map(([name, n]) => [n, name]));

function errnoError(n: number, shown: string): Error {
  const code = ERRNO_NAMES.get(n) ?? `E${n}`;
  return Object.assign(new Error(`${code}: ${shown}`), { code, errno: -n });
}

/** The refusal for a path that gained a link after it was checked. */
export function swapped(shown: string): Refused {
  return new Refused('no symlink leading out', `a part of ${shown} became a symlink after the path was checked (something is changing the tree); nothing was read or written through it`);
}

function hold(fd: number, shown: string): Held {
  let stat: Stats;
  try {
    stat = fstatSync(fd);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  if (stat.isSymbolicLink()) {
    closeSync(fd);
    throw swapped(shown);
  }
  return { fd, path: `/proc/self/fd/${fd}`, stat, close: () => closeSync(fd) };
}

/** openBeneath with its -errno turned into the error Node would throw, and a link into a refusal. */
function openPart(dirFd: number, rel: string, shown: string): number {
  const fd = openBeneath(dirFd, rel);
  if (fd >= 0) return fd;
  if (-fd === osConstants.errno.ELOOP || -fd === osConstants.errno.EXDEV) throw swapped(shown);
  throw errnoError(-fd, shown);
}

function anchor(snapshot: RootSnapshot, real: string, shown: string): { root: string; parts: string[] } {
  const root = snapshot.anchorOf(real);
  // resolve() checked the path against the same snapshot; this guards a caller that did not.
  if (root === undefined) throw new Refused('no symlink leading out', `${shown} is outside the roots`);
  return { root, parts: relative(root, real).split(sep).filter(Boolean) };
}

/**
 * Opens a checked real path (file, directory or anything else: O_PATH opens nothing, so a FIFO
 * cannot block) from its root without following a link; ENOENT and the like come as Node's errors.
 * The root itself is opened by name: roots are the owner's paths, not the model's.
 */
export function holdPath(snapshot: RootSnapshot, real: string, shown: string): Held {
  const { root, parts } = anchor(snapshot, real, shown);
  const rootFd = openSync(root, O_PATH | constants.O_DIRECTORY);
  try {
    // Held with O_PATH, which takes no part in locking; the open for reading is what would drop a lock.
    return markLocked(hold(openPart(rootFd, parts.join('/') || '.', shown), shown), snapshot, shown);
  } finally {
    closeSync(rootFd);
  }
}

/** holdPath, or undefined when the path does not exist. */
export function tryHoldPath(snapshot: RootSnapshot, real: string, shown: string): Held | undefined {
  try {
    return holdPath(snapshot, real, shown);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * mkdir -p of a checked real directory, each level created in the directory just opened and then
 * opened itself without following a link, so a link swapped in cannot make it create outside.
 */
export function makeDirs(snapshot: RootSnapshot, realDir: string, shown: string): Held {
  const { root, parts } = anchor(snapshot, realDir, shown);
  let cur = hold(openSync(root, O_PATH | constants.O_DIRECTORY), shown);
  try {
    for (const part of parts) {
      let fd = openBeneath(cur.fd, part);
      if (fd === -osConstants.errno.ENOENT) {
        try {
          mkdirSync(`${cur.path}/${part}`);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        }
        fd = openPart(cur.fd, part, shown);
      } else if (fd < 0) {
        fd = openPart(cur.fd, part, shown);
      }
      const next = hold(fd, shown);
      cur.close();
      cur = next;
      if (!cur.stat.isDirectory()) throw errnoError(osConstants.errno.ENOTDIR, shown);
    }
    return cur;
  } catch (err) {
    cur.close();
    throw err;
  }
}

/** lstat of one name in a held directory (fstatat without following), or undefined when absent. */
export function lstatIn(dir: Held, name: string): Stats | undefined {
  try {
    return lstatSync(`${dir.path}/${name}`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Runs `use` on a held path and closes it however `use` ends. */
export async function withHeld<T>(held: Held, use: (h: Held) => Promise<T> | T): Promise<T> {
  try {
    return await use(held);
  } finally {
    held.close();
  }
}
