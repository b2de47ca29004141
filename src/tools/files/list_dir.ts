// list_dir: the entries of one directory with their type and size: directories first, then the
// rest, each by name.
// A symlink shows where it leads, and says so when that is outside the roots, since the other file
// tools will refuse to follow it.
import type { Dirent } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Tool } from '../types.js';
import { holdPath, tryHoldPath, withHeld } from './beneath.js';
import { realResolve } from './confine.js';
import { guarded, PATH_SCHEMA, plural, type FileToolDeps } from './common.js';
import { defineTool } from '../define.js';

interface Line {
  name: string;
  kind: 'directory' | 'file' | 'link' | 'other';
  text: string;
}

const KINDS = ['directory', 'file', 'link', 'other'] as const;

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function listDirTool(d: FileToolDeps): Tool {
  const maxResults = d.settings.maxResults;
  return defineTool({
    name: 'list_dir',
    readOnly: true,
    description: `List a directory (default: the workspace): each entry's type, size in bytes and name, directories first; at most ${maxResults} entries.`,
    inputSchema: {
      type: 'object',
      properties: { path: { ...PATH_SCHEMA, description: 'directory, relative to the workspace or absolute inside a configured root (default: the workspace)' } },
      additionalProperties: false,
    },
    execute: (input) => {
      const { path = '.' } = input;
      return guarded('list_dir', path, async () => {
        const { real, shown, snapshot } = await d.confinement.resolve(path, 'read');
        // Listed, and its entries looked at, through the directory held open (beneath.ts), so a
        // directory swapped for a link cannot show another directory's names or sizes.
        const lines = await withHeld(holdPath(snapshot, real, shown), async (held) => {
          if (!held.stat.isDirectory()) return undefined;
          const entries: Dirent[] = await readdir(held.path, { withFileTypes: true });
          const describe = async (e: Dirent): Promise<Line> => {
            const inHeld = `${held.path}/${e.name}`;
            if (e.isSymbolicLink()) {
              const target = await readlink(inHeld).catch(() => '?');
              let where: string;
              try {
                const resolved = await realResolve(join(real, e.name));
                // The target is looked at only inside the roots, and opened beneath them like any path.
                const inside = snapshot.rootOf(resolved) !== undefined;
                const to = inside ? tryHoldPath(snapshot, resolved, e.name) : undefined;
                to?.close();
                const st = to?.stat;
                where = !inside ? 'leads outside the roots; the file tools will not follow it'
                  : !st ? 'dangling' : st.isDirectory() ? 'directory' : `${st.size} bytes`;
              } catch {
                where = 'unresolvable';
              }
              return { name: e.name, kind: 'link', text: `link  ${e.name} -> ${target} (${where})` };
            }
            const st = await lstat(inHeld).catch(() => undefined);
            if (e.isDirectory()) return { name: e.name, kind: 'directory', text: `dir   ${e.name}/` };
            if (e.isFile()) return { name: e.name, kind: 'file', text: `file  ${e.name} (${st ? `${st.size} bytes` : 'size unknown'})` };
            return { name: e.name, kind: 'other', text: `other ${e.name}` };
          };
          return Promise.all(entries.map(describe));
        });
        if (!lines) return { content: `list_dir ${shown}: not a directory; read it with read_file`, isError: true };

        const isDir = (l: Line) => l.kind === 'directory';
        lines.sort((a, b) => (isDir(a) === isDir(b) ? byName(a.name, b.name) : isDir(a) ? -1 : 1));
        if (lines.length === 0) return { content: `${shown}: empty directory` };
        const counts = KINDS.map((k) => [k, lines.filter((l) => l.kind === k).length] as const)
          .filter(([, n]) => n > 0)
          .map(([k, n]) => plural(n, k, k === 'directory' ? 'directories' : `${k}s`))
          .join(', ');
        const head = lines.length > maxResults
          ? `${shown}: ${counts}; the first ${maxResults} are shown (files.maxResults)`
          : `${shown}: ${counts}`;
        return { content: [head, ...lines.slice(0, maxResults).map((l) => l.text)].join('\n') };
      });
    },
  });
}
