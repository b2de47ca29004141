// The I2C backend over pinclaw's addon (native/i2c*.cc): the /dev/i2c-N ioctls, each call on the
// libuv pool, plain I2C as one combined I2C_RDWR transaction.
import { tryAddon } from '../../native/loader.js';
import { listBuses, DEFAULT_DEV, DEFAULT_SYS } from './buses.js';
import { backendFrom } from './backend.js';
import { I2cError, type I2cFailure } from './errors.js';
import type { I2cBackend, I2cFuncs, I2cMessage, I2cPrimitives, SmbusCall, SmbusOp } from './types.js';

/** What native/i2c.cc exports. `device` is a bus number (/dev/i2c-N) or a device path. */
export interface I2cAddon {
  i2cFuncs(device: number | string): Promise<I2cFuncs & { mask: number }>;
  /** One combined transaction; a Buffer per read message, in order. */
  i2cTransfer(device: number | string, address: number, messages: readonly I2cMessage[]): Promise<Buffer[]>;
  /** data: the bit of quick, the byte or word written, the length of a block read, the bytes of a block write. */
  i2cSmbus(device: number | string, address: number, op: SmbusOp, register: number, data?: number | Uint8Array): Promise<number | Buffer | null>;
}

/** The addon, if it loads and has I2C (a build from before I2C lacks these functions). */
export function i2cAddon(): I2cAddon | null {
  const a = tryAddon<Partial<I2cAddon>>('pinclaw');
  return a && typeof a.i2cFuncs === 'function' && typeof a.i2cTransfer === 'function' && typeof a.i2cSmbus === 'function' ? (a as I2cAddon) : null;
}

/** The addon rejects with an Error carrying the failure's fields; callers get an I2cError. */
function rethrow(err: unknown): never {
  const e = err as Partial<I2cFailure> & Error;
  if (e instanceof Error && typeof e.code === 'string' && typeof e.step === 'string' && typeof e.path === 'string') {
    throw new I2cError(e.message, { code: e.code, path: e.path, bus: e.bus ?? null, address: e.address ?? null, operation: e.operation ?? '', step: e.step }, { cause: err });
  }
  throw err;
}

/** The addon call's register and data arguments for an SMBus call. */
function smbusArgs(call: SmbusCall): [number, number | Uint8Array | undefined] {
  switch (call.op) {
    case 'quick':
      return [0, call.bit];
    case 'readByte':
      return [0, undefined];
    case 'writeByte':
      return [0, call.value];
    case 'readByteData':
    case 'readWordData':
      return [call.register, undefined];
    case 'readI2cBlockData':
      return [call.register, call.length];
    case 'writeByteData':
    case 'writeWordData':
      return [call.register, call.value];
    case 'writeI2cBlockData':
      return [call.register, call.bytes];
  }
}

export interface NativeOptions {
  /** Default: the addon, if it has I2C. */
  addon?: I2cAddon;
  /** Where the i2c-N files are (tests point this at a temp directory); default /dev. */
  devRoot?: string;
  sysRoot?: string;
}

export function nativePrimitives(options: NativeOptions = {}): I2cPrimitives {
  const addon = options.addon ?? i2cAddon();
  if (!addon) throw new Error('the pinclaw addon is not loaded or has no I2C');
  const devRoot = options.devRoot ?? DEFAULT_DEV;
  const sysRoot = options.sysRoot ?? DEFAULT_SYS;
  const path = (bus: number) => `${devRoot}/i2c-${bus}`;
  return {
    kind: 'native',
    path,
    buses: () => listBuses({ dev: devRoot, sys: sysRoot }),
    async funcs(bus) {
      return addon.i2cFuncs(path(bus)).catch(rethrow);
    },
    async transfer(bus, address, messages) {
      return addon.i2cTransfer(path(bus), address, messages).catch(rethrow);
    },
    async smbus(bus, address, call) {
      const [register, data] = smbusArgs(call);
      return addon.i2cSmbus(path(bus), address, call.op, register, data).catch(rethrow);
    },
  };
}

export function nativeBackend(options: NativeOptions = {}): I2cBackend {
  return backendFrom(nativePrimitives(options));
}
