// Whether a person is at the other end of stdin. `process.stdin.isTTY` answers the same, but its first
// read creates the stream: for a pipe, a file or /dev/null (a service, cron, `pinclaw agent -m` from a
// script) that loads and builds Node's fs or net streams, about 6 ms of a one-shot turn that never
// reads stdin (a CPU profile of `pinclaw agent -m hi`). isatty(0) asks the descriptor.
import { isatty } from 'node:tty';

export function stdinIsTerminal(): boolean {
  return isatty(0);
}
