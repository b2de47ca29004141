// npm run bench:footprint [-- --turns N] [--idle-seconds S] [--rounds R] [--concurrency C] [--sessions K] [--exe PATH] [--json]
// Memory and size of the single executable, each figure against a baseline measured in the same run:
//   - an idle gateway (10 s after it listens) against a bare Node http server for RssAnon, and
//     against a trivial single executable (the same one-line server, built from the same Node the
//     way build:sea builds pinclaw) for VmRSS;
//   - a gateway's RSS after N chat turns (--turns, default 10,000) and --settle-seconds (70) quiet,
//     against its own first idle figure and against its figure after the first 100 turns (what first turns load is not growth), and
//     another gateway's after S seconds idle (--idle-seconds, default 60; the issue's hour is
//     --idle-seconds 3600), against its own first idle figure;
//   - the executable's size against a stripped copy of the Node binary it was built from, with what
//     the executable carries (its SEA blob, parsed).
// It never asserts: it prints figures, differences and whether each target is met. Memory figures
// come from /proc/<pid>/status; RssAnon is what a process allocated itself, VmRSS adds the pages of
// the executable and libraries that it touched (RssFile), which depend on the page cache: see
// "the page cache" below for how every candidate is started in the same state.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { benchRun, cachedNode, elfArch, listeningUrl, procMemory, cpuSeconds } from './support/lib.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { note, warnings, warn, fail, integer, children, tempDirs, tempDir } = benchRun('bench:footprint');
const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '10000' },
    'idle-seconds': { type: 'string', default: '60' },
    // Past the gateway's conductor.releaseAfterIdleSeconds (60 by default): what it holds once
    // quiet again, after it has freed the caches only turns use (docs/operations.md, Memory when
    // idle). Not past conductor.unloadCodeAfterIdleSeconds (900): the Anthropic SDK stays, as it
    // does between a conversation's messages.
    'settle-seconds': { type: 'string', default: '70' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '4' },
    sessions: { type: 'string', default: '100' },
    exe: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const turns = integer(values.turns, '--turns', 0);
const idleSeconds = integer(values['idle-seconds'], '--idle-seconds', 10);
const settleSeconds = integer(values['settle-seconds'], '--settle-seconds', 0);
const rounds = integer(values.rounds, '--rounds', 1);
const concurrency = integer(values.concurrency, '--concurrency', 1);
const sessions = integer(values.sessions, '--sessions', 1);
/** Turns before the growth baseline: what a gateway loads on its first turns is not growth. */
const warmupTurns = Math.min(100, Math.floor(turns / 10));
const exe = resolve(values.exe ?? join(root, 'dist', `pinclaw-linux-${process.arch}`));
const PREFERRED_NODE = 'v24.21.0';
const IDLE_MS = 10_000;
const LISTEN_TIMEOUT_MS = 60_000;
const EXIT_TIMEOUT_MS = 15_000;
const MiB = 1024 * 1024;
/** Issue 13, point 8: the differences each figure may show against its baseline, in MiB. */
const TARGETS = { idleAnon: 4, idleRss: 8, growth: 5, size: 8 };
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const STRIP_PREFIX = { x64: 'x86_64-linux-gnu-', arm64: 'aarch64-linux-gnu-' };

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mib = (kib) => (kib === null || kib === undefined ? null : kib / 1024);

// --- preflight -----------------------------------------------------------------------------------
if (!existsSync(exe)) fail(`no executable at ${relative(process.cwd(), exe) || exe}: run npm run build:sea first`);
// Memory under qemu would be the emulator's; the size figures of other architectures need no run.
if (elfArch(exe) !== process.arch) fail(`${exe} is built for ${elfArch(exe)}; the memory figures need an executable for this ${process.arch} host (benchmark it on the target machine)`);
const node = cachedNode(root, process.arch, PREFERRED_NODE);
if (!node) fail(`no Node binary under dist/.cache: run npm run build:sea first (it downloads the Node it embeds, which the baselines must be built from)`);
const nodeVersion = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();

// Ambient PINCLAW_* (a log level, a config elsewhere), a systemd NOTIFY_SOCKET, NODE_OPTIONS (which
// the executables honour too) or provider variables would make the runs measure something other
// than a default gateway.
const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PINCLAW_') && k !== 'NOTIFY_SOCKET' && k !== 'NODE_OPTIONS' && !k.startsWith('ANTHROPIC_') && !k.startsWith('OPENAI_')));
{
  const r = spawnSync(exe, ['--version'], { encoding: 'utf8', env: { ...baseEnv, PINCLAW_HOME: tempDir('pinclaw-footprint-v-') }, timeout: 30_000 });
  if (r.error || r.status !== 0) fail(`${exe} --version failed (${r.error?.message ?? `exit ${r.status}`}): ${(r.stderr ?? '').trim()}`);
  note(`executable: ${relative(process.cwd(), exe) || exe} (${r.stdout.trim()}); baselines from ${relative(process.cwd(), node)} (${nodeVersion})`);
}

// --- baselines: a stripped Node and a trivial single executable ---------------------------------
// The same one-line server runs as `node -e` and as the trivial executable: listen on an ephemeral
// port, say so on stderr (the line the gateway writes too), answer GET, exit 0 on SIGTERM.
const BARE_SERVER = `const s=require('http').createServer((q,r)=>r.end('ok'));` +
  `s.listen(0,'127.0.0.1',()=>process.stderr.write('listening on http://127.0.0.1:'+s.address().port+'\\n'));` +
  `process.on('SIGTERM',()=>s.close(()=>process.exit(0)));`;
const baselineDir = join(root, 'dist', '.bench', 'footprint');

function stripTool(arch) {
  const tool = arch === process.arch ? 'strip' : `${STRIP_PREFIX[arch] ?? ''}strip`;
  return spawnSync(tool, ['--version'], { stdio: 'ignore' }).status === 0 ? tool : null;
}

/** What a cached baseline was built from: rebuilt when any of it changes. */
function stamp(parts) {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/** A stripped copy of `nodeBin` (what build:sea does before it injects), cached; null without a strip tool. */
function strippedNode(nodeBin, arch) {
  const tool = stripTool(arch);
  if (!tool) {
    warn(`no strip tool for ${arch} (${arch === process.arch ? 'binutils' : `binutils-${STRIP_PREFIX[arch]?.slice(0, -1)}`}): its size baseline is n/a`);
    return null;
  }
  const dir = join(baselineDir, `linux-${arch}`);
  const out = join(dir, 'node-stripped');
  const st = statSync(nodeBin);
  const want = stamp({ nodeBin, size: st.size, mtimeMs: st.mtimeMs, tool });
  if (existsSync(out) && existsSync(`${out}.stamp`) && readFileSync(`${out}.stamp`, 'utf8') === want) return out;
  note(`stripping a copy of ${relative(process.cwd(), nodeBin)} (${tool} --strip-all)...`);
  mkdirSync(dir, { recursive: true });
  copyFileSync(nodeBin, `${out}.tmp`);
  chmodSync(`${out}.tmp`, 0o755);
  execFileSync(tool, ['--strip-all', `${out}.tmp`]);
  renameSync(`${out}.tmp`, out);
  writeFileSync(`${out}.stamp`, want);
  return out;
}

/** The one-line server as a single executable: the same Node, stripped and injected as build:sea does. */
async function trivialSea(stripped) {
  const dir = join(baselineDir, `linux-${process.arch}`);
  const out = join(dir, 'trivial-sea');
  const require = createRequire(join(root, 'package.json'));
  const postjectVersion = require('postject/package.json').version;
  const st = statSync(stripped);
  const want = stamp({ stripped, size: st.size, mtimeMs: st.mtimeMs, script: BARE_SERVER, postjectVersion });
  if (existsSync(out) && existsSync(`${out}.stamp`) && readFileSync(`${out}.stamp`, 'utf8') === want) return out;
  note('building the trivial single executable (the one-line server)...');
  const main = join(dir, 'trivial.cjs');
  const blob = join(dir, 'trivial.blob');
  const config = join(dir, 'trivial-sea-config.json');
  writeFileSync(main, `${BARE_SERVER}\n`);
  writeFileSync(config, JSON.stringify({ main, output: blob, disableExperimentalSEAWarning: true, useSnapshot: false, useCodeCache: false }));
  execFileSync(node, ['--experimental-sea-config', config], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  copyFileSync(stripped, `${out}.tmp`);
  chmodSync(`${out}.tmp`, 0o755);
  await require('postject').inject(`${out}.tmp`, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SEA_FUSE });
  renameSync(`${out}.tmp`, out);
  writeFileSync(`${out}.stamp`, want);
  return out;
}

const hostStripped = strippedNode(node, process.arch);
if (!hostStripped) fail('the trivial single executable needs strip (apt-get install binutils)');
const trivial = await trivialSea(hostStripped);

// --- what an executable carries --------------------------------------------------------------------
function readAt(fd, offset, length) {
  const buf = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, offset + done);
    if (n === 0) break;
    done += n;
  }
  return buf.subarray(0, done);
}

/**
 * The SEA blob of an executable: postject puts it in an ELF note named NODE_SEA_BLOB, in a segment
 * of its own. Null when the file is not a 64-bit little-endian ELF or has no such note.
 */
function seaBlob(file) {
  const fd = openSync(file, 'r');
  try {
    const eh = readAt(fd, 0, 64);
    if (eh.readUInt32BE(0) !== 0x7f454c46 || eh[4] !== 2 || eh[5] !== 1) return null;
    const phoff = Number(eh.readBigUInt64LE(0x20));
    const [phentsize, phnum] = [eh.readUInt16LE(0x36), eh.readUInt16LE(0x38)];
    const ph = readAt(fd, phoff, phentsize * phnum);
    for (let i = 0; i < phnum; i++) {
      const p = ph.subarray(i * phentsize);
      if (p.readUInt32LE(0) !== 4) continue; // PT_NOTE
      const notes = readAt(fd, Number(p.readBigUInt64LE(8)), Number(p.readBigUInt64LE(32)));
      const align4 = (n) => (n + 3) & ~3;
      for (let at = 0; at + 12 <= notes.length;) {
        const [namesz, descsz] = [notes.readUInt32LE(at), notes.readUInt32LE(at + 4)];
        const name = notes.subarray(at + 12, at + 12 + namesz).toString('latin1').replace(/\0+$/, '');
        const desc = at + 12 + align4(namesz);
        if (name === 'NODE_SEA_BLOB') return notes.subarray(desc, desc + descsz);
        at = desc + align4(descsz);
      }
    }
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * The parts of a SEA blob (Node 24's layout: magic, flags, a byte (how execArgv extends), then
 * length-prefixed strings: the main script's path, the script, the code cache when flag 4 is set,
 * the assets when flag 8 is, execArgv when flag 16 is). Node does not document the layout, so a
 * parse is accepted only when it accounts for every byte; otherwise the blob is one figure.
 */
function blobParts(blob) {
  if (blob.length < 8 || blob.readUInt32LE(0) !== 0x143da20) return null;
  const flags = blob.readUInt32LE(4);
  for (const start of [9, 8]) {
    try {
      let at = start;
      const bytes = () => {
        const n = Number(blob.readBigUInt64LE(at));
        if (at + 8 + n > blob.length) throw new RangeError('past the end');
        const v = blob.subarray(at + 8, at + 8 + n);
        at += 8 + n;
        return v;
      };
      bytes(); // the main script's path at build time
      const parts = [{ name: 'main bundle', bytes: bytes().length }];
      if (flags & 4) parts.push({ name: 'V8 code cache of the bundle', bytes: bytes().length });
      if (flags & 8) {
        const count = Number(blob.readBigUInt64LE(at));
        at += 8;
        for (let i = 0; i < count; i++) parts.push({ name: bytes().toString('utf8'), bytes: bytes().length, asset: true });
      }
      if (flags & 16) {
        const count = Number(blob.readBigUInt64LE(at));
        at += 8;
        const execArgv = Array.from({ length: count }, () => bytes().toString('utf8'));
        parts.push({ name: `execArgv ${execArgv.join(' ')}`, bytes: execArgv.reduce((n, a) => n + a.length, 0) });
      }
      if (at === blob.length) return parts;
    } catch {
      // the next candidate layout
    }
  }
  return null;
}

function sizeFigures(file, arch) {
  const nodeBin = arch === process.arch ? node : cachedNode(root, arch, PREFERRED_NODE);
  const stripped = nodeBin && (arch === process.arch ? hostStripped : strippedNode(nodeBin, arch));
  const blob = seaBlob(file);
  const parts = blob && blobParts(blob);
  const bytes = statSync(file).size;
  const group = (name) => name.split('/')[0];
  const groups = {};
  for (const p of parts ?? []) if (p.asset) (groups[group(p.name)] ??= []).push(p);
  return {
    arch, file, bytes,
    strippedNode: stripped ? statSync(stripped).size : null,
    unstrippedNode: nodeBin ? statSync(nodeBin).size : null,
    blob: blob ? blob.length : null,
    parts,
    groups: Object.fromEntries(Object.entries(groups).map(([g, ps]) => [g, { bytes: ps.reduce((n, p) => n + p.bytes, 0), items: ps.sort((a, b) => b.bytes - a.bytes) }]).sort((a, b) => b[1].bytes - a[1].bytes)),
  };
}

// --- processes -----------------------------------------------------------------------------------
function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

async function startServer(label, cmd, args, env) {
  const child = track(spawn(cmd, args, { env, stdio: ['ignore', 'ignore', 'pipe'] }));
  const out = listeningUrl(child, LISTEN_TIMEOUT_MS, label);
  try {
    const url = await out.url;
    // Keep draining stderr (a full pipe would block the server) but keep only the tail for errors.
    child.stderr.on('data', out.trim);
    return { label, child, url, stderr: out.stderr };
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
}

async function stopServer(s) {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return warn(`${s.label}: had already exited (${s.child.exitCode ?? s.child.signalCode}): ${s.stderr().trim()}`);
  const exited = new Promise((res) => s.child.once('exit', (code, signal) => res(code ?? signal)));
  s.child.kill('SIGTERM');
  const timer = setTimeout(() => {
    warn(`${s.label}: still running ${EXIT_TIMEOUT_MS} ms after SIGTERM, killed`);
    s.child.kill('SIGKILL');
  }, EXIT_TIMEOUT_MS);
  const code = await exited;
  clearTimeout(timer);
  if (code !== 0) warn(`${s.label}: exited ${code} after SIGTERM: ${s.stderr().trim().split('\n').at(-1)}`);
}


function memory(s) {
  const m = procMemory(s.child.pid);
  if (!m) throw new Error(`${s.label} is gone (${s.stderr().trim().split('\n').at(-1)})`);
  return m;
}

const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
function httpCall(url, path, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((res) => {
    const req = request(`${url}${path}`, { method, headers, agent, timeout: 60_000 }, (r) => {
      const chunks = [];
      r.on('data', (c) => chunks.push(c));
      r.on('end', () => res({ status: r.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
      r.on('error', (e) => res({ status: null, text: e.message }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => res({ status: null, text: e.message }));
    req.end(body);
  });
}

async function healthy(s) {
  const r = await httpCall(s.url, '/healthz');
  if (r.status !== 200) warn(`${s.label}: GET /healthz gave ${r.status ?? r.text}`);
}

// --- the provider stand-in and the gateways' environment ---------------------------------------
const benchOut = join(root, 'dist', '.bench');
mkdirSync(benchOut, { recursive: true });
await build({
  entryPoints: [join(root, 'bench', 'support', 'footprint-provider-main.ts')], outfile: join(benchOut, 'footprint-provider-main.mjs'),
  bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'warning',
});
const provider = track(spawn(process.execPath, [join(benchOut, 'footprint-provider-main.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] }));
const providerUrl = await new Promise((res, rej) => {
  provider.stdout.once('data', (d) => res(d.toString().trim()));
  provider.once('exit', (code) => rej(new Error(`the provider stand-in exited ${code}`)));
});

const token = randomBytes(24).toString('hex');
const gatewayEnv = (home) => ({
  ...baseEnv,
  PINCLAW_HOME: home,
  PINCLAW_GATEWAY_TOKEN: token,
  ANTHROPIC_API_KEY: 'footprint-bench',
  ANTHROPIC_BASE_URL: providerUrl,
  // Every turn comes from 127.0.0.1: the per-client limit (50/s by default) would refuse most of them.
  PINCLAW_GATEWAY_RATE_LIMIT_PER_SECOND: '1000000',
  PINCLAW_GATEWAY_RATE_LIMIT_BURST: '1000000',
});

/**
 * A home as a gateway that has run before leaves it (addons extracted, database and workspace
 * created): the steady state of a Pi, and what every figure below starts from.
 */
async function warmHome(label) {
  const home = tempDir(`pinclaw-footprint-${label}-`);
  const s = await startServer(`${label} (warm-up)`, gatewayExe, ['gateway', '--port', '0'], gatewayEnv(home));
  await healthy(s);
  await stopServer(s);
  return home;
}

// --- the page cache --------------------------------------------------------------------------------
// Which pages of a file a process has mapped (its RssFile, part of VmRSS) depends on how the page
// cache holds the file: a file just written (built, copied, an addon just extracted) sits in large
// folios on a kernel whose file system caches them (ext4 on Linux 6.16+), and a fault maps the whole
// folio. Here the same idle gateway showed 81 MiB VmRSS run from the executable build:sea had just
// written and 61 MiB once that file had been dropped from the cache and read back by the faults
// themselves (as after a reboot); reading it back in full first gave 61 MiB too. So before each
// start every executable, and the addons extracted in the gateway's home, are dropped from the
// cache. They run from private copies made for this run, so no other process keeps their pages
// mapped; the copies sit next to the originals, not in TMPDIR, which may be a tmpfs whose pages
// cannot be dropped.
const runDir = mkdtempSync(join(baselineDir, 'run-'));
tempDirs.add(runDir);
function privateCopy(file, name) {
  const copy = join(runDir, name);
  copyFileSync(file, copy);
  chmodSync(copy, 0o755);
  // Written back first: dirty pages cannot be dropped.
  const fd = openSync(copy, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return copy;
}

/** Drops the files' pages from the page cache (GNU dd's iflag=nocache: posix_fadvise DONTNEED). */
function evict(files) {
  return files.every((f) => spawnSync('dd', [`if=${f}`, 'iflag=nocache', 'count=0', 'status=none'], { stdio: 'ignore' }).status === 0);
}

/** The addons a gateway extracted into its home, written back so that they can be dropped too. */
function extractedAddons(home) {
  const dir = join(home, 'cache', 'native');
  if (!existsSync(dir)) return [];
  const files = readdirSync(dir).flatMap((h) => readdirSync(join(dir, h)).filter((f) => f.endsWith('.node')).map((f) => join(dir, h, f)));
  spawnSync('sync', files, { stdio: 'ignore' });
  return files;
}

const gatewayExe = privateCopy(exe, 'pinclaw');
const runTrivial = privateCopy(trivial, 'trivial-sea');
const canEvict = evict([gatewayExe, runTrivial]);
if (!canEvict) warn('dd iflag=nocache failed (GNU coreutils dd needed): the executables stay in the page cache as written, which may add to RssFile (see the comment above)');
/** Before a start: the executables and the home's addons out of the page cache (see above). */
function coldStart(...homes) {
  if (canEvict) evict([gatewayExe, runTrivial, ...homes.flatMap(extractedAddons)]);
}

// --- (i) idle: gateway, bare node server and trivial single executable side by side ---------------
const homes = { idle: await warmHome('rounds') };
const idleRounds = [];
note(`${rounds} idle round(s): the gateway, bare node and the trivial executable, ${IDLE_MS / 1000} s after each listens...`);
for (let round = 0; round < rounds; round++) {
  coldStart(homes.idle);
  // Started together and read together, so a busy moment of the machine touches all three.
  const servers = await Promise.all([
    startServer('gateway', gatewayExe, ['gateway', '--port', '0'], gatewayEnv(homes.idle)),
    startServer('bare node server', node, ['-e', BARE_SERVER], baseEnv),
    startServer('trivial executable', runTrivial, [], baseEnv),
  ]);
  await Promise.all(servers.map(healthy));
  await sleep(IDLE_MS);
  const [gateway, bare, sea] = servers.map(memory);
  idleRounds.push({ gateway, bare, sea });
  await Promise.all(servers.map(stopServer));
  note(`round ${round + 1}/${rounds}: gateway RssAnon ${mib(gateway.rssAnon).toFixed(1)} MiB (bare node ${mib(bare.rssAnon).toFixed(1)}), VmRSS ${mib(gateway.vmRss).toFixed(1)} MiB (trivial executable ${mib(sea.vmRss).toFixed(1)})`);
}

// --- (ii) turns and (iii) a long idle, each on a gateway of its own, at the same time --------------
homes.turns = await warmHome('turns');
homes.long = await warmHome('idle');
const chatHeaders = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

/**
 * The turns: the first `warmupTurns` load what a gateway loads on its first turns (the SDK's chunk,
 * the tokenizer, the memory and its embedder); the rest show what the turns themselves leave behind.
 */
async function turnsPhase() {
  const s = await startServer('gateway (turns)', gatewayExe, ['gateway', '--port', '0'], gatewayEnv(homes.turns));
  try {
    await healthy(s);
    await sleep(IDLE_MS);
    const first = memory(s);
    let next = 0;
    let errors = 0;
    let firstError;
    const started = Date.now();
    const step = Math.max(1, Math.round(turns / 10));
    // Sessions rotate: each sees turns/sessions turns, so histories grow as a chat's do, and
    // per-session state is created for many of them.
    const worker = async (until) => {
      while (next < until) {
        const i = next++;
        const r = await httpCall(s.url, '/api/chat', { method: 'POST', headers: chatHeaders, body: JSON.stringify({ session: `footprint-${i % sessions}`, text: 'ping' }) });
        let reply;
        try {
          reply = JSON.parse(r.text).reply;
        } catch {
          // counted below
        }
        if (r.status !== 200 || reply !== 'pong') {
          errors++;
          firstError ??= `${r.status} ${r.text.slice(0, 200)}`;
        }
        if ((i + 1) % step === 0) note(`turns: ${i + 1}/${turns} (${((i + 1) / ((Date.now() - started) / 1000)).toFixed(0)}/s), RssAnon ${mib(memory(s).rssAnon).toFixed(1)} MiB`);
      }
    };
    const settle = async () => {
      await sleep(settleSeconds * 1000);
      return memory(s);
    };
    await Promise.all(Array.from({ length: concurrency }, () => worker(warmupTurns)));
    const warm = await settle();
    const t0 = Date.now();
    const cpu0 = cpuSeconds(s.child.pid);
    await Promise.all(Array.from({ length: concurrency }, () => worker(turns)));
    const seconds = (Date.now() - t0) / 1000;
    const cpu1 = cpuSeconds(s.child.pid);
    // The gateway's CPU per turn says what a memory setting costs, where turns/s on a shared machine
    // mostly measures the machine.
    const cpuMsPerTurn = cpu0 === null || cpu1 === null || turns === warmupTurns ? null : ((cpu1 - cpu0) * 1000) / (turns - warmupTurns);
    if (errors) warn(`${errors} of ${turns} turns failed; the first: ${firstError}`);
    const right = memory(s);
    if (settleSeconds) note(`turns done; ${settleSeconds} s to settle...`);
    return { first, warm, rightAfter: right, settled: await settle(), seconds, perSecond: seconds > 0 ? (turns - warmupTurns) / seconds : null, cpuMsPerTurn, errors };
  } finally {
    await stopServer(s);
  }
}

async function idlePhase() {
  const s = await startServer('gateway (idle)', gatewayExe, ['gateway', '--port', '0'], gatewayEnv(homes.long));
  try {
    const listened = Date.now();
    await healthy(s);
    await sleep(IDLE_MS);
    const first = memory(s);
    for (;;) {
      const left = idleSeconds * 1000 - (Date.now() - listened);
      if (left <= 0) break;
      await sleep(Math.min(left, 60_000));
      if (Date.now() - listened < idleSeconds * 1000) note(`idle: ${Math.round((Date.now() - listened) / 1000)}/${idleSeconds} s, RssAnon ${mib(memory(s).rssAnon).toFixed(1)} MiB, VmRSS ${mib(memory(s).vmRss).toFixed(1)} MiB`);
    }
    return { first, last: memory(s) };
  } finally {
    await stopServer(s);
  }
}

note(`${turns} turns (${concurrency} in flight, ${sessions} sessions) on one gateway; ${idleSeconds} s idle on another...`);
coldStart(homes.turns, homes.long);
const [turnsResult, idleResult] = await Promise.all([turnsPhase(), idlePhase()]);
agent.destroy();
provider.kill('SIGTERM');

// --- (iv) size -----------------------------------------------------------------------------------
const sizes = [sizeFigures(exe, process.arch)];
// The other architecture's executable, when it was built too: its size needs no run.
for (const arch of ['x64', 'arm64']) {
  const other = join(root, 'dist', `pinclaw-linux-${arch}`);
  if (arch !== process.arch && existsSync(other) && elfArch(other) === arch) sizes.push(sizeFigures(other, arch));
}

// --- report --------------------------------------------------------------------------------------
const sorted = (xs) => [...xs].sort((a, b) => a - b);
const median = (xs) => {
  const s = sorted(xs);
  return s.length % 2 ? s[s.length >> 1] : (s[(s.length >> 1) - 1] + s[s.length >> 1]) / 2;
};
const spread = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs), all: xs });
const figures = [];
function figure(name, values, baselineName, baselines, target) {
  const diffs = values.map((v, i) => v - baselines[i]);
  const f = { name, value: spread(values), baselineName, baseline: spread(baselines), difference: spread(diffs), targetMiB: target ?? null };
  f.meets = target === undefined ? null : f.difference.median <= target;
  figures.push(f);
}
const r = (k, m) => idleRounds.map((x) => mib(x[k][m]));
figure('idle gateway RssAnon (10 s)', r('gateway', 'rssAnon'), 'bare node http server', r('bare', 'rssAnon'), TARGETS.idleAnon);
figure('idle gateway VmRSS (10 s)', r('gateway', 'vmRss'), 'trivial single executable', r('sea', 'vmRss'), TARGETS.idleRss);
figure('  of which RssFile', r('gateway', 'rssFile'), 'trivial single executable', r('sea', 'rssFile'));
figure('  of which RssAnon', r('gateway', 'rssAnon'), 'trivial single executable', r('sea', 'rssAnon'));
const t = turnsResult;
figure(`VmRSS after ${turns} turns (+${settleSeconds} s)`, [mib(t.settled.vmRss)], 'its first idle figure', [mib(t.first.vmRss)], TARGETS.growth);
figure(`  RssAnon`, [mib(t.settled.rssAnon)], 'its first idle figure', [mib(t.first.rssAnon)]);
figure(`VmRSS after ${warmupTurns} turns (+${settleSeconds} s)`, [mib(t.warm.vmRss)], 'its first idle figure', [mib(t.first.vmRss)]);
figure(`VmRSS after ${turns} turns: growth`, [mib(t.settled.vmRss)], `after ${warmupTurns} turns`, [mib(t.warm.vmRss)], TARGETS.growth);
figure(`  RssAnon`, [mib(t.settled.rssAnon)], `after ${warmupTurns} turns`, [mib(t.warm.rssAnon)]);
figure(`VmRSS right after the turns (peak ${mib(t.settled.vmHwm).toFixed(1)})`, [mib(t.rightAfter.vmRss)], 'its first idle figure', [mib(t.first.vmRss)]);
const l = idleResult;
figure(`VmRSS after ${idleSeconds} s idle`, [mib(l.last.vmRss)], 'its first idle figure', [mib(l.first.vmRss)], TARGETS.growth);
figure(`  RssAnon`, [mib(l.last.rssAnon)], 'its first idle figure', [mib(l.first.rssAnon)]);
for (const s of sizes) {
  if (s.strippedNode === null) continue;
  figure(`executable size, linux-${s.arch}`, [s.bytes / MiB], `stripped node ${nodeVersion}`, [s.strippedNode / MiB], TARGETS.size);
  const embedder = s.groups.embedder?.bytes;
  if (embedder) figure(`  ... without the embedder data`, [(s.bytes - embedder) / MiB], `stripped node ${nodeVersion}`, [s.strippedNode / MiB], TARGETS.size);
}

const result = {
  executable: exe, node, nodeVersion, trivialExecutable: trivial, rounds, idleSeconds, turns, concurrency, sessions,
  turnsSeconds: t.seconds, turnErrors: t.errors, figures, idleRounds, turnsPhase: t, idlePhase: l, sizes, warnings,
};
if (values.json) {
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} else {
  const fmt = (x, d = 1) => (x === null || x === undefined ? 'n/a' : x.toFixed(d));
  const withRange = (s, sign = false) => {
    const v = (x) => `${sign && x >= 0 ? '+' : ''}${fmt(x)}`;
    return s.all.length > 1 ? `${v(s.median)} (${v(s.min)}..${v(s.max)})` : v(s.median);
  };
  const table = (head, rows) => {
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
    const line = (cells) => cells.map((c, i) => (i === 0 || i === 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
    return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
  };
  const out = [];
  out.push(`footprint: ${relative(process.cwd(), exe) || exe}; baselines built from ${nodeVersion}; ${rounds} idle round(s) (median, range); ${turns} turns, ${fmt(t.perSecond, 0)}/s and ${fmt(t.cpuMsPerTurn, 2)} ms of gateway CPU per turn after the first ${warmupTurns}`);
  out.push('');
  out.push(table(['figure', 'MiB', 'baseline', 'MiB', 'difference', 'target', 'verdict'], figures.map((f) => [
    f.name, withRange(f.value), f.baselineName, withRange(f.baseline), withRange(f.difference, true),
    f.targetMiB === null ? '' : `<= +${f.targetMiB}`, f.meets === null ? '' : f.meets ? 'meets target' : 'MISSES target',
  ])));
  for (const s of sizes) {
    out.push('');
    out.push(`linux-${s.arch}: ${fmt(s.bytes / MiB)} MiB = Node ${nodeVersion} stripped ${fmt(s.strippedNode === null ? null : s.strippedNode / MiB)} MiB (unstripped ${fmt(s.unstrippedNode === null ? null : s.unstrippedNode / MiB)}) + SEA blob ${fmt(s.blob === null ? null : s.blob / MiB)} MiB${s.strippedNode !== null && s.blob !== null ? ` + ${fmt((s.bytes - s.strippedNode - s.blob) / MiB, 2)} MiB of ELF layout` : ''}`);
    if (!s.parts) {
      out.push(s.blob === null ? '  no SEA blob found' : '  (the blob\'s layout was not recognised; no breakdown)');
      continue;
    }
    const rows = [];
    for (const p of s.parts.filter((p) => !p.asset)) rows.push([p.name, fmt(p.bytes / MiB, 2)]);
    for (const [g, { bytes, items }] of Object.entries(s.groups)) {
      rows.push([`${g}/ (${items.length})`, fmt(bytes / MiB, 2)]);
      for (const p of items) if (items.length > 1 && p.bytes >= 16 * 1024) rows.push([`  ${p.name}`, fmt(p.bytes / MiB, 2)]);
    }
    out.push(table(['in the blob', 'MiB'], rows).split('\n').map((x) => `  ${x}`).join('\n'));
  }
  if (warnings.length) out.push('', `${warnings.length} warning(s) during the run; see above`);
  process.stdout.write(`${out.join('\n')}\n`);
}
