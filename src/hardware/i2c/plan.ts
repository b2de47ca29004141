// Which bus operation a read or write becomes: plain I2C messages (I2C_RDWR) where the adapter has
// them, else the SMBus call that fits (many adapters, i2c-stub and PC SMBus controllers among them,
// speak only SMBus). Pure: the same plan runs on either backend, and the tests check it without a bus.
import type { I2cFuncs, I2cMode, I2cPlan, I2cReadOptions, I2cWriteOptions, SmbusCall } from './types.js';
import { argumentError, checkBlockLength, checkBytes, checkCount, checkRegister, checkTransferLength, RDWR_MESSAGE_MAX, shown, SMBUS_BLOCK_MAX } from './validate.js';

/** A read or write no call of this adapter can do. */
export interface Unsupported {
  kind: 'unsupported';
  /** What could not be done, as it reads after "does not support": "reading 40 bytes from a register". */
  what: string;
}

const MODES: readonly I2cMode[] = ['auto', 'i2c', 'byte', 'word', 'block'];

function modeOf(mode: unknown): I2cMode {
  if (mode === undefined) return 'auto';
  if (typeof mode === 'string' && (MODES as readonly string[]).includes(mode)) return mode as I2cMode;
  throw argumentError('type', `mode must be one of ${MODES.join(', ')}, got ${typeof mode === 'string' ? `'${mode}'` : shown(mode)}`);
}

/** Whether planning needs the adapter's functionality (only `auto` does). */
export function needsFuncs(options: { mode?: I2cMode }): boolean {
  return modeOf(options.mode) === 'auto';
}

/** The name an operation goes by in messages, as the addon names it. */
export function operationName(plan: I2cPlan): string {
  return plan.kind === 'transfer' ? 'I2C transfer' : `SMBus ${plan.call.op}`;
}

function needRegister(register: number | undefined, what: string): number {
  if (register === undefined) throw argumentError('type', `${what} needs a register`);
  return register;
}

function exactLength(length: unknown, want: number, what: string): void {
  if (length !== want) throw argumentError('range', `length must be ${want} for ${what}, got ${shown(length)}`);
}

function exactCount(n: number, ok: boolean, what: string): void {
  if (!ok) throw argumentError('range', `${what}, got ${n}`);
}

const smbus = (call: SmbusCall): I2cPlan => ({ kind: 'smbus', call });

/**
 * The checks that hold in every mode, run before the bus is touched (auto mode asks the adapter
 * first): a bad read is refused as such, not reported as a missing bus.
 */
export function checkReadOptions(options: I2cReadOptions): { mode: I2cMode; register: number | undefined } {
  const mode = modeOf(options.mode);
  const register = options.register === undefined ? undefined : checkRegister(options.register);
  if (mode === 'auto') checkTransferLength(options.length);
  return { mode, register };
}

export function checkWriteOptions(options: I2cWriteOptions): { mode: I2cMode; register: number | undefined; bytes: Uint8Array } {
  const mode = modeOf(options.mode);
  const register = options.register === undefined ? undefined : checkRegister(options.register);
  const bytes = checkBytes(options.bytes);
  if (register === undefined && bytes.length === 0) throw argumentError('range', 'nothing to write: give a register or at least one byte');
  return { mode, register, bytes };
}

/**
 * A read. Bytes come back in wire order whatever the mode: an SMBus word is [low, high]. In `auto`,
 * 2 or more bytes from a register are an I2C block read when the adapter has one (the same bytes on
 * the wire as a plain I2C read: N consecutive registers), a word read only where it lacks it.
 */
export function planRead(options: I2cReadOptions, funcs: I2cFuncs | null): I2cPlan | Unsupported {
  const { mode, register } = checkReadOptions(options);
  const length = options.length;
  switch (mode) {
    case 'i2c':
      checkTransferLength(length);
      return { kind: 'transfer', messages: register === undefined ? [{ read: length }] : [{ write: Uint8Array.of(register) }, { read: length }] };
    case 'byte':
      exactLength(length, 1, 'an SMBus byte read');
      return smbus(register === undefined ? { op: 'readByte' } : { op: 'readByteData', register });
    case 'word':
      exactLength(length, 2, 'an SMBus word read');
      return smbus({ op: 'readWordData', register: needRegister(register, 'an SMBus word read') });
    case 'block':
      checkBlockLength(length);
      return smbus({ op: 'readI2cBlockData', register: needRegister(register, 'an SMBus block read'), length });
    case 'auto':
      break;
  }
  if (!funcs) throw new Error('planRead: auto mode needs the adapter functionality');
  if (funcs.i2c) return planRead({ ...options, mode: 'i2c' }, funcs);
  if (length === 1 && register === undefined && funcs.readByte) return planRead({ ...options, mode: 'byte' }, funcs);
  if (length === 1 && register !== undefined && funcs.readByteData) return planRead({ ...options, mode: 'byte' }, funcs);
  if (register !== undefined && length <= SMBUS_BLOCK_MAX && funcs.readI2cBlockData) return planRead({ ...options, mode: 'block' }, funcs);
  if (register !== undefined && length === 2 && funcs.readWordData) return planRead({ ...options, mode: 'word' }, funcs);
  return { kind: 'unsupported', what: `reading ${length} byte${length === 1 ? '' : 's'}${register === undefined ? '' : ' from a register'}` };
}

/**
 * A write. With a register and no bytes it is an SMBus "send byte" of the register (or a one-byte
 * I2C write): how a device's register pointer is set before a read from the current pointer.
 */
export function planWrite(options: I2cWriteOptions, funcs: I2cFuncs | null): I2cPlan | Unsupported {
  const { mode, register, bytes } = checkWriteOptions(options);
  const n = bytes.length;
  switch (mode) {
    case 'i2c': {
      const out = register === undefined ? bytes : Uint8Array.from([register, ...bytes]);
      checkCount(out.length, 1, RDWR_MESSAGE_MAX, 'a write, register included,', 'the I2C_RDWR message limit');
      return { kind: 'transfer', messages: [{ write: out }] };
    }
    case 'byte':
      if (register === undefined) {
        exactCount(n, n === 1, 'an SMBus byte write without a register sends exactly 1 byte');
        return smbus({ op: 'writeByte', value: bytes[0]! });
      }
      exactCount(n, n <= 1, 'an SMBus byte write to a register sends 0 or 1 bytes');
      return smbus(n === 0 ? { op: 'writeByte', value: register } : { op: 'writeByteData', register, value: bytes[0]! });
    case 'word': {
      const reg = needRegister(register, 'an SMBus word write');
      exactCount(n, n === 2, 'an SMBus word write sends exactly 2 bytes ([low, high])');
      return smbus({ op: 'writeWordData', register: reg, value: bytes[0]! | (bytes[1]! << 8) });
    }
    case 'block': {
      const reg = needRegister(register, 'an SMBus block write');
      checkCount(n, 1, SMBUS_BLOCK_MAX, 'bytes', 'the SMBus block limit');
      return smbus({ op: 'writeI2cBlockData', register: reg, bytes });
    }
    case 'auto':
      break;
  }
  if (!funcs) throw new Error('planWrite: auto mode needs the adapter functionality');
  if (funcs.i2c) return planWrite({ ...options, mode: 'i2c' }, funcs);
  if (n === 0 || (register === undefined && n === 1)) {
    if (funcs.writeByte) return planWrite({ ...options, mode: 'byte' }, funcs);
  } else if (register !== undefined && n === 1) {
    if (funcs.writeByteData) return planWrite({ ...options, mode: 'byte' }, funcs);
  } else if (register !== undefined && n <= SMBUS_BLOCK_MAX && funcs.writeI2cBlockData) {
    return planWrite({ ...options, mode: 'block' }, funcs);
  } else if (register !== undefined && n === 2 && funcs.writeWordData) {
    return planWrite({ ...options, mode: 'word' }, funcs);
  }
  return { kind: 'unsupported', what: `writing ${n} byte${n === 1 ? '' : 's'}${register === undefined ? '' : ' to a register'}` };
}

/** The bytes a read plan produced, in wire order. */
export function readResult(plan: I2cPlan, result: number | Uint8Array | Uint8Array[] | null): Uint8Array {
  if (plan.kind === 'transfer') {
    const parts = result as Uint8Array[];
    return parts[parts.length - 1] ?? new Uint8Array(0);
  }
  switch (plan.call.op) {
    case 'readByte':
    case 'readByteData':
      return Uint8Array.of(result as number);
    case 'readWordData':
      return Uint8Array.of((result as number) & 0xff, (result as number) >> 8);
    case 'readI2cBlockData':
      return Uint8Array.from(result as Uint8Array);
    default:
      throw new Error(`readResult: ${plan.call.op} is not a read`);
  }
}
