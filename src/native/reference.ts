// Pure-TypeScript counterparts of the addon's functions: the fallback when it cannot load, and the
// yardstick the tests hold it to.
import { spawnSync } from 'node:child_process';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Node cannot send AF_UNIX datagrams itself, so the reference hands the state to systemd-notify. */
export function notify(socketPath: string, state: string): boolean {
  if (!socketPath) return false;
  const lines = state.split('\n').filter(Boolean);
  const r = spawnSync('systemd-notify', ['--no-block', ...lines], { env: { ...process.env, NOTIFY_SOCKET: socketPath }, stdio: 'ignore' });
  if (r.error) throw new Error(`notify: systemd-notify: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`notify: systemd-notify exited with ${r.status}`);
  return true;
}

/** JavaScript cannot reach the C allocator: without the addon, idle memory stays with the process. */
export function trimMemory(): boolean {
  return false;
}

/** Nor can it set the allocator's options. */
export function limitMallocArenas(): boolean {
  return false;
}

/** Nor its thresholds. */
export function fixMallocThresholds(): boolean {
  return false;
}

/** JavaScript cannot call madvise either: the pages stay mapped until the kernel reclaims them. */
export function trimFilePages(): null {
  return null;
}

let collector: (() => void) | null | undefined;

/**
 * A full garbage collection, which is all JavaScript can ask of V8. V8 offers no API for it without
 * --expose-gc; setting the flag now gives a new context its gc function (the documented way to
 * reach it from a running process).
 */
export function reduceHeap(): void {
  if (collector === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      collector = runInNewContext('gc') as () => void;
    } catch {
      collector = null;
    }
  }
  collector?.();
}
