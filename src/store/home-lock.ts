// One gateway per home: the gateway (and a restore) holds a lock on HOME/gateway.lock for its whole
// life, so a second one refuses to start instead of polling Telegram twice, claiming the same GPIO
// lines and writing the same queue.
//
// Why a SQLite lock, not a file holding a pid: Node has no flock(), but SQLite's unix VFS takes POSIX
// fcntl() locks, and those belong to the kernel: they vanish when the holding process dies however it
// dies (SIGKILL, OOM kill, power cut), so a stale lock cannot exist, and a new process that reuses the
// old pid holds nothing. A pid file (even with the start time from /proc/PID/stat) stays behind after
// SIGKILL, and taking over a stale one is a read-check-replace race two starting gateways can both
// win. fcntl locks are not inherited by children either, so a command the agent left running does
// not keep the home locked. Who holds the lock is read from the kernel too (/proc/locks), which names
// only live holders; it names them, SQLite's answer decides (a container may see another pid
// namespace's /proc, where our own pid is not what /proc/locks shows). One caveat of fcntl locks: closing any descriptor of the file drops the
// process's lock, so nothing else in the process may open gateway.lock (nothing does).
import Database from 'better-sqlite3';
import { readdirSync, readFileSync, readlinkSync, statSync, type Stats } from 'node:fs';
import { errorMessage, PinclawError } from '../errors.js';
import { loadAddon } from '../native/loader.js';
import { lockHolders } from '../proc-locks.js';

export interface HomeLock {
  file: string;
  /** Drops the lock (the process's end drops it as well). The file stays: unlinking a lock file races with a process that has just opened it. */
  release(): void;
}

export interface LockHolder {
  /** undefined when the kernel does not show it (another pid namespace, no /proc) */
  pid?: number;
  /** its command line, when it can be read */
  command?: string;
}

export type LockAttempt = { held: HomeLock } | { busy: LockHolder };

// A connection the garbage collector finalizes is closed, and its lock with it: the held ones are
// kept reachable here until released.
const held = new Set<Database.Database>();

/**
 * Another pid holding a POSIX lock on the file, by its device and inode in /proc/locks: only to name
 * the holder in the refusal (SQLite's answer, busy or not, is what decides). In another pid
 * namespace's /proc the number is that namespace's.
 */
function holderPid(file: string, procRoot: string): number | undefined {
  if (!procRoot) return undefined;
  try {
    const st = statSync(file);
    return lockHolders(readFileSync(`${procRoot}/locks`, 'utf8'), st.dev, st.ino, 'POSIX').find((pid) => pid !== process.pid);
  } catch {
    return undefined;
  }
}

/** A file's identity, or undefined when the path names nothing now. */
function identity(file: string): { dev: number; ino: number } | undefined {
  try {
    const st: Stats = statSync(file);
    return { dev: st.dev, ino: st.ino };
  } catch {
    return undefined;
  }
}

/**
 * Whether /proc belongs to this process's pid namespace, so that /proc/locks names it by
 * process.pid. In a container that sees another namespace's /proc (or none), /proc/self is another
 * number or missing, and our own lock is listed under a pid we do not know, or not at all.
 */
function procIsOurs(procRoot: string): boolean {
  try {
    return readlinkSync(`${procRoot}/self`) === String(process.pid);
  } catch {
    return false;
  }
}

/**
 * Whether the lock just taken is on the file the path names now: a restore that fails removes the
 * lock file it created (under the lock), and a process that opened it just before then locks a file
 * nobody else will ever open. Where /proc is ours, the kernel says it exactly: this process has the
 * inode the path names now open (/proc/self/fd), and the lock SQLite just took is on the file it
 * opened, the only descriptor of gateway.lock in the process. (/proc/locks would say it as well, but
 * its read waits for the kernel's file-lock semaphore, an RCU grace period: 10 to 15 ms of every
 * gateway start here.) Elsewhere the lock itself is trusted (SQLite took it, so no other process
 * holds one), and only the name is checked: the path named the same inode before the open and after
 * the lock, and an inode removed from the path in between cannot come back.
 */
export function lockedAtPath(file: string, before: { dev: number; ino: number } | undefined, procRoot: string): boolean {
  const now = identity(file);
  if (!now) return false; // removed meanwhile
  if (procRoot && procIsOurs(procRoot)) {
    const fds = `${procRoot}/self/fd`;
    try {
      return readdirSync(fds).some((fd) => {
        try {
          const st = statSync(`${fds}/${fd}`);
          return st.dev === now.dev && st.ino === now.ino;
        } catch {
          return false; // closed meanwhile (readdir's own descriptor)
        }
      });
    } catch {
      // /proc/self/fd unreadable: judged by the name below
    }
  }
  return before !== undefined && before.dev === now.dev && before.ino === now.ino;
}

function commandOf(pid: number, procRoot: string): string | undefined {
  try {
    return readFileSync(`${procRoot}/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ') || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock on `file` (created empty if missing) without waiting, or says who holds it. Throws
 * a PinclawError naming the file when it cannot be opened or locked for another reason.
 */
export function tryLockHome(file: string, opts: { procRoot?: string } = {}): LockAttempt {
  // Where /proc is read; '' for none. An option so a test can show a /proc that is not ours.
  const procRoot = opts.procRoot ?? '/proc';
  // The holder may end between our failed attempt and the look in /proc/locks: then try again.
  for (let attempt = 0; attempt < 3; attempt++) {
    const before = identity(file);
    let db: Database.Database;
    try {
      // timeout 0: a held lock answers SQLITE_BUSY at once instead of after better-sqlite3's 5 s.
      db = new Database(file, { timeout: 0, nativeBinding: loadAddon<object>('better_sqlite3') as never });
    } catch (err) {
      throw new PinclawError(`cannot open the gateway lock ${file}: ${errorMessage(err)}; the home's owner must be able to write it`);
    }
    try {
      // No journal file beside the lock: nothing is ever written to it, only its lock is used.
      db.pragma('journal_mode = MEMORY');
      // EXCLUSIVE takes the write lock at once and keeps it while the transaction stays open: for good.
      db.exec('BEGIN EXCLUSIVE');
    } catch (err) {
      db.close();
      if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw new PinclawError(`cannot take the gateway lock ${file}: ${errorMessage(err)}`);
      const pid = holderPid(file, procRoot);
      if (pid !== undefined) return { busy: { pid, command: commandOf(pid, procRoot) } };
      continue;
    }
    if (!lockedAtPath(file, before, procRoot)) {
      db.close();
      continue;
    }
    const connection = db;
    held.add(connection);
    return {
      held: {
        file,
        release() {
          if (held.delete(connection)) connection.close();
        },
      },
    };
  }
  return { busy: {} };
}

/** "a gateway (pid 42)", "pinclaw restore (pid 42)", or "another process" when it cannot be seen. */
export function describeHolder(h: LockHolder): string {
  if (h.pid === undefined) return 'another process (its pid is not visible from here)';
  const cmd = h.command ?? '';
  if (/ gateway\b/.test(cmd)) return `a gateway (pid ${h.pid})`;
  if (/ restore\b/.test(cmd)) return `pinclaw restore (pid ${h.pid})`;
  return `another process (pid ${h.pid}${cmd ? `: ${cmd}` : ''})`;
}
