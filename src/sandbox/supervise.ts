// A child process started by Node, supervised the way the Landlock backend's native thread does
// it: its own process group (detached), output streamed back up to keepBytes per stream, and
// SIGKILL to the whole group at the timeout or on abort (after a SIGTERM and run.graceMs when
// asked). Used by the bubblewrap and none backends.
import { spawn } from 'node:child_process';
import { descendants, pipeHolders, pipeOf } from './proc-table.js';
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
    let closed = false;
    // The output pipes as the leader holds them, to find who still holds them after it is gone.
    const pipes = new Set(child.pid === undefined ? [] : [pipeOf(child.pid, 1), pipeOf(child.pid, 2)].filter((p): p is string => p !== null));
    let sweep: ReturnType<typeof setTimeout> | undefined;
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
    // A process that left the command's session (setsid) escapes the group kill, and one that
    // outlived a bwrap killed before --die-with-parent took hold escapes it too; either keeps the
    // output pipe open, so 'close' would wait for it, for as long as it lives (a CI run once
    // waited 300 s). Whatever still holds the pipe after the leader is gone is killed, again
    // until the pipe closes.
    const killPipeHolders = (): void => {
      if (closed) return;
      for (const pid of pipeHolders(pipes)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
      sweep = setTimeout(killPipeHolders, 500);
    };
    const done = (): void => {
      closed = true;
      clearTimeout(timer);
      clearTimeout(grace);
      clearTimeout(sweep);
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
      // Give the pipe a moment to drain and close by itself before looking for holders.
      if (!closed && pipes.size) sweep = setTimeout(killPipeHolders, 100);
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
