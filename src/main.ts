// Process entry for the bundle and the single executable.
import { writeSync } from 'node:fs';
import { main } from './cli/index.js';
import { enableRegexFallback } from './regex-engine.js';
import { growDuringStart } from './v8-flags.js';
import { pinclawVersion } from './version.js';

const argv = process.argv.slice(2);

// Before any pattern is compiled: no regular expression, ours or a model's, may backtrack without bound.
enableRegexFallback();

// `pinclaw --version`, which scripts and `pinclaw update` ask most, is written straight to the
// descriptor: the first use of process.stdout makes the stdio streams, and that loads node:stream,
// a fifth of the executable's start (bench:startup, 2026-11-28). The same answer as cli/index.ts's.
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  try {
    writeSync(1, `pinclaw ${pinclawVersion()}\n`);
  } catch {
    // a reader that closed the pipe: its choice, as below
  }
} else {
  // Fewer scavenges while the command starts (src/v8-flags.ts).
  growDuringStart();
  // `pinclaw doctor | head` closes our stdout early; that is the reader's choice, not an error.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw err;
    });
  }
  run();
}

function run(): void {
  main(argv).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`pinclaw: ${String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
