// The host side of the MCU protocol: requests with timeouts and retries under the same id (the
// firmware answers a repeated id from its cache, so a retried gpio_write acts once), replies matched
// by id, events handed on, and every failure an McuError naming the device, the command and the
// reason. The link is any byte stream (a serial port, a TCP socket): see link below.
import { encodeFrame, FrameDecoder, PROTOCOL_VERSION, type BadFrame, type Message } from './frame.js';
import { ERROR_CODES, le16, parseEvent, parseHello, parsePing, REPLY, TYPE, type Command, type HelloInfo, type McuEvent, type PingInfo } from './messages.js';

/** What the client needs of a link: write bytes, hear bytes. */
export interface ByteLink {
  write(bytes: Uint8Array): Promise<void> | void;
  /** Registers the listener; returns its removal. */
  onData(listener: (bytes: Uint8Array) => void): () => void;
}

export type McuErrorKind = 'timeout' | 'firmware' | 'version' | 'malformed' | 'closed' | 'link';

export class McuError extends Error {
  constructor(
    message: string,
    readonly kind: McuErrorKind,
    /** the firmware's error code, for kind 'firmware' and 'version' */
    readonly code?: number,
    readonly detail?: number,
  ) {
    super(message);
    this.name = 'McuError';
  }
}

export interface McuClientOptions {
  /** the device's name in messages ("bench", "/dev/ttyACM0") */
  device: string;
  /** per attempt; default 250 ms */
  timeoutMs?: number;
  /** attempts after the first, same id; default 2 */
  retries?: number;
  onEvent?: (e: McuEvent) => void;
  onBadFrame?: (why: BadFrame) => void;
}

interface Pending {
  type: number;
  resolve(m: Message): void;
  reject(e: Error): void;
  /** Forgets the request without an answer (its write failed). */
  cancel(): void;
}

export interface McuClient {
  hello(): Promise<HelloInfo>;
  ping(): Promise<PingInfo>;
  gpioMode(pin: number, mode: 'input' | 'output' | 'input_pullup'): Promise<void>;
  gpioRead(pin: number): Promise<0 | 1>;
  gpioWrite(pin: number, value: 0 | 1): Promise<void>;
  adcRead(pin: number): Promise<number>;
  pwmWrite(pin: number, duty: number): Promise<void>;
  watch(pin: number, edges: 'off' | 'rising' | 'falling' | 'both'): Promise<void>;
  adcWatch(pin: number, low: number, high: number, intervalMs: number): Promise<void>;
  /** Any command by name with a raw payload: the reply's payload (mcu_call). */
  call(command: Command, payload: readonly number[]): Promise<Uint8Array>;
  /** Frames dropped since the client started (bad CRC, garbage, unknown ids). */
  stats(): { badFrames: number; strayReplies: number };
  close(): void;
}

const MODE = { input: 0, output: 1, input_pullup: 2 } as const;
const EDGES = { off: 0, rising: 1, falling: 2, both: 3 } as const;

export function createMcuClient(link: ByteLink, o: McuClientOptions): McuClient {
  const timeoutMs = o.timeoutMs ?? 250;
  const retries = o.retries ?? 2;
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let badFrames = 0;
  let strayReplies = 0;
  let closed = false;

  const decoder = new FrameDecoder(
    (m) => {
      if (m.id === 0) {
        const e = parseEvent(m.type, m.payload);
        if (e) o.onEvent?.(e);
        return;
      }
      const p = pending.get(m.id);
      // A reply to nobody: a late answer to a request that timed out, or noise that passed the CRC.
      if (!p || (m.type !== (p.type | REPLY) && m.type !== TYPE.error)) {
        strayReplies++;
        return;
      }
      pending.delete(m.id);
      p.resolve(m);
    },
    (why) => {
      badFrames++;
      o.onBadFrame?.(why);
    },
  );
  const off = link.onData((b) => decoder.push(b));
  // A leading delimiter ends whatever half frame the board sent while nobody listened.
  void Promise.resolve(link.write(new Uint8Array([0]))).catch(() => {});

  const takeId = () => {
    const id = nextId;
    nextId = nextId === 0xffff ? 1 : nextId + 1;
    return id;
  };

  async function request(command: Command, payload: readonly number[]): Promise<Message> {
    if (closed) throw new McuError(`${o.device}: ${command}: the connection is closed`, 'closed');
    const type = TYPE[command];
    const id = takeId();
    const frame = encodeFrame({ version: PROTOCOL_VERSION, type, id, payload: Uint8Array.from(payload) });
    for (let attempt = 0; attempt <= retries; attempt++) {
      const reply = new Promise<Message | null>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          resolve(null);
        }, timeoutMs);
        pending.set(id, {
          type,
          resolve: (m) => {
            clearTimeout(timer);
            resolve(m);
          },
          reject: (e) => {
            clearTimeout(timer);
            reject(e);
          },
          cancel: () => {
            clearTimeout(timer);
            pending.delete(id);
            resolve(null);
          },
        });
      });
      try {
        await link.write(frame);
      } catch (err) {
        pending.get(id)?.cancel();
        throw new McuError(`${o.device}: ${command}: cannot write to the device: ${(err as Error).message}`, 'link');
      }
      const m = await reply;
      if (!m) continue;
      if (m.type === TYPE.error) throw firmwareError(command, m);
      return m;
    }
    throw new McuError(`${o.device}: ${command}: no answer after ${retries + 1} tries of ${timeoutMs} ms (is the firmware running, and at this baud rate?)`, 'timeout');
  }

  function firmwareError(command: Command, m: Message): McuError {
    const code = m.payload[0] ?? 0;
    const detail = m.payload[1] ?? 0;
    const text = m.payload.length > 2 ? `: ${Buffer.from(m.payload.subarray(2)).toString('latin1')}` : '';
    if (code === 5) return new McuError(`${o.device}: the firmware speaks protocol version ${detail}, pinclaw speaks ${PROTOCOL_VERSION}: flash the firmware of this pinclaw (docs/hardware.md)`, 'version', code, detail);
    const what = code === 2 ? ` (pin ${detail})` : code === 3 ? ` (${detail} bytes sent)` : code === 6 ? ` (byte ${detail} of the arguments)` : '';
    return new McuError(`${o.device}: ${command}: ${ERROR_CODES[code] ?? `error ${code}`}${what}${text}`, 'firmware', code, detail);
  }

  const done = async (command: Command, payload: number[]) => {
    await request(command, payload);
  };

  return {
    async hello() {
      const m = await request('hello', []);
      let info: HelloInfo;
      try {
        info = parseHello(m.payload);
      } catch (err) {
        throw new McuError(`${o.device}: hello: ${(err as Error).message}`, 'malformed');
      }
      if (info.protocol !== PROTOCOL_VERSION) throw new McuError(`${o.device}: the firmware speaks protocol version ${info.protocol}, pinclaw speaks ${PROTOCOL_VERSION}`, 'version', 5, info.protocol);
      return info;
    },
    async ping() {
      const m = await request('ping', []);
      try {
        return parsePing(m.payload);
      } catch (err) {
        throw new McuError(`${o.device}: ping: ${(err as Error).message}`, 'malformed');
      }
    },
    gpioMode: (pin, mode) => done('gpio_mode', [pin, MODE[mode]]),
    async gpioRead(pin) {
      const m = await request('gpio_read', [pin]);
      if (m.payload.length < 1) throw new McuError(`${o.device}: gpio_read: an empty reply`, 'malformed');
      return m.payload[0] ? 1 : 0;
    },
    gpioWrite: (pin, value) => done('gpio_write', [pin, value]),
    async adcRead(pin) {
      const m = await request('adc_read', [pin]);
      if (m.payload.length < 2) throw new McuError(`${o.device}: adc_read: a reply of ${m.payload.length} bytes`, 'malformed');
      return m.payload[0]! | (m.payload[1]! << 8);
    },
    pwmWrite: (pin, duty) => done('pwm_write', [pin, duty]),
    watch: (pin, edges) => done('watch', [pin, EDGES[edges]]),
    adcWatch: (pin, low, high, intervalMs) => done('adc_watch', [pin, ...le16(low), ...le16(high), ...le16(intervalMs)]),
    async call(command, payload) {
      return (await request(command, payload)).payload;
    },
    stats: () => ({ badFrames, strayReplies }),
    close() {
      if (closed) return;
      closed = true;
      off();
      for (const [id, p] of pending) {
        pending.delete(id);
        p.reject(new McuError(`${o.device}: the connection closed`, 'closed'));
      }
    },
  };
}
