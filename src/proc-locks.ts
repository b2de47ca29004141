// Who holds a lock on a file, as the kernel says in /proc/locks. Used for a busy serial port (the
// serialport addon takes flock) and for the gateway's home lock (SQLite takes POSIX fcntl locks).
// The kernel drops a lock when its process dies, so a pid read here is a live holder, never a
// stale file's claim.

/** Linux's dev_t split, as glibc's major()/minor() do it (st_dev may exceed 32 bits). */
function majorOf(dev: number): number {
  const d = BigInt(dev);
  return Number(((d & 0xfff00n) >> 8n) | ((d & 0xfffff00000000000n) >> 32n));
}
function minorOf(dev: number): number {
  const d = BigInt(dev);
  return Number((d & 0xffn) | ((d & 0xffffff00000n) >> 12n));
}

export type LockKind = 'FLOCK' | 'POSIX';

/**
 * pids with a lock of that kind on the file: lines like "1: FLOCK  ADVISORY  WRITE 4242 00:19:3 0 EOF"
 * or "3: POSIX  ADVISORY  WRITE 4242 fe:00:2377004 1073741824 1073742335", the device printed as hex
 * major:minor. Lines with "->" are processes waiting for a lock, not holding it.
 */
export function lockHolders(locksText: string, dev: number, ino: number, kind: LockKind = 'FLOCK'): number[] {
  const out: number[] = [];
  const line = new RegExp(`^\\d+:\\s+${kind}\\s+\\S+\\s+\\S+\\s+(-?\\d+)\\s+([0-9a-f]+):([0-9a-f]+):(\\d+)\\s`, 'i');
  for (const text of locksText.split('\n')) {
    if (text.includes('->')) continue;
    const m = line.exec(text);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid <= 0) continue;
    if (parseInt(m[2]!, 16) === majorOf(dev) && parseInt(m[3]!, 16) === minorOf(dev) && Number(m[4]) === ino) out.push(pid);
  }
  return [...new Set(out)];
}
