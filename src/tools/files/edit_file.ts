// edit_file: replaces one exact piece of text in a file. The piece must occur exactly once (unless
// replace_all says otherwise), so an edit never lands on a look-alike the model did not mean; the
// error says how many matches there were, which tells the model whether to add context or re-read.
import type { Tool } from '../types.js';
import { Refused } from './confine.js';
import { guarded, looksBinary, readWhole, PATH_SCHEMA, plural, type FileToolDeps } from './common.js';
import { checkQuota, checkWriteSize, writeInto, writeTarget } from './write_file.js';
import { defineTool } from '../define.js';

/** Start offsets of the non-overlapping occurrences of `needle`, left to right. */
function occurrences(text: string, needle: string): number[] {
  const at: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) at.push(i);
  return at;
}

/** 1-based line numbers of character offsets, counted in one pass. */
function lineNumbers(text: string, offsets: readonly number[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let pos = 0;
  for (const o of offsets) {
    for (; pos < o; pos++) if (text.charCodeAt(pos) === 10) line++;
    lines.push(line);
  }
  return lines;
}

const MAX_LINES_LISTED = 20;

export function editFileTool(d: FileToolDeps): Tool {
  const max = d.settings.maxWriteBytes;
  return defineTool({
    name: 'edit_file',
    description:
      'Replace old_string with new_string in a text file. old_string must match exactly (whitespace and indentation ' +
      'included) and occur exactly once; include surrounding lines to make it unique, or set replace_all to replace ' +
      'every occurrence. Read the file first.',
    inputSchema: {
      type: 'object',
      properties: {
        path: { ...PATH_SCHEMA, description: 'file path, relative to the workspace or absolute inside a configured root' },
        old_string: { type: 'string', minLength: 1, description: 'the exact text to replace' },
        new_string: { type: 'string', description: 'the text to put in its place (may be empty)' },
        replace_all: { type: 'boolean', description: 'replace every occurrence instead of requiring exactly one (default false)' },
      },
      required: ['path', 'old_string', 'new_string'],
      additionalProperties: false,
    },
    sequential: true,
    execute: (input) => {
      const { path, old_string: oldText, new_string: newText, replace_all: all = false } = input;
      return guarded('edit_file', path, async () => {
        if (oldText === newText) return { content: 'edit_file: old_string and new_string are the same; nothing to change', isError: true };
        const { real, shown, snapshot } = await d.confinement.resolve(path, 'write');
        const target = writeTarget(snapshot, real, shown);
        target.dir?.close();
        const st = target.before;
        if (!st) return { content: `edit_file ${shown}: no such file; create it with write_file`, isError: true };
        if (st.isDirectory()) return { content: `edit_file ${shown}: is a directory`, isError: true };
        if (!st.isFile()) throw new Refused('regular files only', `${shown} is not a regular file`);
        checkWriteSize(st.size, max, `${shown} is`);

        const raw = await readWhole(snapshot, real, shown);
        if (looksBinary(raw)) throw new Refused('text files only', `${shown} looks binary (it has a NUL byte in its first 8 KB)`);
        const text = raw.toString('utf8');
        // Decoding invalid UTF-8 replaces bytes; writing that back would change parts nobody edited.
        if (!Buffer.from(text).equals(raw)) throw new Refused('text files only', `${shown} is not valid UTF-8, and rewriting it would alter bytes outside the edit`);

        const found = occurrences(text, oldText);
        if (found.length === 0) {
          return { content: `edit_file ${shown}: old_string was found 0 times; it must match exactly, whitespace and indentation included (read the file again to see its current text)`, isError: true };
        }
        const lines = lineNumbers(text, found);
        const listed = lines.slice(0, MAX_LINES_LISTED).join(', ') + (lines.length > MAX_LINES_LISTED ? ', …' : '');
        if (found.length > 1 && !all) {
          return { content: `edit_file ${shown}: old_string was found ${found.length} times (lines ${listed}); it must match exactly once: include more surrounding text to make it unique, or set replace_all`, isError: true };
        }
        const updated = text.split(oldText).join(newText);
        checkWriteSize(Buffer.byteLength(updated), max, 'the edited file would be');
        await checkQuota(d, shown, Buffer.byteLength(updated) - raw.length);
        // The directory is held again for the write: the read above may have taken a while.
        writeInto(snapshot, writeTarget(snapshot, real, shown), real, shown, updated);
        return { content: `edited ${shown}: replaced ${plural(found.length, 'occurrence')} (line${found.length === 1 ? '' : 's'} ${listed})` };
      });
    },
  });
}
