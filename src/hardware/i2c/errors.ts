// What an I2C failure is called. native/i2c_error.cc builds these messages for the addon; this is
// the same wording for the i2c-bus reference (whose errors carry only an errno and a syscall), and
// the tests hold the two to each other.
import { busNumbers } from './buses.js';

/** Where a call failed: opening the device, one of the ioctls, or read(2)/write(2) (i2c-bus's plain I2C). */
export type I2cStep = 'open' | 'I2C_SLAVE' | 'I2C_FUNCS' | 'I2C_RDWR' | 'I2C_SMBUS' | 'read' | 'write' | 'plan';

export interface I2cFailure {
  /** The errno's name (ENOENT, ENXIO, ...), or EOPNOTSUPP when no call fits the adapter. */
  code: string;
  path: string;
  /** The N of an i2c-N device file; null for any other path. */
  bus: number | null;
  address: number | null;
  /** "I2C_FUNCS", "I2C transfer", "SMBus readWordData", ... */
  operation: string;
  step: I2cStep;
}

export class I2cError extends Error implements I2cFailure {
  readonly code: string;
  readonly path: string;
  readonly bus: number | null;
  readonly address: number | null;
  readonly operation: string;
  readonly step: I2cStep;
  constructor(message: string, f: I2cFailure, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'I2cError';
    this.code = f.code;
    this.path = f.path;
    this.bus = f.bus;
    this.address = f.address;
    this.operation = f.operation;
    this.step = f.step;
  }
}

/** The bus number of an i2c-N path and the directory holding it, as native/i2c_error.cc reads them. */
export function targetOf(path: string): { bus: number | null; dir: string } {
  const slash = path.lastIndexOf('/');
  const dir = slash < 0 ? '.' : slash === 0 ? '/' : path.slice(0, slash);
  const m = /^i2c-(\d{1,9})$/.exec(path.slice(slash + 1));
  return { bus: m ? Number(m[1]) : null, dir };
}

const hex = (v: number) => `0x${v.toString(16).padStart(2, '0')}`;

/**
 * The errnos a bus reports when nobody acknowledged the address: ENXIO (most drivers), EREMOTEIO
 * (bcm2835, designware), EIO (some older drivers), ENODEV (i2c-stub, for an address with no chip).
 */
export const NO_ANSWER = new Set(['ENXIO', 'EREMOTEIO', 'EIO', 'ENODEV']);
const TRANSFER_STEPS = new Set<I2cStep>(['I2C_RDWR', 'I2C_SMBUS', 'read', 'write']);

/** The message for a failure; `busesHere` lists the i2c-N numbers of a directory (for a missing bus). */
export function describeI2cFailure(f: I2cFailure, busesHere: (dir: string) => number[] = busNumbers): string {
  const where = f.bus !== null ? `bus ${f.bus}` : f.path;
  const at = f.address !== null ? ` at ${hex(f.address)}` : '';
  const open = f.step === 'open';
  if (open && (f.code === 'ENOENT' || f.code === 'ENOTDIR')) {
    if (f.bus === null) return `no I2C adapter at ${f.path} (no such file)`;
    const list = busesHere(targetOf(f.path).dir);
    return `no I2C bus ${f.bus} (${f.path}); buses here: ${list.length ? list.join(', ') : 'none'}`;
  }
  if (open && (f.code === 'EACCES' || f.code === 'EPERM')) {
    return `permission denied on ${f.path}: add the user to the 'i2c' group (sudo usermod -aG i2c $USER, then log in again)`;
  }
  if (open) return `cannot open ${f.path} (${f.code})`;
  if (f.code === 'ENOTTY') return `${f.path} is not an I2C adapter (ENOTTY from ioctl ${f.step})`;
  if (f.step === 'I2C_SLAVE' && f.code === 'EBUSY' && f.address !== null) {
    return `address ${hex(f.address)} on ${where} is in use by a kernel driver (EBUSY); pinclaw does not take it from the driver`;
  }
  if (TRANSFER_STEPS.has(f.step) && NO_ANSWER.has(f.code)) return `no device answered${at} on ${where}`;
  if (f.code === 'EOPNOTSUPP') return `${where} does not support ${f.operation} (EOPNOTSUPP)`;
  return `${f.operation}${at} on ${where} failed (${f.code})`;
}

export function i2cError(f: I2cFailure, cause?: unknown): I2cError {
  return new I2cError(describeI2cFailure(f), f, cause === undefined ? undefined : { cause });
}

/** Node calls errno 95 EOPNOTSUPP or ENOTSUP depending on the path it came through; they are one errno on Linux. */
export function errnoCode(code: string): string {
  return code === 'ENOTSUP' ? 'EOPNOTSUPP' : code;
}
