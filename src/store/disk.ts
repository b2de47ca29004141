// The disk under the pinclaw home: how much is free, and whether an error means it is full. SQLite
// says SQLITE_FULL, Node ENOSPC (or EDQUOT over a user quota); the conductor, the HTTP API, doctor
// and /metrics all need to tell that apart from other failures, since it passes by itself once
// space returns, and the way out is the owner's (free space), not a retry of the request.
import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { PinclawError } from '../errors.js';

export interface DiskSpace {
  /** bytes an unprivileged writer may still use (f_bavail) */
  freeBytes: number;
  totalBytes: number;
}

/** Free and total bytes of the file system holding `path`, or undefined when it cannot be asked. */
export function diskSpace(path: string): DiskSpace | undefined {
  try {
    const s = statfsSync(path);
    return { freeBytes: s.bavail * s.bsize, totalBytes: s.blocks * s.bsize };
  } catch {
    return undefined;
  }
}

export function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT';
}

/** Bytes as people read them: 1.5 MB, 312 KB. */
export function humanBytes(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  if (n >= 1e3) return `${Math.round(n / 1e3)} KB`;
  return `${n} bytes`;
}

/** A refusal because the disk holding the home is full: the HTTP API answers 503, the CLI exits 1. */
export class DiskFullError extends PinclawError {
  constructor(readonly what: string, readonly home: string) {
    const free = diskSpace(home);
    super(`${what}: the disk holding the pinclaw home (${home}) is full${free ? ` (${humanBytes(free.freeBytes)} free)` : ''}; free some space on it`);
    this.name = 'DiskFullError';
  }
}

/** The directory of a database file: the home, for the messages above. */
export function homeOf(dbFile: string): string {
  return dbFile === ':memory:' || dbFile === '' ? '.' : dirname(dbFile);
}
