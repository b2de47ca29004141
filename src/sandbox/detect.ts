// What this host offers for sandboxing, probed once: the Landlock ABI (through the addon), whether
// bubblewrap is installed and actually works here (containers and some distributions forbid the
// namespaces it needs), whether user namespaces are allowed, and a pids cgroup. Then the choice of
// backend from sandbox.backend.
import { execFile } from 'node:child_process';
import { accessSync, constants, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { addonStatus } from '../native/loader.js';
import type { BwrapTools } from './bwrap.js';
import { pidsHierarchy, type PidsHierarchy } from './cgroup.js';
import { sandboxAddon } from './native.js';
import type { BackendName, BackendSetting } from './types.js';

// Made on first use: reading execFile here would load node:child_process (and node:dgram with it,
// ~13 ms of a gateway's start) in every process that only asks Landlock (scripts/build.mjs LAZY_BUILTINS).
let promisified: ((file: string, args: readonly string[], o: { timeout: number }) => Promise<{ stdout: string; stderr: string }>) | undefined;
const run = (file: string, args: readonly string[], o: { timeout: number }) => (promisified ??= promisify(execFile))(file, args, o);

export interface BwrapStatus extends BwrapTools {
  usable: boolean;
  reason?: string;
}

export interface SandboxSupport {
  /** abi 0: no Landlock; reason says why (kernel, boot parameter, or no addon) */
  landlock: { abi: number; reason?: string };
  /** null: bwrap is not installed */
  bubblewrap: BwrapStatus | null;
  userNamespaces: { available: boolean; reason?: string };
  pidsCgroup: PidsHierarchy | null;
}

const SEARCH = ['/usr/local/bin', '/usr/bin', '/bin', '/usr/local/sbin', '/usr/sbin', '/sbin'];

export function findExecutable(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const dirs = [...(env.PATH ?? '').split(':').filter((d) => d.startsWith('/')), ...SEARCH];
  for (const dir of dirs) {
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

function sysctl(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

function userNamespaces(): SandboxSupport['userNamespaces'] {
  if (sysctl('/proc/sys/user/max_user_namespaces') === '0') return { available: false, reason: 'user.max_user_namespaces is 0' };
  const root = process.getuid?.() === 0;
  if (!root && sysctl('/proc/sys/kernel/unprivileged_userns_clone') === '0') return { available: false, reason: 'kernel.unprivileged_userns_clone is 0' };
  if (!root && sysctl('/proc/sys/kernel/apparmor_restrict_unprivileged_userns') === '1') {
    return { available: false, reason: 'AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1)' };
  }
  return { available: true };
}

function landlock(): SandboxSupport['landlock'] {
  const addon = sandboxAddon();
  if (!addon) {
    const status = addonStatus('pinclaw');
    return { abi: 0, reason: status.loaded ? 'the native addon has no sandbox (rebuild it)' : `no native addon: ${status.error}` };
  }
  return addon.landlockAbi();
}

/** Runs bwrap once the way the backend does, so "usable" means it works on this host. */
async function bubblewrap(): Promise<BwrapStatus | null> {
  const bwrap = findExecutable('bwrap');
  if (!bwrap) return null;
  const prlimit = findExecutable('prlimit');
  let version = 'unknown';
  try {
    version = (await run(bwrap, ['--version'], { timeout: 10_000 })).stdout.trim().replace(/^bubblewrap\s+/, '');
  } catch {
    // an old bwrap without --version still works
  }
  const probe = ['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--ro-bind', '/usr', '/usr', '--proc', '/proc', '--dev', '/dev'];
  for (const link of ['/bin', '/lib', '/lib64']) {
    try {
      const target = readlinkSync(link);
      probe.push('--symlink', target, link);
    } catch {
      probe.push('--ro-bind-try', link, link);
    }
  }
  try {
    await run(bwrap, [...probe, '--', '/bin/true'], { timeout: 10_000 });
    return { bwrap, version, prlimit, usable: true };
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    return { bwrap, version, prlimit, usable: false, reason: stderr || (err as Error).message };
  }
}

let cached: Promise<SandboxSupport> | undefined;

export function detectSandbox(refresh = false): Promise<SandboxSupport> {
  if (!cached || refresh) {
    cached = (async () => ({ landlock: landlock(), bubblewrap: await bubblewrap(), userNamespaces: userNamespaces(), pidsCgroup: pidsHierarchy() }))();
  }
  return cached;
}

/** Whether exec would run inside an OS sandbox here, and if not why: the standard profile offers exec only then. */
export type ExecSandbox = { inForce: true; backend: 'landlock' | 'bubblewrap' } | { inForce: false; reason: string };

/**
 * The standard profile's condition for exec. Landlock is asked first (a synchronous call into the
 * addon, already loaded by every process that runs tools), so bubblewrap is probed (two process
 * spawns) only on hosts without it.
 */
export async function execSandbox(setting: BackendSetting): Promise<ExecSandbox> {
  if (setting === 'none') return { inForce: false, reason: 'sandbox.backend is none: commands would run unconfined' };
  if (setting !== 'bubblewrap' && landlock().abi >= 1) return { inForce: true, backend: 'landlock' };
  const choice = chooseBackend(setting, await detectSandbox());
  if ('error' in choice) return { inForce: false, reason: choice.error };
  return choice.backend === 'none' ? { inForce: false, reason: 'sandbox.backend is none' } : { inForce: true, backend: choice.backend };
}

export type Choice = { backend: 'landlock' } | { backend: 'bubblewrap'; tools: BwrapTools } | { backend: 'none' } | { error: string };

/** The backend sandbox.backend asks for, if this host has it; auto never chooses none. */
export function chooseBackend(setting: BackendSetting, s: SandboxSupport): Choice {
  const bwrapOk = s.bubblewrap?.usable ? s.bubblewrap : null;
  const noLandlock = `Landlock unavailable: ${s.landlock.reason ?? 'unknown'}`;
  const noBwrap = s.bubblewrap ? `bubblewrap does not work here: ${s.bubblewrap.reason}` : 'bubblewrap is not installed (apt-get install bubblewrap)';
  switch (setting) {
    case 'none':
      return { backend: 'none' };
    case 'landlock':
      return s.landlock.abi >= 1 ? { backend: 'landlock' } : { error: `sandbox.backend is landlock, but ${noLandlock}` };
    case 'bubblewrap':
      return bwrapOk ? { backend: 'bubblewrap', tools: bwrapOk } : { error: `sandbox.backend is bubblewrap, but ${noBwrap}` };
    case 'auto':
      if (s.landlock.abi >= 1) return { backend: 'landlock' };
      if (bwrapOk) return { backend: 'bubblewrap', tools: bwrapOk };
      return { error: `no sandbox available (${noLandlock}; ${noBwrap}); exec is refused unless sandbox.backend is set to none` };
  }
}
