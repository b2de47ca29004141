// write_file: creates or replaces a whole file. Written under a temporary name, flushed and renamed
// into place, so a crash or a full SD card leaves the old file or the new one, never half of one.
import type { Stats } from 'node:fs';
import { basename, dirname } from 'node:path';
import { writeFileAtomic } from '../../fsutil.js';
import type { Tool } from '../types.js';
import { lockedRefusal, lstatIn, makeDirs, tryHoldPath, type Held } from './beneath.js';
import { Refused, type RootSnapshot } from './confine.js';
import { guarded, PATH_SCHEMA, type FileToolDeps } from './common.js';
import { overQuota, workspaceBytes } from '../workspace-quota.js';
import { defineTool } from '../define.js';

/** What a new file gets; a replaced file keeps its own mode. */
export const NEW_FILE_MODE = 0o644;

/** A checked path to write: its directory held open (beneath.ts) and what is there now. */
export interface WriteTarget {
  /** the directory, when it exists */
  dir: Held | undefined;
  name: string;
  before: Stats | undefined;
}

/** Holds the directory of a checked real path and stats the name in it; nothing is created yet. */
export function writeTarget(snapshot: RootSnapshot, real: string, shown: string): WriteTarget {
  const dir = tryHoldPath(snapshot, dirname(real), shown);
  const name = basename(real);
  try {
    const before = dir ? lstatIn(dir, name) : undefined;
    // Replacing a locked file by a rename would leave the lock on a file no other process can open.
    const locked = before && snapshot.lockedFile(before);
    if (locked) throw lockedRefusal(shown, locked.what);
    return { dir, name, before };
  } catch (err) {
    dir?.close();
    throw err;
  }
}

/**
 * Writes the file atomically in the held directory (created first when missing): the temporary file
 * and the rename both go through /proc/self/fd/N, so they land in the directory that was checked.
 */
export function writeInto(snapshot: RootSnapshot, target: WriteTarget, real: string, shown: string, data: string): void {
  const dir = target.dir ?? makeDirs(snapshot, dirname(real), shown);
  try {
    writeFileAtomic(`${dir.path}/${target.name}`, data, NEW_FILE_MODE);
  } finally {
    dir.close();
  }
}

/**
 * Refuses a write that would take the workspace past files.workspaceQuotaMb. A path shown absolute is
 * outside the workspace (files.roots, the owner's own directories): not counted.
 */
export async function checkQuota(d: FileToolDeps, shown: string, growBytes: number): Promise<void> {
  if (shown.startsWith('/')) return;
  const why = overQuota(await workspaceBytes(d.confinement.workspace), growBytes, d.settings.workspaceQuotaMb);
  if (why) throw new Refused('files.workspaceQuotaMb', why);
}

export function checkWriteSize(bytes: number, max: number, what: string): void {
  if (bytes > max) throw new Refused('files.maxWriteBytes', `${what} ${bytes} bytes, more than files.maxWriteBytes (${max})`);
}

export function writeFileTool(d: FileToolDeps): Tool {
  const max = d.settings.maxWriteBytes;
  return defineTool({
    name: 'write_file',
    description:
      'Create or replace a whole file in the workspace (or a configured writable root) with the given text; missing ' +
      `directories are created. At most ${max} bytes. To change part of an existing file, use edit_file.`,
    inputSchema: {
      type: 'object',
      properties: {
        path: { ...PATH_SCHEMA, description: 'file path, relative to the workspace or absolute inside a configured root' },
        content: { type: 'string', description: 'the complete new content' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    sequential: true,
    execute: (input) => {
      const { path, content } = input;
      return guarded('write_file', path, async () => {
        const bytes = Buffer.byteLength(content);
        checkWriteSize(bytes, max, 'the content is');
        const { real, shown, snapshot } = await d.confinement.resolve(path, 'write');
        const target = writeTarget(snapshot, real, shown);
        const { before } = target;
        if (before?.isDirectory() || (before && !before.isFile())) {
          target.dir?.close();
          if (before.isDirectory()) return { content: `write_file ${shown}: is a directory`, isError: true };
          throw new Refused('regular files only', `${shown} exists and is not a regular file`);
        }
        try {
          await checkQuota(d, shown, bytes - (before?.size ?? 0));
        } catch (err) {
          target.dir?.close();
          throw err;
        }
        writeInto(snapshot, target, real, shown, content);
        return { content: `wrote ${bytes} bytes to ${shown} (${before ? `replaced ${before.size} bytes` : 'new file'})` };
      });
    },
  });
}
