// The single executables, run the way a user runs them: copied into an empty directory, no
// node_modules anywhere, a minimal environment. arm64 runs under qemu-aarch64-static.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { openDatabase, type Db } from '../src/store/db.js';
import { startAnthropicServer, textReply } from './support/anthropic-server.js';
import { arm64Sysroot, cleanEnv, moduleRecorder, run, seaArm64, seaX64, start, tempDir } from './support/proc.js';

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
  // Written under temporary names and loaded from them, then flushed and named at doctor's exit.
  for (const n of ADDONS) t.equal(basename(paths[n]!), `${n}.node`, `${n}: the status names the file as it is called after the exit`);
  t.same(readdirSync(dirname(paths.pinclaw!)).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left');
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
  t.match(third.stderr, /^warn: native: \S+\/better_sqlite3\.node is not the better_sqlite3 addon this executable carries \(\d+ bytes, expected \d+: truncated or corrupted\); extracting it again$/m, 'the corrupted addon is named');
  t.match(third.stderr, /^warn: native: \S+\/serialport\.node is not the serialport addon this executable carries \(1000 bytes, expected \d+: truncated or corrupted\); extracting it again$/m, 'the truncated addon is named');
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
  t.match(counted.stderr, /^warn: native: \S+\/pinclaw\.node is not the pinclaw addon this executable carries \(\d+ bytes, expected \d+: truncated or corrupted\); extracting it again\n$/, 'the replaced addon named, and nothing else: the addon counted, not the fallback');
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
  // This first start's database is the executable's template (src/store/template.ts): the same as
  // the migrations make.
  const schema = (db: Db) => db.prepare('select type, name, tbl_name, sql from sqlite_master order by type, name').all();
  const versions = (db: Db) => db.prepare('select version, name from schema_migrations order by version').all();
  const fromExe = openDatabase(join(home, 'pinclaw.db'), { readonly: true });
  const made = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.same(schema(fromExe), schema(made), 'the schema the migrations make');
  t.same(versions(fromExe), versions(made));
  fromExe.close();
  made.close();
});

/** The directory an addon is extracted to in a home (named for the addon's content hash). */
function addonDir(home: string, name: string): string {
  const root = join(home, 'cache', 'native');
  const dirs = readdirSync(root).filter((d) => readdirSync(join(root, d)).some((f) => f === `${name}.node` || f.startsWith(`.${name}.node.`)));
  if (dirs.length !== 1) throw new Error(`expected one directory holding ${name}.node in ${root}, found ${dirs.length}`);
  return join(root, dirs[0]!);
}

t.test('x64 executable: a first start loads its addons before they are flushed, and names them once it listens', async (t) => {
  const { dir, exe, home } = install(seaX64);
  const recorder = moduleRecorder(dir, { flags: true });
  const gw = start(exe, ['gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home, NODE_OPTIONS: recorder.nodeOptions }), cwd: dir });
  t.teardown(() => void gw.child.kill('SIGKILL'));
  const m = await gw.waitFor(/gateway listening on (http:\/\/[^\s]+)/);
  // The flush and rename run right after the listening line, before any request is read.
  t.equal((await fetch(`${m[1]}/healthz`)).status, 200);
  for (const n of ['better_sqlite3', 'pinclaw']) {
    const files = readdirSync(addonDir(home, n));
    t.ok(files.includes(`${n}.node`) && files.includes(`${n}.node.verified`), `${n}: named and stamped`);
    t.same(files.filter((f) => f.endsWith('.tmp')), [], `${n}: no temporary file left`);
  }
  // What the gateway mapped is the file now under its name: renamed, not copied.
  const maps = readFileSync(`/proc/${gw.child.pid}/maps`, 'utf8');
  t.ok(maps.includes(join(addonDir(home, 'better_sqlite3'), 'better_sqlite3.node')), 'SQLite\'s addon mapped from its final name');
  t.notOk(maps.includes('.tmp'), 'nothing mapped from a temporary name');
  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0);
  t.notMatch(gw.stderr(), /warn|error/i, 'a clean start and stop');
  // The extraction's node:zlib is a lazy built-in, loaded under V8's defaults (src/v8-flags.ts).
  t.ok(recorder.loaded().includes('NativeModule zlib'), 'the first start decompressed with node:zlib');
  t.same(recorder.underFlags(), [], 'no built-in compiled under the executable\'s flags');

  // The stamps written after the rename describe the files as they are: the next start trusts them
  // (a stamp that did not match would make it compare the bytes and write a new stamp, a new inode).
  const stamps = Object.fromEntries(['better_sqlite3', 'pinclaw'].map((n) => [n, statSync(join(addonDir(home, n), `${n}.node.verified`)).ino]));
  const again = start(exe, ['gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home }), cwd: dir });
  t.teardown(() => void again.child.kill('SIGKILL'));
  await again.waitFor(/gateway listening on/);
  again.child.kill('SIGTERM');
  t.equal((await again.exited).code, 0);
  for (const n of ['better_sqlite3', 'pinclaw']) t.equal(statSync(join(addonDir(home, n), `${n}.node.verified`)).ino, stamps[n], `${n}: the second start trusted the stamp`);
});

t.test('x64 executable: what a power cut or a kill leaves in the addon cache is never loaded', async (t) => {
  const { dir, exe, home } = install(seaX64);
  const env = cleanEnv({ PINCLAW_HOME: home });
  t.equal(run(exe, ['doctor', '--json'], { env, cwd: dir }).code, 0);
  const sqlite = join(addonDir(home, 'better_sqlite3'), 'better_sqlite3.node');
  const pristine = readFileSync(sqlite);
  const torn = join(addonDir(home, 'pinclaw'), 'pinclaw.node');
  const ours = readFileSync(torn);

  // Cut before the rename: SQLite's addon only under a temporary name, half written, by a process
  // that is gone.
  const gone = spawnSync('true').pid!;
  const leftover = join(dirname(sqlite), `.better_sqlite3.node.${gone}.0badf00d.tmp`);
  rmSync(sqlite);
  rmSync(`${sqlite}.verified`);
  writeFileSync(leftover, pristine.subarray(0, pristine.length >> 1), { mode: 0o700 });
  // And a torn file under the name, as a file system without ordered writes could leave it, with
  // the stamp of the complete file it replaced: its size and inode differ from the stamp's.
  const stamp = readFileSync(`${torn}.verified`);
  rmSync(torn);
  writeFileSync(torn, ours.subarray(0, ours.length >> 1), { mode: 0o700 });
  writeFileSync(`${torn}.verified`, stamp);

  const gw = start(exe, ['gateway', '--port', '0'], { env, cwd: dir });
  t.teardown(() => void gw.child.kill('SIGKILL'));
  const m = await gw.waitFor(/gateway listening on (http:\/\/[^\s]+)/);
  t.equal((await fetch(`${m[1]}/healthz`)).status, 200, 'the gateway runs on SQLite');
  t.match(gw.stderr(), /^warn: native: \S+\/pinclaw\.node is not the pinclaw addon this executable carries \(\d+ bytes, expected \d+: truncated or corrupted\); extracting it again$/m, 'the torn addon is named and extracted again');
  t.ok(readFileSync(sqlite).equals(pristine), 'SQLite\'s addon extracted again under its name');
  t.ok(readFileSync(torn).equals(ours), 'pinclaw\'s addon whole again');
  t.notOk(existsSync(leftover), 'the dead process\'s temporary file removed');
  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0);
  const lines = gw.stderr().split('\n').filter((l) => /warn|error/i.test(l));
  t.equal(lines.length, 1, `one warning, the torn addon's: ${lines.join(' | ')}`);
  // The pinclaw addon needed for Landlock and the tokenizer is the one the gateway reported working.
  t.notMatch(gw.stderr(), /fallback/i);
});

t.test('x64 executable: an embedded addon damaged in the executable is refused', async (t) => {
  // The frame the build embedded (scripts/compress-assets.mjs writes it under dist/.build).
  const frameFile = join(dirname(seaX64), '.build', 'x64', 'compressed', 'native', 'pinclaw.node.zst');
  const { dir, exe, home } = install(seaX64);
  const image = readFileSync(exe);
  const frame = readFileSync(frameFile);
  const at = image.indexOf(frame);
  if (at < 0) throw new Error(`${exe} does not hold ${frameFile}: build the executable again (npm run build:sea)`);
  // The frame's last 4 bytes are its content checksum: the decompressed bytes are intact, only the
  // comparison with the checksum can tell. Extraction no longer hashes them; the checksum must refuse.
  image[at + frame.length - 1] = image[at + frame.length - 1]! ^ 0x01;
  writeFileSync(exe, image);
  const d = run(exe, ['--json', 'doctor'], { env: cleanEnv({ PINCLAW_HOME: home }), cwd: dir });
  const report = JSON.parse(d.stdout) as Report;
  const a = report.native.addons.pinclaw!;
  t.equal(a.loaded, false, 'the damaged addon is not loaded');
  t.match(a.error ?? '', /embedded asset native\/pinclaw\.node is damaged \(.*checksum/, a.error ?? 'no error');
  t.throws(() => addonDir(home, 'pinclaw'), /found 0/, 'nothing of it written to the cache');
  t.equal(report.native.addons.better_sqlite3!.loaded, true, 'the other addons load');
});

t.test('x64 executable answers through the Anthropic SDK it embeds', async (t) => {
  const srv = await startAnthropicServer(textReply('hello from the stand-in'));
  t.teardown(() => srv.close());
  const { dir, exe, home } = install(seaX64);
  // Which of Node's own modules the turn loaded, written at exit by a preloaded script.
  const recorder = moduleRecorder(dir, { flags: true });
  const ask = async () => {
    const p = start(exe, ['agent', '-m', 'hi'], { env: cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: srv.url, NODE_OPTIONS: recorder.nodeOptions }), cwd: dir });
    let out = '';
    p.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    t.equal((await p.exited).code, 0, p.stderr());
    t.equal(out, 'hello from the stand-in\n');
  };
  await ask();
  // The SDK's Headers and the answer's Response are pinclaw's (src/net/fetch-headers.ts): Node's
  // are undici's, whose whole bundle a first use loads (24-40 ms, 2.8 MiB of heap).
  const modules = recorder.loaded();
  t.ok(modules.some((m) => m === 'NativeModule http'), 'the list is of the turn\'s process (it made its request over node:http)');
  t.same(modules.filter((m) => /undici/.test(m)), [], 'the turn loaded nothing of undici');
  // Node's code cache of its built-ins holds only under V8's default flags: the loader
  // (scripts/sea-main.cjs) loads what a turn needs before it sets the executable's flags, and a
  // built-in first loaded later (the SDK's web streams) under V8's defaults (src/v8-flags.ts). One
  // compiled under the executable's flags is compiled from its source, 2-3 times slower.
  t.ok(recorder.flagsSet().includes('--optimize-for-size'), 'the loader set the executable\'s flags');
  t.ok(modules.includes('NativeModule internal/webstreams/adapters'), 'the turn loaded the web streams (Readable.toWeb)');
  t.same(recorder.underFlags(), [], 'no built-in compiled under the executable\'s flags');
  // A one-shot turn keeps the SDK chunk's code cache too (it loads the chunk in a new process each
  // time): written at the first exit, and taken by the next run, which therefore writes none (a
  // refused cache is written again, as a new file).
  const cacheFile = () => readdirSync(join(home, 'cache', 'lazy')).filter((f) => f.startsWith('anthropic-sdk-'));
  const [file] = cacheFile();
  t.ok(file, 'the SDK chunk\'s cache written');
  const before = statSync(join(home, 'cache', 'lazy', file!)).ino;
  await ask();
  t.same(cacheFile(), [file], 'one file');
  t.equal(statSync(join(home, 'cache', 'lazy', file!)).ino, before, 'taken, not written again');
});

t.test('x64 executable: a gateway\'s first turn after a restart takes Node\'s built-ins from its code cache', async (t) => {
  const srv = await startAnthropicServer(textReply('pong'));
  t.teardown(() => srv.close());
  const { dir, exe, home } = install(seaX64);
  const token = 'f'.repeat(48);
  const recorder = moduleRecorder(dir, { flags: true });
  const turn = async (ask: boolean) => {
    const gw = start(exe, ['gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home, PINCLAW_GATEWAY_TOKEN: token, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: srv.url, NODE_OPTIONS: recorder.nodeOptions }), cwd: dir });
    t.teardown(() => gw.child.kill('SIGKILL'));
    const url = (await gw.waitFor(/gateway listening on (http:\/\/\S+)/))[1]!;
    if (ask) {
      const res = await fetch(`${url}/api/chat`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ session: 's', text: 'ping' }) });
      t.match(await res.text(), /pong/, 'answered');
    }
    gw.child.kill('SIGTERM');
    t.equal((await gw.exited).code, 0, gw.stderr());
  };
  await turn(false); // the first start: the addons extracted, the chunks' caches written
  await turn(true);
  // What the turn loads after the start (the token check's crypto, the lazy chunks' zlib, the
  // memory's fs/promises and watcher, the SDK's web streams), each under V8's defaults for its load
  // (src/v8-flags.ts loadBuiltin): compiled under the executable's flags they took 2-3 times as long.
  const modules = recorder.loaded();
  for (const m of ['crypto', 'zlib', 'fs/promises', 'internal/fs/watchers', 'internal/webstreams/readablestream']) t.ok(modules.includes(`NativeModule ${m}`), `the gateway loaded ${m}`);
  t.ok(recorder.flagsSet().includes('--optimize-for-size'), 'the loader set the executable\'s flags');
  t.same(recorder.underFlags(), [], 'no built-in compiled under the executable\'s flags');
  t.notOk(modules.includes('NativeModule tty'), 'nor node:tty, which only the command line asks');
});

t.test('x64 executable: a command of the command line takes Node\'s built-ins from its code cache', async (t) => {
  const { dir, exe, home } = install(seaX64);
  const recorder = moduleRecorder(dir, { flags: true });
  // `tool run` takes the governed tool path, which times each call (node:perf_hooks).
  for (const args of [['config', 'get', 'agent.timezone'], ['cron', 'list'], ['tool', 'run', 'current_time', '{}']]) {
    const r = run(exe, args, { env: cleanEnv({ PINCLAW_HOME: home, NODE_OPTIONS: recorder.nodeOptions }), cwd: dir });
    t.equal(r.code, 0, r.stderr);
    // The loader loads what the bundle's top level loads (node:os, node:module) before the flags.
    t.ok(recorder.flagsSet().includes('--optimize-for-size'), 'the loader set the executable\'s flags');
    t.same(recorder.underFlags(), [], `${args.join(' ')}: no built-in compiled under the executable's flags`);
  }
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
  mkdirSync(join(home, 'workspace'), { recursive: true });
  writeFileSync(join(home, 'config.json'), JSON.stringify({ web: { allowedHosts: ['127.0.0.5'] } }));
  writeFileSync(join(home, 'workspace', 'notes.txt'), 'abab\nabba\n');
  const url = `http://127.0.0.5:${(server.address() as import('node:net').AddressInfo).port}/`;
  const env = cleanEnv({ PINCLAW_HOME: home });
  const fetched = start(exe, ['tool', 'run', 'web_fetch', JSON.stringify({ url })], { env, cwd: dir });
  let out = '';
  fetched.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  t.equal((await fetched.exited).code, 0, fetched.stderr());
  t.match(out, /# Board\n\n## Relay\n\n- on\n\n\u201cok\u201d/, 'the web fetch (node:http) and the HTML chunk, from the executable');
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

t.test('x64 executable: the chunks a start loads take their code caches at the next start', async (t) => {
  // A start lets V8's young generation grow until its first turn of the event loop (src/v8-flags.ts),
  // and V8 refuses a code cache made under other flags: the chunks a start loads (mqtt by the config
  // checks, telegram by the channels) must still find theirs, written at the previous exit.
  const { dir, exe, home } = install(seaX64);
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, 'config.json'), JSON.stringify({ mqtt: { url: 'mqtt://127.0.0.1:9' } }));
  // Debug from the environment: the config checks load the mqtt chunk before the config's level is set.
  const env = cleanEnv({ PINCLAW_HOME: home, PINCLAW_LOG_LEVEL: 'debug', PINCLAW_CHANNELS_TELEGRAM_TOKEN: '1:x', PINCLAW_CHANNELS_TELEGRAM_API_BASE_URL: 'http://127.0.0.1:9' });
  const once = async () => {
    const gw = start(exe, ['gateway', '--port', '0'], { env, cwd: dir });
    t.teardown(() => gw.child.kill('SIGKILL'));
    await gw.waitFor(/gateway listening/);
    gw.child.kill('SIGTERM');
    t.equal((await gw.exited).code, 0, 'stops cleanly');
    return gw.stderr();
  };
  const first = await once();
  t.notMatch(first, /lazy chunk \S+: compiled from its code cache/, 'a fresh home has no caches');
  t.same(readdirSync(join(home, 'cache', 'lazy')).map((f) => f.replace(/-[0-9a-f]{8}\.v8c$/, '')).sort(), ['fetch-headers', 'http-fetch', 'mqtt', 'telegram'], 'written at exit');
  const second = await once();
  for (const name of ['mqtt', 'telegram']) t.match(second, new RegExp(`^debug: lazy chunk ${name}: compiled from its code cache$`, 'm'), `${name} from its cache`);
  t.notMatch(second, /refused its code cache/);
});

t.test('arm64 executable under qemu-aarch64-static', async (t) => {
  const { dir, exe, home } = install(seaArm64);
  const env = cleanEnv({ PINCLAW_HOME: home });
  const qemu = (args: string[]) => run('qemu-aarch64-static', ['-L', arm64Sysroot, exe, ...args], { env, cwd: dir, timeoutMs: 300_000 });
  const v = qemu(['--version']);
  t.equal(v.code, 0, v.stderr);
  t.match(v.stdout, /^pinclaw \d+\.\d+\.\d+\n$/);
  const recorder = moduleRecorder(dir, { flags: true });
  const d = run('qemu-aarch64-static', ['-L', arm64Sysroot, exe, 'doctor', '--json'], { env: { ...env, PINCLAW_CODE_CACHE_REPORT: '1', NODE_OPTIONS: recorder.nodeOptions }, cwd: dir, timeoutMs: 300_000 });
  t.equal(d.code, 0, d.stderr);
  t.match(d.stderr, /^code cache: accepted$/m, 'V8 took the code cache made under qemu');
  // V8's defaults are the same on arm64 (src/v8-flags.ts sets them for a built-in's load).
  t.ok(recorder.flagsSet().includes('--optimize-for-size'), 'the loader set the executable\'s flags');
  t.same(recorder.underFlags(), [], 'no built-in compiled under the executable\'s flags');
  checkDoctor(t, d.stdout, 'arm64');
  const tokens = run('qemu-aarch64-static', ['-L', arm64Sysroot, exe, 'tokens', '-'], { env, cwd: dir, input: 'hello', timeoutMs: 300_000 });
  t.equal(tokens.stdout, '1\n', `tokens: ${tokens.stderr}`);
  t.equal(tokens.stderr, '', 'the arm64 addon counted, not the fallback');
});
