#!/usr/bin/env node
// Dev-tree launcher: runs the bundle built by `npm run build` (npm start builds it first).
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');
const bundle = join(__dirname, '..', 'dist', 'pinclaw.cjs');
if (!existsSync(bundle)) {
  process.stderr.write(`pinclaw: ${bundle} is missing; run 'npm run build' first\n`);
  process.exit(1);
}
// pinclaw runs on Node 24 (better-sqlite3 13 needs Node-API 10, which Node 20 lacks). On an older
// Node, once Node 24 has been fetched (npm start, npm test and npm run build:sea do), the launcher
// runs itself again on it (scripts/dev-node.mjs); before that, what needs no database still works.
if (Number(process.versions.napi) < 10) {
  import(pathToFileURL(join(__dirname, '..', 'scripts', 'dev-node.mjs')).href).then((dev) => {
    const node = dev.cachedDevNode();
    if (node && node !== process.execPath) dev.runOn(node, [__filename, ...process.argv.slice(2)]);
    else require(bundle);
  });
} else {
  require(bundle);
}
