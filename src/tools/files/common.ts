// What the file tools share: their settings, how a failure becomes a result the model can act on,
// and the test for binary content.
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { PinclawConfig } from '../../config/schema.js';
import { errorMessage } from '../../errors.js';
import type { ToolResult } from '../types.js';
import { holdPath, withHeld, type Held } from './beneath.js';
import { Refused, type Confinement, type RootSnapshot } from './confine.js';

export type FilesSettings = PinclawConfig['files'];

export interface FileToolDeps {
  confinement: Confinement;
  settings: FilesSettings;
}

/** Paths the model passes; long enough for any real path, short enough to keep a refusal readable. */
export const PATH_SCHEMA = { type: 'string', minLength: 1, maxLength: 4096 } as const;

const REASONS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ELOOP: 'too many levels of symbolic links',
  ENOSPC: 'no space left on device',
  EROFS: 'read-only file system',
  EEXIST: 'a file is in the way',
  EMFILE: 'too many open files',
  ENAMETOOLONG: 'the name is too long',
};

/** A short reason for a file-system error, without the absolute paths Node puts in its messages. */
export function fsReason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return (code && REASONS[code]) ?? errorMessage(err);
}

/**
 * Runs one call and turns what it throws into an error result: a refusal names its rule, a
 * file-system error names the path and the reason.
 */
export async function guarded(tool: string, path: string, run: () => Promise<ToolResult>): Promise<ToolResult> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof Refused) return { content: `${tool} ${err.message}`, isError: true };
    if ((err as NodeJS.ErrnoException).code) return { content: `${tool} ${path}: ${fsReason(err)}`, isError: true };
    return { content: `${tool} failed: ${errorMessage(err)}`, isError: true };
  }
}

/** Git's test: text never holds a NUL byte, and the first 8 KB tell. */
export const SNIFF_BYTES = 8192;

export function looksBinary(head: Uint8Array): boolean {
  return head.subarray(0, SNIFF_BYTES).includes(0);
}

/**
 * Opens a held file for reading through its descriptor (/proc/self/fd/N), so the bytes read are those
 * of the file opened beneath its root (beneath.ts), not of whatever its name leads to now.
 */
export function openHeld(held: Held): Promise<FileHandle> {
  if (held.locked) return Promise.reject(held.locked);
  return open(held.path, constants.O_RDONLY);
}

/** The whole of a checked regular file, read through the descriptor opened beneath its root. */
export function readWhole(snapshot: RootSnapshot, real: string, shown: string): Promise<Buffer> {
  return withHeld(holdPath(snapshot, real, shown), async (held) => {
    if (!held.stat.isFile()) throw new Refused('regular files only', `${shown} is not a regular file`);
    const fh = await openHeld(held);
    try {
      return await fh.readFile();
    } finally {
      await fh.close();
    }
  });
}

/** Joins a shown base ('.' for the workspace) and a '/'-separated relative path. */
export function joinShown(base: string, rel: string): string {
  if (!rel) return base;
  return base === '.' ? rel : `${base.replace(/\/$/, '')}/${rel}`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
