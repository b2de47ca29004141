// I2C without a bus: this container has no /dev/i2c-*, so these tests cover what does not need one:
// the real addon's failures on missing buses, non-adapters and unreadable files (against the wording
// of the TypeScript counterpart, and against i2c-bus where it can reach them), argument checks
// (addon against validate.ts), bus listing over a fake sysfs, the scan's address plan, the choice of
// bus operation, the backend chooser, and the self-test's logic over a model of i2c-stub. What the
// kernel does on a real bus is checked in the VM (see test/support/i2c-vm-check.mjs).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root, tempDir } from './support/proc.js';
import { backendFrom } from '../src/hardware/i2c/backend.js';
import { busNumbers, listBuses } from '../src/hardware/i2c/buses.js';
import { describeI2cFailure, I2cError, i2cError, targetOf, type I2cFailure } from '../src/hardware/i2c/errors.js';
import { i2cBusBackend, loadI2cBus } from '../src/hardware/i2c/i2c-bus.js';
import { chooseI2cBackend } from '../src/hardware/i2c/index.js';
import { i2cAddon, nativeBackend, type I2cAddon } from '../src/hardware/i2c/native.js';
import { planRead, planWrite, readResult } from '../src/hardware/i2c/plan.js';
import { runScan, scanMethod, scanPlan } from '../src/hardware/i2c/scan.js';
import { i2cSelfTest, STUB_ADAPTER_NAME } from '../src/hardware/i2c/selftest.js';
import type { I2cFuncs, I2cPrimitives, SmbusCall } from '../src/hardware/i2c/types.js';
import * as v from '../src/hardware/i2c/validate.js';
import { ALL_I2C_FUNCS } from './support/i2c-funcs.js';

const addon = i2cAddon();
if (!addon) throw new Error('the dev addon has no I2C: run npx node-gyp build');
const a: I2cAddon = addon;

const tmp = () => tempDir('pinclaw-i2c-');
const failure = (f: Partial<I2cFailure> & Pick<I2cFailure, 'code' | 'path' | 'step'>): I2cFailure => ({
  bus: targetOf(f.path).bus,
  address: null,
  operation: 'I2C_FUNCS',
  ...f,
});
/** name, code and message of an error, to compare two of them whole. */
const face = (e: unknown) => {
  const x = e as { name?: string; code?: string; message?: string };
  return { name: x.name, code: x.code, message: x.message };
};
async function caught(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

const ALL: I2cFuncs = ALL_I2C_FUNCS;
/** What i2c-stub offers by default: SMBus only. */
const SMBUS_ONLY: I2cFuncs = { ...ALL, i2c: false };

t.test('a missing bus: the addon, the native backend and i2c-bus all name it and list the buses here', async (t) => {
  const here = busNumbers('/dev');
  const expected = `no I2C bus 99 (/dev/i2c-99); buses here: ${here.length ? here.join(', ') : 'none'}`;
  t.equal(describeI2cFailure(failure({ code: 'ENOENT', path: '/dev/i2c-99', step: 'open' })), expected, 'the TypeScript wording');
  const direct = (await caught(() => a.i2cFuncs(99))) as I2cFailure & Error;
  t.match(direct, { message: expected, code: 'ENOENT', path: '/dev/i2c-99', bus: 99, address: null, step: 'open', operation: 'I2C_FUNCS' });
  for (const backend of [nativeBackend(), i2cBusBackend()]) {
    for (const [what, call] of [
      ['funcs', () => backend.funcs(99)],
      ['scan', () => backend.scan(99)],
      ['read', () => backend.read(99, 0x48, { register: 1, length: 1, mode: 'byte' })],
      ['write', () => backend.write(99, 0x48, { register: 1, bytes: [2], mode: 'byte' })],
    ] as const) {
      const err = await caught(call);
      t.ok(err instanceof I2cError, `${backend.kind} ${what}: an I2cError`);
      t.match(err, { message: expected, code: 'ENOENT', bus: 99, step: 'open' }, `${backend.kind} ${what}`);
    }
  }
});

t.test('a missing bus among others: the listing is by number, from the directory the bus would be in', async (t) => {
  const dev = tmp();
  for (const n of ['i2c-12', 'i2c-5', 'i2c-x', 'spi-0', 'i2c-']) writeFileSync(join(dev, n), '');
  const err = await caught(() => nativeBackend({ devRoot: dev }).funcs(7));
  const expected = `no I2C bus 7 (${dev}/i2c-7); buses here: 5, 12`;
  t.equal((err as Error).message, expected);
  t.equal(describeI2cFailure(failure({ code: 'ENOENT', path: `${dev}/i2c-7`, step: 'open' })), expected, 'the TypeScript wording');
  t.match(await caught(() => a.i2cSmbus('/nonexistent/dir/thing', 0x48, 'readByte', 0)), { message: 'no I2C adapter at /nonexistent/dir/thing (no such file)', code: 'ENOENT', bus: null });
  t.equal(describeI2cFailure(failure({ code: 'ENOENT', path: '/nonexistent/dir/thing', step: 'open' })), 'no I2C adapter at /nonexistent/dir/thing (no such file)');
});

t.test('a file that is not an I2C adapter: ENOTTY, named with the ioctl that found out', async (t) => {
  const dev = tmp();
  const file = join(dev, 'i2c-5');
  writeFileSync(file, 'not an adapter');
  const backend = nativeBackend({ devRoot: dev });
  const cases: [string, () => Promise<unknown>, string, string][] = [
    ['funcs', () => backend.funcs(5), 'I2C_FUNCS', 'I2C_FUNCS'],
    ['scan', () => backend.scan(5), 'I2C_FUNCS', 'I2C_FUNCS'],
    ['SMBus read', () => backend.read(5, 0x48, { register: 1, length: 1, mode: 'byte' }), 'I2C_SLAVE', 'SMBus readByteData'],
    ['SMBus write', () => backend.write(5, 0x48, { register: 1, bytes: [1, 2], mode: 'word' }), 'I2C_SLAVE', 'SMBus writeWordData'],
    ['I2C transfer', () => backend.read(5, 0x48, { register: 1, length: 4, mode: 'i2c' }), 'I2C_RDWR', 'I2C transfer'],
  ];
  for (const [what, call, step, operation] of cases) {
    const err = await caught(call);
    const expected = `${file} is not an I2C adapter (ENOTTY from ioctl ${step})`;
    t.match(err, { name: 'I2cError', code: 'ENOTTY', message: expected, step, operation, path: file, bus: 5 }, what);
    t.equal(describeI2cFailure(failure({ code: 'ENOTTY', path: file, step: step as I2cFailure['step'], operation, address: step === 'I2C_FUNCS' ? null : 0x48 })), expected, `${what}: the TypeScript wording`);
  }
  t.match(await caught(() => a.i2cFuncs('/dev/null')), { code: 'ENOTTY', message: '/dev/null is not an I2C adapter (ENOTTY from ioctl I2C_FUNCS)', bus: null }, 'a character device that is not one');
});

t.test('no descriptor outlives a call, on the failing paths too', async (t) => {
  const dev = tmp();
  writeFileSync(join(dev, 'i2c-5'), '');
  const fds = () => readdirSync('/proc/self/fd').length;
  const before = fds();
  const backend = nativeBackend({ devRoot: dev });
  // In flight together: more calls than the pool has threads.
  await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      caught(() => (i % 3 === 0 ? backend.funcs(5) : i % 3 === 1 ? backend.read(5, 0x48, { register: i & 0xff, length: 1, mode: 'byte' }) : backend.read(5, 0x48, { length: 8, mode: 'i2c' }))),
    ),
  );
  await Promise.all(Array.from({ length: 50 }, () => caught(() => backend.funcs(6))));
  t.equal(fds(), before);
});

t.test('permission denied: the addon names the device and the fix', async (t) => {
  const dir = tmp();
  chmodSync(dir, 0o755);
  const file = join(dir, 'i2c-3');
  writeFileSync(file, '');
  chmodSync(file, 0o600);
  const expected = `permission denied on ${file}: add the user to the 'i2c' group (sudo usermod -aG i2c $USER, then log in again)`;
  t.equal(describeI2cFailure(failure({ code: 'EACCES', path: file, step: 'open' })), expected, 'the TypeScript wording');
  // Root opens anything, so the addon runs as nobody in a child process there.
  const script = `const m = { exports: {} }; process.dlopen(m, ${JSON.stringify(join(root, 'build', 'Release', 'pinclaw.node'))});
m.exports.i2cFuncs(${JSON.stringify(file)}).then(() => console.log('{}'), (e) => console.log(JSON.stringify({ code: e.code, message: e.message, step: e.step })));`;
  const asRoot = process.getuid?.() === 0;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', ...(asRoot ? { uid: 65534, gid: 65534 } : {}) });
  t.equal(r.status, 0, r.stderr);
  t.same(JSON.parse(r.stdout), { code: 'EACCES', message: expected, step: 'open' });
});

t.test('argument checks: the addon and validate.ts throw the same errors', async (t) => {
  const same = async (what: string, native: () => unknown, ts: () => unknown, message: RegExp) => {
    const n = await caught(native);
    const s = await caught(ts);
    t.same(face(n), face(s), what);
    t.match((n as Error).message, message, `${what}: the message names the limit`);
    t.ok(n instanceof TypeError || n instanceof RangeError, `${what}: a TypeError or RangeError`);
  };
  for (const bad of [0x02, 0x78, 0x00, 0x7f, -1, 1.5, NaN, Infinity, 1e21, '0x48', null, undefined, {}]) {
    await same(`address ${String(bad)}`, () => a.i2cSmbus(1, bad as number, 'readByte', 0), () => v.checkAddress(bad), /^I2C address must be an integer from 0x03 to 0x77 \(0x00-0x02 and 0x78-0x7f are reserved\), got /);
  }
  t.match(face(await caught(() => a.i2cSmbus(1, 0x78, 'readByte', 0))), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: /got 0x78$/ });
  t.match(face(await caught(() => a.i2cSmbus(1, '0x48' as unknown as number, 'readByte', 0))), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: /got a string$/ });
  for (const bad of [256, -1, 2.5, 'a']) {
    await same(`register ${String(bad)}`, () => a.i2cSmbus(1, 0x48, 'readByteData', bad as number), () => v.checkRegister(bad), /^register must be an integer from 0 to 255, got /);
  }
  for (const bad of [256, -1, 0.5]) {
    await same(`byte ${bad}`, () => a.i2cSmbus(1, 0x48, 'writeByteData', 0, bad), () => v.checkByte(bad), /^byte must be an integer from 0 to 255, got /);
  }
  for (const bad of [65536, -1]) {
    await same(`word ${bad}`, () => a.i2cSmbus(1, 0x48, 'writeWordData', 0, bad), () => v.checkWord(bad), /^word must be an integer from 0 to 65535, got /);
  }
  for (const bad of [0, 33]) {
    await same(`block length ${bad}`, () => a.i2cSmbus(1, 0x48, 'readI2cBlockData', 0, bad), () => v.checkBlockLength(bad), /^length must be an integer from 1 to 32 \(the SMBus block limit\), got /);
  }
  for (const n of [0, 33]) {
    await same(`block of ${n} bytes`, () => a.i2cSmbus(1, 0x48, 'writeI2cBlockData', 0, new Uint8Array(n)), () => v.checkCount(n, 1, 32, 'bytes', 'the SMBus block limit'), /^bytes must hold 1 to 32 bytes \(the SMBus block limit\), got /);
  }
  for (const bad of [-1, 1.5, 2 ** 31]) {
    await same(`bus ${bad}`, () => a.i2cFuncs(bad), () => v.checkBus(bad), /^I2C bus must be a bus number \(an integer, 0 or more\) or a device path, got /);
  }
  t.match(face(await caught(() => a.i2cTransfer(1, 0x48, [{ read: 8193 }]))), { message: 'messages[0].read must be an integer from 1 to 8192 (the I2C_RDWR message limit), got 8193' });
  t.match(face(await caught(() => a.i2cTransfer(1, 0x48, [{ write: new Uint8Array(8193) }]))), { message: 'messages[0].write must hold 1 to 8192 bytes (the I2C_RDWR message limit), got 8193' });
  t.match(face(await caught(() => a.i2cTransfer(1, 0x48, []))), { message: 'an I2C transfer holds 1 to 42 messages (I2C_RDWR_IOCTL_MAX_MSGS), got 0' });
  t.match(face(await caught(() => a.i2cTransfer(1, 0x48, Array.from({ length: 43 }, () => ({ read: 1 }))))), { message: /holds 1 to 42 messages .*got 43$/ });
  t.match(face(await caught(() => a.i2cSmbus(1, 0x48, 'quick', 0, 2))), { message: 'quick bit must be 0 (write) or 1 (read), got 2' });
  t.match(face(await caught(() => a.i2cSmbus(1, 0x48, 'blockProcessCall' as 'quick', 0))), { name: 'TypeError', message: /^op must be one of quick, readByte, .*, got 'blockProcessCall'$/ });

  // The backends check first (i2c-bus alone would take 0x00-0x7f), so both refuse alike.
  for (const backend of [nativeBackend(), i2cBusBackend()]) {
    t.match(face(await caught(() => backend.read(1, 0x02, { length: 1 }))), { name: 'RangeError', message: /got 0x02$/ }, `${backend.kind}: address`);
    t.match(face(await caught(() => backend.write(1, 0x48, { register: 300, bytes: [1], mode: 'byte' }))), { message: 'register must be an integer from 0 to 255, got 300' });
    t.match(face(await caught(() => backend.write(1, 0x48, { register: 1, bytes: [1, 300], mode: 'i2c' }))), { message: 'bytes[1] must be an integer from 0 to 255, got 300' });
    t.match(face(await caught(() => backend.read(1, 0x48, { register: 1, length: 33, mode: 'block' }))), { message: 'length must be an integer from 1 to 32 (the SMBus block limit), got 33' });
    t.match(face(await caught(() => backend.read(1, 0x48, { length: 8193, mode: 'i2c' }))), { message: 'length must be an integer from 1 to 8192 (the I2C_RDWR message limit), got 8193' });
    t.match(face(await caught(() => backend.write(1, 0x48, { register: 1, bytes: new Uint8Array(8192), mode: 'i2c' }))), {
      message: 'a write, register included, must hold 1 to 8192 bytes (the I2C_RDWR message limit), got 8193',
    });
    t.match(face(await caught(() => backend.read(1, 0x48, { length: 2, mode: 'word' }))), { message: 'an SMBus word read needs a register' });
    t.match(face(await caught(() => backend.read(1, 0x48, { register: 1, length: 2, mode: 'byte' }))), { message: 'length must be 1 for an SMBus byte read, got 2' });
    t.match(face(await caught(() => backend.write(1, 0x48, { bytes: [] }))), { message: 'nothing to write: give a register or at least one byte' });
    t.match(face(await caught(() => backend.write(1, 0x48, { register: 1, bytes: [1, 2, 3], mode: 'word' }))), { message: 'an SMBus word write sends exactly 2 bytes ([low, high]), got 3' });
    t.match(face(await caught(() => backend.read(1, 0x48, { length: 1, mode: 'fast' as 'i2c' }))), { message: "mode must be one of auto, i2c, byte, word, block, got 'fast'" });
  }
});

t.test('bus listing: /dev/i2c-N by number, with the adapter names from a fake sysfs', async (t) => {
  const dev = tmp();
  const sys = tmp();
  for (const n of ['i2c-10', 'i2c-1', 'i2c-2', 'i2c-x', 'spidev0.0']) writeFileSync(join(dev, n), '');
  for (const [n, name] of [
    ['i2c-1', 'bcm2835 (i2c@7e804000)\n'],
    ['i2c-10', 'SMBus stub driver\n'],
    ['i2c-7', 'a bus without a device file\n'],
  ] as const) {
    mkdirSync(join(sys, n));
    writeFileSync(join(sys, n, 'name'), name);
  }
  t.same(await listBuses({ dev, sys }), [
    { bus: 1, path: join(dev, 'i2c-1'), name: 'bcm2835 (i2c@7e804000)' },
    { bus: 2, path: join(dev, 'i2c-2'), name: null },
    { bus: 10, path: join(dev, 'i2c-10'), name: 'SMBus stub driver' },
  ]);
  t.same(busNumbers(dev), [1, 2, 10]);
  t.same(await listBuses({ dev: join(dev, 'missing'), sys }), []);
  t.same(busNumbers(join(dev, 'missing')), []);
  t.same(await nativeBackend({ devRoot: dev, sysRoot: sys }).buses(), await listBuses({ dev, sys }), 'the backend lists the same');
});

t.test("the scan's address plan: i2cdetect's default probes, chosen by funcs", async (t) => {
  const plan = scanPlan(ALL);
  t.equal(plan.length, 0x77 - 0x03 + 1);
  t.same([plan[0]!.address, plan.at(-1)!.address], [0x03, 0x77], 'reserved 0x00-0x02 and 0x78-0x7f are never probed');
  const reads = plan.filter((s) => s.method === 'readByte').map((s) => s.address);
  t.same(reads, [...Array.from({ length: 8 }, (_, i) => 0x30 + i), ...Array.from({ length: 16 }, (_, i) => 0x50 + i)], 'receive byte at the EEPROM addresses');
  t.equal(plan.filter((s) => s.method === 'quick').length, 117 - 24, 'quick write everywhere else');
  t.ok(plan.every((s) => s.supported));
  t.same([scanMethod(0x2f), scanMethod(0x30), scanMethod(0x37), scanMethod(0x38), scanMethod(0x4f), scanMethod(0x50), scanMethod(0x5f), scanMethod(0x60)], ['quick', 'readByte', 'readByte', 'quick', 'quick', 'readByte', 'readByte', 'quick']);

  const noQuick = scanPlan({ quick: false, readByte: true });
  t.same(noQuick.filter((s) => s.supported).map((s) => s.address), reads, 'no quick: only the read addresses are probed; a read never stands in for quick');
  const noRead = scanPlan({ quick: true, readByte: false });
  t.equal(noRead.filter((s) => s.supported).length, 93, 'no receive byte: the EEPROM addresses are skipped, not quick-written');
  t.ok(noRead.filter((s) => s.supported).every((s) => s.method === 'quick'));
});

t.test('runScan: found, busy (a driver holds it), absent; a failure to reach the bus ends it', async (t) => {
  const probed: string[] = [];
  const f = (f: Partial<I2cFailure>) => i2cError({ code: 'ENXIO', path: '/dev/i2c-1', bus: 1, address: 0x10, operation: 'SMBus quick', step: 'I2C_SMBUS', ...f });
  const result = await runScan(1, { ...ALL, readByte: false }, async (address, method) => {
    probed.push(`${address.toString(16)}:${method}`);
    if (address === 0x48 || address === 0x76) return;
    if (address === 0x1a) throw f({ code: 'EBUSY', step: 'I2C_SLAVE' });
    throw f({ code: address === 0x20 ? 'ETIMEDOUT' : 'ENXIO' });
  });
  t.same(result, { bus: 1, found: [0x48, 0x76], busy: [0x1a], skipped: scanPlan(ALL).filter((s) => s.method === 'readByte').map((s) => s.address) });
  t.equal(probed.length, 93);
  t.ok(probed.includes('48:quick'));
  const err = await caught(() => runScan(1, ALL, async () => Promise.reject(f({ code: 'EACCES', step: 'open' }))));
  t.match(err, { code: 'EACCES' }, 'no permission is not "nothing found"');
});

t.test('which bus operation a read or write becomes', async (t) => {
  t.same(planRead({ register: 0x10, length: 6 }, ALL), { kind: 'transfer', messages: [{ write: Uint8Array.of(0x10) }, { read: 6 }] }, 'plain I2C: register write and read in one transaction');
  t.same(planRead({ length: 3 }, ALL), { kind: 'transfer', messages: [{ read: 3 }] });
  t.same(planWrite({ register: 0x10, bytes: [1, 2] }, ALL), { kind: 'transfer', messages: [{ write: Uint8Array.of(0x10, 1, 2) }] });
  t.same(planRead({ register: 0x10, length: 1 }, SMBUS_ONLY), { kind: 'smbus', call: { op: 'readByteData', register: 0x10 } });
  t.same(planRead({ length: 1 }, SMBUS_ONLY), { kind: 'smbus', call: { op: 'readByte' } });
  t.same(planRead({ register: 0x10, length: 2 }, SMBUS_ONLY), { kind: 'smbus', call: { op: 'readI2cBlockData', register: 0x10, length: 2 } }, 'N consecutive registers, like plain I2C');
  t.same(planRead({ register: 0x10, length: 2 }, { ...SMBUS_ONLY, readI2cBlockData: false }), { kind: 'smbus', call: { op: 'readWordData', register: 0x10 } }, 'a word where there is no block read');
  t.same(planRead({ register: 0x10, length: 40 }, SMBUS_ONLY), { kind: 'unsupported', what: 'reading 40 bytes from a register' });
  t.same(planRead({ length: 2 }, SMBUS_ONLY), { kind: 'unsupported', what: 'reading 2 bytes' });
  t.same(planWrite({ register: 0x10, bytes: [] }, SMBUS_ONLY), { kind: 'smbus', call: { op: 'writeByte', value: 0x10 } }, 'a register alone sets the pointer');
  t.same(planWrite({ bytes: [7] }, SMBUS_ONLY), { kind: 'smbus', call: { op: 'writeByte', value: 7 } });
  t.same(planWrite({ register: 0x10, bytes: [7] }, SMBUS_ONLY), { kind: 'smbus', call: { op: 'writeByteData', register: 0x10, value: 7 } });
  t.same(planWrite({ register: 0x10, bytes: [0xef, 0xbe], mode: 'word' }, null), { kind: 'smbus', call: { op: 'writeWordData', register: 0x10, value: 0xbeef } }, 'a word is [low, high] on the wire');
  t.same(planWrite({ register: 0x10, bytes: [1, 2, 3] }, SMBUS_ONLY), { kind: 'smbus', call: { op: 'writeI2cBlockData', register: 0x10, bytes: Uint8Array.of(1, 2, 3) } });
  t.same(planWrite({ bytes: [1, 2] }, SMBUS_ONLY), { kind: 'unsupported', what: 'writing 2 bytes' });
  t.same(readResult({ kind: 'smbus', call: { op: 'readWordData', register: 0 } }, 0xbeef), Uint8Array.of(0xef, 0xbe));
  t.same(readResult({ kind: 'transfer', messages: [{ write: Uint8Array.of(1) }, { read: 2 }] }, [Uint8Array.of(4, 5)]), Uint8Array.of(4, 5));

  // Auto mode asks the adapter first; what nothing fits is refused naming the bus.
  const smbusOnly: I2cPrimitives = {
    kind: 'native',
    path: (bus) => `/dev/i2c-${bus}`,
    buses: async () => [],
    funcs: async () => SMBUS_ONLY,
    transfer: async () => [],
    smbus: async () => null,
  };
  t.match(await caught(() => backendFrom(smbusOnly).read(3, 0x48, { register: 1, length: 40 })), {
    name: 'I2cError',
    code: 'EOPNOTSUPP',
    step: 'plan',
    message: 'bus 3 does not support reading 40 bytes from a register (EOPNOTSUPP)',
  });
});

t.test('the chooser: the addon when it has I2C, i2c-bus otherwise, and an override', async (t) => {
  t.equal(chooseI2cBackend({ env: {} }).backend.kind, 'native');
  t.match(chooseI2cBackend({ env: {} }).reason, 'the addon has I2C');
  t.equal(chooseI2cBackend({ env: { PINCLAW_I2C_BACKEND: 'i2c-bus' } }).backend.kind, 'i2c-bus');
  t.equal(chooseI2cBackend({ env: { PINCLAW_I2C_BACKEND: 'i2c-bus' }, backend: 'native' }).backend.kind, 'native', 'the option wins over the environment');
  const fallback = chooseI2cBackend({ env: {}, addon: null });
  t.equal(fallback.backend.kind, 'i2c-bus');
  t.match(fallback.reason, /^native I2C unavailable/);
  t.throws(() => chooseI2cBackend({ env: { PINCLAW_I2C_BACKEND: 'native' }, addon: null }), /native I2C backend was chosen by configuration, but it is unavailable/);
  t.throws(() => chooseI2cBackend({ env: { PINCLAW_I2C_BACKEND: 'smbus' } }), /PINCLAW_I2C_BACKEND must be one of auto, native, i2c-bus, got 'smbus'/);
  const lib = await loadI2cBus();
  t.equal(typeof lib.openPromisified, 'function', 'i2c-bus and its addon load on this Node');
});

/**
 * A model of i2c-stub (drivers/i2c/i2c-stub.c) with one chip, for the self-test's own logic: 256
 * 16-bit registers, byte and block calls on the low bytes, a pointer for send/receive byte, no plain
 * I2C, ENODEV elsewhere; and an address a driver holds (EBUSY from I2C_SLAVE). The real thing runs
 * in the VM.
 */
function stubModel(bus: number, chip: number, held?: number): I2cPrimitives {
  const words = new Uint16Array(256);
  let pointer = 0;
  const path = (b: number) => `/dev/i2c-${b}`;
  const fail = (b: number, address: number | null, code: string, step: I2cFailure['step'], operation: string) =>
    i2cError({ code, path: path(b), bus: b, address, operation, step });
  const low = (r: number) => words[r & 0xff]! & 0xff;
  const setLow = (r: number, v: number) => (words[r & 0xff] = (words[r & 0xff]! & 0xff00) | v);
  return {
    kind: 'native',
    path,
    buses: async () => [],
    funcs: async (b) => {
      if (b !== bus) throw fail(b, null, 'ENOENT', 'open', 'I2C_FUNCS');
      return SMBUS_ONLY;
    },
    transfer: async (b, address) => {
      throw fail(b, address, 'EOPNOTSUPP', 'I2C_RDWR', 'I2C transfer');
    },
    smbus: async (b, address, call: SmbusCall) => {
      if (address === held) throw fail(b, address, 'EBUSY', 'I2C_SLAVE', `SMBus ${call.op}`);
      if (address !== chip) throw fail(b, address, 'ENODEV', 'I2C_SMBUS', `SMBus ${call.op}`);
      switch (call.op) {
        case 'quick':
          return null;
        case 'readByte':
          return low(pointer++);
        case 'writeByte':
          pointer = call.value;
          return null;
        case 'readByteData':
          pointer = call.register + 1;
          return low(call.register);
        case 'writeByteData':
          pointer = call.register + 1;
          setLow(call.register, call.value);
          return null;
        case 'readWordData':
          return words[call.register]!;
        case 'writeWordData':
          words[call.register] = call.value;
          return null;
        case 'readI2cBlockData':
          return Uint8Array.from({ length: Math.min(call.length, 256 - call.register) }, (_, i) => low(call.register + i));
        case 'writeI2cBlockData':
          call.bytes.forEach((x, i) => setLow(call.register + i, x));
          return null;
      }
    },
  };
}

t.test('the self-test: refuses anything but i2c-stub, and its checks hold on a model of it', async (t) => {
  const sys = tmp();
  mkdirSync(join(sys, 'i2c-1'));
  writeFileSync(join(sys, 'i2c-1', 'name'), 'bcm2835 (i2c@7e804000)\n');
  await t.rejects(i2cSelfTest(1, 0x48, { roots: { sys } }), { message: 'the I2C self-test writes registers, so it runs only on i2c-stub ("SMBus stub driver"); bus 1 is "bcm2835 (i2c@7e804000)"' });
  await t.rejects(i2cSelfTest(2, 0x48, { roots: { sys } }), { message: /bus 2 is not there or has no name/ });

  mkdirSync(join(sys, 'i2c-0'));
  writeFileSync(join(sys, 'i2c-0', 'name'), `${STUB_ADAPTER_NAME}\n`);
  const model = stubModel(0, 0x48, 0x50);
  // One chip seen through both "backends": what one writes, the other reads.
  const report = await i2cSelfTest(0, 0x48, { roots: { sys, dev: tmp() }, native: backendFrom(model), i2cBus: backendFrom({ ...model, kind: 'i2c-bus' }) });
  for (const c of report.checks) t.ok(c.ok, `${c.name}: expected ${c.expected}, native ${c.native}, i2c-bus ${c.i2cBus}`);
  t.equal(report.ok, true);
  t.equal(report.checks.length, 17);
  t.match(report.checks.find((c) => c.name === 'an address a kernel driver holds'), {
    native: 'error EBUSY: address 0x50 on bus 0 is in use by a kernel driver (EBUSY); pinclaw does not take it from the driver',
  });
  t.match(report.checks.find((c) => c.name === 'scan finds the chip'), { native: 'found 0x48; busy 0x50; skipped 0' });
  t.same(report.snapshot, { native: '00 00 00 00 00 00 00 00', 'i2c-bus': '00 00 00 00 00 00 00 00' });

  const half = await i2cSelfTest(0, 0x48, { roots: { sys, dev: tmp() }, native: backendFrom(stubModel(0, 0x48)), i2cBus: null });
  t.equal(half.ok, false, 'a backend that cannot run fails the report');
  t.equal(half.unavailable['i2c-bus'], 'not given');
});
