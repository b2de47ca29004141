// Runs one external program as an argv, never through a shell (the owner's text and file paths are
// arguments, not shell words): ffmpeg for pictures (src/images/) and audio (src/voice/), a camera's
// rpicam-still, a speech-to-text or text-to-speech command. Its stdout is collected up to a bound,
// its stderr kept where the program says what is wrong; a timeout or the caller's signal kills it.
// The failure is data (ProgramRunError.failure): each caller words it for the owner. Its own lazy
// chunk 'program' (scripts/build.mjs), shared by the chunks 'voice' and 'images'.
import { spawn } from 'node:child_process';

export type ProgramFailure =
  | { kind: 'missing' }
  | { kind: 'spawn'; message: string }
  | { kind: 'timeout' }
  | { kind: 'aborted' }
  | { kind: 'too-large' }
  | { kind: 'exit'; code: number | null; signal: NodeJS.Signals | null };

export class ProgramRunError extends Error {
  constructor(readonly failure: ProgramFailure, readonly command: string, readonly stderr: string) {
    super(`${command}: ${failure.kind}`);
    this.name = 'ProgramRunError';
  }
}

export interface ProgramOptions {
  command: string;
  args: readonly string[];
  /** written to its stdin, which is then closed; undefined: no stdin at all */
  stdin?: string;
  timeoutMs: number;
  /** stdout kept up to this many bytes */
  maxStdout: number;
  /** past maxStdout: 'fail' (an image cut short is no image) or 'drop' the rest (a transcript) */
  overflow: 'fail' | 'drop';
  /** which part of a long stderr is kept: the 'start' (ffmpeg's cause) or the 'end' (a program's last words) */
  stderrFrom: 'start' | 'end';
  signal?: AbortSignal;
}

/** How much of stderr is kept: enough for any cause, bounded against a chatty program. */
const STDERR_KEEP = 8192;

export function runProgram(o: ProgramOptions): Promise<{ stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    if (o.signal?.aborted) return reject(new ProgramRunError({ kind: 'aborted' }, o.command, ''));
    const child = spawn(o.command, o.args, { stdio: [o.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let failure: ProgramFailure | undefined;
    let settled = false;
    const stop = (f: ProgramFailure) => {
      failure ??= f;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop({ kind: 'timeout' }), o.timeoutMs);
    const onAbort = () => stop({ kind: 'aborted' });
    o.signal?.addEventListener('abort', onAbort, { once: true });
    const settle = (f: ProgramFailure | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      if (f) reject(new ProgramRunError(f, o.command, stderr));
      else resolve({ stdout: Buffer.concat(out), stderr });
    };
    child.stdout!.on('data', (b: Buffer) => {
      if (size >= o.maxStdout) return;
      size += b.length;
      if (size > o.maxStdout) {
        if (o.overflow === 'fail') return stop({ kind: 'too-large' });
        out.push(b.subarray(0, b.length - (size - o.maxStdout)));
        size = o.maxStdout;
        return;
      }
      out.push(b);
    });
    child.stderr!.on('data', (b: Buffer) => {
      if (o.stderrFrom === 'start') {
        if (stderr.length < STDERR_KEEP) stderr += b.toString('utf8');
      } else {
        stderr = (stderr + b.toString('utf8')).slice(-STDERR_KEEP);
      }
    });
    if (child.stdin) {
      // A program that takes its text as an argument may exit without reading stdin: not an error.
      child.stdin.on('error', () => {});
      child.stdin.end(o.stdin ?? '');
    }
    child.on('error', (err: NodeJS.ErrnoException) => {
      settle(failure ?? (err.code === 'ENOENT' ? { kind: 'missing' } : { kind: 'spawn', message: err.message }));
    });
    child.on('close', (code, sig) => {
      settle(failure ?? (code === 0 ? undefined : { kind: 'exit', code, signal: sig }));
    });
  });
}
