// The limits every I2C call is held to, and the words that name them. native/i2c.cc checks the
// same limits with the same messages (the tests compare them), so a bad value reads the same
// whichever backend runs; these checks also run first for both, since i2c-bus's own are looser
// (it accepts addresses 0x00-0x7f).

/**
 * 0x00-0x02 are the general call / START byte, CBUS and other-bus-format addresses and 0x78-0x7f the
 * 10-bit prefixes and device ID (I2C specification, table 4): no 7-bit device lives there, and a
 * write to 0x00 is a general call every device may act on (0x06 resets them all). It is also the
 * range i2cdetect probes by default.
 */
export const FIRST_ADDRESS = 0x03;
export const LAST_ADDRESS = 0x77;
/** I2C_SMBUS_BLOCK_MAX: the SMBus block calls carry at most 32 bytes. */
export const SMBUS_BLOCK_MAX = 32;
/** i2c-dev refuses an I2C_RDWR message longer than this. */
export const RDWR_MESSAGE_MAX = 8192;
/** I2C_RDWR_IOCTL_MAX_MSGS. */
export const RDWR_MESSAGES_MAX = 42;
const INT_MAX = 2 ** 31 - 1;

/** An argument error as the addon throws it: a TypeError or RangeError with Node's code. */
export type I2cArgumentError = (TypeError | RangeError) & { code: 'ERR_INVALID_ARG_TYPE' | 'ERR_OUT_OF_RANGE' };

export function argumentError(kind: 'type' | 'range', message: string): I2cArgumentError {
  return kind === 'type' ? Object.assign(new TypeError(message), { code: 'ERR_INVALID_ARG_TYPE' as const }) : Object.assign(new RangeError(message), { code: 'ERR_OUT_OF_RANGE' as const });
}

/** How a bad value is shown: whole numbers in hex for addresses, else as JavaScript prints them. */
export function shown(v: unknown, hex = false): string {
  if (v === undefined) return 'undefined';
  if (v === null) return 'null';
  if (typeof v === 'number') return hex && Number.isInteger(v) && v >= 0 && v <= 0xffff ? `0x${v.toString(16).padStart(2, '0')}` : String(v);
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

function integer(v: unknown, lo: number, hi: number, what: string, hex = false): number {
  if (typeof v !== 'number') throw argumentError('type', `${what}, got ${shown(v, hex)}`);
  if (!(v >= lo && v <= hi) || !Number.isInteger(v)) throw argumentError('range', `${what}, got ${shown(v, hex)}`);
  return v;
}

export function checkBus(v: unknown): number {
  return integer(v, 0, INT_MAX, 'I2C bus must be a bus number (an integer, 0 or more) or a device path');
}

export function checkAddress(v: unknown): number {
  return integer(v, FIRST_ADDRESS, LAST_ADDRESS, 'I2C address must be an integer from 0x03 to 0x77 (0x00-0x02 and 0x78-0x7f are reserved)', true);
}

export function checkRegister(v: unknown): number {
  return integer(v, 0, 255, 'register must be an integer from 0 to 255');
}

export function checkByte(v: unknown, name = 'byte'): number {
  return integer(v, 0, 255, `${name} must be an integer from 0 to 255`);
}

export function checkWord(v: unknown): number {
  return integer(v, 0, 0xffff, 'word must be an integer from 0 to 65535');
}

export function checkBlockLength(v: unknown): number {
  return integer(v, 1, SMBUS_BLOCK_MAX, `length must be an integer from 1 to ${SMBUS_BLOCK_MAX} (the SMBus block limit)`);
}

export function checkTransferLength(v: unknown): number {
  return integer(v, 1, RDWR_MESSAGE_MAX, `length must be an integer from 1 to ${RDWR_MESSAGE_MAX} (the I2C_RDWR message limit)`);
}

/** Bytes as given (an array of numbers or a Uint8Array), each checked, as a fresh Uint8Array. */
export function checkBytes(v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return Uint8Array.from(v);
  if (!Array.isArray(v)) throw argumentError('type', `bytes must be an array of numbers or a Uint8Array, got ${shown(v)}`);
  return Uint8Array.from(v, (b: unknown, i) => checkByte(b, `bytes[${i}]`));
}

/** A byte count against a limit, named the way the addon names it. */
export function checkCount(n: number, lo: number, hi: number, name: string, limit: string): void {
  if (n < lo || n > hi) throw argumentError('range', `${name} must hold ${lo} to ${hi} bytes (${limit}), got ${n}`);
}
