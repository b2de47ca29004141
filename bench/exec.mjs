// npm run bench:exec [-- --rounds N] [--warmup N] [--json]
// Spawn-and-wait latency of `/bin/sh -c true`: plain child_process.spawn, the Landlock sandbox (through
// the exec runner, as the tool uses it, and through the addon alone), and bubblewrap (through the
// runner). Candidates run round-robin in one process, so machine noise hits all alike. Prints
// p50/p99 and the ratios against the targets; it never fails on them.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { rounds: { type: 'string', default: '300' }, warmup: { type: 'string', default: '20' }, json: { type: 'boolean', default: false } } });
const rounds = Number(values.rounds);
const warmup = Number(values.warmup);
const note = (msg) => process.stderr.write(`${msg}\n`);
const TARGETS = { landlockAddedMs: 2, bwrapOverLandlock: 3 };

// The sandbox is TypeScript: bundle what is needed (dependencies stay external; the addon is build/'s).
const out = join(root, 'dist', '.bench');
mkdirSync(out, { recursive: true });
const entry = join(out, 'exec-sandbox.mjs');
await build({
  stdin: {
    contents: [
      "export { Sandbox } from './src/sandbox/index.ts';",
      "export { detectSandbox, chooseBackend } from './src/sandbox/detect.ts';",
      "export { sandboxAddon } from './src/sandbox/native.ts';",
      "export { pathRules } from './src/sandbox/policy.ts';",
      "export { defaults } from './src/config/schema.ts';",
    ].join('\n'),
    resolveDir: root,
    sourcefile: 'bench-exec-entry.ts',
    loader: 'ts',
  },
  outfile: entry, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'warning',
});
const { Sandbox, detectSandbox, chooseBackend, sandboxAddon, pathRules, defaults } = await import(pathToFileURL(entry).href);

const workspace = mkdtempSync(join(tmpdir(), 'pinclaw-bench-exec-'));
process.on('exit', () => rmSync(workspace, { recursive: true, force: true }));
const settings = (backend) => ({ ...defaults().sandbox, backend });

function plain() {
  return new Promise((res, rej) => {
    const child = spawn('/bin/sh', ['-c', 'true'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.on('error', rej);
    child.on('close', (code) => (code === 0 ? res() : rej(new Error(`exit ${code}`))));
  });
}

function viaRunner(backend) {
  const sb = new Sandbox(workspace, settings(backend));
  return async () => {
    const r = await sb.run({ command: 'true' });
    if (r.exitCode !== 0) throw new Error(`${backend}: exit ${r.exitCode}: ${r.stderr}`);
  };
}

/** The addon alone: the same rules, no temp dir, no cgroup. */
function viaAddon(addon) {
  const s = defaults().sandbox;
  const rules = pathRules({ workspace, tmp: workspace, allowedRoots: [] });
  const opts = {
    file: '/bin/sh', argv: ['sh', '-c', 'true'], env: ['PATH=/usr/bin:/bin'], cwd: workspace, rules, network: false, userNamespace: true,
    timeoutMs: 30_000, forwardLimit: 1 << 16,
    limits: { cpuSeconds: s.cpuSeconds, memoryBytes: s.memoryMb << 20, maxProcesses: s.maxProcesses, fileSizeBytes: s.maxFileSizeMb << 20 },
  };
  return () => new Promise((res, rej) => addon.spawnSandboxed(opts, (kind, p) => kind === 3 && (p.code === 0 ? res() : rej(new Error(`exit ${p.code}`)))));
}

const support = await detectSandbox();
const candidates = [{ name: 'plain spawn', run: plain }];
const landlock = chooseBackend('landlock', support);
if ('error' in landlock) note(`skipping Landlock: ${landlock.error}`);
else {
  candidates.push({ name: 'landlock (exec runner)', run: viaRunner('landlock') });
  candidates.push({ name: 'landlock (addon only)', run: viaAddon(sandboxAddon()) });
}
const bwrap = chooseBackend('bubblewrap', support);
if ('error' in bwrap) note(`skipping bubblewrap: ${bwrap.error}`);
else candidates.push({ name: 'bubblewrap (exec runner)', run: viaRunner('bubblewrap') });

const samples = new Map(candidates.map((c) => [c.name, []]));
note(`bench:exec: ${warmup} warm-up + ${rounds} measured rounds of ${candidates.length} candidates (/bin/sh -c true)`);
for (let round = -warmup; round < rounds; round++) {
  // Rotate the starting candidate so none always runs right after another's cleanup.
  const start = ((round % candidates.length) + candidates.length) % candidates.length;
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[(start + i) % candidates.length];
    const t0 = performance.now();
    await c.run();
    const ms = performance.now() - t0;
    if (round >= 0) samples.get(c.name).push(ms);
  }
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
const stats = Object.fromEntries(
  [...samples].map(([name, xs]) => {
    const s = [...xs].sort((a, b) => a - b);
    return [name, { p50: pct(s, 50), p99: pct(s, 99), n: s.length }];
  }),
);
const base = stats['plain spawn'].p50;
const ll = stats['landlock (exec runner)'];
const llAddon = stats['landlock (addon only)'];
const bw = stats['bubblewrap (exec runner)'];
const result = {
  node: process.version,
  arch: process.arch,
  landlockAbi: support.landlock.abi,
  stats,
  landlockAddedMs: ll ? ll.p50 - base : null,
  landlockAddonAddedMs: llAddon ? llAddon.p50 - base : null,
  bwrapOverLandlock: ll && bw ? bw.p50 / ll.p50 : null,
};

if (values.json) {
  console.log(JSON.stringify(result, null, 2));
} else {
  const rows = Object.entries(stats).map(([name, s]) => `| ${name} | ${s.p50.toFixed(2)} | ${s.p99.toFixed(2)} | ${(s.p50 / base).toFixed(2)}× |`);
  console.log(`\n${process.version} ${process.arch}, Landlock ABI ${support.landlock.abi}, ${rounds} rounds\n`);
  console.log('| candidate | p50 ms | p99 ms | p50 vs plain |\n| --- | ---: | ---: | ---: |');
  console.log(rows.join('\n'));
  console.log('');
  const verdict = (ok) => (ok ? 'meets target' : 'MISSES target');
  if (result.landlockAddedMs !== null) console.log(`Landlock adds ${result.landlockAddedMs.toFixed(2)} ms at the median over plain spawn (target <= ${TARGETS.landlockAddedMs} ms): ${verdict(result.landlockAddedMs <= TARGETS.landlockAddedMs)}`);
  if (result.landlockAddonAddedMs !== null) console.log(`  the addon alone: ${result.landlockAddonAddedMs >= 0 ? '+' : ''}${result.landlockAddonAddedMs.toFixed(2)} ms; the runner (policy, \$TMPDIR, pids cgroup) adds ${(result.landlockAddedMs - result.landlockAddonAddedMs).toFixed(2)} ms to it`);
  if (result.bwrapOverLandlock !== null) console.log(`bubblewrap / Landlock at the median: ${result.bwrapOverLandlock.toFixed(2)}× (target >= ${TARGETS.bwrapOverLandlock}×): ${verdict(result.bwrapOverLandlock >= TARGETS.bwrapOverLandlock)}`);
}
