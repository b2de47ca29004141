// The process table, read from /proc: the processes below one process (how a SIGTERM reaches the
// command inside bubblewrap; see below), who still holds a command's output (pipeHolders), and
// what a sweep of leftover MCP servers looks for.
//
// bubblewrap. bwrap's own process group holds only bwrap (the command runs in a session of its
// own inside the sandbox), and bwrap does not forward signals: a SIGTERM to bwrap would end it,
// and --die-with-parent would then SIGKILL the sandbox without the grace.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** pid and parent pid of a /proc/PID/stat line; the command name in parentheses may hold anything. */
export function parseStat(stat: string): { pid: number; state: string; ppid: number; pgrp: number; starttime: number } | null {
  const close = stat.lastIndexOf(')');
  if (close < 0) return null;
  const pid = Number.parseInt(stat, 10);
  // After the name: state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime
  // stime cutime cstime priority nice num_threads itrealvalue starttime (field 22 of proc(5)).
  const f = stat.slice(close + 2).split(' ');
  const ppid = Number(f[1]);
  const pgrp = Number(f[2]);
  const starttime = Number(f[19]);
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !Number.isInteger(pgrp) || !Number.isFinite(starttime)) return null;
  return { pid, state: f[0] ?? '?', ppid, pgrp, starttime };
}

/** Every live process's /proc/PID/stat, parsed; the ones that vanish meanwhile are skipped. */
export function processTable(): NonNullable<ReturnType<typeof parseStat>>[] {
  const out: NonNullable<ReturnType<typeof parseStat>>[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = parseStat(readFileSync(`/proc/${d}/stat`, 'utf8'));
      if (s) out.push(s);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The pids below `pid` (children, their children, ...), not `pid` itself. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const p of processTable()) {
    const list = children.get(p.ppid);
    if (list) list.push(p.pid);
    else children.set(p.ppid, [p.pid]);
  }
  const out: number[] = [];
  const unvisited = [pid];
  while (unvisited.length) {
    for (const c of children.get(unvisited.pop()!) ?? []) {
      out.push(c);
      unvisited.push(c);
    }
  }
  return out;
}

/**
 * The pipe or socket behind a process's descriptor (`pipe:[INODE]`, `socket:[INODE]`: Node gives
 * a child's stdio as one end of a socket pair), or null when it is neither or is gone.
 */
export function pipeOf(pid: number, fd: number): string | null {
  try {
    const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    return target.startsWith('pipe:[') || target.startsWith('socket:[') ? target : null;
  } catch {
    return null;
  }
}

/**
 * The processes other than this one that hold one of `pipes` open. A command's processes that
 * left its session and process group (setsid), or outlived a killed bwrap, are found this way:
 * they still hold the output pipe the command was given, and nothing else holds it.
 */
export function pipeHolders(pipes: ReadonlySet<string>): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${d}/fd`);
    } catch {
      continue; // gone meanwhile, or not ours to read
    }
    for (const fd of fds) {
      const p = pipeOf(Number(d), Number(fd));
      if (p !== null && pipes.has(p)) {
        out.push(Number(d));
        break;
      }
    }
  }
  return out;
}
