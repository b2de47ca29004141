// The I2C tools: i2c_scan, i2c_read, i2c_write. i2c_write is a physical action: it runs one call at
// a time, may be rate-limited per device, and reads the register before and after the write so the
// model (and the audit row, through `physical`) sees what changed, not only what was sent. Failures
// are results, not exceptions: the model gets the bus, the address and the reason in I2cError's
// words, and a bus that is not there comes with the list of those that are.
import type { Tool, ToolResult } from '../../tools/types.js';
import type { JsonSchema } from '../../tools/validate.js';
import { I2cError } from './errors.js';
import type { I2cBackend, I2cBusInfo, I2cMode, I2cReadOptions } from './types.js';
import { FIRST_ADDRESS, LAST_ADDRESS, SMBUS_BLOCK_MAX } from './validate.js';
import { defineTool } from '../../tools/define.js';

export interface I2cToolDeps {
  /** The backend; called per call, so the caller decides when it is made (and a failure to make it is a result). */
  backend: () => I2cBackend;
  /** This machine's buses, named in the answer to a call on a bus that is not there. */
  buses: () => I2cBusInfo[];
  /** Called with `i2c-<bus>@0x<addr>` before a write: a refusal reason (a rate limit), or undefined to go ahead. */
  writeLimiter?: (key: string) => string | undefined;
}

const MODES: readonly I2cMode[] = ['auto', 'i2c', 'byte', 'word', 'block'];

const BUS = { type: 'integer', minimum: 0, description: 'the N of /dev/i2c-N (1 on a Raspberry Pi header)' } as const;
const ADDRESS = {
  type: 'integer',
  minimum: FIRST_ADDRESS,
  maximum: LAST_ADDRESS,
  description: `7-bit device address, ${FIRST_ADDRESS}-${LAST_ADDRESS} (0x03-0x77); JSON has no hex, so 0x48 is 72`,
} as const;
const REGISTER = { type: 'integer', minimum: 0, maximum: 255, description: 'register (command byte), 0-255; omitted: the device\'s current register pointer' } as const;
const MODE = {
  type: 'string',
  enum: MODES,
  description: 'auto (default): plain I2C where the adapter has it, else the SMBus call that fits; i2c: plain I2C; byte, word, block: the SMBus byte, word ([low, high]) and I2C-block calls',
} as const;

const hex = (n: number) => `0x${n.toString(16).padStart(2, '0')}`;
const hexBytes = (b: readonly number[]) => (b.length ? b.map(hex).join(' ') : '(no bytes)');

/** The name a device goes by in the limiter and the audit row. */
export function i2cDeviceKey(bus: number, address: number): string {
  return `i2c-${bus}@${hex(address)}`;
}

/** Consecutive addresses as ranges ("0x30-0x37 0x50"), so a long skip list stays one short line. */
function addressRanges(addresses: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < addresses.length; ) {
    let j = i;
    while (j + 1 < addresses.length && addresses[j + 1] === addresses[j]! + 1) j++;
    out.push(j === i ? hex(addresses[i]!) : `${hex(addresses[i]!)}-${hex(addresses[j]!)}`);
    i = j + 1;
  }
  return out.join(' ');
}

function where(bus: number, address: number, register: number | undefined): string {
  return `bus ${bus}, ${hex(address)}${register === undefined ? '' : ` register ${hex(register)}`}`;
}

/** The addon and validate.ts reject bad arguments with Node's codes; those messages are the reason as it stands. */
function isArgumentError(err: unknown): err is Error {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && (code === 'ERR_INVALID_ARG_TYPE' || code === 'ERR_OUT_OF_RANGE');
}

function busList(buses: readonly I2cBusInfo[]): string {
  if (!buses.length) return 'none (is I2C enabled, and the i2c-dev module loaded?)';
  return buses.map((b) => (b.name ? `${b.bus} (${b.name})` : String(b.bus))).join(', ');
}

/**
 * Why a call failed, in I2cError's words. A missing bus lists the buses from `deps.buses` (with
 * their adapter names) rather than I2cError's directory listing, which knows only numbers.
 * Anything that is not an I2C failure is a bug, and is thrown for the registry to report.
 */
function reasonOf(err: unknown, deps: I2cToolDeps): string {
  if (err instanceof I2cError) {
    if (err.step === 'open' && (err.code === 'ENOENT' || err.code === 'ENOTDIR') && err.bus !== null) {
      let list: I2cBusInfo[];
      try {
        list = deps.buses();
      } catch {
        return err.message;
      }
      return `no I2C bus ${err.bus} (${err.path}); buses here: ${busList(list)}`;
    }
    return err.message;
  }
  if (isArgumentError(err)) return err.message;
  throw err;
}

function failed(tool: string, bus: number, address: number | null, err: unknown, deps: I2cToolDeps): ToolResult {
  const at = address === null ? `bus ${bus}` : `bus ${bus} at ${hex(address)}`;
  return { content: `${tool} failed on ${at}: ${reasonOf(err, deps)}`, isError: true };
}

/** The backend, or the reason there is none (a pinned backend that cannot load), as a result. */
function backendOf(tool: string, deps: I2cToolDeps): I2cBackend | ToolResult {
  try {
    return deps.backend();
  } catch (err) {
    return { content: `${tool}: I2C is unavailable: ${err instanceof Error ? err.message : String(err)}`, isError: true };
  }
}

const isResult = (v: I2cBackend | ToolResult): v is ToolResult => 'content' in v;

/** A read's bytes in hex, plus what makes them easier to read: the decimal of one byte, the value of a word. */
function readText(bytes: readonly number[], length: number, mode: I2cMode | undefined): string {
  let text = hexBytes(bytes);
  if (bytes.length === 1) text += ` (${bytes[0]})`;
  if (mode === 'word' && bytes.length === 2) {
    const word = bytes[0]! | (bytes[1]! << 8);
    text += ` (word 0x${word.toString(16).padStart(4, '0')} = ${word})`;
  }
  // An I2C block read may legitimately come back short; say so rather than let it pass for the whole.
  if (bytes.length < length) text += ` (${bytes.length} of ${length} bytes: the device sent fewer)`;
  return text;
}

export function i2cTools(deps: I2cToolDeps): Tool[] {
  // All three are sequential: calls on one bus share the adapter and each device's register pointer
  // (a receive byte moves it), so a read interleaved with another call could read the wrong register.
  const scan: Tool = defineTool({
    name: 'i2c_scan',
    description:
      'List the devices on an I2C bus, as i2cdetect does: which addresses answer, which a kernel driver holds (not probed), which were skipped because the adapter lacks the safe probe for them. Changes nothing on the devices.',
    inputSchema: { type: 'object', properties: { bus: BUS }, required: ['bus'], additionalProperties: false },
    sequential: true,
    async execute(input) {
      const { bus } = input;
      const b = backendOf('i2c_scan', deps);
      if (isResult(b)) return b;
      try {
        const r = await b.scan(bus);
        let name: string | null = null;
        try {
          name = deps.buses().find((x) => x.bus === bus)?.name ?? null;
        } catch {
          // the adapter's name only decorates the answer
        }
        const n = r.found.length;
        const lines = [`bus ${bus}${name ? ` (${name})` : ''}: ${n ? `${n} device${n === 1 ? '' : 's'} answered: ${r.found.map(hex).join(' ')}` : 'no device answered'}`];
        if (r.busy.length) lines.push(`in use by a kernel driver (not probed; i2cdetect shows UU): ${addressRanges(r.busy)}`);
        if (r.skipped.length) lines.push(`skipped (the adapter lacks the safe probe for them): ${addressRanges(r.skipped)}`);
        return { content: lines.join('\n') };
      } catch (err) {
        return failed('i2c_scan', bus, null, err, deps);
      }
    },
  });

  const read: Tool = defineTool({
    name: 'i2c_read',
    description: `Read 1-${SMBUS_BLOCK_MAX} bytes from an I2C device, from a register or from its current register pointer. Bytes come back in bus order, in hex; a word ([low, high]) is also shown as one value.`,
    inputSchema: {
      type: 'object',
      properties: { bus: BUS, address: ADDRESS, register: REGISTER, length: { type: 'integer', minimum: 1, maximum: SMBUS_BLOCK_MAX, description: 'how many bytes (2 for a word)' }, mode: MODE },
      required: ['bus', 'address', 'length'],
      additionalProperties: false,
    },
    sequential: true,
    async execute(input) {
      const { bus, address, register, length, mode } = input;
      const b = backendOf('i2c_read', deps);
      if (isResult(b)) return b;
      try {
        const bytes = Array.from(await b.read(bus, address, { register, length, mode }));
        return { content: `${where(bus, address, register)}: ${readText(bytes, length, mode)}` };
      } catch (err) {
        return failed('i2c_read', bus, address, err, deps);
      }
    },
  });

  const write: Tool = defineTool({
    name: 'i2c_write',
    description: `Write 0-${SMBUS_BLOCK_MAX} bytes to an I2C device, to a register or raw. With a register, its bytes are read before and after the write and both are returned. A register with no bytes only sets the device's register pointer. Writes may be rate-limited per device.`,
    inputSchema: {
      type: 'object',
      properties: {
        bus: BUS,
        address: ADDRESS,
        register: REGISTER,
        bytes: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 255 }, maxItems: SMBUS_BLOCK_MAX, description: 'the bytes in bus order (a word as [low, high])' },
        mode: MODE,
      },
      required: ['bus', 'address', 'bytes'],
      additionalProperties: false,
    },
    sequential: true,
    physical: true,
    async execute(input) {
      const { bus, address, register, bytes, mode } = input;
      const device = i2cDeviceKey(bus, address);
      // Before the bus is touched: a refused write must not even do the read that precedes it.
      const refusal = deps.writeLimiter?.(device);
      if (refusal !== undefined) return { content: `i2c_write to ${device} refused: ${refusal}`, isError: true };
      const b = backendOf('i2c_write', deps);
      if (isResult(b)) return b;

      // The register's bytes, read the way they are written (same mode, same length), so before and
      // after compare like with like. Without a register, or with no bytes (a pointer write), there
      // is nothing to read; a read that fails (a write-only register) does not stop the write.
      const span: I2cReadOptions | null = register !== undefined && bytes.length > 0 ? { register, length: bytes.length, mode } : null;
      const snapshot = async (): Promise<{ bytes: number[] | null; why?: string }> => {
        if (!span) return { bytes: null };
        try {
          return { bytes: Array.from(await b.read(bus, address, span)) };
        } catch (err) {
          // Never thrown on: after a write that happened, the result must still report it.
          let why: string;
          try {
            why = reasonOf(err, deps);
          } catch {
            why = err instanceof Error ? err.message : String(err);
          }
          return { bytes: null, why };
        }
      };
      const before = await snapshot();
      try {
        await b.write(bus, address, { register, bytes, mode });
      } catch (err) {
        return failed('i2c_write', bus, address, err, deps);
      }
      const after = await snapshot();

      const shown = (s: { bytes: number[] | null; why?: string }) => (s.bytes ? hexBytes(s.bytes) : `unreadable (${s.why})`);
      let content: string;
      if (register !== undefined && bytes.length === 0) {
        content = `${where(bus, address, register)}: sent the register byte alone (sets the device's register pointer); nothing to read before or after`;
      } else if (!span) {
        content = `${where(bus, address, register)}: wrote ${hexBytes(bytes)} (no register given: nothing read before or after)`;
      } else {
        content = `${where(bus, address, register)}: wrote ${hexBytes(bytes)}; before: ${shown(before)} after: ${shown(after)}`;
        if (after.bytes && hexBytes(after.bytes) !== hexBytes(bytes)) {
          content += '\nthe register does not read back what was written: it may be read-only, self-clearing, or a command rather than storage';
        }
      }
      return {
        content,
        physical: {
          device,
          register: register ?? null,
          wrote: bytes,
          ...(span ? { before: before.bytes, after: after.bytes } : {}),
        },
      };
    },
  });

  return [scan, read, write];
}
