// A directory walk for glob and grep that stays inside the roots: a symlink is followed only when its
// target lies inside them, each real directory is entered once (links cannot make it loop), and
// entries come in name order so the same tree always gives the same output. Each directory is read
// through a descriptor opened beneath its root (beneath.ts), so one swapped for a link is not read.
import type { Dirent, Stats } from 'node:fs';
import { lstat, readdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { holdPath, withHeld } from './beneath.js';
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
    let found: Walked[];
    try {
      found = await withHeld(holdPath(opts.snapshot, real, rel || '.'), (held) => list(held.path, real, rel, depth));
    } catch (err) {
      if (depth === 0) throw err;
      stats.unreadable++;
      return;
    }
    for (const entry of found) {
      yield entry;
      if (!entry.isDir || visited.has(entry.real) || (opts.enter && !opts.enter(entry))) continue;
      visited.add(entry.real);
      yield* dir(entry.real, entry.rel, depth + 1);
    }
  }

  /** The entries of one held directory, in name order, each looked at once. */
  async function list(heldPath: string, real: string, rel: string, depth: number): Promise<Walked[]> {
    const entries: Dirent[] = (await readdir(heldPath, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const out: Walked[] = [];
    for (const ent of entries) {
      if (stats.scanned >= MAX_SCANNED) {
        stats.stopped = true;
        break;
      }
      stats.scanned++;
      const name = ent.name;
      let target = join(real, name);
      let st: Stats;
      try {
        if (ent.isSymbolicLink()) {
          // Only a link changes the real path (the parent is real already); its target is judged
          // before anything of it is looked at, then opened beneath its root like any path.
          target = await realpath(target);
          if (!opts.snapshot.rootOf(target)) {
            stats.linksOut++;
            continue;
          }
          const to = holdPath(opts.snapshot, target, name);
          to.close();
          st = to.stat;
        } else {
          // lstat in the held directory: a name swapped for a link since readdir is not followed.
          st = await lstat(`${heldPath}/${name}`);
          if (st.isSymbolicLink()) throw new Error('became a link');
        }
      } catch {
        stats.unreadable++;
        continue;
      }
      out.push({ rel: rel ? `${rel}/${name}` : name, name, real: target, isDir: st.isDirectory(), isFile: st.isFile(), size: st.size, depth: depth + 1 });
    }
    return out;
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
