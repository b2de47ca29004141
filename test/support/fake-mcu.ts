// A model of the MCU firmware behind the ByteLink interface, for unit tests of the host side (the
// real firmware runs in emulators in test/firmware.test.ts): it executes requests, caches the last
// reply per id as the protocol requires, can drop replies, speak another version or stay silent.
import { createServer, type Socket } from 'node:net';
import type { Test } from 'tap';
import type { ByteLink } from '../../src/hardware/mcu/client.js';
import { encodeFrame, FrameDecoder, type Message } from '../../src/hardware/mcu/frame.js';
import { REPLY, TYPE } from '../../src/hardware/mcu/messages.js';

const bytes = (...b: number[]) => Uint8Array.from(b);

/** A model of the firmware for the client tests: executes, caches the last reply per id, can drop replies. */
export function fakeMcu(o: { dropReplies?: number; version?: number; silent?: boolean; hello?: number[] } = {}) {
  const listeners = new Set<(b: Uint8Array) => void>();
  const pins = new Map<number, number>([[0, 0], [3, 0], [13, 0], [14, 0]]);
  let executed = 0;
  /** pin → edges asked for by `watch` (0 off, 1 rising, 2 falling, 3 both) */
  const watched = new Map<number, number>();
  /** pin → [low, high] asked for by `adc_watch` */
  const adcWatched = new Map<number, [number, number]>();
  let last: { id: number; frame: Uint8Array } | undefined;
  let drop = o.dropReplies ?? 0;
  const send = (m: Message) => {
    const f = encodeFrame(m);
    queueMicrotask(() => listeners.forEach((l) => l(f)));
  };
  const decoder = new FrameDecoder((m) => {
    if (o.silent) return;
    if (m.version !== (o.version ?? 1)) return send({ version: o.version ?? 1, type: TYPE.error, id: m.id, payload: bytes(5, o.version ?? 1) });
    let frame: Uint8Array;
    if (last && last.id === m.id) frame = last.frame;
    else {
      executed++;
      const reply = (payload: number[]) => encodeFrame({ version: 1, type: m.type | REPLY, id: m.id, payload: Uint8Array.from(payload) });
      const error = (code: number, detail: number) => encodeFrame({ version: 1, type: TYPE.error, id: m.id, payload: bytes(code, detail) });
      const pin = m.payload[0] ?? 255;
      switch (m.type) {
        case TYPE.hello:
          frame = reply(o.hello ?? [1, 1, 2, 3, 10, 3, ...Buffer.from('uno'), 2, 13, 0x23, 14, 0x09]);
          break;
        case TYPE.gpio_write:
          if (!pins.has(pin)) frame = error(2, pin);
          else {
            // A toggle, not a set: a request executed twice would show.
            pins.set(pin, pins.get(pin)! ^ 1);
            frame = reply([]);
          }
          break;
        case TYPE.pwm_write:
          frame = pins.has(pin) ? reply([]) : error(2, pin);
          break;
        case TYPE.adc_watch:
          if (!pins.has(pin)) frame = error(2, pin);
          else {
            adcWatched.set(pin, [m.payload[1]! | (m.payload[2]! << 8), m.payload[3]! | (m.payload[4]! << 8)]);
            frame = reply([]);
          }
          break;
        case TYPE.watch:
          if (!pins.has(pin)) frame = error(2, pin);
          else {
            watched.set(pin, m.payload[1] ?? 0);
            frame = reply([]);
          }
          break;
        case TYPE.gpio_read:
          frame = pins.has(pin) ? reply([pins.get(pin)!]) : error(2, pin);
          break;
        case TYPE.ping:
          frame = reply([0x10, 0x27, 0, 0, 5, 0, 1, 0]);
          break;
        default:
          frame = error(1, m.type);
      }
      last = { id: m.id, frame };
    }
    if (drop > 0) {
      drop--;
      return;
    }
    queueMicrotask(() => listeners.forEach((l) => l(frame)));
  });
  const link: ByteLink = {
    write: (b) => decoder.push(b),
    onData: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  };
  return { link, pins, watched, adcWatched, executed: () => executed, event: (e: Message) => send(e) };
}




/** arduino-uno's hello as the firmware model says it: D0, D3, D13, A0. */
export const UNO_HELLO = [1, 1, 0, 0, 10, 11, ...Buffer.from('arduino-uno'), 4, 0, 0x03, 3, 0x33, 13, 0x23, 14, 0x09];

/**
 * The firmware model behind a TCP server (socket://, as an emulator or ser2net serves a board),
 * answering adc_read itself with `adc(pin)` when given (the model has no ADC) and passing every
 * other request to fakeMcu. Each connection gets a fresh model with the pin levels of the last one,
 * as a board that stays powered while the host restarts: the model's reply cache matches ids only,
 * and a second process numbers its requests from 1 again.
 */
export async function fakeMcuOverTcp(t: Test, o: { hello?: number[]; adc?: (pin: number) => number } = {}) {
  let mcu = fakeMcu({ hello: o.hello ?? UNO_HELLO });
  const sockets: Socket[] = [];
  const server = createServer((s) => {
    const model = fakeMcu({ hello: o.hello ?? UNO_HELLO });
    for (const [pin, v] of mcu.pins) model.pins.set(pin, v);
    mcu = model;
    sockets.push(s);
    model.link.onData((b) => void s.write(b));
    const decoder = new FrameDecoder((m) => {
      if (m.type === TYPE.adc_read && o.adc) {
        const v = o.adc(m.payload[0]!);
        s.write(encodeFrame({ version: 1, type: m.type | REPLY, id: m.id, payload: Uint8Array.from([v & 0xff, v >> 8]) }));
      } else {
        model.link.write(encodeFrame(m));
      }
    });
    s.on('data', (b) => decoder.push(b));
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return { board: () => mcu, url: `socket://127.0.0.1:${(server.address() as { port: number }).port}` };
}
