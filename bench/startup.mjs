// npm run bench:startup [-- --rounds N] [--warmup N] [--exe PATH] [--json]
// Startup cost of the single executable against bare Node (the same Node binary the executable
// embeds, so the ratio shows what pinclaw adds rather than a runtime version difference).
// Candidates run round-robin within one process run, so machine noise (thermal throttling on a Pi,
// other load) hits every candidate alike instead of skewing whichever ran during the noisy minute.
// It never asserts: it prints numbers and whether each ratio meets its target.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { get } from 'node:http';
import { dirname, join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchRun, cachedNode, elfArch, listeningUrl, procMemory } from './support/lib.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { note, warnings, warn, fail, integer: positiveInt, children, tempDirs, tempDir } = benchRun('bench:startup');
const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '15' },
    warmup: { type: 'string', default: '2' },
    exe: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const rounds = positiveInt(values.rounds, '--rounds', 1);
const warmup = positiveInt(values.warmup, '--warmup', 0);
const exe = resolve(values.exe ?? join(root, 'dist', `pinclaw-linux-${process.arch}`));
const PREFERRED_NODE = 'v24.21.0';
const LISTEN_TIMEOUT_MS = 30_000;
const EXIT_TIMEOUT_MS = 10_000;
// The second round's targets (issue 29; the first were --version 1.5x, gateway 2x for both).
const TARGETS = { version: 1.15, gatewayWarm: 1.5, gatewayCold: 2 };


function removeTempDir(dir) {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

// --- preflight -----------------------------------------------------------------------------------
if (!existsSync(exe)) fail(`no executable at ${relative(process.cwd(), exe) || exe}: run npm run build:sea first`);

// A cross-built executable (e.g. arm64 on an x64 host) fails with a cryptic ENOEXEC; say why
// instead. Emulation would measure qemu, not pinclaw, so it is deliberately not supported.
{
  const machine = elfArch(exe);
  if (machine !== null && machine !== process.arch) fail(`${exe} is built for ${machine} and cannot run on this ${process.arch} host (emulation is not supported: benchmark it on the target machine)`);
}

function findBaselineNode() {
  const candidate = cachedNode(root, process.arch, PREFERRED_NODE);
  if (candidate) return candidate;
  note(`note: no Node binary under dist/.cache (npm run build:sea downloads it); the baseline uses ${process.execPath} (${process.version}), so the ratios include a Node version difference`);
  return process.execPath;
}
const node = findBaselineNode();
const nodeVersion = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();

// Ambient PINCLAW_* (a log level that hides the "listening" line, a config elsewhere) or a systemd
// NOTIFY_SOCKET would make the runs measure something other than a default start.
const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PINCLAW_') && k !== 'NOTIFY_SOCKET'));
const warmHome = tempDir('pinclaw-bench-warm-');
const envFor = (home) => ({ ...baseEnv, PINCLAW_HOME: home });

{
  const r = spawnSync(exe, ['--version'], { encoding: 'utf8', env: envFor(warmHome), timeout: 30_000 });
  if (r.error || r.status !== 0) fail(`${exe} --version failed (${r.error?.message ?? `exit ${r.status}`}): ${(r.stderr ?? '').trim()}`);
  note(`executable: ${relative(process.cwd(), exe)} (${r.stdout.trim()}); baseline: ${relative(process.cwd(), node) || node} (${nodeVersion})`);
}

// GNU time is the simplest way to get the peak RSS of a process that exits in ~50 ms: /proc is gone
// by the time we could read it, and process.resourceUsage() only covers ourselves.
const TIME = '/usr/bin/time';
const haveTime = (() => {
  if (!existsSync(TIME)) return false;
  const dir = tempDir('pinclaw-bench-time-');
  try {
    // BusyBox's time has no -f/-o; only a number in the output file proves GNU time.
    const r = spawnSync(TIME, ['-f', '%M', '-o', join(dir, 'rss'), node, '-e', '0']);
    return r.status === 0 && /^\d+$/.test(readFileSync(join(dir, 'rss'), 'utf8').trim().split('\n').at(-1));
  } catch {
    return false;
  } finally {
    removeTempDir(dir);
  }
})();
if (!haveTime) warn(`${TIME} (GNU time) is missing or unusable: peak RSS of short-lived processes shows n/a (apt-get install time)`);
const rssScratch = tempDir('pinclaw-bench-rss-');

// --- measurements --------------------------------------------------------------------------------
function waitExit(child) {
  return new Promise((res) => {
    if (child.exitCode !== null || child.signalCode !== null) return res({ code: child.exitCode, signal: child.signalCode });
    child.once('exit', (code, signal) => res({ code, signal }));
  });
}

function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Wall time exec→exit, spawned directly so the wrapper's own exec is not in the number. */
async function wallOnce(cmd, args, env) {
  const t0 = performance.now();
  const child = track(spawn(cmd, args, { env, stdio: ['ignore', 'ignore', 'pipe'] }));
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const spawnError = new Promise((_, rej) => child.once('error', rej));
  const { code, signal } = await Promise.race([waitExit(child), spawnError]);
  const ms = performance.now() - t0;
  if (code !== 0) warn(`${[cmd, ...args].join(' ')} exited ${code ?? signal}: ${stderr.trim()}`);
  return ms;
}

/** Peak RSS (KiB) through GNU time, in a separate run so the wall time above stays unwrapped. */
async function rssOnce(cmd, args, env) {
  if (!haveTime) return null;
  const out = join(rssScratch, 'rss');
  const child = track(spawn(TIME, ['-f', '%M', '-o', out, cmd, ...args], { env, stdio: 'ignore' }));
  await waitExit(child);
  try {
    // GNU time prefixes a "Command exited with non-zero status" line when the command fails.
    const kib = Number(readFileSync(out, 'utf8').trim().split('\n').at(-1));
    return Number.isFinite(kib) ? kib : null;
  } catch {
    return null;
  }
}

function healthz(url) {
  return new Promise((res) => {
    const req = get(`${url}/healthz`, { agent: false, timeout: 5_000 }, (r) => {
      r.resume();
      r.on('end', () => res(r.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => res(e.message));
  });
}

/**
 * exec→"listening on" line. Health is checked after the clock stops: the line is what systemd and
 * a human see, and the GET only proves the line did not lie.
 */
async function serverOnce(label, cmd, args, env) {
  const t0 = performance.now();
  const child = track(spawn(cmd, args, { env, stdio: ['ignore', 'ignore', 'pipe'] }));
  const out = listeningUrl(child, LISTEN_TIMEOUT_MS);
  try {
    const url = await out.url;
    const ms = performance.now() - t0;
    const status = await healthz(url);
    if (status !== 200) warn(`${label}: GET ${url}/healthz gave ${status}`);
    const rss = procMemory(child.pid)?.vmHwm ?? null;
    child.kill('SIGTERM');
    const timer = setTimeout(() => {
      warn(`${label}: still running ${EXIT_TIMEOUT_MS} ms after SIGTERM, killed`);
      child.kill('SIGKILL');
    }, EXIT_TIMEOUT_MS);
    const { code, signal } = await waitExit(child);
    clearTimeout(timer);
    if (code !== 0) warn(`${label}: exited ${code ?? signal} after SIGTERM: ${out.stderr().trim().split('\n').at(-1)}`);
    return { ms, rss };
  } catch (e) {
    child.kill('SIGKILL');
    await waitExit(child);
    throw new Error(`${label}: ${e.message}\n${out.stderr().trim()}`);
  }
}

// The bare server does the least a gateway must: listen on an ephemeral port, say so on stderr,
// answer GET, and exit 0 on SIGTERM.
const BARE_SERVER = `const s=require('http').createServer((q,r)=>r.end('ok'));` +
  `s.listen(0,'127.0.0.1',()=>process.stderr.write('listening on http://127.0.0.1:'+s.address().port+'\\n'));` +
  `process.on('SIGTERM',()=>s.close(()=>process.exit(0)));`;

const candidates = [
  { key: 'version', label: 'pinclaw --version', wall: () => wallOnce(exe, ['--version'], envFor(warmHome)), rss: () => rssOnce(exe, ['--version'], envFor(warmHome)) },
  { key: 'nodeE0', label: 'node -e 0', wall: () => wallOnce(node, ['-e', '0'], baseEnv), rss: () => rssOnce(node, ['-e', '0'], baseEnv) },
  {
    key: 'gatewayCold', label: 'gateway cold (fresh home)',
    run: async () => {
      const home = tempDir('pinclaw-bench-cold-');
      try {
        return await serverOnce('gateway cold', exe, ['gateway', '--port', '0'], envFor(home));
      } finally {
        removeTempDir(home);
      }
    },
  },
  { key: 'gatewayWarm', label: 'gateway warm (reused home)', run: () => serverOnce('gateway warm', exe, ['gateway', '--port', '0'], envFor(warmHome)) },
  { key: 'bareServer', label: 'bare node http server', run: () => serverOnce('bare server', node, ['-e', BARE_SERVER], baseEnv) },
];
for (const c of candidates) Object.assign(c, { wallMs: [], rssKiB: [] });

// Rotating the start each round keeps any "runs right after X" effect (page cache, CPU frequency
// ramp) from always landing on the same candidate. The warm-up rounds also populate warmHome, which
// is what makes the warm variant warm.
note(`${warmup} warm-up + ${rounds} measured rounds, ${candidates.length} candidates each...`);
for (let round = 0; round < warmup + rounds; round++) {
  const measured = round >= warmup;
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[(round + i) % candidates.length];
    let ms, rss;
    if (c.run) ({ ms, rss } = await c.run());
    else {
      ms = await c.wall();
      rss = await c.rss();
    }
    if (measured) {
      c.wallMs.push(ms);
      c.rssKiB.push(rss);
    }
  }
  note(measured ? `round ${round - warmup + 1}/${rounds}` : `warm-up ${round + 1}/${warmup}`);
}

// --- size ----------------------------------------------------------------------------------------
// Streamed and only counted: the compressed executable is ~30-40 MiB we have no use for. Runs after
// the timings because -T0 takes every core.
function xzSize(file) {
  return new Promise((res) => {
    note('compressing with xz -T0 -6 for the size (takes a while)...');
    const child = track(spawn('xz', ['-T0', '-6', '-c', file], { stdio: ['ignore', 'pipe', 'ignore'] }));
    let bytes = 0;
    child.stdout.on('data', (d) => (bytes += d.length));
    child.once('error', (e) => {
      warn(`xz unavailable (${e.message}): compressed size n/a (apt-get install xz-utils)`);
      res(null);
    });
    child.once('close', (code) => res(code === 0 ? bytes : null));
  });
}
const rawBytes = statSync(exe).size;
const xzBytes = await xzSize(exe);

// --- report --------------------------------------------------------------------------------------
const sorted = (xs) => xs.filter((x) => x !== null).sort((a, b) => a - b);
function median(xs) {
  const s = sorted(xs);
  if (!s.length) return null;
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
function p90(xs) {
  const s = sorted(xs);
  return s.length ? s[Math.ceil(0.9 * s.length) - 1] : null; // nearest rank: with few rounds, the max
}
const MiB = 1024 * 1024;
const stats = Object.fromEntries(candidates.map((c) => [c.key, {
  label: c.label,
  medianWallMs: median(c.wallMs),
  p90WallMs: p90(c.wallMs),
  medianPeakRssMiB: median(c.rssKiB) === null ? null : median(c.rssKiB) / 1024,
  wallMs: c.wallMs,
  peakRssKiB: c.rssKiB,
}]));
const ratio = (name, num, den, target) => {
  const value = stats[num].medianWallMs / stats[den].medianWallMs;
  const [rn, rd] = [stats[num].medianPeakRssMiB, stats[den].medianPeakRssMiB];
  return { name, value, target, meets: value <= target, rssRatio: rn !== null && rd !== null ? rn / rd : null };
};
const ratios = [
  ratio('--version / node -e 0', 'version', 'nodeE0', TARGETS.version),
  ratio('gateway warm / bare server', 'gatewayWarm', 'bareServer', TARGETS.gatewayWarm),
  ratio('gateway cold / bare server', 'gatewayCold', 'bareServer', TARGETS.gatewayCold),
];

if (values.json) {
  process.stdout.write(`${JSON.stringify({
    executable: exe, baselineNode: node, baselineNodeVersion: nodeVersion, rounds, warmup,
    candidates: stats, ratios, size: { rawBytes, xzBytes }, warnings,
  }, null, 2)}\n`);
} else {
  const fmt = (x, digits = 1) => (x === null || x === undefined ? 'n/a' : x.toFixed(digits));
  const table = (head, rows) => {
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const line = (cells) => cells.map((c, i) => (i ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
    return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
  };
  const out = [];
  out.push(`startup: ${relative(process.cwd(), exe)} vs ${nodeVersion} bare node, ${rounds} rounds (+${warmup} warm-up), round-robin`);
  out.push('');
  out.push(table(['candidate', 'median wall ms', 'p90 wall ms', 'median peak RSS MiB'],
    candidates.map((c) => { const s = stats[c.key]; return [c.label, fmt(s.medianWallMs), fmt(s.p90WallMs), fmt(s.medianPeakRssMiB)]; })));
  out.push('');
  out.push(table(['ratio (median wall)', 'value', 'target', 'verdict', 'RSS ratio'],
    ratios.map((r) => [r.name, `${r.value.toFixed(2)}x`, `<= ${r.target}x`, r.meets ? 'meets target' : 'MISSES target', r.rssRatio === null ? 'n/a' : `${r.rssRatio.toFixed(2)}x`])));
  out.push('');
  out.push(`size: ${fmt(rawBytes / MiB)} MiB raw, ${xzBytes === null ? 'n/a' : `${fmt(xzBytes / MiB)} MiB`} xz -6`);
  if (warnings.length) out.push('', `${warnings.length} warning(s) during the run; see above`);
  process.stdout.write(`${out.join('\n')}\n`);
}
