// glob: paths matching a pattern such as `**/*.ts`, under the workspace or a directory in it. The walk
// starts below the pattern's literal leading directories and descends only as deep as the pattern can
// match, so `notes/*.md` reads one directory, not the whole tree.
import { isAbsolute } from 'node:path';
import type { Tool } from '../types.js';
import { holdPath, tryHoldPath } from './beneath.js';
import { OUTSIDE, Refused } from './confine.js';
import { guarded, joinShown, PATH_SCHEMA, plural, type FileToolDeps } from './common.js';
import { compileGlob, isLiteral } from './pattern.js';
import { newStats, walk, walkNotes } from './walk.js';
import { defineTool } from '../define.js';

export function globTool(d: FileToolDeps): Tool {
  const maxResults = d.settings.maxResults;
  return defineTool({
    name: 'glob',
    readOnly: true,
    description:
      'Find files and directories by name pattern, e.g. "**/*.ts", "notes/*.md", "src/**/{a,b}*.json". * and ? match ' +
      'within one path segment, ** any number of segments; names starting with a dot match only when the pattern ' +
      `segment starts with one. Matches are relative to path (default: the workspace), sorted; at most ${maxResults}.`,
    inputSchema: {
      type: 'object',
      properties: {
        pattern: { type: 'string', minLength: 1, maxLength: 1000, description: 'glob pattern, relative to path' },
        path: { ...PATH_SCHEMA, description: 'directory to search from (default: the workspace)' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    execute: (input, ctx) => {
      const { pattern, path = '.' } = input;
      return guarded('glob', path, async () => {
        if (isAbsolute(pattern)) throw new Refused('no absolute path outside the roots', `the pattern ${pattern} is absolute; give a relative pattern and the directory as path`);
        if (pattern.split('/').includes('..')) throw new Refused("no '..' escape", `the pattern ${pattern} climbs with '..'; give the directory to search as path instead. ${OUTSIDE}`);
        const glob = compileGlob(pattern);
        const base = await d.confinement.resolve(path, 'read');
        const baseHeld = holdPath(base.snapshot, base.real, base.shown);
        baseHeld.close();
        if (!baseHeld.stat.isDirectory()) return { content: `glob ${base.shown}: not a directory`, isError: true };

        // The literal leading directories of the pattern are a start below the base, confined like any path.
        const prefix: string[] = [];
        while (prefix.length < glob.segments.length - 1 && isLiteral(glob.segments[prefix.length]!)) prefix.push(glob.segments[prefix.length]!);
        let startReal = base.real;
        if (prefix.length) {
          const start = await d.confinement.resolve(joinShown(base.real, prefix.join('/')), 'read');
          const held = tryHoldPath(start.snapshot, start.real, start.shown);
          held?.close();
          if (!held?.stat.isDirectory()) return { content: `no paths match ${pattern} under ${base.shown}` };
          startReal = start.real;
        }

        const stats = newStats();
        const maxDepth = glob.maxDepth - prefix.length;
        const found: string[] = [];
        const entries = walk(startReal, {
          snapshot: base.snapshot,
          signal: ctx.signal,
          enter: (dir) => dir.depth < maxDepth && (glob.dotted || !dir.name.startsWith('.')),
        }, stats);
        for await (const e of entries) {
          const rel = prefix.length ? `${prefix.join('/')}/${e.rel}` : e.rel;
          if (glob.match(rel)) found.push(e.isDir ? `${rel}/` : rel);
        }
        found.sort();
        const shown = found.slice(0, maxResults).map((r) => joinShown(base.shown, r));
        const notes = walkNotes(stats);
        if (found.length === 0) return { content: `no paths match ${pattern} under ${base.shown}${notes ? `\n${notes}` : ''}` };
        const head = found.length > maxResults
          ? `the first ${maxResults} of ${found.length} paths matching ${pattern} under ${base.shown} (files.maxResults); narrow the pattern or path:`
          : `${plural(found.length, 'path')} ${found.length === 1 ? 'matches' : 'match'} ${pattern} under ${base.shown}:`;
        return { content: [head, ...shown, ...(notes ? [notes] : [])].join('\n') };
      });
    },
  });
}
