// The single executables, run the way a user runs them: copied into an empty directory, no
// node_modules anywhere, a minimal environment. arm64 runs under qemu-aarch64-static.
import t, { type Test } from 'tap';
import { copyFileSync, existsSync, readFileSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAnthropicServer, textReply } from './support/anthropic-server.js';
import { arm64Sysroot, cleanEnv, run, seaArm64, seaX64, start, tempDir } from './support/proc.js';

interface Report {
  ok: boolean;
  node: string;
  arch: string;
  singleExecutable: boolean;
  native: { addons: Record<string, { loaded: boolean; works?: boolean; source?: string; path?: string; error?: string }> };
  sqlite?: { fts5: boolean; journalMode: string };
}
const ADDONS = ['pinclaw', 'better_sqlite3', 'serialport', 'i2c'];

function install(exe: string): { dir: string; exe: string; home: string } {
  const dir = tempDir('pinclaw-sea-');
  const dest = join(dir, 'pinclaw');
  copyFileSync(exe, dest);
  run('chmod', ['755', dest]);
  return { dir, exe: dest, home: join(dir, 'home') };
}

function checkDoctor(t: Test, stdout: string, arch: string): Report {
  const report = JSON.parse(stdout) as Report;
  t.equal(report.ok, true, 'doctor is all green');
  t.equal(report.singleExecutable, true);
  t.equal(report.arch, arch);
  t.match(report.node, /^v24\./, 'Node 24 LTS inside');
  for (const name of ADDONS) {
    const a = report.native.addons[name]!;
    t.ok(a.loaded && a.works, `${name} loaded and works${a.error ? `: ${a.error}` : ''}`);
    t.equal(a.source, 'sea', `${name} came out of the executable`);
  }
  t.equal(report.sqlite?.fts5, true, 'SQLite has FTS5');
  t.equal(report.sqlite?.journalMode, 'wal');
  return report;
}

t.test('x64 executable', async (t) => {
  t.notOk(existsSync('/tmp/node_modules') || existsSync('/node_modules'), 'no node_modules to fall back on');
  const { dir, exe, home } = install(seaX64);
  const env = cleanEnv({ PINCLAW_HOME: home });

  const v = run(exe, ['--version'], { env, cwd: dir });
  t.equal(v.code, 0);
  t.match(v.stdout, /^pinclaw \d+\.\d+\.\d+\n$/);
  t.equal(v.stderr, '', 'no warnings on stderr');
  t.notOk(existsSync(home), '--version extracts nothing and opens no database');
  // scripts/sea-main.cjs answers --version itself; the bundle's answer (with --json) must agree.
  const fromBundle = run(exe, ['--json', '--version'], { env, cwd: dir });
  t.equal(`pinclaw ${(JSON.parse(fromBundle.stdout) as { version: string }).version}\n`, v.stdout, 'the loader and the bundle give one version');

  const first = run(exe, ['doctor', '--json'], { env, cwd: dir });
  t.equal(first.code, 0, first.stderr);
  const report = checkDoctor(t, first.stdout, 'x64');
  const paths = Object.fromEntries(ADDONS.map((n) => [n, report.native.addons[n]!.path!]));
  for (const p of Object.values(paths)) t.ok(p.startsWith(join(home, 'cache', 'native')), `${p} is in the cache`);
  const pristine = readFileSync(paths.better_sqlite3!);
  const mtimes = Object.fromEntries(Object.entries(paths).map(([n, p]) => [n, statSync(p).mtimeMs]));

  const second = run(exe, ['doctor', '--json'], { env, cwd: dir });
  t.equal(second.code, 0);
  const again = JSON.parse(second.stdout) as Report;
  for (const n of ADDONS) {
    t.equal(again.native.addons[n]!.path, paths[n], `${n}: same cached file`);
    t.equal(statSync(paths[n]!).mtimeMs, mtimes[n], `${n}: reused, not rewritten`);
  }

  // Same size, one byte different: only a comparison of the bytes can notice.
  const corrupt = Buffer.from(pristine);
  corrupt[corrupt.length >> 1] = corrupt[corrupt.length >> 1]! ^ 0xff;
  writeFileSync(paths.better_sqlite3!, corrupt);
  truncateSync(paths.serialport!, 1000);
  const third = run(exe, ['doctor', '--json'], { env, cwd: dir });
  t.equal(third.code, 0, third.stderr);
  checkDoctor(t, third.stdout, 'x64');
  t.ok(readFileSync(paths.better_sqlite3!).equals(pristine), 'the corrupted addon was replaced');
  t.ok(statSync(paths.serialport!).size > 1000, 'the truncated addon was replaced');

  // Outside doctor a load trusts the stamp written after the last comparison, as long as the
  // file's inode, size, mtime and ctime are the ones it records. A write changes the ctime even
  // when the mtime is set back, so an addon corrupted in place is still compared and replaced.
  for (const n of ADDONS) t.ok(existsSync(`${paths[n]!}.verified`), `${n}: stamped after the comparison`);
  const ours = readFileSync(paths.pinclaw!);
  const was = statSync(paths.pinclaw!);
  const flipped = Buffer.from(ours);
  flipped[flipped.length >> 1] = flipped[flipped.length >> 1]! ^ 0xff;
  writeFileSync(paths.pinclaw!, flipped);
  utimesSync(paths.pinclaw!, was.atime, was.mtime);
  const counted = run(exe, ['tokens', '-'], { env, cwd: dir, input: 'hello world' });
  t.equal(counted.stdout, '2\n', counted.stderr);
  t.equal(counted.stderr, '', 'the addon counted, not the fallback');
  t.ok(readFileSync(paths.pinclaw!).equals(ours), 'an addon corrupted in place is replaced on the next load, not only by doctor');

  // The tokenizer's rank data are assets too; no stderr means the addon counted, not the fallback.
  const tokens = run(exe, ['tokens', '-'], { env, cwd: dir, input: 'hello world' });
  t.equal(tokens.stdout, '2\n', `tokens: ${tokens.stderr}`);
  t.equal(tokens.stderr, '');
  const cl100k = run(exe, ['--json', 'tokens', '--encoding', 'cl100k_base', '-'], { env, cwd: dir, input: "it's 12345" });
  t.same(JSON.parse(cl100k.stdout), { encoding: 'cl100k_base', tokens: 5 }, cl100k.stderr);
});

t.test('x64 executable runs the gateway', async (t) => {
  const { dir, exe, home } = install(seaX64);
  const gw = start(exe, ['gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home, PINCLAW_CODE_CACHE_REPORT: '1' }), cwd: dir });
  const m = await gw.waitFor(/gateway listening on (http:\/\/[^\s]+)/);
  // The code cache build-sea.mjs made from a gateway start (scripts/sea-main.cjs): V8 refuses one
  // made under other flags or another V8, and the start then compiles everything again.
  t.match(gw.stderr(), /^code cache: accepted$/m, 'V8 took the code cache');
  const res = await fetch(`${m[1]}/healthz`);
  t.same(await res.json(), { status: 'ok' });
  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0);
  t.notMatch(gw.stderr(), /warn|error/i, 'a clean start and stop');
});

t.test('x64 executable answers through the Anthropic SDK it embeds', async (t) => {
  const srv = await startAnthropicServer(textReply('hello from the stand-in'));
  t.teardown(() => srv.close());
  const { dir, exe, home } = install(seaX64);
  const p = start(exe, ['agent', '-m', 'hi'], { env: cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: srv.url }), cwd: dir });
  let out = '';
  p.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  t.equal((await p.exited).code, 0, p.stderr());
  t.equal(out, 'hello from the stand-in\n');
});

t.test('x64 executable loads its lazy chunks and runs a contained regex', async (t) => {
  const { createServer } = await import('node:http');
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=windows-1252' });
    res.end(Buffer.concat([Buffer.from('<title>Board</title><h2>Relay</h2><ul><li>on</li></ul><p>'), Buffer.from([0x93, 0x6f, 0x6b, 0x94])]));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.5', r));
  t.teardown(() => server.close());
  const { dir, exe, home } = install(seaX64);
  const { mkdirSync } = await import('node:fs');
  mkdirSync(join(home, 'workspace'), { recursive: true });
  writeFileSync(join(home, 'config.json'), JSON.stringify({ web: { allowedHosts: ['127.0.0.5'] } }));
  writeFileSync(join(home, 'workspace', 'notes.txt'), 'abab\nabba\n');
  const url = `http://127.0.0.5:${(server.address() as import('node:net').AddressInfo).port}/`;
  const env = cleanEnv({ PINCLAW_HOME: home });
  const fetched = start(exe, ['tool', 'run', 'web_fetch', JSON.stringify({ url })], { env, cwd: dir });
  let out = '';
  fetched.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  t.equal((await fetched.exited).code, 0, fetched.stderr());
  t.match(out, /# Board\n\n## Relay\n\n- on\n\n\u201cok\u201d/, 'undici and the HTML chunk, from the executable');
  const grep = start(exe, ['tool', 'run', 'grep', JSON.stringify({ pattern: '(ab)\\1' })], { env, cwd: dir });
  let found = '';
  grep.child.stdout!.on('data', (d: Buffer) => (found += d.toString()));
  t.equal((await grep.exited).code, 0, grep.stderr());
  t.match(found, /^1 match in 1 file[\s\S]*notes\.txt:1:abab/, 'a backreference runs in the worker');
  // V8's linear-time fallback is on from the start (build-sea REGEX_FLAGS, without node:v8): a
  // pattern that backtracks without bound on a long line gets its answer, not a frozen process.
  writeFileSync(join(home, 'workspace', 'long.txt'), `${'a'.repeat(40_000)}!\n`);
  const nested = start(exe, ['tool', 'run', 'grep', JSON.stringify({ pattern: '(a+)+$', path: 'long.txt' })], { env, cwd: dir });
  let nestedOut = '';
  nested.child.stdout!.on('data', (d: Buffer) => (nestedOut += d.toString()));
  t.equal((await nested.exited).code, 0, nested.stderr());
  t.match(nestedOut, /^no matches/, 'the catastrophic pattern answered');
});

t.test('arm64 executable under qemu-aarch64-static', async (t) => {
  const { dir, exe, home } = install(seaArm64);
  const env = cleanEnv({ PINCLAW_HOME: home });
  const qemu = (args: string[]) => run('qemu-aarch64-static', ['-L', arm64Sysroot, exe, ...args], { env, cwd: dir, timeoutMs: 300_000 });
  const v = qemu(['--version']);
  t.equal(v.code, 0, v.stderr);
  t.match(v.stdout, /^pinclaw \d+\.\d+\.\d+\n$/);
  const d = run('qemu-aarch64-static', ['-L', arm64Sysroot, exe, 'doctor', '--json'], { env: { ...env, PINCLAW_CODE_CACHE_REPORT: '1' }, cwd: dir, timeoutMs: 300_000 });
  t.equal(d.code, 0, d.stderr);
  t.match(d.stderr, /^code cache: accepted$/m, 'V8 took the code cache made under qemu');
  checkDoctor(t, d.stdout, 'arm64');
  const tokens = run('qemu-aarch64-static', ['-L', arm64Sysroot, exe, 'tokens', '-'], { env, cwd: dir, input: 'hello', timeoutMs: 300_000 });
  t.equal(tokens.stdout, '1\n', `tokens: ${tokens.stderr}`);
  t.equal(tokens.stderr, '', 'the arm64 addon counted, not the fallback');
});
