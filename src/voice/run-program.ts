// Runs one external program of the voice pipeline (ffmpeg, a speech-to-text or text-to-speech
// command) through the shared runner (src/run-program.ts): a failure names the program, the exit and
// the end of what it printed on stderr, since that is where such programs say what is wrong.
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

export async function runProgram(o: ProgramRun): Promise<string> {
  const [cmd, ...args] = o.argv;
  if (!cmd) throw new ProgramError(`${o.what} is empty`, 'missing');
  // The shared runner is the lazy chunk 'program' (also the images chunk's).
  const runner = await import('../run-program.js');
  try {
    const { stdout } = await runner.runProgram({ command: cmd, args, stdin: o.stdin ?? '', timeoutMs: o.timeoutMs, maxStdout: MAX_STDOUT, overflow: 'drop', stderrFrom: 'end', signal: o.signal });
    return stdout.toString('utf8');
  } catch (err) {
    if (!(err instanceof runner.ProgramRunError)) throw err;
    const f = err.failure;
    const tail = err.stderr.trim().slice(-STDERR_TAIL);
    switch (f.kind) {
      case 'missing': throw new ProgramError(`${o.what}: the program ${cmd} is not installed (or not on PATH)`, 'missing');
      case 'spawn': throw new ProgramError(`${o.what}: ${cmd} could not run: ${f.message}`, 'failed');
      case 'timeout': throw new ProgramError(`${o.what}: ${cmd} took longer than ${Math.round(o.timeoutMs / 1000)} s and was stopped`, 'timeout');
      case 'aborted': throw new ProgramError(`${o.what}: ${cmd} was stopped`, 'failed');
      case 'too-large': throw new ProgramError(`${o.what}: ${cmd} wrote too much`, 'failed');
      case 'exit': throw new ProgramError(`${o.what}: ${cmd} failed (${f.code === null ? `signal ${f.signal}` : `exit ${f.code}`})${tail ? `: ${tail}` : ''}`, 'failed');
    }
  }
}

/** The argv with each placeholder ({wav}, {text}) replaced wherever it occurs in an argument. */
export function fillArgv(argv: readonly string[], values: Readonly<Record<string, string>>): string[] {
  return argv.map((a) => fillPlaceholders(a, values));
}
