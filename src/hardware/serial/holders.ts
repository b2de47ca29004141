// Who holds a busy serial port. The serialport addon takes flock(LOCK_EX) on every port it opens, and
// /proc/locks names the pid of each flock by device and inode, which also works for other users'
// processes; a port opened exclusively (TIOCEXCL) or by a program that does not lock shows up only as
// an open descriptor, so /proc/*/fd is scanned next (only our own user's processes are readable
// unless we are root).
import { readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { lockHolders } from '../../proc-locks.js';

export { lockHolders };

export interface PortHolder {
  pid: number;
  /** The program's name, /proc/<pid>/comm as a rule (see commOf); null when it could not be read (the process ended meanwhile). */
  comm: string | null;
  /** 'lock': it holds the flock; 'open': it has the device open. */
  via: 'lock' | 'open';
}

/**
 * The name /proc/<pid>/comm gives a process is its main thread's name, and Node >= 24 names its main
 * thread "MainThread": every Node program holding a port, pinclaw's executable too, would be called
 * that. For those the program is named from its executable (readable for our own processes, or as
 * root), else from its argv[0].
 */
const THREAD_NAMES = new Set(['MainThread']);

function commOf(proc: string, pid: number): string | null {
  let comm: string | null;
  try {
    comm = readFileSync(join(proc, String(pid), 'comm'), 'utf8').trim() || null;
  } catch {
    return null;
  }
  if (comm === null || !THREAD_NAMES.has(comm)) return comm;
  try {
    return basename(readlinkSync(join(proc, String(pid), 'exe')).replace(/ \(deleted\)$/, '')) || comm;
  } catch {
    // not ours to read: argv[0], which anyone may read
  }
  try {
    return basename(readFileSync(join(proc, String(pid), 'cmdline'), 'utf8').split('\0')[0] ?? '') || comm;
  } catch {
    return comm;
  }
}

/** pids with a descriptor whose link is `file`; unreadable processes are skipped. */
function openHolders(proc: string, file: string): number[] {
  const out: number[] = [];
  let pids: string[];
  try {
    pids = readdirSync(proc).filter((n) => /^\d+$/.test(n));
  } catch {
    return out;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(join(proc, pid, 'fd'));
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(join(proc, pid, 'fd', fd)) === file) {
          out.push(Number(pid));
          break;
        }
      } catch {
        // the descriptor closed while we looked
      }
    }
  }
  return out;
}

export interface FindHoldersOptions {
  proc?: string;
}

/** The processes holding a port, lock holders first; empty when none can be seen. */
export function findHolders(path: string, options: FindHoldersOptions = {}): PortHolder[] {
  const proc = options.proc ?? '/proc';
  let file: string;
  let dev: number;
  let ino: number;
  try {
    file = realpathSync(path);
    const st = statSync(file);
    dev = st.dev;
    ino = st.ino;
  } catch {
    return [];
  }
  let locks: number[] = [];
  try {
    locks = lockHolders(readFileSync(join(proc, 'locks'), 'utf8'), dev, ino);
  } catch {
    locks = [];
  }
  if (locks.length) return locks.map((pid) => ({ pid, comm: commOf(proc, pid), via: 'lock' as const }));
  return openHolders(proc, file).map((pid) => ({ pid, comm: commOf(proc, pid), via: 'open' as const }));
}
