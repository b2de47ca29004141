// Process entry for the bundle and the single executable.
import { main } from './cli/index.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`pinclaw: ${String(err)}\n`);
    process.exitCode = 1;
  },
);
