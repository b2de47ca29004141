// A small, self-contained speaker of the pinclaw MCU protocol (docs/protocol.md) for
// test/firmware.test.ts: framing (CRC-16/CCITT-FALSE, COBS, 0x00 delimiters) and a link that
// matches replies to requests by id and queues events. Deliberately independent of the host client
// in src/hardware/mcu/, so the firmware is checked against the document, not against that code.

export const T = {
  hello: 0x01,
  ping: 0x02,
  gpioMode: 0x10,
  gpioRead: 0x11,
  gpioWrite: 0x12,
  adcRead: 0x13,
  pwmWrite: 0x14,
  watch: 0x15,
  adcWatch: 0x16,
  reply: 0x80,
  error: 0x7f,
  pinEvent: 0x40,
  adcEvent: 0x41,
} as const;

export const Cap = { input: 0x01, output: 0x02, pullUp: 0x04, adc: 0x08, pwm: 0x10, edge: 0x20 } as const;

export function crc16(data: Uint8Array): number {
  let crc = 0xffff;
  for (const byte of data) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

export function cobsEncode(data: Uint8Array): Buffer {
  const out: number[] = [];
  let i = 0;
  for (;;) {
    let run = 0;
    while (i + run < data.length && data[i + run] !== 0 && run < 254) run++;
    out.push(run + 1, ...data.subarray(i, i + run));
    i += run;
    if (i >= data.length) break;
    if (run < 254) i++;
  }
  return Buffer.from(out);
}

/** null when the bytes are not valid COBS. */
export function cobsDecode(data: Uint8Array): Buffer | null {
  const out: number[] = [];
  let i = 0;
  while (i < data.length) {
    const code = data[i++]!;
    if (code === 0 || i + code - 1 > data.length) return null;
    for (let k = 1; k < code; k++) {
      const b = data[i++]!;
      if (b === 0) return null;
      out.push(b);
    }
    if (code !== 0xff && i < data.length) out.push(0);
  }
  return Buffer.from(out);
}

export interface Message {
  version: number;
  type: number;
  id: number;
  payload: Buffer;
}

/** The message bytes with their CRC, before COBS. */
export function messageBytes(m: { version?: number; type: number; id: number; payload?: Uint8Array }): Buffer {
  const body = Buffer.concat([Buffer.from([m.version ?? 1, m.type, m.id & 0xff, m.id >> 8]), m.payload ?? Buffer.alloc(0)]);
  const crc = crc16(body);
  return Buffer.concat([body, Buffer.from([crc & 0xff, crc >> 8])]);
}

/** A whole frame on the wire: COBS(message || crc) 0x00. */
export function encodeFrame(m: { version?: number; type: number; id: number; payload?: Uint8Array }): Buffer {
  return Buffer.concat([cobsEncode(messageBytes(m)), Buffer.from([0])]);
}

/** Splits a byte stream at 0x00 and decodes each frame; counts the ones that are not valid. */
export class FrameReader {
  private pending = Buffer.alloc(0);
  bad = 0;
  delimiters = 0;

  push(chunk: Buffer): Message[] {
    this.pending = Buffer.concat([this.pending, chunk]);
    const out: Message[] = [];
    let zero: number;
    while ((zero = this.pending.indexOf(0)) >= 0) {
      const frame = this.pending.subarray(0, zero);
      this.pending = this.pending.subarray(zero + 1);
      this.delimiters++;
      if (frame.length === 0) continue;
      const decoded = cobsDecode(frame);
      if (!decoded || decoded.length < 6 || crc16(decoded.subarray(0, -2)) !== decoded.readUInt16LE(decoded.length - 2)) {
        this.bad++;
        continue;
      }
      out.push({ version: decoded[0]!, type: decoded[1]!, id: decoded.readUInt16LE(2), payload: Buffer.from(decoded.subarray(4, -2)) });
    }
    return out;
  }
}

export interface Hello {
  protocol: number;
  firmware: string;
  adcBits: number;
  name: string;
  pins: Map<number, number>; // pin number → caps
  order: number[];
}

export function parseHello(p: Buffer): Hello {
  const nameLen = p[5]!;
  const name = p.subarray(6, 6 + nameLen).toString('ascii');
  let at = 6 + nameLen;
  const count = p[at++]!;
  const pins = new Map<number, number>();
  const order: number[] = [];
  for (let i = 0; i < count; i++, at += 2) {
    pins.set(p[at]!, p[at + 1]!);
    order.push(p[at]!);
  }
  if (at !== p.length) throw new Error(`hello: ${p.length - at} bytes after the pin list`);
  return { protocol: p[0]!, firmware: `${p[1]}.${p[2]}.${p[3]}`, adcBits: p[4]!, name, pins, order };
}

export interface Ping {
  uptimeMs: number;
  framesOk: number;
  framesBad: number;
}

export function parsePing(p: Buffer): Ping {
  return { uptimeMs: p.readUInt32LE(0), framesOk: p.readUInt16LE(4), framesBad: p.readUInt16LE(6) };
}

export interface PinEvent {
  pin: number;
  value: number;
  seq: number;
  ms: number;
}

export function parsePinEvent(p: Buffer): PinEvent {
  return { pin: p[0]!, value: p[1]!, seq: p.readUInt16LE(2), ms: p.readUInt32LE(4) };
}

export interface AdcEvent {
  pin: number;
  above: number;
  value: number;
  seq: number;
  ms: number;
}

export function parseAdcEvent(p: Buffer): AdcEvent {
  return { pin: p[0]!, above: p[1]!, value: p.readUInt16LE(2), seq: p.readUInt16LE(4), ms: p.readUInt32LE(6) };
}

interface Waiter {
  match: (m: Message) => boolean;
  resolve: (m: Message) => void;
}

/**
 * Talks to one firmware over any byte stream. Replies and events are queued until asked for, so
 * nothing that arrives early is lost; every wait has a deadline (a guard against a hung emulator,
 * not a timing assertion).
 */
export class McuLink {
  readonly reader = new FrameReader();
  private queue: Message[] = [];
  private waiters: Waiter[] = [];
  private delimiterSeen: (() => void) | null = null;
  private nextId = 1;
  /** Every byte received, for diagnostics. */
  received = 0;

  constructor(
    private readonly write: (bytes: Buffer) => void,
    readonly label: string,
    readonly timeoutMs = 10_000,
  ) {}

  feed(chunk: Buffer): void {
    this.received += chunk.length;
    const before = this.reader.delimiters;
    for (const m of this.reader.push(chunk)) this.deliver(m);
    if (this.reader.delimiters > before && this.delimiterSeen) {
      this.delimiterSeen();
      this.delimiterSeen = null;
    }
  }

  private deliver(m: Message): void {
    const i = this.waiters.findIndex((w) => w.match(m));
    if (i >= 0) this.waiters.splice(i, 1)[0]!.resolve(m);
    else this.queue.push(m);
  }

  /** Resolves at the first 0x00 the firmware sends: it sends one as soon as its UART is up. */
  ready(): Promise<void> {
    if (this.reader.delimiters > 0) return Promise.resolve();
    return this.deadline(new Promise<void>((res) => (this.delimiterSeen = res)), 'the firmware\'s start-up 0x00');
  }

  private deadline<V>(p: Promise<V>, what: string, ms = this.timeoutMs): Promise<V> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, rej) => {
      timer = setTimeout(() => rej(new Error(`${this.label}: no ${what} within ${ms} ms (${this.received} bytes received)`)), ms);
    });
    return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
  }

  /** The next queued or arriving message that matches. */
  next(match: (m: Message) => boolean, what: string, ms?: number): Promise<Message> {
    const i = this.queue.findIndex(match);
    if (i >= 0) return Promise.resolve(this.queue.splice(i, 1)[0]!);
    return this.deadline(new Promise<Message>((resolve) => this.waiters.push({ match, resolve })), what, ms).catch((e: unknown) => {
      this.waiters = this.waiters.filter((w) => w.match !== match);
      throw e;
    });
  }

  /** Messages that arrived and nobody asked for (events mostly). */
  pending(): Message[] {
    return [...this.queue];
  }

  takeId(): number {
    const id = this.nextId;
    this.nextId = this.nextId === 0xffff ? 1 : this.nextId + 1;
    return id;
  }

  sendRaw(bytes: Buffer): void {
    this.write(bytes);
  }

  /** Sends a request (a fresh id unless given) and waits for the message with its id. */
  async request(type: number, payload: number[] | Buffer = [], opts: { id?: number; version?: number } = {}): Promise<Message> {
    const id = opts.id ?? this.takeId();
    this.write(encodeFrame({ version: opts.version ?? 1, type, id, payload: Buffer.from(payload) }));
    return this.next((m) => m.id === id, `reply to type 0x${type.toString(16)} id ${id}`);
  }

  /** A request that must succeed: its reply's payload. */
  async call(type: number, payload: number[] | Buffer = []): Promise<Buffer> {
    const m = await this.request(type, payload);
    if (m.type !== (type | T.reply)) throw new Error(`${this.label}: type 0x${type.toString(16)} answered with 0x${m.type.toString(16)} ${m.payload.toString('hex')}`);
    return m.payload;
  }

  event(type: number, what: string, ms?: number): Promise<Message> {
    return this.next((m) => m.id === 0 && m.type === type, what, ms);
  }
}
