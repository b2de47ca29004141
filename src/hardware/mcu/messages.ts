// The MCU protocol's message types, payloads and error codes (docs/protocol.md), in one table that
// the client, the tools and the tests read.

export const TYPE = {
  hello: 0x01,
  ping: 0x02,
  gpio_mode: 0x10,
  gpio_read: 0x11,
  gpio_write: 0x12,
  adc_read: 0x13,
  pwm_write: 0x14,
  watch: 0x15,
  adc_watch: 0x16,
  pin_event: 0x40,
  adc_event: 0x41,
  error: 0x7f,
} as const;

export const REPLY = 0x80;

export type Command = 'hello' | 'ping' | 'gpio_mode' | 'gpio_read' | 'gpio_write' | 'adc_read' | 'pwm_write' | 'watch' | 'adc_watch';
export const COMMANDS: readonly Command[] = ['hello', 'ping', 'gpio_mode', 'gpio_read', 'gpio_write', 'adc_read', 'pwm_write', 'watch', 'adc_watch'];

export const CAPS = { input: 0x01, output: 0x02, pullup: 0x04, adc: 0x08, pwm: 0x10, edge: 0x20 } as const;
export type Cap = keyof typeof CAPS;

export const ERROR_CODES: Readonly<Record<number, string>> = {
  1: 'unknown command',
  2: 'no such pin',
  3: 'bad payload length',
  4: 'the pin cannot do that',
  5: 'protocol version mismatch',
  6: 'bad argument value',
};

export interface PinInfo {
  pin: number;
  caps: Cap[];
}

export interface HelloInfo {
  protocol: number;
  firmware: string;
  adcBits: number;
  board: string;
  pins: PinInfo[];
}

export interface PingInfo {
  uptimeMs: number;
  framesOk: number;
  framesBad: number;
}

export type McuEvent =
  | { kind: 'pin'; pin: number; value: 0 | 1; seq: number; ms: number }
  | { kind: 'adc'; pin: number; above: boolean; value: number; seq: number; ms: number };

const u16 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);
const u32 = (b: Uint8Array, at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16)) + b[at + 3]! * 0x1000000;

export function capsOf(bits: number): Cap[] {
  return (Object.keys(CAPS) as Cap[]).filter((c) => bits & CAPS[c]);
}

/** A reply payload that is shorter than its type needs is the firmware's fault: say so. */
export class MalformedReply extends Error {}

function need(p: Uint8Array, n: number, what: string): void {
  if (p.length < n) throw new MalformedReply(`${what} reply of ${p.length} bytes, expected at least ${n}`);
}

export function parseHello(p: Uint8Array): HelloInfo {
  need(p, 7, 'hello');
  const nameLen = p[5]!;
  need(p, 6 + nameLen + 1, 'hello');
  const board = Buffer.from(p.subarray(6, 6 + nameLen)).toString('latin1');
  const count = p[6 + nameLen]!;
  const at = 7 + nameLen;
  need(p, at + count * 2, 'hello');
  const pins: PinInfo[] = [];
  for (let i = 0; i < count; i++) pins.push({ pin: p[at + i * 2]!, caps: capsOf(p[at + i * 2 + 1]!) });
  return { protocol: p[0]!, firmware: `${p[1]}.${p[2]}.${p[3]}`, adcBits: p[4]!, board, pins };
}

export function parsePing(p: Uint8Array): PingInfo {
  need(p, 8, 'ping');
  return { uptimeMs: u32(p, 0), framesOk: u16(p, 4), framesBad: u16(p, 6) };
}

export function parseEvent(type: number, p: Uint8Array): McuEvent | null {
  if (type === TYPE.pin_event && p.length >= 8) return { kind: 'pin', pin: p[0]!, value: p[1] ? 1 : 0, seq: u16(p, 2), ms: u32(p, 4) };
  if (type === TYPE.adc_event && p.length >= 10) return { kind: 'adc', pin: p[0]!, above: p[1] !== 0, value: u16(p, 2), seq: u16(p, 4), ms: u32(p, 6) };
  return null;
}

export function le16(n: number): number[] {
  return [n & 0xff, (n >> 8) & 0xff];
}
