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
// only live holders. One caveat of fcntl locks: closing any descriptor of the file drops the
// process's lock, so nothing else in the process may open gateway.lock (nothing does).
import Database from 'better-sqlite3';
import { readFileSync, statSync, type Stats } from 'node:fs';
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

/** Another pid holding a POSIX lock on the file, by its device and inode in /proc/locks. */
function holderPid(file: string): number | undefined {
  try {
    const st = statSync(file);
    return lockHolders(readFileSync('/proc/locks', 'utf8'), st.dev, st.ino, 'POSIX').find((pid) => pid !== process.pid);
  } catch {
    return undefined;
  }
}

/**
 * Whether the lock just taken is on the file the path names now: a restore that fails removes the
 * lock file it created (under the lock), and a process that opened it just before then locks a file
 * nobody else will ever open. Where /proc/locks cannot be read, nothing removes a lock file that is
 * in use, so the lock is taken as good.
 */
function lockedAtPath(file: string): boolean {
  let st: Stats;
  try {
    st = statSync(file);
  } catch {
    return false; // removed meanwhile
  }
  let locks: string;
  try {
    locks = readFileSync('/proc/locks', 'utf8');
  } catch {
    return true;
  }
  return lockHolders(locks, st.dev, st.ino, 'POSIX').includes(process.pid);
}

function commandOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ') || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock on `file` (created empty if missing) without waiting, or says who holds it. Throws
 * a PinclawError naming the file when it cannot be opened or locked for another reason.
 */
export function tryLockHome(file: string): LockAttempt {
  // The holder may end between our failed attempt and the look in /proc/locks: then try again.
  for (let attempt = 0; attempt < 3; attempt++) {
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
      const pid = holderPid(file);
      if (pid !== undefined) return { busy: { pid, command: commandOf(pid) } };
      continue;
    }
    if (!lockedAtPath(file)) {
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
