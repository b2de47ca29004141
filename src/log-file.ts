// The gateway's log file, HOME/logs/gateway.log (Paths.logFile), for a gateway that does not run under systemd (whose
// journal keeps the lines then): `pinclaw logs` reads it. Each line gets its time (journald adds
// that itself; a file has nothing else). Bounded: past maxBytes the file becomes gateway.log.1
// (replacing the one before) and a new one starts, so at most twice maxBytes stay on the card.
import { closeSync, fstatSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { errorMessage } from './errors.js';

export const LOG_FILE_MAX_BYTES = 1 << 20;

/** A sink for log lines that appends them to `file`; a write that fails stops the file, once said on stderr. */
export function logFileSink(file: string, maxBytes = LOG_FILE_MAX_BYTES, now = () => new Date()): (line: string) => void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  let fd: number | undefined = openSync(file, 'a', 0o600);
  let size = fstatSync(fd).size;
  return (line) => {
    if (fd === undefined) return;
    const text = Buffer.from(`${now().toISOString()} ${line}\n`);
    try {
      if (size > 0 && size + text.length > maxBytes) {
        closeSync(fd);
        fd = undefined;
        renameSync(file, `${file}.1`);
        fd = openSync(file, 'a', 0o600);
        size = 0;
      }
      writeSync(fd, text);
      size += text.length;
    } catch (err) {
      // The log must never stop the gateway (a full disk): stderr still has every line.
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
      process.stderr.write(`warn: cannot write ${file} any more (${errorMessage(err)}); logging to stderr only\n`);
    }
  };
}
