#!/usr/bin/env node
// Dev-tree launcher: runs the bundle built by `npm run build` (npm start builds it first).
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const bundle = join(__dirname, '..', 'dist', 'pinclaw.cjs');
if (!existsSync(bundle)) {
  process.stderr.write(`pinclaw: ${bundle} is missing; run 'npm run build' first\n`);
  process.exit(1);
}
require(bundle);
