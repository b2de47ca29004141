// Whether a person is at the other end of stdin. `process.stdin.isTTY` answers the same, but its first
// read creates the stream: for a pipe, a file or /dev/null (a service, cron, `pinclaw agent -m` from a
// script) that loads and builds Node's fs or net streams, for a one-shot turn that never reads stdin
// (6.8 ms of a CPU profile of `pinclaw agent -m hi`, about 2 ms of its wall time on x64). isatty(0)
// asks the descriptor.
import { isatty } from 'node:tty';

export function stdinIsTerminal(): boolean {
  return isatty(0);
}
