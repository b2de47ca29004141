// Who holds a 'processing' row: "pid:start-time". The start time (from /proc) tells a live owner
// from a new process that happens to reuse its pid.
import { readFileSync } from 'node:fs';

function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

export function selfOwner(): string {
  return `${process.pid}:${startTime(process.pid) ?? Date.now()}`;
}

export function ownerAlive(owner: string): boolean {
  const [pidText, started] = owner.split(':');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const now = startTime(pid);
  if (now !== null) return now === started;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
