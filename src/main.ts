// Process entry for the bundle and the single executable.
import { main } from './cli/index.js';
import { enableRegexFallback } from './regex-engine.js';

// Before any pattern is compiled: no regular expression, ours or a model's, may backtrack without bound.
enableRegexFallback();

// `pinclaw doctor | head` closes our stdout early; that is the reader's choice, not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`pinclaw: ${String(err)}\n`);
    process.exitCode = 1;
  },
);
