// Pure-TypeScript counterparts of the addon's functions: the fallback when it cannot load, and the
// yardstick the tests hold it to.
import { spawnSync } from 'node:child_process';
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { closeSync, constants as fsConstants, fstatSync, openSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Node cannot send AF_UNIX datagrams itself, so the reference hands the state to systemd-notify. */
export function notify(socketPath: string, state: string): boolean {
  if (!socketPath) return false;
  const lines = state.split('\n').filter(Boolean);
  const r = spawnSync('systemd-notify', ['--no-block', ...lines], { env: { ...process.env, NOTIFY_SOCKET: socketPath }, stdio: 'ignore' });
  if (r.error) throw new Error(`notify: systemd-notify: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`notify: systemd-notify exited with ${r.status}`);
  return true;
}

// The keys as KeyObjects, made once each: an HMAC over a string key imports the key every time
// (3.3 instead of 5.9 µs a signature, Node 24 on x64). A fleet has a handful of keys.
const keyObjects = new Map<string, KeyObject>();

/** HMAC-SHA256 of text's UTF-8 under key's UTF-8, base64url without padding. */
export function hmacSha256(key: string, text: string): string {
  let k = keyObjects.get(key);
  if (!k) {
    if (keyObjects.size >= 64) keyObjects.clear(); // never more than a fleet's keys, unless they churn
    keyObjects.set(key, (k = createSecretKey(Buffer.from(key, 'utf8'))));
  }
  return createHmac('sha256', k).update(text).digest('base64url');
}

/** JavaScript cannot reach the C allocator: without the addon, idle memory stays with the process. */
export function trimMemory(): boolean {
  return false;
}

/** Nor can it set the allocator's options. */
export function limitMallocArenas(): boolean {
  return false;
}

/** Nor its thresholds. */
export function fixMallocThresholds(): boolean {
  return false;
}

/** JavaScript cannot call madvise either: the pages stay mapped until the kernel reclaims them. */
export function trimFilePages(): null {
  return null;
}

let collector: (() => void) | null | undefined;

/**
 * A full garbage collection, which is all JavaScript can ask of V8. V8 offers no API for it without
 * --expose-gc; setting the flag now gives a new context its gc function (the documented way to
 * reach it from a running process).
 */
export function reduceHeap(): void {
  if (collector === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      collector = runInNewContext('gc') as () => void;
    } catch {
      collector = null;
    }
  }
  collector?.();
}

/** O_PATH: the same value on Linux x64, arm64 and arm, and missing from Node's fs.constants. */
export const O_PATH = 0o10000000;

const errnoOf = (err: unknown): number => {
  const code = (err as NodeJS.ErrnoException).code;
  const n = code ? (osConstants.errno as Record<string, number>)[code] : undefined;
  if (n === undefined) throw err;
  return n;
};

/**
 * The addon's openBeneath (native/beneath.cc) in TypeScript: an O_PATH descriptor of `path` below
 * `dirFd`, no symlink followed at any component, or -errno. Node has no openat, but a path that goes
 * through /proc/self/fd/N is looked up from the directory that descriptor holds, whatever has
 * happened to its name since: `/proc/self/fd/N/part` with O_NOFOLLOW is openat(N, part, O_NOFOLLOW).
 * So this is the same component-by-component walk as the addon's fallback, one open per part, and
 * as safe against a swapped link; it needs /proc mounted (without it every open fails, closed).
 */
export function openBeneath(dirFd: number, path: string): number {
  if (path === '' || path.startsWith('/')) return -osConstants.errno.EXDEV;
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) return -osConstants.errno.EXDEV;
  const nofollow = O_PATH | fsConstants.O_NOFOLLOW;
  if (parts.length === 0) {
    try {
      return openSync(`/proc/self/fd/${dirFd}/.`, nofollow);
    } catch (err) {
      return -errnoOf(err);
    }
  }
  let cur = dirFd;
  try {
    for (let i = 0; ; i++) {
      let fd: number;
      try {
        fd = openSync(`/proc/self/fd/${cur}/${parts[i]!}`, nofollow);
      } catch (err) {
        return -errnoOf(err);
      }
      if (i === parts.length - 1) return fd;
      let st: ReturnType<typeof fstatSync>;
      try {
        st = fstatSync(fd);
      } catch (err) {
        // fd is not `cur` yet, so the finally below would not close it.
        closeSync(fd);
        return -errnoOf(err);
      }
      if (!st.isDirectory()) {
        closeSync(fd);
        return -(st.isSymbolicLink() ? osConstants.errno.ELOOP : osConstants.errno.ENOTDIR);
      }
      if (cur !== dirFd) closeSync(cur);
      cur = fd;
    }
  } finally {
    if (cur !== dirFd) closeSync(cur);
  }
}
