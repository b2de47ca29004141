// Who holds a database open, read from /proc: what a restore must not pull a database from under.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The other processes that hold the database (or its -wal) open, found through /proc/PID/fd: a
 * gateway, a `pinclaw agent`, anything. Read from the kernel rather than from the database, which
 * would have to be opened (creating its -shm) to ask. Empty where /proc cannot tell (not Linux, or
 * another user's processes): then nothing is known to be running.
 */
export function processesUsing(database: string): { pid: number; command: string }[] {
  const targets = new Set([database, `${database}-wal`]);
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d) && Number(d) !== process.pid);
  } catch {
    return [];
  }
  const found: { pid: number; command: string }[] = [];
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or not ours to look at
    }
    const holds = fds.some((fd) => {
      try {
        return targets.has(readlinkSync(`/proc/${pid}/fd/${fd}`));
      } catch {
        return false;
      }
    });
    if (!holds) continue;
    let command = '';
    try {
      command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    } catch {
      // exited meanwhile
    }
    found.push({ pid: Number(pid), command });
  }
  return found;
}
