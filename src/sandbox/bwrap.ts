// The bubblewrap backend: the same path policy as bind mounts in fresh namespaces (user, pid, ipc,
// uts, cgroup, and net unless the network is allowed), rlimits through prlimit inside the sandbox
// (so RLIMIT_NPROC counts in bwrap's user namespace, not across the whole uid), and the timeout as
// SIGKILL to bwrap's process group: bwrap is pid 1's parent, --die-with-parent takes pid 1 down,
// and the kernel then kills everything in the pid namespace, however deep or detached.
import { lstatSync, readlinkSync } from 'node:fs';
import { DEVICES, SYSTEM_ROOTS } from './policy.js';
import { superviseSpawn } from './supervise.js';
import type { BackendExit, Enforcement, PreparedRun } from './types.js';

export interface BwrapTools {
  bwrap: string;
  version: string;
  /** util-linux prlimit, found on the host; it runs inside the sandbox from the read-only /usr */
  prlimit: string | null;
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** bwrap's arguments for one run, up to and including the command. */
export function bwrapArgs(run: PreparedRun, tools: BwrapTools): string[] {
  const args = ['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--hostname', 'pinclaw-sandbox'];
  if (run.network) args.push('--share-net');
  const systemRoots = new Set<string>(SYSTEM_ROOTS);
  const devices = new Set<string>(DEVICES);
  for (const rule of run.rules) {
    if (rule.path === '/proc') args.push('--proc', '/proc');
    else if (devices.has(rule.path)) continue; // --dev below brings its own minimal /dev
    else if (rule.access === 'rw') args.push('--bind', rule.path, rule.path);
    // /bin -> usr/bin stays a symlink, so paths look the same inside as outside.
    else if (systemRoots.has(rule.path) && isSymlink(rule.path)) args.push('--symlink', readlinkSync(rule.path), rule.path);
    else args.push('--ro-bind-try', rule.path, rule.path);
  }
  args.push('--dev', '/dev', '--chdir', run.cwd, '--');
  if (tools.prlimit) {
    const l = run.limits;
    args.push(tools.prlimit, `--cpu=${l.cpuSeconds}:${l.cpuSeconds + 1}`, `--as=${l.memoryBytes}`, `--nproc=${l.maxProcesses}`, `--fsize=${l.fileSizeBytes}`, '--core=0', '--');
  }
  args.push('/bin/sh', '-c', run.command);
  return args;
}

function describe(run: PreparedRun, tools: BwrapTools): Enforcement {
  const l = run.limits;
  const root = process.getuid?.() === 0;
  const processLimit = run.cgroupProcs
    ? `${l.maxProcesses} (pids cgroup)`
    : !tools.prlimit
      ? 'not enforced: prlimit not found'
      : root
        ? 'not enforced: the kernel does not apply RLIMIT_NPROC to uid 0, and no writable pids cgroup'
        : `${l.maxProcesses} (RLIMIT_NPROC in bwrap's user namespace)`;
  const binds = run.rules.filter((r) => r.access !== 'dev' && r.path !== '/proc');
  return {
    backend: 'bubblewrap',
    network: run.network ? 'allowed' : 'denied',
    processLimit,
    summary: [
      `bubblewrap ${tools.version}: new user, pid, ipc, uts and cgroup namespaces, ${run.network ? 'host network' : 'empty network namespace'}`,
      `filesystem: ${binds.filter((r) => r.access === 'rw').length} read-write and ${binds.filter((r) => r.access !== 'rw').length} read-only binds (missing ones skipped), private /proc and /dev`,
      tools.prlimit ? `rlimits (prlimit): cpu ${l.cpuSeconds} s, address space ${l.memoryBytes} B, file size ${l.fileSizeBytes} B, no core dumps` : 'rlimits: none (prlimit not found)',
      `processes: ${processLimit}`,
      'capabilities: all dropped; no_new_privs; own session; pid namespace torn down with the command',
    ],
    detail: { bwrap: tools.bwrap, version: tools.version, args: bwrapArgs(run, tools).slice(0, -1) },
  };
}

export async function runBwrap(tools: BwrapTools, run: PreparedRun): Promise<BackendExit> {
  const args = bwrapArgs(run, tools);
  // With a pids cgroup, a shell moves itself into it and execs bwrap, so bwrap and everything it
  // starts are counted from their first fork.
  const exit = run.cgroupProcs
    ? await superviseSpawn('/bin/sh', ['-c', 'echo 0 > "$0" && exec "$@"', run.cgroupProcs, tools.bwrap, ...args], run, 'descendants')
    : await superviseSpawn(tools.bwrap, args, run, 'descendants');
  return { ...exit, enforcement: describe(run, tools) };
}

