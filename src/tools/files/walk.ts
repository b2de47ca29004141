// A directory walk for glob and grep that stays inside the roots: a symlink is followed only when its
// target lies inside them, each real directory is entered once (links cannot make it loop), and
// entries come in name order so the same tree always gives the same output.
import type { Dirent, Stats } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { plural } from './common.js';
import type { RootSnapshot } from './confine.js';

export interface Walked {
  /** '/'-separated path below the start */
  rel: string;
  name: string;
  real: string;
  isDir: boolean;
  /** a regular file: FIFOs and devices can block a read */
  isFile: boolean;
  size: number;
  depth: number;
}

export interface WalkStats {
  /** symlinks not followed because they lead outside the roots */
  linksOut: number;
  /** symlinks whose target is missing, and directories that could not be read */
  unreadable: number;
  scanned: number;
  /** the walk stopped at MAX_SCANNED entries */
  stopped: boolean;
}

export interface WalkOptions {
  snapshot: RootSnapshot;
  signal?: AbortSignal;
  /** whether to descend into a directory; absent: every one */
  enter?(dir: Walked): boolean;
}

/** A bound on the work one call does, whatever the caps on what it returns. */
export const MAX_SCANNED = 100_000;

export function newStats(): WalkStats {
  return { linksOut: 0, unreadable: 0, scanned: 0, stopped: false };
}

export async function* walk(startReal: string, opts: WalkOptions, stats: WalkStats): AsyncGenerator<Walked> {
  const visited = new Set<string>([startReal]);

  async function* dir(real: string, rel: string, depth: number): AsyncGenerator<Walked> {
    opts.signal?.throwIfAborted();
    let entries: Dirent[];
    try {
      entries = (await readdir(real, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch (err) {
      if (depth === 0) throw err;
      stats.unreadable++;
      return;
    }
    for (const ent of entries) {
      if (stats.scanned >= MAX_SCANNED) {
        stats.stopped = true;
        return;
      }
      stats.scanned++;
      const name = ent.name;
      const path = join(real, name);
      let target = path;
      let st: Stats;
      try {
        // Only a link changes the real path (the parent is real already).
        if (ent.isSymbolicLink()) target = await realpath(path);
        st = await stat(target);
      } catch {
        stats.unreadable++;
        continue;
      }
      if (!opts.snapshot.rootOf(target)) {
        stats.linksOut++;
        continue;
      }
      const entry: Walked = { rel: rel ? `${rel}/${name}` : name, name, real: target, isDir: st.isDirectory(), isFile: st.isFile(), size: st.size, depth: depth + 1 };
      yield entry;
      if (!entry.isDir || visited.has(target) || (opts.enter && !opts.enter(entry))) continue;
      visited.add(target);
      yield* dir(target, entry.rel, depth + 1);
    }
  }

  yield* dir(startReal, '', 0);
}

/** What the walk left out, in one bracketed line, or '' when nothing was. */
export function walkNotes(s: WalkStats): string {
  const parts: string[] = [];
  if (s.linksOut) parts.push(`${plural(s.linksOut, 'symlink')} leading outside the roots not followed`);
  if (s.unreadable) parts.push(`${plural(s.unreadable, 'entry', 'entries')} unreadable or dangling`);
  if (s.stopped) parts.push(`the walk stopped after ${MAX_SCANNED} entries`);
  return parts.length ? `[${parts.join('; ')}]` : '';
}
