// `pinclaw logs [-f] [-n LINES]`: the gateway's log. When the systemd unit of this home is installed
// (pinclaw service install: its Environment= names this PINCLAW_HOME), the journal has the lines and
// journalctl shows them; otherwise the gateway wrote HOME/logs/gateway.log (src/log-file.ts), read
// here, with gateway.log.1 before it when the last lines span a rotation. -f follows the file as
// `tail -F` does, across rotations, until Ctrl-C. In the bundle: the lazy chunk 'ops-cli'.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { EXIT, PinclawError, UsageError } from '../errors.js';
import { onPath, unitDir } from '../ops/systemd.js';
import { UNIT_NAME, unitWord } from '../ops/service-unit.js';
import type { ServiceMode } from '../ops/service-unit.js';
import { parseCommandArgs } from './args.js';
import { logsOptions } from './options.js';
import type { CliContext } from './context.js';

const USAGE = 'pinclaw logs [-f] [-n LINES]';
const DEFAULT_LINES = 50;
const FOLLOW_POLL_MS = 250;

/** The mode of the installed unit that runs a gateway on `home`, if any. */
export function serviceFor(home: string, env: NodeJS.ProcessEnv): ServiceMode | undefined {
  for (const mode of ['user', 'system'] as const) {
    const file = join(unitDir(mode, env), UNIT_NAME);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    // The line the unit was rendered with for this home (src/ops/service-unit.ts quotes it as needed).
    if (text.split('\n').includes(`Environment=${unitWord(`PINCLAW_HOME=${home}`)}`)) return mode;
  }
  return undefined;
}

/** Where a follow starts: the file (by inode) and the byte after what was already printed. */
interface FollowFrom {
  ino: number;
  pos: number;
}

/**
 * The last `n` lines of the log, from the file and from the rotated one before it when needed, and
 * where a follow goes on from. The lines and the position come from one read of one open file: a
 * position taken by a second look would skip whatever the gateway appended between the two (a line
 * lost to `logs -f`). A last line without its newline yet is among the lines only when not
 * `following`: a follow starts before it and prints it whole once it ends.
 */
export function lastLines(file: string, n: number, following = false): { lines: string[]; from: FollowFrom } {
  const older = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter((l) => l !== '') : []);
  let text = '';
  let partial = '';
  let from: FollowFrom = { ino: -1, pos: 0 };
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
  } catch {
    // no file yet: the follow waits for it
  }
  if (fd !== undefined) {
    try {
      const bytes = readFileSync(fd);
      const end = bytes.lastIndexOf(0x0a) + 1;
      text = bytes.subarray(0, end).toString('utf8');
      partial = bytes.subarray(end).toString('utf8');
      from = { ino: fstatSync(fd).ino, pos: end };
    } finally {
      closeSync(fd);
    }
  }
  const current = text.split('\n').filter((l) => l !== '');
  if (partial && !following) current.push(partial);
  const lines = current.length >= n ? current : [...older(`${file}.1`), ...current];
  return { lines: lines.slice(-n), from };
}

/** Prints what is appended to `file` from byte `from` on, across rotations, until the process is stopped. */
function follow(file: string, from: FollowFrom, out: (line: string) => void): Promise<number> {
  let { pos, ino } = from;
  let partial = '';
  const readNew = () => {
    let st;
    try {
      st = statSync(file);
    } catch {
      return; // between the rotation's rename and the new file: the next look finds it
    }
    if (st.ino !== ino || st.size < pos) {
      // Rotated (a new file) or truncated: read the new one from its start.
      ino = st.ino;
      pos = 0;
      partial = '';
    }
    if (st.size === pos) return;
    const fd = openSync(file, 'r');
    try {
      const buf = Buffer.alloc(st.size - pos);
      const got = readSync(fd, buf, 0, buf.length, pos);
      pos += got;
      const text = partial + buf.subarray(0, got).toString('utf8');
      const parts = text.split('\n');
      partial = parts.pop() ?? '';
      for (const l of parts) out(l);
    } finally {
      closeSync(fd);
    }
  };
  return new Promise((resolve) => {
    const timer = setInterval(readNew, FOLLOW_POLL_MS);
    const stop = () => {
      clearInterval(timer);
      resolve(EXIT.ok);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

export async function runLogs(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, logsOptions, USAGE);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${USAGE}`);
  let n = DEFAULT_LINES;
  if (values.lines !== undefined) {
    if (!/^\d+$/.test(values.lines) || Number(values.lines) < 1) throw new UsageError(`-n: expected a number of lines (1 or more), got '${values.lines}'\nusage: ${USAGE}`);
    n = Number(values.lines);
  }
  const followOn = values.follow === true;

  const mode = serviceFor(ctx.paths.home, ctx.env);
  if (mode) {
    if (!onPath('journalctl', ctx.env)) throw new PinclawError(`the gateway runs as the systemd ${mode} service ${UNIT_NAME}, whose log is in the journal, but journalctl is not on PATH`);
    const jargs = [...(mode === 'user' ? ['--user'] : []), '-u', UNIT_NAME, '-n', String(n), '--no-pager', ...(followOn ? ['-f'] : [])];
    ctx.err(`(the journal of the ${mode} service: journalctl ${jargs.join(' ')})`);
    const child = spawn('journalctl', jargs, { stdio: 'inherit', env: ctx.env });
    return new Promise((resolve) => {
      child.on('error', (err) => {
        ctx.err(`pinclaw: journalctl: ${err.message}`);
        resolve(EXIT.failure);
      });
      child.on('exit', (code, signal) => resolve(signal === 'SIGINT' ? EXIT.ok : (code ?? EXIT.failure) === 0 ? EXIT.ok : EXIT.failure));
      // Ctrl-C reaches journalctl too (same process group); this process waits for it to end.
      process.on('SIGINT', () => undefined);
    });
  }

  const file = ctx.paths.logFile;
  if (!existsSync(file) && !followOn) {
    throw new PinclawError(`no gateway log at ${file}: no gateway has run in this home outside systemd yet (pinclaw gateway writes it; under pinclaw service install the journal has the lines)`);
  }
  const { lines, from } = lastLines(file, n, followOn);
  for (const line of lines) ctx.out(line);
  if (!followOn) return EXIT.ok;
  if (from.ino < 0) ctx.err(`(waiting for ${file}: no gateway has written it yet)`);
  return follow(file, from, ctx.out);
}
