// The MCU protocol's host side (src/hardware/mcu/): CRC, COBS, frames, the stream decoder's
// resynchronisation, and the client's ids, retries, timeouts and errors. The client runs here against
// a model of the firmware behind the ByteLink interface; the real firmware in emulators is
// test/firmware.test.ts.
import t from 'tap';
import { cobsDecode, cobsEncode, crc16, encodeFrame, FrameDecoder, type BadFrame, type Message } from '../src/hardware/mcu/frame.js';
import { createMcuClient, McuError, type ByteLink } from '../src/hardware/mcu/client.js';
import { REPLY, TYPE, type McuEvent } from '../src/hardware/mcu/messages.js';
import { prng } from './support/prng.js';
import { fakeMcu } from './support/fake-mcu.js';

const bytes = (...b: number[]) => Uint8Array.from(b);

t.test('CRC-16/CCITT-FALSE: the catalogue check value', async (t) => {
  t.equal(crc16(new TextEncoder().encode('123456789')), 0x29b1);
  t.equal(crc16(new Uint8Array()), 0xffff);
});

t.test('COBS: round trips, no zero inside, invalid input refused', async (t) => {
  const rand = prng(7);
  const cases: Uint8Array[] = [new Uint8Array(), bytes(0), bytes(0, 0), bytes(1), new Uint8Array(254).fill(7), new Uint8Array(255).fill(7), new Uint8Array(600).fill(0)];
  for (let i = 0; i < 300; i++) cases.push(Uint8Array.from({ length: Math.floor(rand() * 600) }, () => (rand() < 0.3 ? 0 : Math.floor(rand() * 256))));
  let ok = 0;
  for (const c of cases) {
    const enc = cobsEncode(c);
    if (enc.includes(0)) t.fail('a zero in the encoding');
    const dec = cobsDecode(enc);
    if (dec && Buffer.from(dec).equals(Buffer.from(c))) ok++;
    else t.fail(`round trip of ${c.length} bytes`);
  }
  t.equal(ok, cases.length, 'every case round-trips');
  t.equal(cobsEncode(new Uint8Array(254).fill(7)).length, 255, 'a full block costs one byte');
  t.same([...cobsEncode(Uint8Array.from({ length: 255 }, (_, i) => i + 1))].slice(-3), [0xfe, 0x02, 0xff], 'as in the COBS paper: 255 bytes become a full block and a block of one');
  t.equal(cobsDecode(bytes(5, 1, 2)), null, 'a block past the end');
  t.equal(cobsDecode(bytes(3, 1, 0)), null, 'a zero inside');
});

t.test('the example of docs/protocol.md, byte for byte', async (t) => {
  const frame = encodeFrame({ version: 1, type: 0x12, id: 7, payload: bytes(13, 1) });
  t.same([...frame], [0x04, 0x01, 0x12, 0x07, 0x05, 0x0d, 0x01, 0x39, 0x3c, 0x00]);
  t.throws(() => encodeFrame({ version: 1, type: 1, id: 1, payload: new Uint8Array(256) }), RangeError);
});

t.test('the decoder: frames split anywhere, garbage, truncation, bad CRC, overlong frames', async (t) => {
  const got: Message[] = [];
  const bad: BadFrame[] = [];
  const d = new FrameDecoder((m) => got.push(m), (w) => bad.push(w));
  const a = encodeFrame({ version: 1, type: 0x92, id: 7, payload: new Uint8Array() });
  const b = encodeFrame({ version: 1, type: 0x91, id: 8, payload: bytes(1) });
  const corrupted = Uint8Array.from(b);
  corrupted[5] = corrupted[5]! ^ 0x40; // a data byte (the payload), so COBS still decodes and the CRC catches it
  const stream = Buffer.concat([bytes(0x55, 0xaa, 0x13), bytes(0), a, a.subarray(0, 4), bytes(0), corrupted, new Uint8Array(400).fill(9), bytes(0), b, a]);
  for (let i = 0; i < stream.length; i += 3) d.push(stream.subarray(i, i + 3));
  t.same(got.map((m) => [m.type, m.id]), [[0x92, 7], [0x91, 8], [0x92, 7]], 'every valid frame, a duplicate included (the client ignores it)');
  t.same(got[1]!.payload, bytes(1));
  t.same(bad, ['cobs', 'too-short', 'crc', 'too-long'], 'garbage, a truncated frame, a flipped bit, 400 bytes without a delimiter');
});

t.test('client: hello, reads and writes, a lost reply retried under the same id and executed once', async (t) => {
  const mcu = fakeMcu({ dropReplies: 1 });
  const c = createMcuClient(mcu.link, { device: 'bench', timeoutMs: 30 });
  t.teardown(() => c.close());
  await c.gpioWrite(13, 1);
  t.equal(mcu.pins.get(13), 1, 'the toggle happened once although the request went twice');
  t.equal(mcu.executed(), 1);
  t.same(await c.hello(), { protocol: 1, firmware: '1.2.3', adcBits: 10, board: 'uno', pins: [{ pin: 13, caps: ['input', 'output', 'edge'] }, { pin: 14, caps: ['input', 'adc'] }] });
  t.equal(await c.gpioRead(13), 1);
  t.same(await c.ping(), { uptimeMs: 10000, framesOk: 5, framesBad: 1 });
});

t.test('client: errors name the device, the command and the reason; nothing waits past its timeout', async (t) => {
  const mcu = fakeMcu();
  const c = createMcuClient(mcu.link, { device: 'bench', timeoutMs: 20, retries: 1 });
  await t.rejects(c.gpioWrite(99, 1), { kind: 'firmware', code: 2, message: 'bench: gpio_write: no such pin (pin 99)' });
  await t.rejects(c.adcRead(13), { kind: 'firmware', code: 1, message: /bench: adc_read: unknown command/ });
  c.close();
  await t.rejects(c.ping(), { kind: 'closed', message: 'bench: ping: the connection is closed' });

  const old = fakeMcu({ version: 2 });
  const c2 = createMcuClient(old.link, { device: '/dev/ttyACM0', timeoutMs: 20 });
  await t.rejects(c2.hello(), { kind: 'version', message: '/dev/ttyACM0: the firmware speaks protocol version 2, pinclaw speaks 1: flash the firmware of this pinclaw (docs/hardware.md)' });
  c2.close();

  const dead = fakeMcu({ silent: true });
  const c3 = createMcuClient(dead.link, { device: 'bench', timeoutMs: 10, retries: 2 });
  await t.rejects(c3.hello(), { kind: 'timeout', message: 'bench: hello: no answer after 3 tries of 10 ms (is the firmware running, and at this baud rate?)' });
  c3.close();

  const failing: ByteLink = { write: () => Promise.reject(new Error('EIO')), onData: () => () => {} };
  const c4 = createMcuClient(failing, { device: 'bench', timeoutMs: 10 });
  await t.rejects(c4.ping(), { kind: 'link', message: 'bench: ping: cannot write to the device: EIO' });
  c4.close();
  t.ok(McuError);
});

t.test('client: events (id 0) go to onEvent; stray replies are counted, not delivered', async (t) => {
  const events: McuEvent[] = [];
  const mcu = fakeMcu();
  const c = createMcuClient(mcu.link, { device: 'bench', onEvent: (e) => events.push(e) });
  t.teardown(() => c.close());
  mcu.event({ version: 1, type: TYPE.pin_event, id: 0, payload: bytes(13, 1, 5, 0, 0xe8, 0x03, 0, 0) });
  mcu.event({ version: 1, type: TYPE.adc_event, id: 0, payload: bytes(14, 1, 0x00, 0x02, 6, 0, 0xd0, 0x07, 0, 0) });
  mcu.event({ version: 1, type: 0x92, id: 999, payload: new Uint8Array() });
  await new Promise((r) => setTimeout(r, 5));
  t.same(events, [
    { kind: 'pin', pin: 13, value: 1, seq: 5, ms: 1000 },
    { kind: 'adc', pin: 14, above: true, value: 512, seq: 6, ms: 2000 },
  ]);
  t.equal(c.stats().strayReplies, 1);
});
