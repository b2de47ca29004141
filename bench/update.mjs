// npm run bench:update [-- --rounds N] [--exe PATH] [--json]
//
// `pinclaw update` from its start to the new gateway healthy (READY=1 and a first WATCHDOG=1), with
// the single executable as the release: served from 127.0.0.1, signed by a key made here, installed
// over a small stand-in executable under the stand-in service manager of the tests
// (test/support/update/systemctl.py; this machine has no systemd as PID 1). The baseline is a plain
// restart of the same executable to healthy, so the ratio shows what the update adds: the download
// (the executable is ~110 MB), the SHA-256, the ELF check, `--version`, the copy kept as
// pinclaw.prev, the swap. The phases are timed from the lines pinclaw update prints.
import { spawn, spawnSync } from 'node:child_process';
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { copyFileSync, createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: opts } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, exe: { type: 'string' }, json: { type: 'boolean' } } });
const exe = resolve(opts.exe ?? join(root, 'dist', `pinclaw-linux-${process.arch}`));
const rounds = Number(opts.rounds);
const log = (m) => process.stderr.write(`${m}\n`);
if (!existsSync(exe)) {
  log(`bench:update: ${exe} is missing: npm run build:sea first, or --exe PATH`);
  process.exit(1);
}
const version = /^pinclaw (\S+)$/.exec(spawnSync(exe, ['--version'], { encoding: 'utf8' }).stdout.trim())?.[1];
if (!version) throw new Error(`${exe} --version did not say a version`);

const work = mkdtempSync(join(tmpdir(), 'pinclaw-bench-update-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

// The installed "old" version: the stub of the tests, saying 0.0.1.
const old = join(work, 'old');
const cc = spawnSync('gcc', ['-O1', '-o', old, '-DVERSION="0.0.1"', '-DSCHEMA=0', '-DMODE=0', join(root, 'test', 'support', 'update', 'release-stub.c')], { encoding: 'utf8' });
if (cc.status !== 0) throw new Error(`gcc: ${cc.stderr}`);

// The release, signed like minisign -S does (prehashed Ed25519, version in the trusted comment).
const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const keyId = randomBytes(8);
const pub = Buffer.concat([Buffer.from('Ed'), keyId, Buffer.from(publicKey.export({ format: 'jwk' }).x, 'base64url')]).toString('base64');
const release = join(work, 'release');
mkdirSync(release);
const name = `pinclaw-linux-${process.arch}`;
const digest = createHash('sha256').update(readFileSync(exe)).digest('hex');
const sums = Buffer.from(`${digest}  ${name}\n`);
writeFileSync(join(release, 'SHA256SUMS'), sums);
const comment = `version:${version}`;
const sig = sign(null, createHash('blake2b512').update(sums).digest(), privateKey);
writeFileSync(join(release, 'SHA256SUMS.minisig'), ['untrusted comment: bench key', Buffer.concat([Buffer.from('ED'), keyId, sig]).toString('base64'), `trusted comment: ${comment}`, sign(null, Buffer.concat([sig, Buffer.from(comment)]), privateKey).toString('base64'), ''].join('\n'));

const server = createServer((req, res) => {
  const file = req.url === `/${name}` ? exe : join(release, (req.url ?? '').slice(1));
  if (!/^\/[\w.-]+$/.test(req.url ?? '') || !existsSync(file)) return res.writeHead(404).end();
  res.writeHead(200, { 'content-length': statSync(file).size });
  createReadStream(file).pipe(res);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}`;

function systemctl(env, ...args) {
  const r = spawnSync(join(env.FAKE_SYSTEMD_DIR, 'bin', 'systemctl'), args, { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`systemctl ${args.join(' ')}: ${r.stderr}`);
  return Object.fromEntries(r.stdout.trim().split('\n').filter(Boolean).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

/** A restart of the unit to READY=1 and a WATCHDOG=1 after it, timed. */
async function restartToHealthy(env) {
  const t0 = performance.now();
  systemctl(env, 'restart', 'pinclaw.service');
  let ready;
  for (;;) {
    const s = systemctl(env, 'show', 'pinclaw.service', '--property=ActiveState,WatchdogTimestampMonotonic');
    if (s.ActiveState === 'failed') throw new Error('the gateway failed to start');
    if (s.ActiveState === 'active') {
      ready ??= s.WatchdogTimestampMonotonic;
      if (s.WatchdogTimestampMonotonic !== ready) return performance.now() - t0;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

function setup(i) {
  const dir = join(work, `round-${i}`);
  const bin = join(dir, 'bin');
  const home = join(dir, 'home');
  mkdirSync(bin, { recursive: true });
  mkdirSync(home);
  const target = join(dir, 'install', 'pinclaw');
  mkdirSync(dirname(target));
  copyFileSync(old, target);
  symlinkSync(join(root, 'test', 'support', 'update', 'systemctl.py'), join(bin, 'systemctl'));
  writeFileSync(join(dir, 'unit.json'), JSON.stringify({ exec: [target, 'gateway'], watchdogUsec: 400_000 }));
  // In the environment, not the file: an executable built before update.* existed refuses unknown keys in its config.
  const env = { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`, HOME: home, LANG: 'C.UTF-8', PINCLAW_HOME: home, PINCLAW_GATEWAY_PORT: '0', PINCLAW_UPDATE_URL: url, PINCLAW_UPDATE_PUBLIC_KEYS: JSON.stringify([pub]), PINCLAW_UPDATE_TARGET: target, FAKE_SYSTEMD_DIR: dir };
  systemctl(env, 'restart', 'pinclaw.service');
  return { env, dir };
}

/** pinclaw update, its phases timed from its output lines. */
function update(env) {
  return new Promise((resolvePromise, reject) => {
    const t0 = performance.now();
    const marks = {};
    const child = spawn(process.execPath, [join(root, 'dist', 'pinclaw.cjs'), 'update'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (!marks.download && /downloading/.test(out)) marks.download = performance.now() - t0;
      if (!marks.restart && /restarting/.test(out)) marks.restart = performance.now() - t0;
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`pinclaw update exited ${code}: ${err}${out}`));
      resolvePromise({ total: performance.now() - t0, checked: marks.restart - marks.download, healthy: performance.now() - t0 - marks.restart });
    });
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const results = [];
try {
  for (let i = 0; i < rounds; i++) {
    const { env } = setup(i);
    try {
      const u = await update(env);
      const plain = await restartToHealthy(env);
      results.push({ ...u, plain });
      log(`round ${i + 1}/${rounds}: update ${u.total.toFixed(0)} ms (download and checks ${u.checked.toFixed(0)} ms, restart to healthy ${u.healthy.toFixed(0)} ms); plain restart to healthy ${plain.toFixed(0)} ms`);
    } finally {
      systemctl(env, 'stop', 'pinclaw.service');
    }
  }
} finally {
  server.close();
}
const summary = {
  executable: exe,
  bytes: statSync(exe).size,
  rounds,
  updateMs: median(results.map((r) => r.total)),
  downloadAndChecksMs: median(results.map((r) => r.checked)),
  updateRestartToHealthyMs: median(results.map((r) => r.healthy)),
  plainRestartToHealthyMs: median(results.map((r) => r.plain)),
};
if (opts.json) console.log(JSON.stringify(summary, null, 2));
else {
  console.log(`pinclaw update of ${(summary.bytes / 2 ** 20).toFixed(0)} MiB, download to healthy (READY=1 + WATCHDOG=1), median of ${rounds}:`);
  console.log(`  update, total                 ${summary.updateMs.toFixed(0)} ms`);
  console.log(`    download and checks         ${summary.downloadAndChecksMs.toFixed(0)} ms`);
  console.log(`    restart to healthy          ${summary.updateRestartToHealthyMs.toFixed(0)} ms`);
  console.log(`  baseline: plain restart       ${summary.plainRestartToHealthyMs.toFixed(0)} ms`);
  console.log(`  ratio update / plain restart  ${(summary.updateMs / summary.plainRestartToHealthyMs).toFixed(1)}x`);
}
