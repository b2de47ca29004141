// Little-endian writer and bounds-checked reader for the serialized ranking index, with the same
// field names in errors as native/ranking_codec.h, and CRC-32 (zlib's, from node:zlib when the
// running Node has it).
import * as zlib from 'node:zlib';

export function loadError(message: string): Error {
  return new Error(`ranking: cannot load: ${message}`);
}

let table: Int32Array | undefined;
function crc32Js(data: Uint8Array): number {
  if (!table) {
    table = new Int32Array(256);
    for (let i = 0; i < 256; i++) {
      let c = i;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[i] = c;
    }
  }
  let c = -1;
  for (let i = 0; i < data.length; i++) c = table[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

const nativeCrc = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;
export function crc32(data: Uint8Array): number {
  return nativeCrc ? nativeCrc(data) : crc32Js(data);
}

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

export class Writer {
  #buf = new Uint8Array(1 << 16);
  #view = new DataView(this.#buf.buffer);
  #pos = 0;

  constructor(reserve = 0) {
    this.#pos = reserve;
  }

  #room(n: number): void {
    if (this.#pos + n <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.#pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.#buf.subarray(0, this.#pos));
    this.#buf = next;
    this.#view = new DataView(next.buffer);
  }
  u8(v: number): void {
    this.#room(1);
    this.#buf[this.#pos++] = v;
  }
  u32(v: number): void {
    this.#room(4);
    this.#view.setUint32(this.#pos, v, true);
    this.#pos += 4;
  }
  u64(v: number): void {
    this.#room(8);
    this.#view.setBigUint64(this.#pos, BigInt(v), true);
    this.#pos += 8;
  }
  f64(v: number): void {
    this.#room(8);
    this.#view.setFloat64(this.#pos, v, true);
    this.#pos += 8;
  }
  /** LEB128, as native/ranking_codec.h writes it; callers pass integers below 2^53. */
  varint(v: number): void {
    this.#room(10);
    while (v >= 0x80) {
      this.#buf[this.#pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.#buf[this.#pos++] = v;
  }
  /** Where the next byte goes; with patchU32, a count or length written once it is known. */
  get pos(): number {
    return this.#pos;
  }
  patchU32(at: number, v: number): void {
    this.#view.setUint32(at, v, true);
  }
  bytes(b: Uint8Array): void {
    this.#room(b.length);
    this.#buf.set(b, this.#pos);
    this.#pos += b.length;
  }
  str(s: string): void {
    // A string is at most 3 bytes per UTF-16 unit in UTF-8.
    this.#room(4 + s.length * 3);
    const { written } = utf8.encodeInto(s, this.#buf.subarray(this.#pos + 4));
    this.#view.setUint32(this.#pos, written, true);
    this.#pos += 4 + written;
  }
  /** The bytes written, as a Buffer over the same memory. */
  finish(): Buffer {
    return Buffer.from(this.#buf.buffer, 0, this.#pos);
  }
}

export class Reader {
  readonly #data: Uint8Array;
  readonly #view: DataView;
  #pos = 0;

  constructor(data: Uint8Array) {
    this.#data = data;
    this.#view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  }
  get left(): number {
    return this.#data.length - this.#pos;
  }
  get pos(): number {
    return this.#pos;
  }
  fail(what: string): never {
    throw loadError(`truncated or corrupt at byte ${this.#pos} (${what})`);
  }
  #need(n: number, what: string): void {
    if (n > this.#data.length - this.#pos) this.fail(what);
  }
  u8(what: string): number {
    this.#need(1, what);
    return this.#data[this.#pos++]!;
  }
  u32(what: string): number {
    this.#need(4, what);
    const v = this.#view.getUint32(this.#pos, true);
    this.#pos += 4;
    return v;
  }
  u64(what: string): number {
    this.#need(8, what);
    const v = this.#view.getBigUint64(this.#pos, true);
    this.#pos += 8;
    return v > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(v);
  }
  f64(what: string): number {
    this.#need(8, what);
    const v = this.#view.getFloat64(this.#pos, true);
    this.#pos += 8;
    return v;
  }
  /**
   * A canonical varint of at most 64 bits (a redundant high zero byte is corrupt), failing where
   * Reader::Varint fails. Values beyond 2^53 lose precision, but every caller rejects those as
   * out of range at the same byte as the addon does.
   */
  varint(what: string): number {
    let v = 0;
    let scale = 1;
    for (let shift = 0; ; shift += 7) {
      const b = this.u8(what);
      if (shift === 63 && b > 1) this.fail(what);
      v += (b & 0x7f) * scale;
      if (b < 0x80) {
        if (b === 0 && shift !== 0) this.fail(what);
        return v;
      }
      scale *= 0x80;
    }
  }
  skip(n: number, what: string): Uint8Array {
    this.#need(n, what);
    const at = this.#data.subarray(this.#pos, this.#pos + n);
    this.#pos += n;
    return at;
  }
  /** A string that must be valid UTF-8; `null` when it is not (the caller names the field). */
  str(what: string): string | null {
    const bytes = this.skip(this.u32(what), what);
    try {
      return strictUtf8.decode(bytes);
    } catch {
      return null;
    }
  }
  /** A count of items of at least `minBytes` each, checked against what is left. */
  count(minBytes: number, what: string): number {
    const n = this.u32(what);
    if (minBytes && n > Math.floor(this.left / minBytes)) this.fail(what);
    return n;
  }
}
