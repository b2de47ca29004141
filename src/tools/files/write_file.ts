// write_file: creates or replaces a whole file. Written under a temporary name, flushed and renamed
// into place, so a crash or a full SD card leaves the old file or the new one, never half of one.
import type { Stats } from 'node:fs';
import { lstat, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeFileAtomic } from '../../fsutil.js';
import type { Tool } from '../types.js';
import { Refused } from './confine.js';
import { guarded, PATH_SCHEMA, type FileToolDeps } from './common.js';

/** What a new file gets; a replaced file keeps its own mode. */
export const NEW_FILE_MODE = 0o644;

/** Stats the path, or undefined when nothing is there. */
export async function existing(real: string): Promise<Stats | undefined> {
  try {
    return await lstat(real);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export function checkWriteSize(bytes: number, max: number, what: string): void {
  if (bytes > max) throw new Refused('files.maxWriteBytes', `${what} ${bytes} bytes, more than files.maxWriteBytes (${max})`);
}

export function writeFileTool(d: FileToolDeps): Tool {
  const max = d.settings.maxWriteBytes;
  return {
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
      const { path, content } = input as { path: string; content: string };
      return guarded('write_file', path, async () => {
        const bytes = Buffer.byteLength(content);
        checkWriteSize(bytes, max, 'the content is');
        const { real, shown } = await d.confinement.resolve(path, 'write');
        const before = await existing(real);
        if (before?.isDirectory()) return { content: `write_file ${shown}: is a directory`, isError: true };
        if (before && !before.isFile()) throw new Refused('regular files only', `${shown} exists and is not a regular file`);
        await mkdir(dirname(real), { recursive: true });
        writeFileAtomic(real, content, NEW_FILE_MODE);
        return { content: `wrote ${bytes} bytes to ${shown} (${before ? `replaced ${before.size} bytes` : 'new file'})` };
      });
    },
  };
}
