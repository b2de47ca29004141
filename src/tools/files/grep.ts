// grep: lines matching a regular expression (or a literal text) in the files under a path, as
// file:line:text. Hidden entries and node_modules are not walked into (they hold the bulk of most
// trees and rarely the answer); binary files and files over files.maxSearchBytes are skipped and
// counted, so an empty answer never hides that something was not searched.
import { errorMessage } from '../../errors.js';
import type { Tool } from '../types.js';
import { holdPath } from './beneath.js';
import { Refused, type RootSnapshot } from './confine.js';
import { guarded, joinShown, looksBinary, readWhole, PATH_SCHEMA, plural, type FileToolDeps } from './common.js';
import { compileGlob } from './pattern.js';
import { compileSearchRegex, RegexTimeout, type SearchRegex } from './search-regex.js';
import { newStats, walk, walkNotes, type Walked } from './walk.js';
import { defineTool } from '../define.js';

/** Longest line text shown; a minified file should not fill the output with one line. */
const MAX_LINE_CHARS = 300;
const SKIPPED_DIRS = new Set(['node_modules']);

function shorten(line: string): string {
  const l = line.endsWith('\r') ? line.slice(0, -1) : line;
  return l.length > MAX_LINE_CHARS ? `${l.slice(0, MAX_LINE_CHARS)}…` : l;
}

export function grepTool(d: FileToolDeps): Tool {
  const { maxResults, maxSearchBytes } = d.settings;
  return defineTool({
    name: 'grep',
    readOnly: true,
    description:
      'Search file contents for a regular expression (JavaScript syntax) or, with literal, a plain text. Searches the ' +
      'file or every file under the directory path (default: the workspace), optionally only files matching glob ' +
      '(e.g. "*.md", or "src/**/*.ts" relative to path). Prints file:line:text, at most ' +
      `${maxResults} matches. Hidden files and directories and node_modules are skipped unless path names them.`,
    inputSchema: {
      type: 'object',
      properties: {
        pattern: { type: 'string', minLength: 1, maxLength: 1000, description: 'regular expression, or the text to find with literal' },
        path: { ...PATH_SCHEMA, description: 'file or directory to search (default: the workspace)' },
        glob: { type: 'string', minLength: 1, maxLength: 1000, description: 'only files whose name (a pattern without /) or path below path (with /) matches' },
        literal: { type: 'boolean', description: 'treat pattern as plain text (default false)' },
        ignore_case: { type: 'boolean', description: 'match regardless of case (default false)' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    execute: (input, ctx) => {
      const { pattern, path = '.', glob, literal = false, ignore_case: ignoreCase = false } = input;
      return guarded('grep', path, async () => {
        let re: SearchRegex;
        try {
          re = compileSearchRegex(literal ? pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : pattern, ignoreCase ? 'i' : '');
        } catch (err) {
          return { content: `grep: invalid regular expression: ${errorMessage(err)}; set literal to search for the text as it is`, isError: true };
        }
        if (glob && glob.split('/').includes('..')) throw new Refused("no '..' escape", `the glob ${glob} climbs with '..'; give the directory as path instead`);
        const filter = glob ? compileGlob(glob) : undefined;
        const byName = glob !== undefined && !glob.includes('/');

        const base = await d.confinement.resolve(path, 'read');
        const baseHeld = holdPath(base.snapshot, base.real, base.shown);
        baseHeld.close();
        const st = baseHeld.stat;
        const files: Walked[] = [];
        const stats = newStats();
        const skipped = { binary: 0, large: 0 };
        const lines: string[] = [];
        let matchedFiles = 0;
        let capped = false;

        const searchFile = async (snapshot: RootSnapshot, real: string, size: number, shown: string) => {
          if (size > maxSearchBytes) {
            skipped.large++;
            return;
          }
          // Opened beneath its root (beneath.ts): a directory swapped for a link since the walk is not followed.
          const buf = await readWhole(snapshot, real, shown);
          if (looksBinary(buf)) {
            skipped.binary++;
            return;
          }
          const whole = buf.toString('utf8');
          // One more than still fits, so a full page is told apart from a capped one.
          const found = await re.matchingLines(whole, maxResults - lines.length + 1);
          const text = found.length ? whole.split('\n') : [];
          let hit = false;
          for (const i of found) {
            if (lines.length === maxResults) {
              capped = true;
              break;
            }
            hit = true;
            lines.push(`${shown}:${i + 1}:${shorten(text[i]!)}`);
          }
          if (hit) matchedFiles++;
        };

        try {
          if (st.isDirectory()) {
            const entries = walk(base.real, {
              snapshot: base.snapshot,
              signal: ctx.signal,
              enter: (dir) => !dir.name.startsWith('.') && !SKIPPED_DIRS.has(dir.name),
            }, stats);
            for await (const e of entries) {
              if (!e.isFile || e.name.startsWith('.')) continue;
              if (filter && !filter.match(byName ? e.name : e.rel)) continue;
              files.push(e);
            }
            for (const f of files) {
              ctx.signal?.throwIfAborted();
              try {
                await searchFile(base.snapshot, f.real, f.size, joinShown(base.shown, f.rel));
              } catch (err) {
                // A file that vanished, cannot be read or gained a link since the walk listed it is counted, not fatal.
                if (!(err as NodeJS.ErrnoException).code && !(err instanceof Refused)) throw err;
                stats.unreadable++;
              }
              if (capped) break;
            }
          } else if (st.isFile()) {
            await searchFile(base.snapshot, base.real, st.size, base.shown);
          } else {
            throw new Refused('regular files only', `${base.shown} is not a regular file or a directory`);
          }
        } catch (err) {
          if (!(err instanceof RegexTimeout)) throw err;
          return {
            content:
              `grep: refused: the pattern /${pattern}/ did not finish matching within ${err.ms} ms. Patterns with backreferences or ` +
              `lookaround${ignoreCase ? ', and any with ignore_case,' : ''} cannot use the linear-time engine, so they run under that budget; ` +
              'simplify the pattern, search a narrower path, or set literal',
            isError: true,
          };
        } finally {
          await re.close();
        }

        const what = `${literal ? JSON.stringify(pattern) : `/${pattern}/`}${ignoreCase ? ' (ignoring case)' : ''} under ${base.shown}${glob ? ` in files matching ${glob}` : ''}`;
        const notes: string[] = [];
        if (skipped.binary) notes.push(`${plural(skipped.binary, 'binary file')} skipped`);
        if (skipped.large) notes.push(`${plural(skipped.large, 'file')} larger than files.maxSearchBytes (${maxSearchBytes} bytes) skipped`);
        const walked = walkNotes(stats);
        const tail = [...(notes.length ? [`[${notes.join('; ')}]`] : []), ...(walked ? [walked] : [])];
        if (lines.length === 0) return { content: [`no matches for ${what}`, ...tail].join('\n') };
        const head = capped
          ? `stopped at ${maxResults} matches (files.maxResults) for ${what}; narrow the pattern, path or glob:`
          : `${plural(lines.length, 'match', 'matches')} in ${plural(matchedFiles, 'file')} for ${what}:`;
        return { content: [head, ...lines, ...tail].join('\n') };
      });
    },
  });
}
