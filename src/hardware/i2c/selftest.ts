// A self-test against the kernel's i2c-stub (a fake SMBus chip: a register file of 256 16-bit
// words), run inside the VM tests, where the real i2c-stub and i2c-dev modules give a real
// /dev/i2c-N. Every value is written by one backend and read back by both, so the addon and the
// i2c-bus reference are compared call for call on a real kernel. It writes registers, so it refuses
// any adapter but i2c-stub.
//
// What i2c-stub does (drivers/i2c/i2c-stub.c), which the expectations follow: byte-data and I2C-block
// calls touch the low byte of each word, word-data calls the whole word; "send byte" sets the
// register pointer and "receive byte" reads the low byte there and moves it on; it has no plain I2C
// (so I2C_RDWR fails with EOPNOTSUPP); an address with no chip answers ENODEV. The i2c-bus backend
// always opens /dev/i2c-N, so the checks name /dev paths.
import { adapterName, busNumbers, DEFAULT_DEV, type I2cRoots } from './buses.js';
import { describeI2cFailure, NO_ANSWER } from './errors.js';
import { i2cBusBackend } from './i2c-bus.js';
import { nativeBackend } from './native.js';
import type { I2cBackend, I2cBackendKind, I2cFuncName, I2cFuncs, I2cReadOptions, I2cScanResult, I2cWriteOptions } from './types.js';

export const STUB_ADAPTER_NAME = 'SMBus stub driver';

/** The registers the VM script fills with i2cset before the self-test, read back as `snapshot`. */
export const SNAPSHOT_REGISTER = 0x70;
export const SNAPSHOT_LENGTH = 8;

export interface I2cSelfTestCheck {
  name: string;
  expected: string;
  /** What each backend gave: bytes in hex, a scan, funcs, or "error CODE: message". */
  native: string;
  i2cBus: string;
  ok: boolean;
}

export interface I2cSelfTestReport {
  bus: number;
  address: number;
  adapter: string | null;
  /** Why a backend could not run, or null when it ran. */
  unavailable: Record<I2cBackendKind, string | null>;
  /** Registers SNAPSHOT_REGISTER.. as each backend read them before anything was written. */
  snapshot: Record<I2cBackendKind, string>;
  /** What the test leaves in the chip, for a check by an independent tool (i2cget): register → low byte. */
  leaves: { register: number; byte: number }[];
  /** The same for word registers: register → word. */
  leavesWords: { register: number; word: number }[];
  checks: I2cSelfTestCheck[];
  ok: boolean;
}

export interface I2cSelfTestOptions {
  roots?: I2cRoots;
  /** Backends to compare; default: the addon and i2c-bus. null: unavailable (with the reason in `unavailable`). */
  native?: I2cBackend | null;
  i2cBus?: I2cBackend | null;
}

const hexBytes = (b: Uint8Array | readonly number[]) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(' ');
const hexAddr = (a: number) => `0x${a.toString(16).padStart(2, '0')}`;
const scanText = (s: I2cScanResult) => `found ${s.found.map(hexAddr).join(' ') || '-'}; busy ${s.busy.map(hexAddr).join(' ') || '-'}; skipped ${s.skipped.length}`;
const FUNC_NAMES: readonly I2cFuncName[] = ['i2c', 'tenBitAddress', 'smbusPec', 'quick', 'readByte', 'writeByte', 'readByteData', 'writeByteData', 'readWordData', 'writeWordData', 'readBlockData', 'writeBlockData', 'readI2cBlockData', 'writeI2cBlockData'];
const funcsText = (f: I2cFuncs) => FUNC_NAMES.filter((n) => f[n] === true).join(' ');
const STUB_FUNCS = 'quick readByte writeByte readByteData writeByteData readWordData writeWordData readI2cBlockData writeI2cBlockData';

function errorText(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  return `error ${typeof e?.code === 'string' ? e.code : 'none'}: ${typeof e?.message === 'string' ? e.message : String(err)}`;
}

async function outcome<T>(fn: () => Promise<T>, show: (v: T) => string): Promise<string> {
  try {
    return show(await fn());
  } catch (err) {
    return errorText(err);
  }
}

function availability(given: I2cBackend | null | undefined, make: () => I2cBackend): { backend: I2cBackend | null; reason: string | null } {
  if (given === null) return { backend: null, reason: 'not given' };
  if (given) return { backend: given, reason: null };
  try {
    return { backend: make(), reason: null };
  } catch (err) {
    return { backend: null, reason: errorText(err) };
  }
}

const bytes = (from: number, n: number, step = 1) => Array.from({ length: n }, (_, i) => (from + i * step) & 0xff);

export async function i2cSelfTest(bus: number, address: number, options: I2cSelfTestOptions = {}): Promise<I2cSelfTestReport> {
  const adapter = await adapterName(bus, options.roots);
  if (adapter !== STUB_ADAPTER_NAME) {
    throw new Error(`the I2C self-test writes registers, so it runs only on i2c-stub ("${STUB_ADAPTER_NAME}"); bus ${bus} is ${adapter === null ? 'not there or has no name' : `"${adapter}"`}`);
  }
  const nat = availability(options.native, () => nativeBackend({ devRoot: options.roots?.dev, sysRoot: options.roots?.sys }));
  const ref = availability(options.i2cBus, () => i2cBusBackend({ sysRoot: options.roots?.sys }));
  const report: I2cSelfTestReport = {
    bus,
    address,
    adapter,
    unavailable: { native: nat.reason, 'i2c-bus': ref.reason },
    snapshot: { native: '', 'i2c-bus': '' },
    leaves: [],
    leavesWords: [],
    checks: [],
    ok: false,
  };
  const backends: Record<I2cBackendKind, I2cBackend | null> = { native: nat.backend, 'i2c-bus': ref.backend };
  const each = async (fn: (b: I2cBackend) => Promise<string>): Promise<Record<I2cBackendKind, string>> => ({
    native: backends.native ? await fn(backends.native) : `unavailable: ${nat.reason}`,
    'i2c-bus': backends['i2c-bus'] ? await fn(backends['i2c-bus']) : `unavailable: ${ref.reason}`,
  });
  const check = (name: string, expected: string, got: Record<I2cBackendKind, string>, ok = got.native === expected && got['i2c-bus'] === expected) => {
    report.checks.push({ name, expected, native: got.native, i2cBus: got['i2c-bus'], ok });
  };
  const read = (opts: I2cReadOptions, at = address) => each((b) => outcome(() => b.read(bus, at, opts), hexBytes));
  /** Written by one backend, read back by both. */
  const roundTrip = async (name: string, writer: I2cBackendKind, w: I2cWriteOptions, r: I2cReadOptions, expected: readonly number[]) => {
    const by = backends[writer];
    const wrote = by ? await outcome(() => by.write(bus, address, w), () => 'ok') : `unavailable`;
    check(`${name} (written by ${writer}: ${wrote})`, hexBytes(expected), await read(r));
  };

  report.snapshot = await read({ register: SNAPSHOT_REGISTER, length: SNAPSHOT_LENGTH, mode: 'block' });
  check('funcs', STUB_FUNCS, await each((b) => outcome(() => b.funcs(bus), funcsText)));
  const scanned: Partial<Record<I2cBackendKind, I2cScanResult>> = {};
  const scans = await each((b) => outcome(async () => (scanned[b.kind] = await b.scan(bus)), scanText));
  check('scan finds the chip', scans.native, scans, scans.native === scans['i2c-bus'] && (scanned.native?.found.includes(address) ?? false));

  await roundTrip('byte data', 'native', { register: 0x10, bytes: [0xa5], mode: 'byte' }, { register: 0x10, length: 1, mode: 'byte' }, [0xa5]);
  await roundTrip('byte data', 'i2c-bus', { register: 0x11, bytes: [0x5a], mode: 'byte' }, { register: 0x11, length: 1, mode: 'byte' }, [0x5a]);
  check(
    'send byte (pointer) then receive byte',
    'a5',
    await each((b) =>
      outcome(async () => {
        await b.write(bus, address, { register: 0x10, bytes: [], mode: 'byte' });
        return b.read(bus, address, { length: 1, mode: 'byte' });
      }, hexBytes),
    ),
  );
  await roundTrip('word data', 'native', { register: 0x20, bytes: [0xef, 0xbe], mode: 'word' }, { register: 0x20, length: 2, mode: 'word' }, [0xef, 0xbe]);
  await roundTrip('word data', 'i2c-bus', { register: 0x21, bytes: [0x34, 0x12], mode: 'word' }, { register: 0x21, length: 2, mode: 'word' }, [0x34, 0x12]);
  await roundTrip('I2C block', 'native', { register: 0x40, bytes: bytes(1, 8), mode: 'block' }, { register: 0x40, length: 8, mode: 'block' }, bytes(1, 8));
  await roundTrip('I2C block', 'i2c-bus', { register: 0x50, bytes: bytes(0xf0, 8), mode: 'block' }, { register: 0x50, length: 8, mode: 'block' }, bytes(0xf0, 8));
  await roundTrip('I2C block of 32 (the SMBus limit)', 'native', { register: 0x80, bytes: bytes(7, 32, 3), mode: 'block' }, { register: 0x80, length: 32, mode: 'block' }, bytes(7, 32, 3));
  // No plain I2C on the stub: auto picks the SMBus calls.
  await roundTrip('auto mode (I2C block on an SMBus-only adapter)', 'i2c-bus', { register: 0x60, bytes: [0x11, 0x22, 0x33] }, { register: 0x60, length: 3 }, [0x11, 0x22, 0x33]);
  check('auto mode, one byte', '5a', await read({ register: 0x11, length: 1 }));

  // Many calls in flight at once: each must get its own register's value (separate descriptors, the pool's threads).
  const regs = [...bytes(0x40, 8), ...bytes(0x50, 8)];
  const want = regs.map((r) => (r < 0x50 ? r - 0x40 + 1 : 0xf0 + r - 0x50));
  check(
    '16 reads at once',
    hexBytes(want),
    await each((b) => outcome(async () => (await Promise.all(regs.map((register) => b.read(bus, address, { register, length: 1, mode: 'byte' })))).map((x) => x[0]!), hexBytes)),
  );

  const noI2c = describeI2cFailure({ code: 'EOPNOTSUPP', path: `${DEFAULT_DEV}/i2c-${bus}`, bus, address, operation: 'I2C transfer', step: 'I2C_RDWR' });
  check('plain I2C on an SMBus-only adapter', `error EOPNOTSUPP: ${noI2c}`, await read({ register: 0x40, length: 2, mode: 'i2c' }));

  // A driver's address (the VM binds at24 to a second stub chip): I2C_SLAVE refuses it, and pinclaw never forces.
  const held = scanned.native?.busy[0];
  if (held !== undefined) {
    const heldMsg = describeI2cFailure({ code: 'EBUSY', path: `${DEFAULT_DEV}/i2c-${bus}`, bus, address: held, operation: 'SMBus readByteData', step: 'I2C_SLAVE' });
    check('an address a kernel driver holds', `error EBUSY: ${heldMsg}`, await read({ register: 0, length: 1, mode: 'byte' }, held));
  }

  const seen = [...(scanned.native?.found ?? []), ...(scanned.native?.busy ?? [])];
  const absent = [address + 1, address - 1, 0x03].find((a) => a >= 0x03 && a <= 0x77 && !seen.includes(a)) ?? 0x03;
  const absentReads = await read({ register: 0, length: 1, mode: 'byte' }, absent);
  const absentMsg = `no device answered at ${hexAddr(absent)} on bus ${bus}`;
  check(
    'an address with no device',
    `error ENXIO|EREMOTEIO|EIO|ENODEV: ${absentMsg}`,
    absentReads,
    absentReads.native === absentReads['i2c-bus'] && [...NO_ANSWER].some((c) => absentReads.native === `error ${c}: ${absentMsg}`),
  );

  const missing = Math.max(bus, ...busNumbers(options.roots?.dev)) + 1;
  const missingMsg = describeI2cFailure({ code: 'ENOENT', path: `${DEFAULT_DEV}/i2c-${missing}`, bus: missing, address: null, operation: 'I2C_FUNCS', step: 'open' });
  check('a bus that is not there', `error ENOENT: ${missingMsg}`, await each((b) => outcome(() => b.funcs(missing), funcsText)));

  report.leaves = [
    { register: 0x10, byte: 0xa5 },
    { register: 0x11, byte: 0x5a },
    ...bytes(1, 8).map((byte, i) => ({ register: 0x40 + i, byte })),
    ...bytes(0xf0, 8).map((byte, i) => ({ register: 0x50 + i, byte })),
  ];
  report.leavesWords = [
    { register: 0x20, word: 0xbeef },
    { register: 0x21, word: 0x1234 },
  ];
  report.ok = report.checks.every((c) => c.ok) && nat.reason === null && ref.reason === null;
  return report;
}
