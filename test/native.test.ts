// The addon against its TypeScript reference, and the loader's fallback when the addon is missing.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { addonStatus, loadAddon } from '../src/native/loader.js';
import type { PinclawAddon } from '../src/native/index.js';
import * as reference from '../src/native/reference.js';
import { receiveDatagrams } from './support/dgram-receiver.js';
import { cleanEnv, runPinclaw, tempDir } from './support/proc.js';

const addon = loadAddon<PinclawAddon>('pinclaw');

t.test('the dev addon loads and describes itself', async (t) => {
  const status = addonStatus('pinclaw');
  t.equal(status.source, 'dev');
  t.match(status.path, /build\/Release\/pinclaw\.node$/);
  const info = addon.info();
  t.equal(info.arch, process.arch);
  t.equal(info.napiVersion, 8);
  for (const f of ['info', 'notify', 'memory', 'tokenizer', 'ranking']) t.ok(info.features.includes(f), `feature ${f}`);
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
