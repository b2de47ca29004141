// Where the file tools may reach: the workspace (read-write), files.roots (read-write) and
// files.readOnlyRoots. A path is judged twice: as written (so `..` and absolute paths elsewhere are
// refused with the rule that applies), then with every symlink resolved, as the kernel would reach
// it, so a link inside the workspace cannot lead a read or a write out. Paths that do not exist yet
// (write_file) are resolved through their longest existing part, and dangling links are followed
// by hand, since writing through one would create its target.
import { lstat, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ConfigError } from '../../errors.js';

export type Access = 'read' | 'write';

/** A refusal: the message names the rule, so the model (and the owner) know what stopped it. */
export class Refused extends Error {
  constructor(readonly rule: string, readonly detail: string) {
    super(`refused by rule "${rule}": ${detail}`);
    this.name = 'Refused';
  }
}

export interface RootSettings {
  roots: readonly string[];
  readOnlyRoots: readonly string[];
}

interface Root {
  /** the path as configured (absolute, normalised) */
  given: string;
  /** the path with symlinks resolved; the given path when it does not exist */
  real: string;
  writable: boolean;
}

/** The real roots of one call: walks check many paths against the same snapshot. */
export interface RootSnapshot {
  /** the most specific root holding a real path, so a read-only root inside the workspace wins there */
  rootOf(real: string): { writable: boolean } | undefined;
  /** how outputs name a real path: relative to the workspace when inside it, else absolute */
  show(real: string): string;
  /**
   * The real path of the outermost root holding a real path: opens start there (beneath.ts), so a
   * root nested in the workspace is reached through the workspace, where no part may be a link.
   */
  anchorOf(real: string): string | undefined;
}

export interface Resolved {
  /** the path as the file system reaches it, symlinks resolved */
  real: string;
  shown: string;
  snapshot: RootSnapshot;
}

export interface Confinement {
  workspace: string;
  snapshot(): Promise<RootSnapshot>;
  resolve(input: string, access: Access): Promise<Resolved>;
}

export const OUTSIDE = 'the file tools reach only the workspace, files.roots and files.readOnlyRoots';

export function isWithin(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** Longest symlink chain followed by hand (the kernel's own limit is 40). */
const MAX_LINKS = 40;

/**
 * The path the kernel would reach, even when its last parts do not exist yet. realpath answers for
 * existing paths; otherwise the parent is resolved and the last part checked: a dangling symlink is
 * followed through its target, anything else is simply absent.
 */
export async function realResolve(abs: string, links = 0): Promise<string> {
  try {
    return await realpath(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
  }
  const parent = dirname(abs);
  if (parent === abs) return abs;
  const realParent = await realResolve(parent, links);
  const candidate = join(realParent, basename(abs));
  let isLink: boolean;
  try {
    isLink = (await lstat(candidate)).isSymbolicLink();
  } catch {
    return candidate;
  }
  if (!isLink) return candidate;
  if (links >= MAX_LINKS) throw Object.assign(new Error(`too many levels of symbolic links: ${abs}`), { code: 'ELOOP' });
  let target: string;
  try {
    target = await readlink(candidate);
  } catch (err) {
    // EINVAL: no longer a link (it was swapped back since the lstat); resolved again, bounded by MAX_LINKS.
    if ((err as NodeJS.ErrnoException).code === 'EINVAL') return realResolve(abs, links + 1);
    throw err;
  }
  return realResolve(resolve(realParent, target), links + 1);
}

function absoluteRoot(path: string, where: string): string {
  if (!isAbsolute(path)) throw new ConfigError(`${where}: expected an absolute path, found ${JSON.stringify(path)}`);
  const p = resolve(path);
  if (p === '/') throw new ConfigError(`${where}: '/' would give the file tools every file on the machine`);
  return p;
}

/** Throws a ConfigError (exit 78) for a relative root, or '/'. */
export function createConfinement(workspace: string, s: RootSettings): Confinement {
  const ws = resolve(workspace);
  const configured = [
    { given: ws, writable: true },
    ...s.roots.map((r, i) => ({ given: absoluteRoot(r, `files.roots[${i}]`), writable: true })),
    ...s.readOnlyRoots.map((r, i) => ({ given: absoluteRoot(r, `files.readOnlyRoots[${i}]`), writable: false })),
  ];

  async function snapshotRoots(): Promise<{ roots: Root[]; snapshot: RootSnapshot }> {
    // Resolved at every call: a root may be created, or become a link, while pinclaw runs.
    const roots = await Promise.all(configured.map(async (r) => ({ ...r, real: await realResolve(r.given) })));
    const wsReal = roots[0]!.real;
    const snapshot: RootSnapshot = {
      rootOf(real) {
        let best: Root | undefined;
        for (const r of roots) if (isWithin(real, r.real) && (!best || r.real.length > best.real.length)) best = r;
        // Equal roots, one read-only: read-only wins, as the narrower promise.
        if (best) for (const r of roots) if (r.real === best.real && !r.writable) best = r;
        return best;
      },
      show(real) {
        return isWithin(real, wsReal) ? relative(wsReal, real).split(sep).join('/') || '.' : real;
      },
      anchorOf(real) {
        let outer: Root | undefined;
        for (const r of roots) if (isWithin(real, r.real) && (!outer || r.real.length < outer.real.length)) outer = r;
        return outer?.real;
      },
    };
    return { roots, snapshot };
  }

  return {
    workspace: ws,
    snapshot: async () => (await snapshotRoots()).snapshot,
    async resolve(input, access) {
      if (input.includes('\0')) throw new Refused('valid path', 'the path contains a NUL character');
      const { roots, snapshot } = await snapshotRoots();
      const lexical = resolve(ws, input);
      if (!roots.some((r) => isWithin(lexical, r.given) || isWithin(lexical, r.real))) {
        if (isAbsolute(input)) throw new Refused('no absolute path outside the roots', `${input} is outside the workspace and the configured roots; ${OUTSIDE}`);
        throw new Refused("no '..' escape", `${input} leads out of the workspace through '..'; ${OUTSIDE}`);
      }
      const real = await realResolve(lexical);
      const root = snapshot.rootOf(real);
      if (!root) throw new Refused('no symlink leading out', `${input} resolves through a symlink to ${real}, outside the roots; ${OUTSIDE}`);
      if (access === 'write' && !root.writable) throw new Refused('read-only root', `${input} is in files.readOnlyRoots, where the file tools may read but not write`);
      return { real, shown: snapshot.show(real), snapshot };
    },
  };
}
