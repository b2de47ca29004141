// The Node the dev tree runs on: the one pinclaw ships (Node 24 LTS, npm's node-linux-<arch>, the
// binary scripts/build-sea.mjs builds the single executable from), so that the tests and `npm start`
// run on what users run, whatever Node ran npm install. better-sqlite3 13 needs Node-API 10, which
// Node 20 lacks; i2c-bus (nan, tied to one Node ABI) gets a build for this Node in node_modules.
//   node scripts/dev-node.mjs SCRIPT [ARGS...]   runs SCRIPT on that Node and exits as it does
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_VERSION, buildI2c, fetchNode } from './build-sea.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The binary, if it has been fetched (by build:sea, npm test or npm start); nothing is downloaded. */
export function cachedDevNode(arch = process.arch) {
  const node = join(root, 'dist', '.cache', `node-v${NODE_VERSION}-linux-${arch}`, 'bin', 'node');
  return existsSync(node) ? node : null;
}

/**
 * i2c-bus's JavaScript finds its addon through `bindings` in node_modules/i2c-bus/build/Release (in
 * the dev tree it runs as it is; only the bundle routes it through src/native/loader.ts), and npm
 * install built that one for the Node that ran npm. It is replaced by the build for the dev Node:
 * build-sea's staging build for this arch, the very file the executable embeds.
 */
function installI2c(built) {
  const pkg = createRequire(join(root, 'package.json')).resolve('i2c-bus/package.json');
  const dest = join(dirname(pkg), 'build', 'Release', 'i2c.node');
  const bytes = readFileSync(built);
  if (existsSync(dest) && readFileSync(dest).equals(bytes)) return;
  mkdirSync(dirname(dest), { recursive: true });
  // A new inode: a process that has the old file loaded keeps its mapping intact.
  writeFileSync(`${dest}.tmp`, bytes, { mode: 0o755 });
  renameSync(`${dest}.tmp`, dest);
}

/**
 * Fetches the Node once (dist/.cache/, npm checks the tarball's integrity) and puts an i2c-bus built
 * for it in place. A failed i2c-bus build is reported, not fatal: only the I2C reference/fallback
 * needs it (doctor shows it as not loaded).
 */
export function devNode({ log = (m) => console.error(`dev-node: ${m}`) } = {}) {
  const arch = process.arch;
  const dir = fetchNode(arch);
  try {
    installI2c(buildI2c(arch, dir));
  } catch (err) {
    log(`i2c-bus could not be built for Node ${NODE_VERSION}: ${err.message ?? err}`);
  }
  const node = join(dir, 'bin', 'node');
  // Asked of the binary itself, which also shows it runs here.
  return { node, version: execFileSync(node, ['--version'], { encoding: 'utf8' }).trim() };
}

/**
 * Runs `args` on `node` and exits as the child did. Ctrl-C in a terminal reaches the child directly
 * (same foreground process group), so SIGINT and SIGHUP are not passed on: a second SIGINT would
 * cut the gateway's graceful drain short. SIGTERM, which is sent to one process, is passed on.
 */
export function runOn(node, args) {
  const child = spawn(node, args, { stdio: 'inherit' });
  const ignore = () => {};
  const forward = (sig) => child.kill(sig);
  process.on('SIGINT', ignore);
  process.on('SIGHUP', ignore);
  process.on('SIGTERM', forward);
  child.on('error', (err) => {
    console.error(`dev-node: cannot run ${node}: ${err.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0));
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (!args.length) {
    console.error('usage: node scripts/dev-node.mjs SCRIPT [ARGS...]');
    process.exit(2);
  }
  let node;
  try {
    node = devNode().node;
  } catch (err) {
    console.error(`dev-node: ${err.message ?? err}`);
    process.exit(1);
  }
  runOn(node, args);
}
