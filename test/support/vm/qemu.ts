// Runs one QEMU guest to completion and reads its serial console: the boot, the begin/end markers
// /init prints around the caller's script, the kernel log after it. QEMU is always killed on
// timeout, and every failure names what happened with the tail of the console.
import { spawn } from 'node:child_process';
import { MARK } from './init-script.js';

export interface ConsoleResult {
  exitCode: number;
  output: string;
  kernelLog: string;
  console: string;
  bootMs: number;
  scriptMs: number;
}

const TAIL_LINES = 40;
/** After the end marker, how long the guest may take to power off before it counts as hung. */
const POWER_OFF_GRACE_MS = 30_000;

function tail(text: string): string {
  return text.split('\n').slice(-TAIL_LINES).join('\n');
}

/** The lines between two marker lines, or null if the first marker is not there yet. */
function between(console: string, nonce: string, from: string, to: RegExp): { body: string; end: RegExpMatchArray | null } | null {
  const start = console.indexOf(`${MARK}:${nonce}:${from}\n`);
  if (start < 0) return null;
  const rest = console.slice(start + `${MARK}:${nonce}:${from}\n`.length);
  // Not anchored to a line start: the script's last line may lack its newline.
  const end = new RegExp(`${MARK}:${nonce}:${to.source}\\n`).exec(rest);
  return { body: end ? rest.slice(0, end.index) : rest, end };
}

export function runQemu(opts: { cmd: string; args: string[]; nonce: string; timeoutMs: number; label: string }): Promise<ConsoleResult> {
  const { nonce } = opts;
  return new Promise((resolve, reject) => {
    const started = Date.now();
    // The guest's tty turns "\n" into "\r\n"; keep plain lines.
    let text = '';
    let stderr = '';
    let beganAt = 0;
    let endedAt = 0;
    let settled = false;
    const child = spawn(opts.cmd, opts.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    // Decoded as a stream, so a UTF-8 character split across two reads stays whole.
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    const fail = (why: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      child.kill('SIGKILL');
      const qemuErr = stderr.trim() ? `\n--- ${opts.cmd} stderr ---\n${tail(stderr.trim())}` : '';
      reject(new Error(`${opts.label}: ${why}\n--- last ${TAIL_LINES} console lines ---\n${tail(text)}${qemuErr}`));
    };
    const timer = setTimeout(() => fail(`timed out after ${opts.timeoutMs} ms${beganAt ? ' (the script was running)' : ' (before the script started)'}; killed QEMU`), opts.timeoutMs);
    let grace: NodeJS.Timeout | undefined;

    child.stdout.on('data', (chunk: string) => {
      text += chunk.replace(/\r/g, '');
      if (!beganAt && text.includes(`${MARK}:${nonce}:begin\n`)) beganAt = Date.now();
      const initError = new RegExp(`${MARK}:${nonce}:init-error:(.*)\\n`).exec(text);
      if (initError) fail(`/init failed: ${initError[1]}`);
      if (text.includes(`${MARK}:${nonce}:poweroff-failed`)) fail('the guest did not power off');
      if (!endedAt && new RegExp(`${MARK}:${nonce}:end:\\d+\\n`).test(text)) {
        endedAt = Date.now();
        grace = setTimeout(() => fail(`the guest did not power off within ${POWER_OFF_GRACE_MS} ms of the script's end`), POWER_OFF_GRACE_MS);
      }
    });
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', (error) => fail(`could not start ${opts.cmd}: ${error.message}`));
    child.on('close', (code, signal) => {
      if (settled) return;
      const script = between(text, nonce, 'begin', /end:(\d+)/);
      if (!script?.end) {
        fail(`QEMU exited (${signal ?? `code ${code}`}) before the script ${script ? 'finished' : 'started'}`);
        return;
      }
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      const log = between(text, nonce, 'kernel-log', /kernel-log-end/);
      resolve({
        exitCode: Number(script.end[1]),
        output: script.body,
        kernelLog: log?.body ?? '',
        console: text,
        bootMs: beganAt - started,
        scriptMs: endedAt - beganAt,
      });
    });
  });
}
