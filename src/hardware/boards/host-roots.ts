// Where detection reads the machine from. Parameters rather than constants so tests describe a
// Raspberry Pi, a laptop with boards on USB, or an empty container as a tree in a temp dir.
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface HostRoots {
  proc: string;
  sys: string;
  dev: string;
}

export const HOST_ROOTS: HostRoots = { proc: '/proc', sys: '/sys', dev: '/dev' };

/** "/dev/i2c-1" → the same path under the given roots; null for a path outside /dev, /sys, /proc. */
export function hostPath(roots: HostRoots, path: string): string | null {
  const m = /^\/(dev|sys|proc)(\/.*)?$/.exec(path);
  if (!m) return null;
  return join(roots[m[1] as keyof HostRoots], m[2] ?? '');
}

/** The file's text, or null when it cannot be read (absent, no permission, a directory). */
export function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** Whether a directory entry exists, a dangling symlink included (/dev/serial0 is a link). */
export function entryExists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}
