// Debian packages, fetched the way the brief's CI machine can: `apt-get download` from the
// configured Debian mirrors (the same apt lists the host installs from), unpacked with
// `dpkg-deb -x`. Nothing is installed on the host; every unpacked package is a cache entry keyed by
// its exact version, so a later run with the same apt lists downloads and unpacks nothing.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { cachePath, cached } from './cache.js';
import { mib, say } from './progress.js';

export interface Package {
  /** Name with the architecture qualifier apt needs, e.g. "busybox-static:arm64". */
  spec: string;
  name: string;
  version: string;
  arch: string;
  /** Download size in bytes; 0 when not looked up yet (only needed for the progress line). */
  size: number;
  depends: string;
}

function apt(cmd: string, args: string[], cwd?: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, LANG: 'C', LC_ALL: 'C' } });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status}): ${r.stderr.trim()}`);
  return r.stdout;
}

/** Answers of apt-cache, kept for the life of the process. */
const known = new Map<string, Package>();

function parseParagraphs(out: string): Map<string, string>[] {
  return out
    .split(/\n\s*\n/)
    .filter((p) => p.trim())
    .map((p) => {
      const fields = new Map<string, string>();
      for (const m of p.matchAll(/^([A-Za-z-]+): (.*)$/gm)) fields.set(m[1]!, m[2]!.trim());
      return fields;
    });
}

/**
 * The versions apt would download now, all in one apt-cache call: where apt's binary cache is
 * disabled (Debian's docker images) every call spends about a second rebuilding it.
 */
export function packages(specs: string[]): Package[] {
  const missing = specs.filter((s) => !known.has(s));
  if (missing.length) {
    const paragraphs = parseParagraphs(apt('apt-cache', ['show', '--no-all-versions', ...missing]));
    for (const spec of missing) {
      const [name, qualifier] = spec.split(':');
      const p = paragraphs.find((f) => f.get('Package') === name && (!qualifier || f.get('Architecture') === qualifier || f.get('Architecture') === 'all'));
      if (!p) throw new Error(`apt-cache show ${spec} found nothing${qualifier ? ` (is ${qualifier} added with dpkg --add-architecture, and apt-get update run?)` : ''}`);
      known.set(spec, { spec, name: name!, version: p.get('Version')!, arch: p.get('Architecture')!, size: Number(p.get('Size') ?? 0), depends: p.get('Depends') ?? '' });
    }
  }
  return specs.map((s) => known.get(s)!);
}

/** The package a metapackage pins, e.g. linux-image-arm64:arm64 → linux-image-6.1.0-56-arm64 (= 6.1.192-2). */
export function pinnedDependency(meta: Package, prefix: string): Package {
  const m = new RegExp(`(?:^|,\\s*)(${prefix}[^\\s,(]+)\\s*\\(=\\s*([^)]+)\\)`).exec(meta.depends);
  if (!m) throw new Error(`${meta.spec} ${meta.version} pins no ${prefix}* package (Depends: ${meta.depends})`);
  const arch = meta.arch === 'all' ? '' : `:${meta.arch}`;
  return { spec: `${m[1]}${arch}`, name: m[1]!, version: m[2]!.trim(), arch: meta.arch, size: 0, depends: '' };
}

/** A filesystem-safe form of "name_version_arch" (versions contain ':' and '+'). */
export function packageKey(pkg: Package): string {
  return `${pkg.name}_${pkg.version}_${pkg.arch}`.replace(/[^A-Za-z0-9._+-]/g, '_');
}

/** Downloads `pkgs` and unpacks them all into `dir` (deleting the .debs), with a progress line each. */
export function unpackInto(pkgs: Package[], dir: string): void {
  const download = `${dir}.download`;
  mkdirSync(download, { recursive: true });
  mkdirSync(dir, { recursive: true });
  try {
    for (const pkg of pkgs) {
      if (!pkg.size) pkg.size = Number(/^Size: (\d+)$/m.exec(apt('apt-cache', ['show', '--no-all-versions', pkg.spec]))?.[1] ?? 0);
      say(`downloading ${pkg.name} ${pkg.version} (${pkg.arch}, ${mib(pkg.size)})`);
      apt('apt-get', ['download', '-q', `${pkg.spec}=${pkg.version}`], download);
      const deb = readdirSync(download).find((f) => f.endsWith('.deb'));
      if (!deb) throw new Error(`apt-get download ${pkg.spec}=${pkg.version} produced no .deb`);
      say(`unpacking ${pkg.name}`);
      apt('dpkg-deb', ['-x', join(download, deb), dir]);
      rmSync(join(download, deb));
    }
  } finally {
    rmSync(download, { recursive: true, force: true });
  }
}

/**
 * A package unpacked into its own cache entry. The .deb is not kept: the unpacked tree is the
 * cache entry, and the kernel packages are 60-70 MB each.
 */
export async function unpacked(pkg: Package): Promise<string> {
  return cached(cachePath('deb', packageKey(pkg)), (staging) => unpackInto([pkg], staging));
}
