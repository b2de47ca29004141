// read_file: a text file with line numbers (as `cat -n` prints them), from a line and for a number of
// lines. The output stops at files.maxReadBytes on a line boundary and says where to continue, so a
// large file is read in pieces rather than cut somewhere the model cannot resume from.
import { StringDecoder } from 'node:string_decoder';
import type { Tool } from '../types.js';
import { holdPath, withHeld } from './beneath.js';
import { Refused } from './confine.js';
import { guarded, looksBinary, openHeld, PATH_SCHEMA, plural, SNIFF_BYTES, type FileToolDeps } from './common.js';
import { defineTool } from '../define.js';

/** Lines shown when the call names no limit: a screenful of a long file, all of a typical one. */
export const DEFAULT_LINES = 2000;
const CHUNK = 64 * 1024;

const numbered = (n: number, line: string) => `${String(n).padStart(6)}\t${line}`;

/** The first `max` bytes of a text, cut at a character boundary. */
function cutBytes(text: string, max: number): string {
  return Buffer.from(text).subarray(0, max).toString('utf8').replace(/\uFFFD+$/, '');
}

export function readFileTool(d: FileToolDeps): Tool {
  const maxBytes = d.settings.maxReadBytes;
  return defineTool({
    name: 'read_file',
    readOnly: true,
    description:
      'Read a text file in the workspace (or a configured root), with line numbers. offset is the first line (1-based), ' +
      `limit the number of lines (default ${DEFAULT_LINES}). Long files are returned in pieces of at most ${maxBytes} bytes; ` +
      'the output then says which offset to continue from. Binary files are refused.',
    inputSchema: {
      type: 'object',
      properties: {
        path: { ...PATH_SCHEMA, description: 'file path, relative to the workspace or absolute inside a configured root' },
        offset: { type: 'integer', minimum: 1, description: 'first line to return, 1-based (default 1)' },
        limit: { type: 'integer', minimum: 1, maximum: 100_000, description: `lines to return (default ${DEFAULT_LINES})` },
      },
      required: ['path'],
      additionalProperties: false,
    },
    // The byte cap above is this tool's own; the general output cap would cut without saying where to resume.
    maxOutputBytes: maxBytes + 1024,
    execute: (input, ctx) => {
      const { path, offset = 1, limit = DEFAULT_LINES } = input;
      return guarded('read_file', path, async () => {
        const { real, shown, snapshot } = await d.confinement.resolve(path, 'read');
        return withHeld(holdPath(snapshot, real, shown), async (held) => {
          const st = held.stat;
          if (st.isDirectory()) return { content: `read_file ${shown}: is a directory; list it with list_dir`, isError: true };
          // A FIFO or device would block the open or never end.
          if (!st.isFile()) throw new Refused('regular files only', `${shown} is not a regular file`);
          const fh = await openHeld(held);
          try {
            const head = Buffer.alloc(Math.min(SNIFF_BYTES, st.size));
            const { bytesRead } = await fh.read(head, 0, head.length, 0);
            if (looksBinary(head.subarray(0, bytesRead))) throw new Refused('text files only', `${shown} looks binary (it has a NUL byte in its first 8 KB); read_file shows text only`);

            const out: string[] = [];
            let outBytes = 0;
            let lineNo = 0;
            let stop: 'limit' | 'bytes' | undefined;
            let cutLine = false;
            /** false once the output is complete */
            const take = (line: string): boolean => {
              lineNo += 1;
              if (lineNo < offset) return true;
              if (out.length === limit) {
                stop = 'limit';
                return false;
              }
              const text = numbered(lineNo, line);
              const size = Buffer.byteLength(text) + 1;
              if (outBytes + size > maxBytes) {
                // One line longer than the cap: show its start rather than nothing.
                if (out.length === 0) {
                  out.push(cutBytes(text, maxBytes));
                  cutLine = true;
                }
                stop = 'bytes';
                return false;
              }
              out.push(text);
              outBytes += size;
              return true;
            };

            const decoder = new StringDecoder('utf8');
            const buf = Buffer.alloc(CHUNK);
            let pending = '';
            let pos = 0;
            let going = true;
            while (going) {
              ctx.signal?.throwIfAborted();
              const { bytesRead: n } = await fh.read(buf, 0, CHUNK, pos);
              if (n === 0) break;
              pos += n;
              const parts = (pending + decoder.write(buf.subarray(0, n))).split('\n');
              pending = parts.pop()!;
              for (const line of parts) if (!(going = take(line))) break;
            }
            if (going) {
              pending += decoder.end();
              // A last line without a newline is a line; a file ending in a newline has no empty line after it.
              if (pending) take(pending);
            }

            if (st.size === 0) return { content: `(${shown} is empty)` };
            if (out.length === 0 && !stop) return { content: `(${shown} has ${plural(lineNo, 'line')}; offset ${offset} is past the end)` };
            const first = offset;
            const last = first + out.length - 1;
            let note = '';
            if (stop === 'limit') note = `\n[lines ${first}-${last} shown; more follow: continue with offset=${last + 1}]`;
            else if (stop === 'bytes' && cutLine) note = `\n[line ${first} is longer than files.maxReadBytes (${maxBytes} bytes); only its start is shown; the next line is offset=${first + 1}]`;
            else if (stop === 'bytes') note = `\n[lines ${first}-${last} shown, stopped at files.maxReadBytes (${maxBytes} bytes); continue with offset=${last + 1}]`;
            return { content: out.join('\n') + note };
          } finally {
            await fh.close();
          }
        });
      });
    },
  });
}
