// What a sandboxed command may touch, decided once for both confining backends: Landlock gets these
// as rules, bubblewrap as bind mounts. Everything not listed is out of reach, in particular
// $PINCLAW_HOME around the workspace (config.json, secret.key, pinclaw.db) and the user's home.
import { readdirSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { PathRule } from './types.js';

/** The system's programs and libraries (merged-/usr systems make most of these symlinks into /usr). */
export const SYSTEM_ROOTS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'] as const;

/**
 * /etc entry by entry, because /etc also holds shadow, gshadow, ssh host keys, sudoers and
 * ssl/private, and Landlock can only grant, never carve out. These are what the dynamic loader,
 * name resolution, TLS, locales and common interpreters read.
 */
const ETC_FILES = [
  'alternatives', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'passwd', 'group', 'nsswitch.conf', 'hosts', 'host.conf',
  'hostname', 'resolv.conf', 'gai.conf', 'services', 'protocols', 'networks', 'localtime', 'timezone', 'locale.alias',
  'locale.conf', 'default/locale', 'os-release', 'debian_version', 'mime.types', 'magic', 'magic.mime', 'inputrc',
  'ssl/certs', 'ssl/openssl.cnf', 'ca-certificates', 'ca-certificates.conf', 'gitconfig', 'perl', 'xdg',
];

let versioned: string[] | undefined;

/** Interpreters keep per-version config under /etc (python3.11, ...). Read once per process. */
function etcVersioned(): string[] {
  if (!versioned) {
    try {
      versioned = readdirSync('/etc').filter((n) => /^python3(\.\d+)?$/.test(n));
    } catch {
      versioned = [];
    }
  }
  return versioned;
}

/** The device nodes a shell script expects; nothing that reaches hardware or a terminal. */
export const DEVICES = ['/dev/null', '/dev/zero', '/dev/full', '/dev/random', '/dev/urandom'] as const;

export interface PolicyInput {
  workspace: string;
  /** the command's private temporary directory ($TMPDIR) */
  tmp: string;
  /** extra read+execute roots from sandbox.allowedRoots */
  allowedRoots: readonly string[];
}

export function pathRules(p: PolicyInput): PathRule[] {
  const rules: PathRule[] = [];
  for (const root of SYSTEM_ROOTS) rules.push({ path: root, access: 'rx' });
  for (const name of [...ETC_FILES, ...etcVersioned()]) rules.push({ path: `/etc/${name}`, access: 'ro' });
  // /proc for ps, nproc and /proc/self; other processes' secrets there (environ, mem, fd) need
  // ptrace rights, which Landlock denies across domains and bubblewrap hides in its pid namespace.
  rules.push({ path: '/proc', access: 'ro' });
  rules.push({ path: '/sys/devices/system/cpu', access: 'ro' });
  for (const dev of DEVICES) rules.push({ path: dev, access: 'dev' });
  for (const root of p.allowedRoots) rules.push({ path: resolve(root), access: 'rx' });
  rules.push({ path: p.workspace, access: 'rw' });
  rules.push({ path: p.tmp, access: 'rw' });
  return rules;
}

/** Configuration mistakes in sandbox.allowedRoots, one message each. */
export function checkAllowedRoots(roots: readonly string[]): string[] {
  const problems: string[] = [];
  for (const root of roots) {
    if (!isAbsolute(root)) problems.push(`sandbox.allowedRoots: '${root}' is not an absolute path`);
    else if (resolve(root) === '/') problems.push("sandbox.allowedRoots: '/' would allow everything");
  }
  return problems;
}
