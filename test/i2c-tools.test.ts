// The I2C tools (src/hardware/i2c/tools.ts) above the backend: input schemas and their bounds, the
// text of scans, reads and writes, errors naming the bus, address and reason, a missing bus listing
// the buses there are, i2c_write's reads before and after and its `physical` record (also as the
// registry audits it), the write limiter. The backend is pinclaw's own (backend.ts: argument checks,
// the choice of bus operation, the scan) over a model of a bus with a few devices, so what runs
// above the primitives is real; the real primitives run against the kernel's i2c-stub in
// test/i2c-vm.test.ts.
import t from 'tap';
import { join } from 'node:path';
import { backendFrom } from '../src/hardware/i2c/backend.js';
import { i2cError } from '../src/hardware/i2c/errors.js';
import { i2cDeviceKey, i2cTools, type I2cToolDeps } from '../src/hardware/i2c/tools.js';
import type { I2cBackend, I2cBusInfo, I2cFuncs, I2cPrimitives, SmbusCall } from '../src/hardware/i2c/types.js';
import { queryAudit } from '../src/store/audit.js';
import { openDatabase } from '../src/store/db.js';
import { createRegistry } from '../src/tools/registry.js';
import { dbAudit } from '../src/setup/registry.js';
import type { Tool, ToolResult } from '../src/tools/types.js';
import { validateInput } from '../src/tools/validate.js';
import { tempDir } from './support/proc.js';
import { ALL_I2C_FUNCS } from './support/i2c-funcs.js';

const FULL: I2cFuncs = ALL_I2C_FUNCS;
/** An adapter with the quick probe only: a scan must skip the EEPROM ranges rather than quick-write them. */
const QUICK_ONLY: I2cFuncs = { ...FULL, i2c: false, readByte: false, readByteData: false, readWordData: false, readI2cBlockData: false };

const BUSES: I2cBusInfo[] = [
  { bus: 1, path: '/dev/i2c-1', name: 'bcm2835 (i2c@7e804000)' },
  { bus: 3, path: '/dev/i2c-3', name: null },
];

/**
 * Bus 1 (plain I2C and SMBus): a register file at 0x48 whose register 0x20 clears itself after a
 * write; an EEPROM-range device at 0x51; 0x50 held by a kernel driver; 0x3c NACKs every read
 * (a write-only display controller). Bus 3: quick probe only, nothing on it. Other buses: none.
 * Errors are I2cErrors worded as the addon's, from the same failure fields.
 */
function model() {
  const regs = new Map<number, Uint8Array>([
    [0x48, new Uint8Array(256)],
    [0x51, new Uint8Array(256)],
    [0x3c, new Uint8Array(256)],
  ]);
  const pointer = new Map<number, number>();
  const path = (bus: number) => `/dev/i2c-${bus}`;
  const fail = (bus: number, address: number | null, code: string, step: 'open' | 'I2C_SLAVE' | 'I2C_RDWR' | 'I2C_SMBUS', operation: string) =>
    i2cError({ code, path: path(bus), bus, address, operation, step });
  const open = (bus: number, operation: string) => {
    if (bus !== 1 && bus !== 3) throw fail(bus, null, 'ENOENT', 'open', operation);
  };
  /** The device at an address, or the error the bus gives for it. */
  const device = (bus: number, address: number, step: 'I2C_RDWR' | 'I2C_SMBUS', operation: string): Uint8Array => {
    if (bus === 1 && address === 0x50) throw fail(bus, address, 'EBUSY', 'I2C_SLAVE', operation);
    const r = bus === 1 ? regs.get(address) : undefined;
    if (!r) throw fail(bus, address, 'ENXIO', step, operation);
    return r;
  };
  const store = (address: number, r: Uint8Array, at: number, bytes: ArrayLike<number>) => {
    for (let i = 0; i < bytes.length; i++) r[(at + i) & 0xff] = address === 0x48 && at + i === 0x20 ? 0 : bytes[i]!;
    pointer.set(address, (at + bytes.length) & 0xff);
  };
  const load = (address: number, r: Uint8Array, at: number, n: number) => {
    if (address === 0x3c) throw fail(1, address, 'EREMOTEIO', 'I2C_RDWR', 'I2C transfer');
    const out = Uint8Array.from({ length: n }, (_, i) => r[(at + i) & 0xff]!);
    pointer.set(address, (at + n) & 0xff);
    return out;
  };
  const primitives: I2cPrimitives = {
    kind: 'native',
    path,
    buses: async () => BUSES,
    funcs: async (bus) => {
      open(bus, 'I2C_FUNCS');
      return bus === 1 ? FULL : QUICK_ONLY;
    },
    transfer: async (bus, address, messages) => {
      open(bus, 'I2C transfer');
      const r = device(bus, address, 'I2C_RDWR', 'I2C transfer');
      const out: Uint8Array[] = [];
      for (const m of messages) {
        if ('write' in m) {
          pointer.set(address, m.write[0]!);
          if (m.write.length > 1) store(address, r, m.write[0]!, m.write.subarray(1));
        } else {
          out.push(load(address, r, pointer.get(address) ?? 0, m.read));
        }
      }
      return out;
    },
    smbus: async (bus, address, call: SmbusCall) => {
      open(bus, `SMBus ${call.op}`);
      const r = device(bus, address, 'I2C_SMBUS', `SMBus ${call.op}`);
      switch (call.op) {
        case 'quick':
          return null;
        case 'readByte':
          return load(address, r, pointer.get(address) ?? 0, 1)[0]!;
        case 'writeByte':
          pointer.set(address, call.value);
          return null;
        case 'readByteData':
          return load(address, r, call.register, 1)[0]!;
        case 'readWordData': {
          const [lo, hi] = load(address, r, call.register, 2);
          return lo! | (hi! << 8);
        }
        case 'readI2cBlockData':
          return load(address, r, call.register, call.length);
        case 'writeByteData':
          store(address, r, call.register, [call.value]);
          return null;
        case 'writeWordData':
          store(address, r, call.register, [call.value & 0xff, call.value >> 8]);
          return null;
        case 'writeI2cBlockData':
          store(address, r, call.register, call.bytes);
          return null;
      }
    },
  };
  return { regs, backend: backendFrom(primitives) };
}

/** The backend with every call recorded, to see what touched the bus and in which order. */
function recorded(b: I2cBackend): { backend: I2cBackend; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    backend: {
      kind: b.kind,
      buses: () => b.buses(),
      funcs: (bus) => (calls.push(`funcs ${bus}`), b.funcs(bus)),
      scan: (bus) => (calls.push(`scan ${bus}`), b.scan(bus)),
      read: (bus, address, o) => (calls.push(`read ${bus} ${address.toString(16)} ${JSON.stringify(o)}`), b.read(bus, address, o)),
      write: (bus, address, o) => (calls.push(`write ${bus} ${address.toString(16)} ${JSON.stringify({ ...o, bytes: Array.from(o.bytes) })}`), b.write(bus, address, o)),
    },
  };
}

function setup(extra: Partial<I2cToolDeps> = {}) {
  const m = model();
  const rec = recorded(m.backend);
  const tools = i2cTools({ backend: () => rec.backend, buses: () => BUSES, ...extra });
  const byName = (name: string): Tool => tools.find((x) => x.name === name)!;
  const ctx = { sessionKey: 's', channel: 'cli', chatId: 'local', caller: 'owner' };
  /** Validated as the registry validates, then run: a schema violation never reaches execute. */
  const call = async (name: string, input: unknown): Promise<ToolResult> => {
    const problems = validateInput(byName(name).inputSchema, input);
    if (problems.length) throw new Error(`invalid input in a test: ${problems.join('; ')}`);
    return byName(name).execute(input, ctx);
  };
  return { ...m, ...rec, tools, byName, call };
}

t.test('three tools; the bus ones run one at a time, and i2c_write is a physical action', async (t) => {
  const { tools } = setup();
  t.same(tools.map((x) => x.name), ['i2c_scan', 'i2c_read', 'i2c_write']);
  t.same(tools.map((x) => x.sequential), [true, true, true], 'calls on a bus share its devices\' register pointers');
  t.same(tools.map((x) => x.physical ?? false), [false, false, true], 'only the write acts on the world');
  t.equal(i2cDeviceKey(1, 0x48), 'i2c-1@0x48');
  t.equal(i2cDeviceKey(12, 0x3), 'i2c-12@0x03');
});

t.test('input schemas: the bounds of bus, address, register, length, bytes and mode', async (t) => {
  const { byName } = setup();
  const errs = (tool: string, input: unknown) => validateInput(byName(tool).inputSchema, input);
  t.same(errs('i2c_scan', { bus: 0 }), []);
  t.same(errs('i2c_scan', { bus: -1 }), ['input.bus: must be >= 0']);
  t.same(errs('i2c_scan', { bus: 1.5 }), ['input.bus: expected integer, got a non-integer number']);
  t.same(errs('i2c_scan', {}), ['input.bus: required']);

  const read = { bus: 1, address: 0x48, length: 1 };
  t.same(errs('i2c_read', read), []);
  t.same(errs('i2c_read', { ...read, register: 255, length: 32, mode: 'block' }), []);
  t.same(errs('i2c_read', { ...read, address: 0x02 }), ['input.address: must be >= 3'], '0x00-0x02 are reserved');
  t.same(errs('i2c_read', { ...read, address: 0x78 }), ['input.address: must be <= 119'], '0x78-0x7f are reserved');
  t.same(errs('i2c_read', { ...read, register: 256 }), ['input.register: must be <= 255']);
  t.same(errs('i2c_read', { ...read, length: 0 }), ['input.length: must be >= 1']);
  t.same(errs('i2c_read', { ...read, length: 33 }), ['input.length: must be <= 32'], 'the SMBus block limit');
  t.same(errs('i2c_read', { ...read, mode: 'nibble' }), ['input.mode: must be one of "auto", "i2c", "byte", "word", "block"']);
  t.same(errs('i2c_read', { ...read, force: true }), ['input.force: unknown field']);

  const write = { bus: 1, address: 0x48, bytes: [0] };
  t.same(errs('i2c_write', write), []);
  t.same(errs('i2c_write', { ...write, bytes: [] }), [], 'a register pointer write sends no data');
  t.same(errs('i2c_write', { ...write, bytes: Array(32).fill(255) }), []);
  t.same(errs('i2c_write', { ...write, bytes: Array(33).fill(0) }), ['input.bytes: must have at most 32 items, got 33']);
  t.same(errs('i2c_write', { ...write, bytes: [0, 256, -1] }), ['input.bytes[1]: must be <= 255', 'input.bytes[2]: must be >= 0']);
  t.same(errs('i2c_write', { bus: 1, address: 0x48 }), ['input.bytes: required']);
});

t.test('i2c_scan: found, held by a driver, skipped; a missing bus lists the buses there are', async (t) => {
  const { call, calls } = setup();
  t.same(await call('i2c_scan', { bus: 1 }), {
    content: 'bus 1 (bcm2835 (i2c@7e804000)): 3 devices answered: 0x3c 0x48 0x51\nin use by a kernel driver (not probed; i2cdetect shows UU): 0x50',
  });
  t.same(await call('i2c_scan', { bus: 3 }), {
    content: 'bus 3: no device answered\nskipped (the adapter lacks the safe probe for them): 0x30-0x37 0x50-0x5f',
  }, 'an adapter without receive byte: the EEPROM ranges are skipped, shown as ranges');
  t.same(await call('i2c_scan', { bus: 7 }), {
    content: 'i2c_scan failed on bus 7: no I2C bus 7 (/dev/i2c-7); buses here: 1 (bcm2835 (i2c@7e804000)), 3',
    isError: true,
  });
  t.same(calls, ['scan 1', 'scan 3', 'scan 7']);

  const none = i2cTools({ backend: () => model().backend, buses: () => [] });
  t.same(await none[0]!.execute({ bus: 2 }, { sessionKey: 's', channel: 'cli', chatId: 'x' }), {
    content: 'i2c_scan failed on bus 2: no I2C bus 2 (/dev/i2c-2); buses here: none (is I2C enabled, and the i2c-dev module loaded?)',
    isError: true,
  }, 'a machine with no bus says what to check');
});

t.test('i2c_read: bytes in hex, a byte also in decimal, a word as one value; errors name bus, address and reason', async (t) => {
  const { call, regs } = setup();
  regs.get(0x48)!.set([0x2a, 0x01, 0x77], 0x10);
  t.same(await call('i2c_read', { bus: 1, address: 0x48, register: 0x10, length: 2 }), { content: 'bus 1, 0x48 register 0x10: 0x2a 0x01' });
  t.same(await call('i2c_read', { bus: 1, address: 0x48, register: 0x10, length: 1, mode: 'byte' }), { content: 'bus 1, 0x48 register 0x10: 0x2a (42)' });
  t.same(await call('i2c_read', { bus: 1, address: 0x48, register: 0x10, length: 2, mode: 'word' }), { content: 'bus 1, 0x48 register 0x10: 0x2a 0x01 (word 0x012a = 298)' }, 'a word is [low, high] on the wire');
  t.same(await call('i2c_read', { bus: 1, address: 0x48, length: 1 }), { content: 'bus 1, 0x48: 0x77 (119)' }, 'no register: from the pointer the last read left (0x12)');
  t.same(await call('i2c_read', { bus: 1, address: 0x48, register: 0xff, length: 4, mode: 'block' }), { content: 'bus 1, 0x48 register 0xff: 0x00 0x00 0x00 0x00' });

  t.same(await call('i2c_read', { bus: 1, address: 0x49, register: 0, length: 1 }), { content: 'i2c_read failed on bus 1 at 0x49: no device answered at 0x49 on bus 1', isError: true });
  t.same(await call('i2c_read', { bus: 1, address: 0x50, register: 0, length: 1 }), {
    content: 'i2c_read failed on bus 1 at 0x50: address 0x50 on bus 1 is in use by a kernel driver (EBUSY); pinclaw does not take it from the driver',
    isError: true,
  });
  t.same(await call('i2c_read', { bus: 9, address: 0x48, register: 0, length: 1 }), {
    content: 'i2c_read failed on bus 9 at 0x48: no I2C bus 9 (/dev/i2c-9); buses here: 1 (bcm2835 (i2c@7e804000)), 3',
    isError: true,
  });
  t.same(await call('i2c_read', { bus: 1, address: 0x48, register: 0, length: 2, mode: 'byte' }), {
    content: 'i2c_read failed on bus 1 at 0x48: length must be 1 for an SMBus byte read, got 2',
    isError: true,
  }, 'a read the mode cannot do: the backend\'s own argument error');
  t.same(await call('i2c_read', { bus: 1, address: 0x48, length: 2, mode: 'word' }), {
    content: 'i2c_read failed on bus 1 at 0x48: an SMBus word read needs a register',
    isError: true,
  });
  t.same(await call('i2c_read', { bus: 3, address: 0x48, register: 0, length: 2 }), {
    content: 'i2c_read failed on bus 3 at 0x48: bus 3 does not support reading 2 bytes from a register (EOPNOTSUPP)',
    isError: true,
  }, 'an adapter with no call that fits');
});

t.test('i2c_read: a short block read says so', async (t) => {
  const base = model().backend;
  const short: I2cBackend = { ...base, read: async () => Uint8Array.of(1, 2, 3) };
  const [, read] = i2cTools({ backend: () => short, buses: () => BUSES });
  t.same(await read!.execute({ bus: 1, address: 0x48, register: 0, length: 8, mode: 'block' }, { sessionKey: 's', channel: 'cli', chatId: 'x' }), {
    content: 'bus 1, 0x48 register 0x00: 0x01 0x02 0x03 (3 of 8 bytes: the device sent fewer)',
  });
});

t.test('i2c_write: reads the register before and after, reports both and records the physical action', async (t) => {
  const { call, calls, regs } = setup();
  regs.get(0x48)!.set([0x11, 0x22], 0x10);
  const r = await call('i2c_write', { bus: 1, address: 0x48, register: 0x10, bytes: [0xa5, 0x5a] });
  t.same(r, {
    content: 'bus 1, 0x48 register 0x10: wrote 0xa5 0x5a; before: 0x11 0x22 after: 0xa5 0x5a',
    physical: { device: 'i2c-1@0x48', register: 0x10, wrote: [0xa5, 0x5a], before: [0x11, 0x22], after: [0xa5, 0x5a] },
  });
  t.same(Array.from(regs.get(0x48)!.subarray(0x10, 0x12)), [0xa5, 0x5a], 'the device holds what was written');
  t.same(calls, [
    'read 1 48 {"register":16,"length":2}',
    'write 1 48 {"register":16,"bytes":[165,90]}',
    'read 1 48 {"register":16,"length":2}',
  ], 'read before, write, read after: the same register and length, in the same mode');

  calls.length = 0;
  const word = await call('i2c_write', { bus: 1, address: 0x48, register: 0x30, bytes: [0xef, 0xbe], mode: 'word' });
  t.same(word, {
    content: 'bus 1, 0x48 register 0x30: wrote 0xef 0xbe; before: 0x00 0x00 after: 0xef 0xbe',
    physical: { device: 'i2c-1@0x48', register: 0x30, wrote: [0xef, 0xbe], before: [0, 0], after: [0xef, 0xbe] },
  });
  t.same(calls, [
    'read 1 48 {"register":48,"length":2,"mode":"word"}',
    'write 1 48 {"register":48,"bytes":[239,190],"mode":"word"}',
    'read 1 48 {"register":48,"length":2,"mode":"word"}',
  ], "the reads use the write's mode");
});

t.test('i2c_write: a register that does not keep the value, a device that cannot be read, no register, a pointer write', async (t) => {
  const { call, calls } = setup();
  const cleared = await call('i2c_write', { bus: 1, address: 0x48, register: 0x20, bytes: [0x80] });
  t.same(cleared, {
    content: 'bus 1, 0x48 register 0x20: wrote 0x80; before: 0x00 after: 0x00\nthe register does not read back what was written: it may be read-only, self-clearing, or a command rather than storage',
    physical: { device: 'i2c-1@0x48', register: 0x20, wrote: [0x80], before: [0], after: [0] },
  });

  const writeOnly = await call('i2c_write', { bus: 1, address: 0x3c, register: 0x00, bytes: [0xaf] });
  t.same(writeOnly, {
    content: 'bus 1, 0x3c register 0x00: wrote 0xaf; before: unreadable (no device answered at 0x3c on bus 1) after: unreadable (no device answered at 0x3c on bus 1)',
    physical: { device: 'i2c-1@0x3c', register: 0, wrote: [0xaf], before: null, after: null },
  }, 'a read that fails does not stop the write, and says why');

  calls.length = 0;
  const raw = await call('i2c_write', { bus: 1, address: 0x48, bytes: [0x01, 0x02] });
  t.same(raw, {
    content: 'bus 1, 0x48: wrote 0x01 0x02 (no register given: nothing read before or after)',
    physical: { device: 'i2c-1@0x48', register: null, wrote: [1, 2] },
  });
  const pointer = await call('i2c_write', { bus: 1, address: 0x48, register: 0x40, bytes: [] });
  t.same(pointer, {
    content: "bus 1, 0x48 register 0x40: sent the register byte alone (sets the device's register pointer); nothing to read before or after",
    physical: { device: 'i2c-1@0x48', register: 0x40, wrote: [] },
  });
  t.same(calls.map((c) => c.split(' ')[0]), ['write', 'write'], 'nothing to read: no read');
  t.same(await call('i2c_read', { bus: 1, address: 0x48, length: 1 }), { content: 'bus 1, 0x48: 0x00 (0)' });
});

t.test('i2c_write: failures are results naming bus, address and reason, with no physical record', async (t) => {
  const { call } = setup();
  t.same(await call('i2c_write', { bus: 1, address: 0x49, register: 0, bytes: [1] }), { content: 'i2c_write failed on bus 1 at 0x49: no device answered at 0x49 on bus 1', isError: true });
  t.same(await call('i2c_write', { bus: 1, address: 0x50, register: 0, bytes: [1] }), {
    content: 'i2c_write failed on bus 1 at 0x50: address 0x50 on bus 1 is in use by a kernel driver (EBUSY); pinclaw does not take it from the driver',
    isError: true,
  });
  t.same(await call('i2c_write', { bus: 4, address: 0x48, register: 0, bytes: [1] }), {
    content: 'i2c_write failed on bus 4 at 0x48: no I2C bus 4 (/dev/i2c-4); buses here: 1 (bcm2835 (i2c@7e804000)), 3',
    isError: true,
  });
  t.same(await call('i2c_write', { bus: 1, address: 0x48, bytes: [] }), {
    content: 'i2c_write failed on bus 1 at 0x48: nothing to write: give a register or at least one byte',
    isError: true,
  });
  t.same(await call('i2c_write', { bus: 1, address: 0x48, register: 1, bytes: [1, 2, 3], mode: 'word' }), {
    content: 'i2c_write failed on bus 1 at 0x48: an SMBus word write sends exactly 2 bytes ([low, high]), got 3',
    isError: true,
  });
  const broken = i2cTools({
    backend: () => {
      throw new Error('the native I2C backend was chosen by configuration, but it is unavailable: not built');
    },
    buses: () => BUSES,
  });
  t.same(await broken[2]!.execute({ bus: 1, address: 0x48, register: 0, bytes: [1] }, { sessionKey: 's', channel: 'cli', chatId: 'x' }), {
    content: 'i2c_write: I2C is unavailable: the native I2C backend was chosen by configuration, but it is unavailable: not built',
    isError: true,
  });
});

t.test('i2c_write: the limiter is asked with the device key first, and a refusal touches nothing', async (t) => {
  const asked: string[] = [];
  let allow = false;
  const { call, calls, regs } = setup({
    writeLimiter: (key) => {
      asked.push(key);
      return allow ? undefined : `at most 5 writes per minute to ${key}; next in 12 s`;
    },
  });
  const refused = await call('i2c_write', { bus: 1, address: 0x48, register: 0x10, bytes: [0xff] });
  t.same(refused, { content: 'i2c_write to i2c-1@0x48 refused: at most 5 writes per minute to i2c-1@0x48; next in 12 s', isError: true });
  t.same(calls, [], 'not even the read before');
  t.equal(regs.get(0x48)![0x10], 0);
  allow = true;
  t.equal((await call('i2c_write', { bus: 1, address: 0x48, register: 0x10, bytes: [0xff] })).isError, undefined);
  t.equal(regs.get(0x48)![0x10], 0xff);
  await call('i2c_read', { bus: 1, address: 0x48, register: 0x10, length: 1 });
  await call('i2c_scan', { bus: 1 });
  t.same(asked, ['i2c-1@0x48', 'i2c-1@0x48'], 'asked once per write, never for reads or scans');
});

t.test('through the registry: validation first, and the audit row keeps the physical action', async (t) => {
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  const { tools, regs } = setup();
  regs.get(0x48)![0x05] = 0x07;
  const registry = createRegistry(tools, { audit: dbAudit(db) });
  const ctx = { sessionKey: 's', channel: 'cli', chatId: 'local', caller: 'owner' };
  const ok = await registry.call({ name: 'i2c_write', input: { bus: 1, address: 0x48, register: 5, bytes: [9] } }, ctx);
  t.equal(ok.outcome, 'ok');
  t.equal(ok.result.content, 'bus 1, 0x48 register 0x05: wrote 0x09; before: 0x07 after: 0x09');
  const bad = await registry.call({ name: 'i2c_write', input: { bus: 1, address: 0x80, bytes: [9] } }, ctx);
  t.match(bad.result, { isError: true, content: 'invalid arguments for i2c_write: input.address: must be <= 119' });
  const failed = await registry.call({ name: 'i2c_write', input: { bus: 1, address: 0x49, register: 5, bytes: [9] } }, ctx);
  t.equal(failed.outcome, 'error');
  const rows = queryAudit(db, { tool: 'i2c_write', limit: 10 });
  t.same(
    rows.filter((r) => r.physical !== null).map((r) => JSON.parse(r.physical!) as unknown),
    [{ device: 'i2c-1@0x48', register: 5, wrote: [9], before: [7], after: [9] }],
    'one physical row: the write that ran, with the register before and after',
  );
  t.equal(rows.length, 3, 'the refused and the failed calls are audited too');
});
