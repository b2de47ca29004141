// ffmpeg as a child process: the one image codec pinclaw uses (Debian's package, `apt-get install
// ffmpeg`), for scaling photos to a provider's limits and for V4L2 snapshots. No npm image library:
// sharp alone is ~30 MB of native code per architecture, and ffmpeg reads every camera format too.
import { spawn } from 'node:child_process';

export interface FfmpegRun {
  /** what ffmpeg wrote to stdout (the encoded image) */
  stdout: Buffer;
}

/** ffmpeg failed: `reason` is its own last words, `missing` that it is not installed. */
export class FfmpegError extends Error {
  constructor(message: string, readonly reason: string, readonly missing = false) {
    super(message);
    this.name = 'FfmpegError';
  }
}

/** The last meaningful line of ffmpeg's stderr (with -loglevel error it is the reason). */
export function lastLine(stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.at(-1) ?? '';
}

export const FFMPEG_MISSING = 'ffmpeg is not installed; install it with: sudo apt-get install ffmpeg';

/**
 * Runs `command args`, its stdout collected up to maxBytes (more is an error, not a cut image).
 * Killed at timeoutMs; `signal` stops it too.
 */
export function runImageCommand(command: string, args: readonly string[], o: { timeoutMs: number; maxBytes: number; signal?: AbortSignal; what: string }): Promise<FfmpegRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let failure: FfmpegError | undefined;
    const stop = (e: FfmpegError) => {
      failure ??= e;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop(new FfmpegError(`${o.what}: ${command} gave no image within ${o.timeoutMs} ms`, 'timeout')), o.timeoutMs);
    const onAbort = () => stop(new FfmpegError(`${o.what}: stopped`, 'aborted'));
    o.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (b: Buffer) => {
      size += b.length;
      if (size > o.maxBytes) return stop(new FfmpegError(`${o.what}: ${command} wrote more than ${o.maxBytes} bytes`, 'too large'));
      out.push(b);
    });
    // Only the tail matters (the reason); a chatty ffmpeg must not grow this without bound.
    child.stderr.on('data', (b: Buffer) => (stderr = (stderr + b.toString('utf8')).slice(-4096)));
    child.on('error', (err: NodeJS.ErrnoException) => {
      const missing = err.code === 'ENOENT';
      failure ??= new FfmpegError(missing ? `${o.what}: ${command === 'ffmpeg' ? FFMPEG_MISSING : `${command} is not installed`}` : `${o.what}: ${command} could not start (${err.message})`, err.message, missing);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      if (failure) return reject(failure);
      if (code !== 0) {
        const cause = lastLine(stderr) || `exit ${code}`;
        return reject(new FfmpegError(`${o.what}: ${cause}`, cause));
      }
      resolve({ stdout: Buffer.concat(out) });
    });
  });
}
