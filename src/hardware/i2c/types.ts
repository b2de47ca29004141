// What pinclaw asks of an I2C bus, whichever code talks to /dev/i2c-N (the addon or i2c-bus).

/** The adapter's I2C_FUNCS bits that matter to pinclaw, named after the calls they allow. */
export interface I2cFuncs {
  /** Plain I2C messages (I2C_RDWR): any length, combined write-then-read. */
  i2c: boolean;
  tenBitAddress: boolean;
  smbusPec: boolean;
  quick: boolean;
  readByte: boolean;
  writeByte: boolean;
  readByteData: boolean;
  writeByteData: boolean;
  readWordData: boolean;
  writeWordData: boolean;
  readBlockData: boolean;
  writeBlockData: boolean;
  readI2cBlockData: boolean;
  writeI2cBlockData: boolean;
  /** The raw I2C_FUNCS value; null where the backend does not expose it (i2c-bus). */
  mask: number | null;
}

export type I2cFuncName = Exclude<keyof I2cFuncs, 'mask'>;

/**
 * How a read or write reaches the bus. `i2c`: plain I2C messages (I2C_RDWR). `byte`, `word`, `block`:
 * the SMBus byte / byte-data, word-data and I2C-block calls (I2C_SMBUS), for adapters that only
 * speak SMBus. `auto` (the default): plain I2C where the adapter has it, else the SMBus call that fits.
 */
export type I2cMode = 'auto' | 'i2c' | 'byte' | 'word' | 'block';

export interface I2cReadOptions {
  /** The register (command byte) to read from; omitted: read from the device's current pointer. */
  register?: number;
  length: number;
  mode?: I2cMode;
}

export interface I2cWriteOptions {
  register?: number;
  /** Bytes in wire order; a word is [low, high], as SMBus sends it. */
  bytes: readonly number[] | Uint8Array;
  mode?: I2cMode;
}

export interface I2cBusInfo {
  bus: number;
  path: string;
  /** The adapter's name from sysfs ("bcm2835 (i2c@7e804000)", "SMBus stub driver"); null if unreadable. */
  name: string | null;
}

export interface I2cScanResult {
  bus: number;
  /** Addresses that answered the probe. */
  found: number[];
  /** Addresses a kernel driver has claimed (i2cdetect's "UU"): not probed. */
  busy: number[];
  /** Addresses whose safe probe the adapter lacks (see scan.ts): not probed. */
  skipped: number[];
}

export type I2cBackendKind = 'native' | 'i2c-bus';

export interface I2cBackend {
  readonly kind: I2cBackendKind;
  buses(): Promise<I2cBusInfo[]>;
  funcs(bus: number): Promise<I2cFuncs>;
  scan(bus: number): Promise<I2cScanResult>;
  read(bus: number, address: number, options: I2cReadOptions): Promise<Uint8Array>;
  write(bus: number, address: number, options: I2cWriteOptions): Promise<void>;
}

export type SmbusOp =
  | 'quick'
  | 'readByte'
  | 'readByteData'
  | 'readWordData'
  | 'readI2cBlockData'
  | 'writeByte'
  | 'writeByteData'
  | 'writeWordData'
  | 'writeI2cBlockData';

/** One SMBus call, as the kernel's I2C_SMBUS ioctl takes it. */
export type SmbusCall =
  | { op: 'quick'; bit: 0 | 1 }
  | { op: 'readByte' }
  | { op: 'readByteData'; register: number }
  | { op: 'readWordData'; register: number }
  | { op: 'readI2cBlockData'; register: number; length: number }
  | { op: 'writeByte'; value: number }
  | { op: 'writeByteData'; register: number; value: number }
  | { op: 'writeWordData'; register: number; value: number }
  | { op: 'writeI2cBlockData'; register: number; bytes: Uint8Array };

/** One plain I2C message: read `read` bytes, or write `write`. */
export type I2cMessage = { read: number } | { write: Uint8Array };

/** What a read or write becomes on the bus. */
export type I2cPlan = { kind: 'transfer'; messages: I2cMessage[] } | { kind: 'smbus'; call: SmbusCall };

/**
 * What a backend must do itself; reads, writes and scans are built on these once (backend.ts), so
 * the two backends differ only here and can be compared call for call.
 */
export interface I2cPrimitives {
  readonly kind: I2cBackendKind;
  /** The device file of a bus. */
  path(bus: number): string;
  buses(): Promise<I2cBusInfo[]>;
  funcs(bus: number): Promise<I2cFuncs>;
  /** The read messages' bytes, in order. */
  transfer(bus: number, address: number, messages: readonly I2cMessage[]): Promise<Uint8Array[]>;
  /** A number for byte and word reads, the bytes for block reads, null for writes and quick. */
  smbus(bus: number, address: number, call: SmbusCall): Promise<number | Uint8Array | null>;
}
