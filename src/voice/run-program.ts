// Runs one external program of the voice pipeline (ffmpeg, a speech-to-text or text-to-speech
// command) as an argv, never through a shell: the owner's text and file paths are arguments, not
// shell words. Its output is captured up to a bound; a failure names the program, the exit and the
// end of what it printed on stderr, since that is where such programs say what is wrong.
import { spawn } from 'node:child_process';
import { fillPlaceholders } from '../placeholders.js';

export class ProgramError extends Error {
  constructor(message: string, readonly kind: 'missing' | 'failed' | 'timeout') {
    super(message);
    this.name = 'ProgramError';
  }
}

export interface ProgramRun {
  argv: readonly string[];
  /** written to its stdin, which is then closed; without it stdin is empty */
  stdin?: string;
  timeoutMs: number;
  /** what the program is, for the messages: "the speech-to-text command (voice.stt.command)" */
  what: string;
  signal?: AbortSignal;
}

/** Bounds what is kept of stdout (a transcript) and of stderr (the tail shown in an error). */
const MAX_STDOUT = 1024 * 1024;
const STDERR_TAIL = 600;

export function runProgram(o: ProgramRun): Promise<string> {
  const [cmd, ...args] = o.argv;
  if (!cmd) return Promise.reject(new ProgramError(`${o.what} is empty`, 'missing'));
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], signal: o.signal });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, o.timeoutMs);
    child.stdout.on('data', (c: Buffer) => {
      if (outBytes < MAX_STDOUT) out.push(c);
      outBytes += c.length;
    });
    child.stderr.on('data', (c: Buffer) => {
      err = (err + c.toString('utf8')).slice(-STDERR_TAIL * 2);
    });
    // A program that takes its text as an argument may exit without reading stdin: not an error.
    child.stdin.on('error', () => {});
    child.stdin.end(o.stdin ?? '');
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (e.code === 'ENOENT') reject(new ProgramError(`${o.what}: the program ${cmd} is not installed (or not on PATH)`, 'missing'));
      else reject(new ProgramError(`${o.what}: ${cmd} could not run: ${e.message}`, 'failed'));
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      const tail = err.trim().slice(-STDERR_TAIL);
      if (timedOut) return reject(new ProgramError(`${o.what}: ${cmd} took longer than ${Math.round(o.timeoutMs / 1000)} s and was stopped`, 'timeout'));
      if (code !== 0) return reject(new ProgramError(`${o.what}: ${cmd} failed (${code === null ? `signal ${sig}` : `exit ${code}`})${tail ? `: ${tail}` : ''}`, 'failed'));
      resolve(Buffer.concat(out).toString('utf8').slice(0, MAX_STDOUT));
    });
  });
}

/** The argv with each placeholder ({wav}, {text}) replaced wherever it occurs in an argument. */
export function fillArgv(argv: readonly string[], values: Readonly<Record<string, string>>): string[] {
  return argv.map((a) => fillPlaceholders(a, values));
}
