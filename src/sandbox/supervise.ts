// A child process started by Node, supervised the way the Landlock backend's native thread does
// it: its own process group (detached), output streamed back up to keepBytes per stream, and
// SIGKILL to the whole group at the timeout or on abort (after a SIGTERM and run.graceMs when
// asked). Used by the bubblewrap and none backends.
import { spawn } from 'node:child_process';
import { descendants } from './proc-table.js';
import type { BackendExit, PreparedRun } from './types.js';

export type Supervised = Omit<BackendExit, 'enforcement'>;

/**
 * Where a SIGTERM goes: the process group (backend none), or every process below the leader
 * (bubblewrap: the leader is bwrap, which would die of it and SIGKILL the sandbox at once).
 */
export type TermTarget = 'group' | 'descendants';

export function superviseSpawn(file: string, argv: string[], run: PreparedRun, term: TermTarget = 'group'): Promise<Supervised> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { cwd: run.cwd, env: run.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let exited = false;
    let timedOut = false;
    let cancelled = false;
    let dropped = 0;
    const forwarded = { stdout: 0, stderr: 0 };
    const killGroup = (): void => {
      if (exited || child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is already gone
      }
    };
    const terminate = (): void => {
      if (exited || child.pid === undefined) return;
      const targets = term === 'group' ? [-child.pid] : descendants(child.pid);
      for (const pid of targets) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // gone meanwhile
        }
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, run.timeoutMs);
    let grace: ReturnType<typeof setTimeout> | undefined;
    const onAbort = (): void => {
      if (!timedOut) cancelled = true;
      if (!run.graceMs) {
        killGroup();
        return;
      }
      terminate();
      grace = setTimeout(killGroup, run.graceMs);
    };
    const done = (): void => {
      clearTimeout(timer);
      clearTimeout(grace);
      run.signal?.removeEventListener('abort', onAbort);
    };
    if (run.signal?.aborted) onAbort();
    else run.signal?.addEventListener('abort', onAbort, { once: true });
    for (const stream of ['stdout', 'stderr'] as const) {
      child[stream].on('data', (chunk: Buffer) => {
        const room = Math.max(0, run.keepBytes - forwarded[stream]);
        const keep = chunk.length <= room ? chunk : chunk.subarray(0, room);
        dropped += chunk.length - keep.length;
        forwarded[stream] += keep.length;
        if (keep.length) run.onOutput(stream, keep);
      });
    }
    child.on('exit', () => {
      // Background processes the command left behind go with it, as in the Landlock backend. The
      // leader is reaped by now, but a group id is not reissued while any member is alive.
      killGroup();
      exited = true;
    });
    child.on('error', (err) => {
      done();
      reject(new Error(`sandbox: cannot start ${file}: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      done();
      resolve({ exitCode: code, signal, timedOut, cancelled, dropped });
    });
  });
}
