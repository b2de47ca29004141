// ffmpeg as a child process: the one image codec pinclaw uses (Debian's package, `apt-get install
// ffmpeg`), for scaling photos to a provider's limits and for V4L2 snapshots. No npm image library:
// sharp alone is ~30 MB of native code per architecture, and ffmpeg reads every camera format too.
import { spawn } from 'node:child_process';

export interface FfmpegRun {
  /** what ffmpeg wrote to stdout (the encoded image) */
  stdout: Buffer;
}

/**
 * The command failed: `reason` is the line of its stderr that says why, `stderr` the tail of it
 * (what a camera's explain() reads), `missing` that the command is not installed.
 */
export class FfmpegError extends Error {
  constructor(message: string, readonly reason: string, readonly missing = false, readonly stderr = reason) {
    super(message);
    this.name = 'FfmpegError';
  }
}

/**
 * The line of ffmpeg's stderr that says why: with -loglevel error the first is the cause ("No JPEG
 * data found in image", "/dev/video9: No such file or directory"), the later ones its consequences
 * ("Error marking filters as finished"). The "[mjpeg @ 0x55...]" prefix says nothing to the owner.
 */
export function causeLine(stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.replace(/^\[[^\]]* @ 0x[0-9a-f]+\]\s*/, '').trim()).filter(Boolean);
  return lines[0] ?? '';
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
    // The start holds the cause; a chatty command must not grow this without bound.
    child.stderr.on('data', (b: Buffer) => {
      if (stderr.length < 8192) stderr += b.toString('utf8');
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      const missing = err.code === 'ENOENT';
      failure ??= new FfmpegError(missing ? `${o.what}: ${command === 'ffmpeg' ? FFMPEG_MISSING : `${command} is not installed`}` : `${o.what}: ${command} could not start (${err.message})`, err.message, missing);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      if (failure) return reject(failure);
      if (code !== 0) {
        const cause = causeLine(stderr) || `exit ${code}`;
        return reject(new FfmpegError(`${o.what}: ${cause}`, cause, false, stderr));
      }
      resolve({ stdout: Buffer.concat(out) });
    });
  });
}
