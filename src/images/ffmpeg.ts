// ffmpeg as a child process: the one image codec pinclaw uses (Debian's package, `apt-get install
// ffmpeg`), for scaling photos to a provider's limits and for V4L2 snapshots. No npm image library:
// sharp alone is ~30 MB of native code per architecture, and ffmpeg reads every camera format too.

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
 * Runs `command args` (through the shared runner, src/run-program.ts), its stdout collected up to
 * maxBytes (more is an error, not a cut image). Killed at timeoutMs; `signal` stops it too.
 */
export async function runImageCommand(command: string, args: readonly string[], o: { timeoutMs: number; maxBytes: number; signal?: AbortSignal; what: string }): Promise<FfmpegRun> {
  // The lazy chunk 'program', shared with the voice chunk.
  const runner = await import('../run-program.js');
  try {
    const { stdout } = await runner.runProgram({ command, args, timeoutMs: o.timeoutMs, maxStdout: o.maxBytes, overflow: 'fail', stderrFrom: 'start', signal: o.signal });
    return { stdout };
  } catch (err) {
    if (!(err instanceof runner.ProgramRunError)) throw err;
    const f = err.failure;
    switch (f.kind) {
      case 'missing': throw new FfmpegError(`${o.what}: ${command === 'ffmpeg' ? FFMPEG_MISSING : `${command} is not installed`}`, `spawn ${command} ENOENT`, true);
      case 'spawn': throw new FfmpegError(`${o.what}: ${command} could not start (${f.message})`, f.message);
      case 'timeout': throw new FfmpegError(`${o.what}: ${command} gave no image within ${o.timeoutMs} ms`, 'timeout');
      case 'aborted': throw new FfmpegError(`${o.what}: stopped`, 'aborted');
      case 'too-large': throw new FfmpegError(`${o.what}: ${command} wrote more than ${o.maxBytes} bytes`, 'too large');
      case 'exit': {
        const cause = causeLine(err.stderr) || `exit ${f.code ?? f.signal}`;
        throw new FfmpegError(`${o.what}: ${cause}`, cause, false, err.stderr);
      }
    }
  }
}
