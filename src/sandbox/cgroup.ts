// A pids cgroup per command, when pinclaw may create one (root, or a systemd unit with
// Delegate=yes). It is the only process limit that holds for root: the kernel never applies
// RLIMIT_NPROC to uid 0, user namespace or not. Without one, the backends fall back to
// RLIMIT_NPROC, which holds for every other uid (counted in the sandbox's own user namespace).
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage } from '../errors.js';
import { log } from '../log.js';

export interface PidsHierarchy {
  version: 1 | 2;
  /** the directory under which per-command cgroups are made (…/pinclaw-sandbox) */
  dir: string;
}

export interface RunCgroup {
  dir: string;
  procs: string;
  /**
   * Hands the cgroup back after the command. Its processes were killed, but may take a moment to
   * leave; an empty one is kept for the next command, a busy one removed in the background.
   */
  release(): void;
}

const PARENT = 'pinclaw-sandbox';

/** mountinfo escapes blanks and backslashes as octal. */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

interface Mount {
  root: string;
  point: string;
  fstype: string;
  superOptions: string[];
}

function mounts(): Mount[] {
  const out: Mount[] = [];
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const dash = line.indexOf(' - ');
    if (dash < 0) continue;
    const pre = line.slice(0, dash).split(' ');
    const post = line.slice(dash + 3).split(' ');
    out.push({ root: unescape(pre[3] ?? ''), point: unescape(pre[4] ?? ''), fstype: post[0] ?? '', superOptions: (post[2] ?? '').split(',') });
  }
  return out;
}

function under(mount: Mount, path: string): string | null {
  if (mount.root === '/') return join(mount.point, path);
  if (path === mount.root || path.startsWith(`${mount.root}/`)) return join(mount.point, path.slice(mount.root.length));
  return null;
}

function tryWrite(file: string, text: string): boolean {
  try {
    writeFileSync(file, text);
    return true;
  } catch {
    return false;
  }
}

function hasPids(file: string): boolean {
  try {
    return readFileSync(file, 'utf8').split(/\s+/).includes('pids');
  } catch {
    return false;
  }
}

/** Makes `dir` (no processes of its own) able to give its children a pids.max (cgroup v2). */
function prepareV2(own: string): string | null {
  if (!hasPids(join(own, 'cgroup.subtree_control'))) {
    // Fails with EBUSY when pinclaw's own cgroup holds processes and is not the root: v2 allows
    // controllers for children only in cgroups without processes of their own.
    if (!tryWrite(join(own, 'cgroup.subtree_control'), '+pids')) return null;
  }
  const dir = join(own, PARENT);
  mkdirSync(dir, { recursive: true });
  if (!hasPids(join(dir, 'cgroup.subtree_control')) && !tryWrite(join(dir, 'cgroup.subtree_control'), '+pids')) return null;
  return dir;
}

function detect(): PidsHierarchy | null {
  let lines: string[];
  let all: Mount[];
  try {
    lines = readFileSync('/proc/self/cgroup', 'utf8').split('\n').filter(Boolean);
    all = mounts();
  } catch {
    return null;
  }
  const v2 = lines.find((l) => l.startsWith('0::'));
  const v2Mount = all.find((m) => m.fstype === 'cgroup2');
  if (v2 && v2Mount) {
    const own = under(v2Mount, v2.slice(3));
    if (own && hasPids(join(own, 'cgroup.controllers'))) {
      try {
        const dir = prepareV2(own);
        if (dir) return { version: 2, dir };
      } catch {
        // not writable: try v1
      }
    }
  }
  const v1 = lines.map((l) => l.split(':')).find((f) => f.length >= 3 && f[1]!.split(',').includes('pids'));
  const v1Mount = all.find((m) => m.fstype === 'cgroup' && m.superOptions.includes('pids'));
  if (v1 && v1Mount) {
    const own = under(v1Mount, v1.slice(2).join(':'));
    if (own) {
      try {
        const dir = join(own, PARENT);
        mkdirSync(dir, { recursive: true });
        return { version: 1, dir };
      } catch {
        return null;
      }
    }
  }
  return null;
}

let cached: PidsHierarchy | null | undefined;

/** Where per-command pids cgroups can be made, or null. Probed once; leftovers are cleared then. */
export function pidsHierarchy(): PidsHierarchy | null {
  if (cached !== undefined) return cached;
  cached = detect();
  if (cached) {
    for (const name of readdirSync(cached.dir)) {
      // run-<pid>-<n>: only those of pinclaw processes that are gone; a live one may be reusing its own.
      const owner = /^run-(\d+)-\d+$/.exec(name)?.[1];
      if (!owner || existsSync(`/proc/${owner}`)) continue;
      try {
        rmdirSync(join(cached.dir, name));
      } catch {
        // still in use by a command of another pinclaw; its owner removes it
      }
    }
  }
  return cached;
}

let counter = 0;
const KEEP = 4;
const idle: string[] = [];

function readNumber(file: string): number {
  try {
    return Number(readFileSync(file, 'utf8').trim());
  } catch {
    return NaN;
  }
}

function isEmpty(dir: string): boolean {
  return readNumber(join(dir, 'pids.current')) === 0 && readFileSync(join(dir, 'cgroup.procs'), 'utf8').trim() === '';
}

async function removeWhenEmpty(dir: string): Promise<void> {
  // Killed processes leave their cgroup as they finish exiting, a moment after the kill.
  for (let i = 0; i < 100 && existsSync(dir); i++) {
    try {
      rmdirSync(dir);
      return;
    } catch {
      await sleep(i < 10 ? 2 : 20);
    }
  }
  if (existsSync(dir)) log.warn(`sandbox: cgroup ${dir} still busy; left for the next start to remove`);
}

function handle(dir: string): RunCgroup {
  return {
    dir,
    procs: join(dir, 'cgroup.procs'),
    release() {
      try {
        if (idle.length < KEEP && isEmpty(dir)) {
          idle.push(dir);
          return;
        }
      } catch {
        // not reusable
      }
      void removeWhenEmpty(dir);
    },
  };
}

export function createRunCgroup(maxProcesses: number): RunCgroup | null {
  const h = pidsHierarchy();
  if (!h) return null;
  while (idle.length) {
    const dir = idle.pop()!;
    try {
      writeFileSync(join(dir, 'pids.max'), String(maxProcesses));
      return handle(dir);
    } catch {
      rmdirSafe(dir); // removed by someone else meanwhile: make a new one
    }
  }
  const dir = join(h.dir, `run-${process.pid}-${++counter}`);
  try {
    mkdirSync(dir);
    if (counter === 1) process.once('exit', () => idle.splice(0).forEach((d) => rmdirSafe(d)));
    writeFileSync(join(dir, 'pids.max'), String(maxProcesses));
  } catch (err) {
    log.once('sandbox-cgroup', 'warn', `sandbox: cannot make a pids cgroup under ${h.dir} (${errorMessage(err)}); process limits fall back to RLIMIT_NPROC`);
    rmdirSafe(dir);
    return null;
  }
  return handle(dir);
}

function rmdirSafe(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // busy or never made: the next start's sweep removes it
  }
}
