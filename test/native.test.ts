// The addon against its TypeScript reference, and the loader's fallback when the addon is missing.
import t from 'tap';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { addonStatus, loadAddon } from '../src/native/loader.js';
import type { PinclawAddon } from '../src/native/index.js';
import * as reference from '../src/native/reference.js';
import { receiveDatagrams } from './support/dgram-receiver.js';
import { arm64Addon, arm64Missing, arm64Node, arm64Sysroot, cleanEnv, run, runPinclaw, tempDir } from './support/proc.js';

const addon = loadAddon<PinclawAddon>('pinclaw');

t.test('the dev addon loads and describes itself', async (t) => {
  const status = addonStatus('pinclaw');
  t.equal(status.source, 'dev');
  t.match(status.path, /build\/Release\/pinclaw\.node$/);
  const info = addon.info();
  t.equal(info.arch, process.arch);
  t.equal(info.napiVersion, 8);
  for (const f of ['info', 'notify', 'memory', 'tokenizer', 'ranking', 'hmac']) t.ok(info.features.includes(f), `feature ${f}`);
});

t.test('notify: the addon sends exactly what the reference (systemd-notify) sends', async (t) => {
  for (const socket of [join(tempDir(), 'notify.sock'), `@pinclaw-test-${process.pid}`]) {
    const rx = await receiveDatagrams(socket);
    t.teardown(() => rx.close());
    const state = 'READY=1\nSTATUS=listening on http://127.0.0.1:7420';
    t.equal(addon.notify(socket, state), true);
    const viaAddon = await rx.next();
    t.equal(reference.notify(socket, state), true);
    const viaReference = await rx.next();
    t.equal(viaAddon, state, `${socket}: the datagram is the state, byte for byte`);
    t.equal(viaAddon, viaReference, `${socket}: addon and reference agree`);
  }
});

t.test('hmacSha256: the addon equals node:crypto (the reference) and RFC 4231', async (t) => {
  // RFC 4231, test case 2 (a key shorter than the block) and 6 (131 bytes of 0xaa, hashed first):
  // HMAC-SHA-256 in hex, as base64url here.
  const b64url = (hex: string) => Buffer.from(hex, 'hex').toString('base64url');
  t.equal(addon.hmacSha256('Jefe', 'what do ya want for nothing?'), b64url('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'));
  const long = String.fromCharCode(0xaa).repeat(131); // U+00AA is two bytes in UTF-8: not RFC's key bytes
  t.equal(addon.hmacSha256(long, 'x'), reference.hmacSha256(long, 'x'));
  // Random keys and texts: every length of key around the block (64 bytes) and the hashed-key
  // boundary, texts around SHA-256's block and padding boundaries (55, 56, 63, 64 bytes), Unicode,
  // lone surrogates (both sides make them U+FFFD), and a large text.
  let seed = 7;
  const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const pick = (alphabet: string[], n: number) => Array.from({ length: n }, () => alphabet[rand(alphabet.length)]!).join('');
  const alphabet = ['a', 'Z', '0', ' ', '"', '{', '\u00e9', '\u4e2d', '\ud83d\ude00', '\ud800', '\udc00', '\u0000'];
  let checked = 0;
  for (const keyLength of [0, 1, 31, 32, 63, 64, 65, 100, 200]) {
    for (const textLength of [0, 1, 55, 56, 63, 64, 65, 119, 120, 1000]) {
      const key = pick(alphabet, keyLength);
      const text = pick(alphabet, textLength);
      t.equal(addon.hmacSha256(key, text), reference.hmacSha256(key, text), `key of ${keyLength} and text of ${textLength} characters`);
      checked++;
    }
  }
  const big = pick(alphabet, 300_000);
  t.equal(addon.hmacSha256('k', big), reference.hmacSha256('k', big), 'a 300,000-character text');
  // Many keys (the addon's cache of padded keys is dropped past 64): each still right.
  for (let i = 0; i < 150; i++) {
    if (addon.hmacSha256(`key-${i}`, 'same') !== reference.hmacSha256(`key-${i}`, 'same')) t.fail(`key-${i}`);
  }
  t.equal(addon.hmacSha256('key-3', 'same'), reference.hmacSha256('key-3', 'same'), 'a key again after the cache was dropped');
  t.equal(checked, 90, "pairs compared");
});

t.test('hmacSha256: the arm64 addon of the single executable (under qemu) equals the reference', { skip: arm64Missing }, async (t) => {
  const cases: [string, string][] = [['Jefe', 'what do ya want for nothing?'], ['k'.repeat(100), '{"a":[1,2,"\u00e9"]}'], ['', ''], ['key', 'x'.repeat(5000)]];
  const script = `const a = require(process.argv[1]); process.stdout.write(JSON.stringify(${JSON.stringify(cases)}.map(([k, x]) => a.hmacSha256(k, x))));`;
  const r = run('qemu-aarch64-static', ['-L', arm64Sysroot, arm64Node, '-e', script, arm64Addon], { timeoutMs: 300_000 });
  t.equal(r.code, 0, r.stderr);
  t.same(JSON.parse(r.stdout), cases.map(([k, x]) => reference.hmacSha256(k, x)));
});

t.test('notify: bad input is an error, no socket is a no-op', async (t) => {
  t.equal(addon.notify('', 'READY=1'), false);
  t.equal(reference.notify('', 'READY=1'), false);
  t.throws(() => (addon.notify as (...a: unknown[]) => boolean)(1, 2), /notify\(socketPath: string, state: string\)/);
  t.throws(() => addon.notify('/nonexistent/dir/sock', 'READY=1'), /sendto \/nonexistent\/dir\/sock: No such file or directory/);
  t.throws(() => addon.notify('/' + 'x'.repeat(200), 'READY=1'), /socket path too long/);
});

t.test('native.enabled=false: pinclaw runs on the fallbacks and says so once', async (t) => {
  const home = tempDir();
  const r = runPinclaw(['doctor', '--json'], { env: cleanEnv({ PINCLAW_HOME: home, PINCLAW_NATIVE_ENABLED: 'false' }) });
  t.equal(r.code, 0, 'doctor passes: the fallbacks are a warning, not a failure');
  const report = JSON.parse(r.stdout) as { checks: { name: string; state: string; detail: string }[]; native: { info: unknown } };
  const check = report.checks.find((c) => c.name === 'native pinclaw')!;
  t.equal(check.state, 'warn');
  t.match(check.detail, /disabled by configuration \(native\.enabled = false\); using the TypeScript fallbacks/);
  t.equal(report.native.info, null);
});

t.test('trimMemory gives freed heap memory back to the OS', async (t) => {
  const { setFlagsFromString } = await import('node:v8');
  const { runInNewContext } = await import('node:vm');
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const anon = () => Number(/^RssAnon:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;
  // 60 MB in 4 KB blocks: below the mmap threshold, so they come from the C heap.
  let blocks: Buffer[] | null = Array.from({ length: 15_000 }, () => Buffer.alloc(4096, 1));
  const peak = anon();
  blocks = null;
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  const freed = anon();
  t.equal(typeof addon.trimMemory(), 'boolean');
  const trimmed = anon();
  t.ok(trimmed < freed - 20, `RssAnon ${peak.toFixed(0)} MiB at peak, ${freed.toFixed(0)} after free, ${trimmed.toFixed(0)} after trim`);
  t.equal(reference.trimMemory(), false, 'the reference cannot reach the allocator and says so');
  void blocks;
});

t.test('trimFilePages drops the pages of read-only file mappings and keeps what the process wrote', async (t) => {
  const status = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;
  // Touch code of Node and of the addon, so that there are file pages to drop.
  createHash('sha256').update('x').digest('hex');
  addon.info();
  const dry = addon.trimFilePages(true);
  t.ok(dry.mappings > 3, `${dry.mappings} read-only file mappings (node, the addon, libc, ...)`);
  t.ok(dry.fileBytes > 4 * 1024 * 1024, `${(dry.fileBytes / 2 ** 20).toFixed(1)} MiB of them mapped`);
  // RELRO: pages the dynamic linker relocated before making them read-only are the process's own.
  t.ok(dry.keptBytes > 0, `${dry.keptBytes} bytes written by the process found and kept`);
  const before = status('RssFile');
  const trimmed = addon.trimFilePages();
  const after = status('RssFile');
  t.ok(after < before - 4 * 1024 * 1024, `RssFile ${(before / 2 ** 20).toFixed(1)} -> ${(after / 2 ** 20).toFixed(1)} MiB (dropped ${(trimmed.fileBytes / 2 ** 20).toFixed(1)} MiB)`);
  t.equal(trimmed.keptBytes, dry.keptBytes, 'the written pages are still there, untouched');
  // What was dropped comes back from the file: Node, the addon and the relocated tables still work.
  t.equal(createHash('sha256').update('abc').digest('hex'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  t.equal(addon.info().arch, process.arch);
  t.equal(typeof addon.trimMemory(), 'boolean');
  t.throws(() => addon.trimFilePages('yes' as unknown as boolean), /trimFilePages\(dryRun\?: boolean\)/);
  t.equal(reference.trimFilePages(), null, 'the reference cannot call madvise and says so');
});

t.test('limitMallocArenas sets glibc\'s arena limit and refuses a count below one', async (t) => {
  t.equal(addon.limitMallocArenas(8), true, 'mallopt(M_ARENA_MAX) accepted (glibc)');
  t.throws(() => addon.limitMallocArenas(0), /limitMallocArenas\(count: number >= 1\)/);
  t.throws(() => addon.limitMallocArenas('1' as unknown as number), /limitMallocArenas\(count: number >= 1\)/);
  t.equal(reference.limitMallocArenas(), false, 'the reference cannot set it and says so');
});

/** Runs `body` in a fresh Node with --expose-gc and the dev addon as `a`; returns its last line as JSON. */
function inFreshNode<T>(body: string): T {
  const script = `const a = require(${JSON.stringify(addonStatus('pinclaw').path)});
const anon = () => Number(/RssAnon:\\s+(\\d+)/.exec(require('node:fs').readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
// V8 frees array buffers' memory on a background thread after a collection: wait for it.
const collect = async () => { for (let i = 0; i < 2; i++) { gc(); await new Promise((r) => setTimeout(r, 100)); } };
(async () => {
${body}
})();`;
  // A clean environment: tap's NODE_OPTIONS would load its loaders into the child and their memory.
  const out = execFileSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', env: cleanEnv() }).trim().split('\n');
  return JSON.parse(out[out.length - 1]!) as T;
}

t.test('fixMallocThresholds keeps a freed large block from raising glibc\'s thresholds for good', async (t) => {
  // A 16 MiB block comes and goes (glibc mmaps it, and by default raises its thresholds to its
  // size); then a 4 MiB one. With the thresholds raised it comes from the heap and stays resident
  // after free; with them fixed it is mmapped and unmapped by free.
  const body = (fix: boolean) => inFreshNode<{ fixed: boolean | null; kept: number }>(`
const fixed = ${fix} ? a.fixMallocThresholds(128 * 1024) : null;
let b = Buffer.allocUnsafeSlow(16 << 20); b.fill(1); b = null; await collect();
const before = anon();
let c = Buffer.allocUnsafeSlow(4 << 20); c.fill(1); c = null; await collect();
console.log(JSON.stringify({ fixed, kept: anon() - before }));`);
  const raised = body(false);
  const fixed = body(true);
  t.equal(fixed.fixed, true, 'mallopt accepted both thresholds (glibc)');
  t.ok(raised.kept > 3, `default thresholds: ${raised.kept.toFixed(1)} MiB of the freed 4 MiB block still resident`);
  t.ok(fixed.kept < 1, `fixed thresholds: ${fixed.kept.toFixed(1)} MiB still resident`);
  t.throws(() => addon.fixMallocThresholds(100), /fixMallocThresholds\(bytes: number from 4096 to 33554432\)/);
  t.throws(() => addon.fixMallocThresholds(64 << 20), /fixMallocThresholds\(bytes/);
  t.throws(() => addon.fixMallocThresholds('1' as unknown as number), /fixMallocThresholds\(bytes/);
  t.equal(reference.fixMallocThresholds(), false, 'the reference cannot set them and says so');
});

t.test('reduceHeap gives back the heap pages a full collection keeps', async (t) => {
  // Many young objects, some living a while: V8 grows its young generation and takes old-space
  // pages; a full collection frees the objects but keeps the pages committed.
  const body = (reduce: boolean) => inFreshNode<{ collected: number; after: number }>(`
let keep = [];
for (let i = 0; i < 300000; i++) { keep.push({ i, s: 'x'.repeat(20) + i, a: [i, i + 1] }); if (keep.length > 50000) keep = keep.slice(25000); }
keep = null;
await collect(); a.trimMemory();
const collected = anon();
if (${reduce}) a.reduceHeap(); else await collect();
a.trimMemory();
console.log(JSON.stringify({ collected, after: anon() }));`);
  const gcOnly = body(false);
  const reduced = body(true);
  const label = (r: { collected: number; after: number }) => `${r.collected.toFixed(0)} → ${r.after.toFixed(0)} MiB RssAnon`;
  t.ok(reduced.collected - reduced.after > 20, `reduceHeap after a full collection: ${label(reduced)}`);
  t.ok(reduced.collected - reduced.after > gcOnly.collected - gcOnly.after + 20, `more than another full collection gives: ${label(gcOnly)}`);
  t.doesNotThrow(() => reference.reduceHeap(), 'the reference runs a full collection');
});


t.test('openBeneath: the addon (openat2) and the reference (a /proc/self/fd walk) open the same thing or fail alike', async (t) => {
  const dir = tempDir('pinclaw-beneath-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'a', 'b'), { recursive: true });
  mkdirSync(join(dir, 'sibling'));
  writeFileSync(join(dir, 'a', 'b', 'file'), 'x');
  writeFileSync(join(dir, 'sibling', 'file'), 'y');
  symlinkSync('../sibling', join(dir, 'a', 'to-sibling'));
  symlinkSync('b/file', join(dir, 'a', 'flink'));
  symlinkSync('..', join(dir, 'a', 'up'));
  execFileSync('mkfifo', [join(dir, 'a', 'fifo')]);
  const rootFd = openSync(dir, reference.O_PATH | constants.O_DIRECTORY);
  t.teardown(() => closeSync(rootFd));

  // What one call gave: the errno, or the type and identity of the file opened.
  const outcome = (fd: number) => {
    if (fd < 0) return { errno: -fd };
    const st = fstatSync(fd);
    closeSync(fd);
    return { type: st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'link' : st.isFIFO() ? 'fifo' : st.isFile() ? 'file' : 'other', dev: st.dev, ino: st.ino };
  };
  const ino = (p: string) => lstatSync(join(dir, p)).ino;
  const { ELOOP, ENOENT, ENOTDIR, EXDEV } = osConstants.errno;
  const cases: [string, object][] = [
    ['a/b/file', { type: 'file', ino: ino('a/b/file') }],
    ['a//./b/file', { type: 'file', ino: ino('a/b/file') }],
    ['.', { type: 'dir', ino: ino('.') }],
    ['a/b', { type: 'dir', ino: ino('a/b') }],
    ['a/to-sibling/file', { errno: ELOOP }],
    ['a/up/a/b/file', { errno: ELOOP }],
    ['a/flink', { type: 'link', ino: ino('a/flink') }],
    ['a/fifo', { type: 'fifo' }],
    ['a/missing/x', { errno: ENOENT }],
    ['a/b/file/x', { errno: ENOTDIR }],
    ['a/../a/b/file', { errno: EXDEV }],
    ['../etc', { errno: EXDEV }],
    ['/etc/passwd', { errno: EXDEV }],
    ['', { errno: EXDEV }],
  ];
  for (const [path, want] of cases) {
    const viaAddon = outcome(addon.openBeneath(rootFd, path));
    const byHand = outcome(addon.openBeneath(rootFd, path, true));
    const viaReference = outcome(reference.openBeneath(rootFd, path));
    t.match(viaAddon, want, `${JSON.stringify(path)}: the addon gives ${JSON.stringify(want)}`);
    t.same(viaAddon, viaReference, `${JSON.stringify(path)}: addon (openat2) and reference agree`);
    t.same(byHand, viaReference, `${JSON.stringify(path)}: the addon's walk for older kernels agrees too`);
  }
  t.ok(addon.info().features.includes('beneath'), 'the addon says it has it');
  t.throws(() => (addon.openBeneath as (...a: unknown[]) => number)('x', 1), /openBeneath\(dirFd: number, path: string, byHand\?: boolean\)/);
});

// The reference walk holds one descriptor per directory part; before the fix, a part whose fstat
// failed was returned as -errno with its descriptor left open. fstat of a fresh O_PATH descriptor
// does not fail on a sound file system, so the failure is injected into node:fs (whose ESM named
// exports follow the module object after syncBuiltinESMExports, documented for exactly this).
t.test('openBeneath (reference): a failing fstat of a part leaks no descriptor', async (t) => {
  const dir = tempDir('pinclaw-beneath-fd-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'a', 'b'), { recursive: true });
  const { createRequire, syncBuiltinESMExports } = await import('node:module');
  const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
  const fdCount = () => fs.readdirSync('/proc/self/fd').length;
  const rootFd = openSync(dir, reference.O_PATH | constants.O_DIRECTORY);
  t.teardown(() => closeSync(rootFd));
  const realFstat = fs.fstatSync;
  const before = fdCount();
  let failed = 0;
  fs.fstatSync = ((..._args: unknown[]) => {
    failed++;
    throw Object.assign(new Error('EIO: i/o error, fstat'), { code: 'EIO' });
  }) as typeof fs.fstatSync;
  syncBuiltinESMExports();
  let result: number | string;
  try {
    result = reference.openBeneath(rootFd, 'a/b');
  } catch (err) {
    result = `threw ${String(err)}`;
  } finally {
    fs.fstatSync = realFstat;
    syncBuiltinESMExports();
  }
  t.equal(failed, 1, 'the injected failure was met');
  t.equal(fdCount(), before, 'no descriptor was left open');
  t.equal(result, -osConstants.errno.EIO, 'the failure comes back as -EIO, as the addon reports one');
});
