// Where the file tools may reach: the workspace (read-write), files.roots (read-write) and
// files.readOnlyRoots. A path is judged twice: as written (so `..` and absolute paths elsewhere are
// refused with the rule that applies), then with every symlink resolved, as the kernel would reach
// it, so a link inside the workspace cannot lead a read or a write out. Paths that do not exist yet
// (write_file) are resolved through their longest existing part, and dangling links are followed
// by hand, since writing through one would create its target.
import { lstat, readlink, realpath, stat } from 'node:fs/promises';
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

/**
 * A file this process holds a POSIX (fcntl) lock on, as SQLite takes them: the home's gateway.lock,
 * the database. POSIX locks belong to the process and the file, not to a descriptor, so opening such
 * a file here and closing it again drops the lock; the file tools refuse to open them.
 */
export interface LockedFile {
  path: string;
  /** what it is, for the refusal: "the gateway's lock on its home" */
  what: string;
}

export interface RootSettings {
  roots: readonly string[];
  readOnlyRoots: readonly string[];
}

interface Root {
  /** the path as configured (absolute, normalised) */
  given: string;
  /** how the configuration names it, for refusals */
  name: string;
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
  /** the locked file (by device and inode, so a hard link counts) a stat is of, if any */
  lockedFile(st: { dev: number; ino: number }): LockedFile | undefined;
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

/** Where a root is, or the symlink that makes it unusable. */
type Walked = { real: string } | { link: string };

/** A root reached through a symlink inside another root: paths in it are refused. */
interface Broken {
  given: string;
  name: string;
  link: string;
}

/**
 * The real path of a root, as realpath finds it but component by component, and refusing (by
 * returning the link) to follow a symlink that lies inside one of `guards`. A missing part ends the
 * walk: the rest is taken as written, since nothing can be opened through it yet.
 */
async function rootWalk(abs: string, guards: readonly string[]): Promise<Walked> {
  const pending = abs.split('/').filter(Boolean);
  let cur = '/';
  let links = 0;
  while (pending.length) {
    const part = pending.shift()!;
    if (part === '.') continue;
    if (part === '..') {
      cur = dirname(cur); // cur holds no link, so its parent is the physical one
      continue;
    }
    const candidate = join(cur, part);
    let isLink: boolean;
    try {
      isLink = (await lstat(candidate)).isSymbolicLink();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      return { real: resolve(candidate, ...pending) };
    }
    if (!isLink) {
      cur = candidate;
      continue;
    }
    if (guards.some((g) => isWithin(cur, g))) return { link: candidate };
    if (++links > MAX_LINKS) throw Object.assign(new Error(`too many levels of symbolic links: ${abs}`), { code: 'ELOOP' });
    let target: string;
    try {
      target = await readlink(candidate);
    } catch (err) {
      // EINVAL: no longer a link (swapped back since the lstat): looked at again, bounded by MAX_LINKS.
      if ((err as NodeJS.ErrnoException).code !== 'EINVAL') throw err;
      pending.unshift(part);
      continue;
    }
    if (isAbsolute(target)) cur = '/';
    pending.unshift(...target.split('/').filter(Boolean));
  }
  return { real: cur };
}

function absoluteRoot(path: string, where: string): string {
  if (!isAbsolute(path)) throw new ConfigError(`${where}: expected an absolute path, found ${JSON.stringify(path)}`);
  const p = resolve(path);
  if (p === '/') throw new ConfigError(`${where}: '/' would give the file tools every file on the machine`);
  return p;
}

/** Throws a ConfigError (exit 78) for a relative root, or '/'. */
export function createConfinement(workspace: string, s: RootSettings, locked: readonly LockedFile[] = []): Confinement {
  const ws = resolve(workspace);
  const configured = [
    { given: ws, name: 'the workspace', writable: true },
    ...s.roots.map((r, i) => ({ given: absoluteRoot(r, `files.roots[${i}]`), name: `files.roots[${i}]`, writable: true })),
    ...s.readOnlyRoots.map((r, i) => ({ given: absoluteRoot(r, `files.readOnlyRoots[${i}]`), name: `files.readOnlyRoots[${i}]`, writable: false })),
  ];

  // A root lying inside another root (files.readOnlyRoots: ['<workspace>/manuals'], say) is a name
  // that whatever can write in the outer root may replace: a sandboxed exec in the workspace can swap
  // that directory for a symlink to the home or '/'. Following links to find such a root would move
  // the root itself there, and the file tools with it. Pinning roots at start (device and inode, or
  // an O_PATH descriptor) is not sound either: a swap made before a restart would be pinned, a root
  // created later never could be, and a held descriptor keeps a USB drive from being unmounted. So
  // the rule is structural, checked at every call: a root is reached from the root holding it (the
  // most specific one that lies in no other root) with no symlink followed inside that root (the
  // walk below); a link there makes the root unusable, and paths in it are refused, until the owner
  // removes the link. Its real path then lies inside the outer root, so opens start there
  // (anchorOf) and beneath.ts walks down with no link followed, which also catches a swap made
  // after this check. The workspace is resolved as
  // configured: it is pinclaw's own directory, outside anything a tool can write, and links inside
  // it are never followed to reach another root, wherever that root is configured.
  //
  // The non-nested root each root is reached from: itself (-1) when it lies in no other root; else
  // the most specific one holding it (an equal path counts, the first one configured being the outer).
  const outerOf = configured.map((r, i) => {
    if (i === 0) return -1;
    let best = -1;
    configured.forEach((o, j) => {
      if (j === i || !isWithin(r.given, o.given) || (o.given === r.given && j > i)) return;
      if (best === -1 || o.given.length > configured[best]!.given.length) best = j;
    });
    return best;
  });
  // Outer candidates that are themselves nested are skipped: their own outer root holds r too.
  const outerIdx = outerOf.map(function pick(o): number { return o === -1 || outerOf[o] === -1 ? o : pick(outerOf[o]!); });

  async function snapshotRoots(): Promise<{ roots: Root[]; broken: Broken[]; snapshot: RootSnapshot }> {
    // Resolved at every call: a root may be created, or become a link, while pinclaw runs.
    const wsReal = await realResolve(ws);
    const outer = await Promise.all(
      configured.map(async (r, i): Promise<Walked | undefined> => (i === 0 ? { real: wsReal } : outerIdx[i] === -1 ? rootWalk(r.given, [wsReal]) : undefined)),
    );
    const walked = await Promise.all(
      configured.map(async (r, i): Promise<Walked> => {
        const own = outer[i];
        if (own) return own;
        const o = outerIdx[i]!;
        const from = outer[o]!;
        if (!('real' in from)) return from;
        return rootWalk(join(from.real, relative(configured[o]!.given, r.given)), [from.real, wsReal]);
      }),
    );
    // Looked at every call too: a lock file is created when its holder starts.
    const lockedNow = (await Promise.all(locked.map(async (f) => ({ f, st: await stat(f.path).catch(() => undefined) })))).flatMap(({ f, st }) => (st ? [{ f, st }] : []));
    const roots: Root[] = [];
    const broken: Broken[] = [];
    walked.forEach((w, i) => {
      const r = configured[i]!;
      if ('real' in w) roots.push({ ...r, real: w.real });
      else broken.push({ given: r.given, name: r.name, link: w.link });
    });
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
        let outerRoot: Root | undefined;
        for (const r of roots) if (isWithin(real, r.real) && (!outerRoot || r.real.length < outerRoot.real.length)) outerRoot = r;
        return outerRoot?.real;
      },
      lockedFile(st) {
        return lockedNow.find((l) => l.st.dev === st.dev && l.st.ino === st.ino)?.f;
      },
    };
    return { roots, broken, snapshot };
  }

  return {
    workspace: ws,
    snapshot: async () => (await snapshotRoots()).snapshot,
    async resolve(input, access) {
      if (input.includes('\0')) throw new Refused('valid path', 'the path contains a NUL character');
      const { roots, broken, snapshot } = await snapshotRoots();
      const lexical = resolve(ws, input);
      const gone = broken.find((b) => isWithin(lexical, b.given));
      if (gone) {
        throw new Refused(
          'no symlink leading out',
          `${input} is in ${gone.name} (${gone.given}), which is reached through the symlink ${gone.link} inside another root; ` +
            'a root is never reached through a link inside another root, since whatever writes there (a sandboxed exec in the workspace) could point it anywhere. ' +
            `Until the link is replaced by the directory, or ${gone.name} names the link's target, that root is out of reach`,
        );
      }
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
