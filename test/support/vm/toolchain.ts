// Compilers for the guest: a kernel module built out of tree against Debian's headers for the exact
// guest kernel, and small static C programs (probes) for the guest's architecture. Results are
// cached by a hash of their sources, the kernel and the compiler, so they build once.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { packageKey, packages, unpackInto } from './apt.js';
import { ARCHS, type VmArch } from './arch.js';
import { cachePath, cached, sha256 } from './cache.js';
import { kernel, type Kernel } from './kernel.js';
import { timed } from './progress.js';

function runTool(cmd: string, args: string[], cwd?: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, LANG: 'C', LC_ALL: 'C' } });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status}):\n${r.stdout}${r.stderr}`.trimEnd());
  return r.stdout + r.stderr;
}

function compilerVersion(cc: string): string {
  return runTool(cc, ['--version']).split('\n')[0] ?? cc;
}

/** Hash of every file in a source directory (names and contents), the build's cache key. */
function hashTree(dir: string): string {
  const parts: string[] = [];
  for (const entry of readdirSync(dir).sort()) parts.push(entry, readFileSync(join(dir, entry), 'utf8'));
  return sha256(...parts);
}

/**
 * Debian's headers for the guest kernel, in one tree: the flavour package, the common package it
 * includes and linux-kbuild (scripts, modpost, fixdep). The flavour's Makefile includes the common
 * one by absolute path under /usr/src; it is pointed at the cached copy instead. For arm64 the
 * host's (amd64) linux-kbuild is used: its tools run on the build machine, not the target.
 */
async function headers(k: Kernel): Promise<string> {
  const spec = ARCHS[k.arch];
  const pkgs = packages(spec.headers.map((h) => h.replace('<ver>', k.abi)));
  for (const p of pkgs) {
    if (p.version !== k.pkg.version) throw new Error(`${p.name} is at ${p.version} but the kernel is ${k.pkg.name} ${k.pkg.version}; apt lists out of step?`);
  }
  const root = cachePath('headers', sha256(...pkgs.map(packageKey)).slice(0, 16) + `-${k.kver}`);
  await cached(root, (staging) => {
    unpackInto(pkgs, staging);
    const makefile = join(staging, 'usr', 'src', `linux-headers-${k.kver}`, 'Makefile');
    const text = readFileSync(makefile, 'utf8');
    if (!text.includes('include /usr/src/')) throw new Error(`${makefile} no longer includes /usr/src/...; the headers layout changed`);
    writeFileSync(makefile, text.replaceAll('include /usr/src/', `include ${join(root, 'usr', 'src')}/`));
  });
  return join(root, 'usr', 'src', `linux-headers-${k.kver}`);
}

/**
 * The compiler Debian built the kernel with must be the one building the module: same major
 * version at least (the .config's CONFIG_CC_VERSION_TEXT, e.g. "gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0").
 */
function checkCompiler(headerDir: string, cc: string): string {
  const config = readFileSync(join(headerDir, '.config'), 'utf8');
  const built = /^CONFIG_CC_VERSION_TEXT="(.*)"$/m.exec(config)?.[1] ?? 'unknown';
  const ours = compilerVersion(cc);
  const major = (s: string): string | undefined => /(\d+)\.\d+\.\d+\s*$/.exec(s)?.[1];
  if (!major(built) || major(built) !== major(ours)) {
    throw new Error(`the kernel was built with "${built}" but ${cc} is "${ours}"; install gcc-${major(built) ?? '?'} for the target`);
  }
  return ours;
}

/**
 * Builds the out-of-tree module in `srcDir` (a Kbuild file plus sources) for the guest kernel of
 * `arch` and returns the .ko's path. The module is unsigned; Debian's kernels accept that with a
 * taint (CONFIG_MODULE_SIG_FORCE is off).
 */
export async function buildKernelModule(arch: VmArch, srcDir: string): Promise<string> {
  const spec = ARCHS[arch];
  const k = await kernel(arch);
  const name = basename(srcDir);
  const cc = `${spec.crossCompile ?? ''}gcc-12`;
  const headerDir = await headers(k);
  const ccVersion = checkCompiler(headerDir, cc);
  const key = sha256(hashTree(srcDir), k.kver, k.pkg.version, ccVersion).slice(0, 16);
  const dir = cachePath('build', `kmod-${name}-${k.kver}-${key}`);
  const ko = join(dir, `${name}.ko`);
  await cached(dir, (staging) =>
    timed(`building ${name}.ko for ${k.kver} (${ccVersion})`, () => {
      cpSync(srcDir, staging, { recursive: true });
      const args = ['-C', headerDir, `M=${staging}`, `ARCH=${spec.kbuildArch}`, 'modules'];
      if (spec.crossCompile) args.push(`CROSS_COMPILE=${spec.crossCompile}`);
      runTool('make', args);
      if (!existsSync(join(staging, `${name}.ko`))) throw new Error(`make built no ${name}.ko in ${staging}`);
    }),
  );
  return ko;
}

/** Compiles one C file into a static program for `arch` (no libraries needed in the guest). */
export async function buildStaticProgram(arch: VmArch, source: string): Promise<string> {
  const spec = ARCHS[arch];
  const name = basename(source, '.c');
  const ccVersion = compilerVersion(spec.cc);
  const key = sha256(readFileSync(source), arch, ccVersion).slice(0, 16);
  const dir = cachePath('build', `prog-${name}-${arch}-${key}`);
  await cached(dir, (staging) =>
    timed(`compiling ${name} for ${arch}`, () => {
      mkdirSync(staging, { recursive: true });
      runTool(spec.cc, ['-static', '-O2', '-Wall', '-Wextra', '-Werror', '-o', join(staging, name), source]);
    }),
  );
  return join(dir, name);
}
