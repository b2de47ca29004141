// The wire format of the MCU protocol (docs/protocol.md): a message (version, type, id, payload)
// with its CRC-16/CCITT-FALSE, COBS-encoded and ended by 0x00. Hand-written rather than a package:
// COBS and this CRC are a few lines each, and the firmware in boards/firmware/common/ does the same
// in C, so both sides can be read against the same page.

export const PROTOCOL_VERSION = 1;
export const MAX_PAYLOAD = 255;
/** version, type, id */
const HEADER = 4;
const CRC = 2;
/** the longest COBS-encoded frame, without its delimiter */
export const MAX_ENCODED = HEADER + MAX_PAYLOAD + CRC + 2;

export interface Message {
  version: number;
  type: number;
  id: number;
  payload: Uint8Array;
}

/** CRC-16/CCITT-FALSE: polynomial 0x1021, initial 0xFFFF, no reflection, no final XOR. */
export function crc16(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = 0xffff;
  for (let i = start; i < end; i++) {
    crc ^= bytes[i]! << 8;
    for (let b = 0; b < 8; b++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** COBS: the output has no 0x00; each block starts with the distance to the next zero. */
export function cobsEncode(input: Uint8Array): Uint8Array {
  const out = new Uint8Array(input.length + Math.ceil(input.length / 254) + 1);
  let codeAt = 0;
  let o = 1;
  let code = 1;
  for (let i = 0; i < input.length; i++) {
    const byte = input[i]!;
    if (byte === 0) {
      out[codeAt] = code;
      codeAt = o++;
      code = 1;
      continue;
    }
    out[o++] = byte;
    // A full block (254 bytes) ends without an implied zero; a new one starts only if bytes follow.
    if (++code === 0xff && i + 1 < input.length) {
      out[codeAt] = code;
      codeAt = o++;
      code = 1;
    }
  }
  out[codeAt] = code;
  return out.subarray(0, o);
}

/** The decoded bytes, or null when the input is not valid COBS (a 0x00 inside, a block past the end). */
export function cobsDecode(input: Uint8Array): Uint8Array | null {
  const out = new Uint8Array(input.length);
  let o = 0;
  let i = 0;
  while (i < input.length) {
    const code = input[i]!;
    // A block holds code-1 bytes after its code byte; one that runs past the end is not COBS.
    if (code === 0 || i + code > input.length) return null;
    for (let k = 1; k < code; k++) {
      const b = input[i + k]!;
      if (b === 0) return null;
      out[o++] = b;
    }
    i += code;
    // Every block but a full one (0xFF) and the last stands for a zero after it.
    if (code < 0xff && i < input.length) out[o++] = 0;
  }
  return out.subarray(0, o);
}

/** One message as it goes on the wire, delimiter included. */
export function encodeFrame(m: Message): Uint8Array {
  if (m.payload.length > MAX_PAYLOAD) throw new RangeError(`payload of ${m.payload.length} bytes; the protocol allows ${MAX_PAYLOAD}`);
  const raw = new Uint8Array(HEADER + m.payload.length + CRC);
  raw[0] = m.version;
  raw[1] = m.type;
  raw[2] = m.id & 0xff;
  raw[3] = (m.id >> 8) & 0xff;
  raw.set(m.payload, HEADER);
  const crc = crc16(raw, 0, HEADER + m.payload.length);
  raw[HEADER + m.payload.length] = crc & 0xff;
  raw[HEADER + m.payload.length + 1] = crc >> 8;
  const enc = cobsEncode(raw);
  const out = new Uint8Array(enc.length + 1);
  out.set(enc);
  return out;
}

export type BadFrame = 'too-long' | 'cobs' | 'too-short' | 'crc';

/**
 * Splits a byte stream into messages. Bytes are buffered up to each 0x00; a frame that is too long,
 * not COBS, too short or fails its CRC is dropped and reported, and reading goes on at the next
 * 0x00 — garbage on the line costs at most the frame it hit.
 */
export class FrameDecoder {
  private buf = new Uint8Array(MAX_ENCODED + 1);
  private len = 0;
  private overflow = false;

  constructor(private readonly onMessage: (m: Message) => void, private readonly onBad: (why: BadFrame) => void = () => {}) {}

  push(chunk: Uint8Array): void {
    for (const byte of chunk) {
      if (byte !== 0) {
        if (this.len < this.buf.length) this.buf[this.len++] = byte;
        else this.overflow = true;
        continue;
      }
      if (this.overflow) this.onBad('too-long');
      else if (this.len > 0) this.frame(this.buf.subarray(0, this.len));
      this.len = 0;
      this.overflow = false;
    }
  }

  private frame(encoded: Uint8Array): void {
    const raw = cobsDecode(encoded);
    if (!raw) return this.onBad('cobs');
    if (raw.length < HEADER + CRC) return this.onBad('too-short');
    const end = raw.length - CRC;
    if (crc16(raw, 0, end) !== (raw[end]! | (raw[end + 1]! << 8))) return this.onBad('crc');
    this.onMessage({ version: raw[0]!, type: raw[1]!, id: raw[2]! | (raw[3]! << 8), payload: raw.slice(HEADER, end) });
  }
}
