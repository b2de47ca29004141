// The I2C backend over the i2c-bus package: the reference the addon is held to, and the fallback
// when the addon has no I2C. Loaded on first use, so a pinclaw that never touches I2C never loads
// its NAN addon. Two differences from the addon, both i2c-bus's own:
// - plain I2C goes through read(2)/write(2) on the device, one message per transaction: a register
//   write and the read after it are two transactions with a STOP between, not one I2C_RDWR;
// - it keeps a descriptor per address until the bus is closed, which every call here does.
import type { I2CFuncs, PromisifiedBus } from 'i2c-bus';
import { listBuses, DEFAULT_SYS } from './buses.js';
import { backendFrom } from './backend.js';
import { errnoCode, i2cError, targetOf, type I2cStep } from './errors.js';
import { operationName } from './plan.js';
import type { I2cBackend, I2cFuncs, I2cMessage, I2cPrimitives, SmbusCall } from './types.js';

type I2cBusModule = typeof import('i2c-bus');

let loading: Promise<I2cBusModule> | undefined;

/** The package, loaded once; a failure (not built, wrong Node ABI) is kept and reported on every call. */
export function loadI2cBus(): Promise<I2cBusModule> {
  loading ??= import('i2c-bus').then((m) => ('default' in m && m.default ? (m.default as I2cBusModule) : m));
  return loading;
}

function toFuncs(f: I2CFuncs): I2cFuncs {
  // i2c-bus names READ_BYTE_DATA "smbusReadByte" and READ_BYTE "smbusReceiveByte".
  return {
    i2c: f.i2c,
    tenBitAddress: f.tenBitAddr,
    smbusPec: f.smbusPec,
    quick: f.smbusQuick,
    readByte: f.smbusReceiveByte,
    writeByte: f.smbusSendByte,
    readByteData: f.smbusReadByte,
    writeByteData: f.smbusWriteByte,
    readWordData: f.smbusReadWord,
    writeWordData: f.smbusWriteWord,
    readBlockData: f.smbusReadBlock,
    writeBlockData: f.smbusWriteBlock,
    readI2cBlockData: f.smbusReadI2cBlock,
    writeI2cBlockData: f.smbusWriteI2cBlock,
    mask: null,
  };
}

/** Which step an i2c-bus error came from, by the syscall it names. */
function stepOf(syscall: unknown): I2cStep {
  switch (syscall) {
    case 'open':
      return 'open';
    case 'setAddr':
      return 'I2C_SLAVE';
    case 'i2cFuncs':
      return 'I2C_FUNCS';
    case 'read':
    case 'write':
      return syscall;
    default:
      return 'I2C_SMBUS';
  }
}

export interface I2cBusOptions {
  sysRoot?: string;
}

export function i2cBusPrimitives(options: I2cBusOptions = {}): I2cPrimitives {
  const path = (bus: number) => `/dev/i2c-${bus}`;

  /** Opens the bus, runs one call, closes it on every path; errors become I2cErrors worded as the addon's. */
  async function session<T>(bus: number, address: number | null, operation: string, fn: (b: PromisifiedBus) => Promise<T>): Promise<T> {
    const lib = await loadI2cBus();
    const b = await lib.openPromisified(bus);
    try {
      return await fn(b);
    } catch (err) {
      const e = err as { code?: unknown; syscall?: unknown };
      if (typeof e?.code !== 'string') throw err;
      throw i2cError({ code: errnoCode(e.code), path: path(bus), bus: targetOf(path(bus)).bus, address, operation, step: stepOf(e.syscall) }, err);
    } finally {
      await b.close().catch(() => {
        // close(2) on a descriptor we opened fails only if it is already gone
      });
    }
  }

  async function smbus(b: PromisifiedBus, address: number, call: SmbusCall): Promise<number | Uint8Array | null> {
    switch (call.op) {
      case 'quick':
        // @types/i2c-bus declares writeQuick(address, command, bit); the code takes (address, bit).
        await (b.writeQuick as unknown as (a: number, bit: number) => Promise<void>)(address, call.bit);
        return null;
      case 'readByte':
        return b.receiveByte(address);
      case 'readByteData':
        return b.readByte(address, call.register);
      case 'readWordData':
        return b.readWord(address, call.register);
      case 'readI2cBlockData': {
        const r = await b.readI2cBlock(address, call.register, call.length, Buffer.alloc(call.length));
        return r.buffer.subarray(0, r.bytesRead);
      }
      case 'writeByte':
        await b.sendByte(address, call.value);
        return null;
      case 'writeByteData':
        await b.writeByte(address, call.register, call.value);
        return null;
      case 'writeWordData':
        await b.writeWord(address, call.register, call.value);
        return null;
      case 'writeI2cBlockData':
        await b.writeI2cBlock(address, call.register, call.bytes.length, Buffer.from(call.bytes));
        return null;
    }
  }

  async function transfer(b: PromisifiedBus, address: number, messages: readonly I2cMessage[]): Promise<Uint8Array[]> {
    const out: Uint8Array[] = [];
    for (const m of messages) {
      if ('read' in m) {
        const r = await b.i2cRead(address, m.read, Buffer.alloc(m.read));
        out.push(r.buffer.subarray(0, r.bytesRead));
      } else {
        await b.i2cWrite(address, m.write.length, Buffer.from(m.write));
      }
    }
    return out;
  }

  return {
    kind: 'i2c-bus',
    path,
    buses: () => listBuses({ sys: options.sysRoot ?? DEFAULT_SYS }),
    funcs: (bus) => session(bus, null, 'I2C_FUNCS', async (b) => toFuncs(await b.i2cFuncs())),
    transfer: (bus, address, messages) => session(bus, address, operationName({ kind: 'transfer', messages: [] }), (b) => transfer(b, address, messages)),
    smbus: (bus, address, call) => session(bus, address, operationName({ kind: 'smbus', call }), (b) => smbus(b, address, call)),
  };
}

export function i2cBusBackend(options: I2cBusOptions = {}): I2cBackend {
  return backendFrom(i2cBusPrimitives(options));
}
