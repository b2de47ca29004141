// list_dir: the entries of one directory with their type and size: directories first, then the
// rest, each by name.
// A symlink shows where it leads, and says so when that is outside the roots, since the other file
// tools will refuse to follow it.
import type { Dirent } from 'node:fs';
import { readdir, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Tool } from '../types.js';
import { realResolve } from './confine.js';
import { guarded, PATH_SCHEMA, plural, type FileToolDeps } from './common.js';

interface Line {
  name: string;
  kind: 'directory' | 'file' | 'link' | 'other';
  text: string;
}

const KINDS = ['directory', 'file', 'link', 'other'] as const;

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function listDirTool(d: FileToolDeps): Tool {
  const maxResults = d.settings.maxResults;
  return {
    name: 'list_dir',
    readOnly: true,
    description: `List a directory (default: the workspace): each entry's type, size in bytes and name, directories first; at most ${maxResults} entries.`,
    inputSchema: {
      type: 'object',
      properties: { path: { ...PATH_SCHEMA, description: 'directory, relative to the workspace or absolute inside a configured root (default: the workspace)' } },
      additionalProperties: false,
    },
    execute: (input) => {
      const { path = '.' } = input as { path?: string };
      return guarded('list_dir', path, async () => {
        const { real, shown, snapshot } = await d.confinement.resolve(path, 'read');
        if (!(await stat(real)).isDirectory()) return { content: `list_dir ${shown}: not a directory; read it with read_file`, isError: true };
        const entries: Dirent[] = await readdir(real, { withFileTypes: true });

        const describe = async (e: Dirent): Promise<Line> => {
          const full = join(real, e.name);
          if (e.isSymbolicLink()) {
            const target = await readlink(full).catch(() => '?');
            let where: string;
            try {
              const resolved = await realResolve(full);
              const st = await stat(resolved).catch(() => undefined);
              where = !snapshot.rootOf(resolved) ? 'leads outside the roots; the file tools will not follow it'
                : !st ? 'dangling' : st.isDirectory() ? 'directory' : `${st.size} bytes`;
            } catch {
              where = 'unresolvable';
            }
            return { name: e.name, kind: 'link', text: `link  ${e.name} -> ${target} (${where})` };
          }
          const st = await stat(full).catch(() => undefined);
          if (e.isDirectory()) return { name: e.name, kind: 'directory', text: `dir   ${e.name}/` };
          if (e.isFile()) return { name: e.name, kind: 'file', text: `file  ${e.name} (${st ? `${st.size} bytes` : 'size unknown'})` };
          return { name: e.name, kind: 'other', text: `other ${e.name}` };
        };

        const isDir = (l: Line) => l.kind === 'directory';
        const lines = (await Promise.all(entries.map(describe))).sort((a, b) => (isDir(a) === isDir(b) ? byName(a.name, b.name) : isDir(a) ? -1 : 1));
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
  };
}
