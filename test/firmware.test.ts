// The reference firmware (boards/firmware/) in real emulators, spoken to with the protocol of
// docs/protocol.md through a small independent codec (test/support/mcu-wire.ts).
//
// - STM32: QEMU's netduinoplus2 (an STM32F405) runs stm32-netduinoplus2.elf with USART1 on a TCP
//   socket that this test listens on. QEMU 7.2 models the USART, SysTick, NVIC and the ADC but
//   not GPIO, so pin levels there are the firmware's shadow: this checks the protocol (framing,
//   resync, retries, errors, events). The Nucleo builds boot on the same machine with USART2 on
//   QEMU's second serial port: their hello and their real-register GPIO path (reading QEMU's zero).
// - AVR: simavr (libsimavr, driven by boards/firmware/sim/simavr-harness.c) runs the Uno, Nano and
//   Mega builds with USART0 on the harness's stdin/stdout and a control channel on fd 3 that
//   reads the port registers, drives input pins, sets ADC voltages and measures PWM duty cycles:
//   this checks real pin behaviour.
// Each family is one subtest; the two run in parallel. A missing toolchain or emulator skips, with
// the reason, except under CI, where it fails.
import t, { type Test } from 'tap';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { root } from './support/proc.js';
import { Cap, McuLink, T, cobsEncode, encodeFrame, messageBytes, parseAdcEvent, parseHello, parsePinEvent, parsePing, type Message } from './support/mcu-wire.js';

t.setTimeout(300_000);
t.jobs = 2;

const fwDir = join(root, 'dist', 'firmware');
const harness = join(fwDir, 'pinclaw-simavr');

// ---- build (or the cache) ----

const build = spawnSync(process.execPath, [join(root, 'scripts', 'build-firmware.mjs')], { encoding: 'utf8', timeout: 240_000 });
interface BuildReport {
  targets: Record<string, { status: 'built' | 'cached' | 'skipped' | 'failed'; reason?: string }>;
}
const report: BuildReport = existsSync(join(fwDir, 'build.json')) ? (JSON.parse(readFileSync(join(fwDir, 'build.json'), 'utf8')) as BuildReport) : { targets: {} };

t.test('the firmware builds', async (t) => {
  t.equal(build.status, 0, 'scripts/build-firmware.mjs exits 0', { output: `${build.stdout}${build.stderr}` });
  for (const [name, r] of Object.entries(report.targets)) {
    if (r.status === 'skipped' && !process.env.CI) t.pass(`${name}: skipped here (${r.reason})`);
    else t.ok(r.status === 'built' || r.status === 'cached', `${name}: ${r.status}${r.reason ? ` (${r.reason})` : ''}`);
  }
});

/** Why a family cannot run here, or null. */
function unavailable(targets: string[], emulator?: string): string | null {
  for (const name of targets) {
    const r = report.targets[name];
    if (!r || (r.status !== 'built' && r.status !== 'cached')) return `${name} is not built${r?.reason ? `: ${r.reason}` : ''}`;
  }
  if (!emulator) return null;
  const v = spawnSync(emulator, ['--version'], { encoding: 'utf8' });
  if (v.error || v.status !== 0) return `${emulator} is not available (${v.error?.message ?? `exit ${v.status}`})`;
  return null;
}

// ---- board profiles: what hello must list ----

interface BoardProfile {
  id: string;
  gpio: { lines: { name: string; offset: number; capabilities: string[] }[] };
  reserved: { lines: string[]; when: string }[];
  mcu: { adcBits: number };
}
const capBits: Record<string, number> = { input: Cap.input, output: Cap.output, 'pull-up': Cap.pullUp, adc: Cap.adc, pwm: Cap.pwm, edge: Cap.edge };

function profile(id: string): BoardProfile {
  return JSON.parse(readFileSync(join(root, 'boards', `${id}.json`), 'utf8')) as BoardProfile;
}

/** The pins in the profile's order with their capability bits; the link's and SWD's (reserved
 * always) have none: the firmware never touches them. */
function expectedPins(p: BoardProfile): [number, number][] {
  const reserved = new Set(p.reserved.filter((r) => r.when === 'always').flatMap((r) => r.lines));
  return p.gpio.lines.map((l) => [l.offset, reserved.has(l.name) ? 0 : l.capabilities.reduce((c, n) => c | (capBits[n] ?? 0), 0)]);
}

async function checkHello(t: Test, link: McuLink, id: string): Promise<void> {
  const p = profile(id);
  const hello = parseHello(await link.call(T.hello));
  t.equal(hello.protocol, 1, `${id}: protocol 1`);
  t.equal(hello.name, id, `${id}: hello names the board profile`);
  t.equal(hello.firmware, '1.0.0', `${id}: firmware version`);
  t.equal(hello.adcBits, p.mcu.adcBits, `${id}: ADC bits as the profile says`);
  t.same(
    hello.order.map((pin) => [pin, hello.pins.get(pin)]),
    expectedPins(p),
    `${id}: the pins and capabilities of boards/${id}.json, in its order`,
  );
}

// ---- checks every firmware must pass, whatever the emulator ----

const isError = (m: Message, code: number, detail: number) => m.type === T.error && m.version === 1 && m.payload[0] === code && m.payload[1] === detail;

async function ping(link: McuLink) {
  return parsePing(await link.call(T.ping));
}

async function errorReplies(t: Test, link: McuLink, pins: { output: number; noAdc: number; link: number }): Promise<void> {
  const id = link.takeId();
  const unknown = await link.request(0x33, [], { id });
  t.ok(isError(unknown, 1, 0x33) && unknown.id === id, 'an unknown type: error 1, with the request id');
  t.ok(isError(await link.request(T.gpioWrite, [200, 1]), 2, 200), 'no such pin: error 2, detail = the pin');
  t.ok(isError(await link.request(T.gpioRead, [pins.output, 0]), 3, 2), 'a payload of the wrong length: error 3, detail = the length');
  t.ok(isError(await link.request(T.ping, [1]), 3, 1), 'ping with a payload: error 3');
  t.ok(isError(await link.request(T.adcRead, [pins.noAdc]), 4, Cap.adc), 'adc_read on a pin without ADC: error 4, detail = the ADC bit');
  t.ok(isError(await link.request(T.gpioWrite, [pins.link, 1]), 4, Cap.output), 'the serial link\'s own pin is refused: error 4');
  t.ok(isError(await link.request(T.gpioWrite, [pins.output, 2]), 6, 1), 'gpio_write 2: error 6, detail = offset 1');
  t.ok(isError(await link.request(T.gpioMode, [pins.output, 3]), 6, 1), 'gpio_mode 3: error 6');
  t.ok(isError(await link.request(T.watch, [pins.output, 4]), 6, 1), 'watch edges 4: error 6');
  const wrong = await link.request(T.hello, [], { version: 2 });
  t.ok(isError(wrong, 5, 1), 'a request in version 2: error 5, detail = 1, the version the firmware speaks');
  // The version error is not cached: the same id in version 1 is executed.
  const again = await link.request(T.ping, [], { id: wrong.id });
  t.equal(again.type, T.ping | T.reply, 'the same id in version 1 is executed after a version error');
}

async function retries(t: Test, link: McuLink): Promise<void> {
  // A ping's uptime changes with time, so a second execution could not give the same bytes.
  const id = link.takeId();
  const r1 = await link.request(T.ping, [], { id });
  const p1 = parsePing(r1.payload);
  // Let the clock move on without sending anything: any other request would replace the cache.
  await new Promise((res) => setTimeout(res, 30));
  const r2 = await link.request(T.ping, [], { id });
  t.same(r2.payload, r1.payload, 'a retried ping (same id) gets the very same reply: not executed again');
  const p3 = await ping(link);
  t.ok(p3.uptimeMs > p1.uptimeMs, 'while the clock did move on');
  t.equal(p3.framesOk, (p1.framesOk + 2) & 0xffff, 'the retry was received and counted as a good frame');
}

async function resync(t: Test, link: McuLink): Promise<void> {
  const p0 = await ping(link);
  let bad = 0;
  let ok = 0;
  const valid = encodeFrame({ type: T.ping, id: link.takeId() });

  // Random bytes (no 0x00), ended by a 0x00.
  const noise = Buffer.from(Array.from({ length: 40 }, (_, i) => ((i * 73 + 11) % 255) + 1));
  link.sendRaw(Buffer.concat([noise, Buffer.from([0])]));
  bad++;
  // Half of a valid frame, then a 0x00 (a sender that died mid-frame, the next one starting clean).
  link.sendRaw(Buffer.concat([valid.subarray(0, 3), Buffer.from([0])]));
  bad++;
  // A frame whose CRC is wrong.
  const corrupt = messageBytes({ type: T.gpioWrite, id: link.takeId(), payload: Buffer.from([5, 1]) });
  corrupt[corrupt.length - 1]! ^= 0x40;
  link.sendRaw(Buffer.concat([cobsEncode(corrupt), Buffer.from([0])]));
  bad++;
  // Too short: three bytes decoded.
  link.sendRaw(Buffer.concat([cobsEncode(Buffer.from([1, 2, 3])), Buffer.from([0])]));
  bad++;
  // Not COBS: a block that runs past the end.
  link.sendRaw(Buffer.from([0x09, 0x01, 0x02, 0]));
  bad++;
  // Longer than any frame (300 bytes without a 0x00).
  link.sendRaw(Buffer.concat([Buffer.alloc(300, 0x55), Buffer.from([0])]));
  bad++;
  // Empty frames: a resynchronising 0x00 is not an error.
  link.sendRaw(Buffer.from([0, 0, 0]));

  // A valid request right after all that is answered.
  const after = await link.call(T.ping);
  ok++;
  t.ok(parsePing(after).uptimeMs >= p0.uptimeMs, 'a valid frame right after garbage is answered');

  // A duplicated frame: the second copy is a retry, answered identically and not executed again.
  const dupId = link.takeId();
  const dup = encodeFrame({ type: T.ping, id: dupId });
  link.sendRaw(Buffer.concat([dup, dup]));
  ok += 2;
  const d1 = await link.next((m) => m.id === dupId, 'the first reply to a duplicated frame');
  const d2 = await link.next((m) => m.id === dupId, 'the second reply to a duplicated frame');
  t.same(d2.payload, d1.payload, 'a duplicated frame gets the same reply twice');

  // Garbage with no delimiter glued to a valid frame loses that frame too; a leading 0x00 saves it.
  const savedId = link.takeId();
  link.sendRaw(Buffer.concat([Buffer.from('garbage'), Buffer.from([0]), encodeFrame({ type: T.ping, id: savedId })]));
  bad++;
  ok++;
  t.equal((await link.next((m) => m.id === savedId, 'the reply after garbage and a 0x00')).type, T.ping | T.reply, 'garbage ended by 0x00 does not cost the next frame');

  const p1 = await ping(link);
  ok++;
  t.equal(p1.framesBad - p0.framesBad, bad, `ping counts exactly the ${bad} bad frames`);
  t.equal(p1.framesOk - p0.framesOk, ok, `and exactly the ${ok} good ones`);
  t.equal(link.reader.bad, 0, 'and every frame the firmware sent was valid');
}

// ---- STM32 in QEMU ----

interface Running {
  link: McuLink;
  stop(): void;
}

async function startQemu(elf: string, serialIndex: number, label: string): Promise<Running> {
  const server = createServer();
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  // QEMU connects -serial devices in order to USART1, USART2, … (hw/arm/stm32f405_soc.c); it is
  // the client here, so the socket exists before the CPU runs and nothing the firmware sends is lost.
  const serials = [...Array.from({ length: serialIndex }, () => ['-serial', 'null']).flat(), '-serial', `tcp:127.0.0.1:${address.port}`];
  const qemu = spawn('qemu-system-arm', ['-M', 'netduinoplus2', '-kernel', elf, '-nographic', '-monitor', 'none', ...serials], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  qemu.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const socket = await new Promise<Socket>((res, rej) => {
    server.once('connection', res);
    qemu.once('exit', (code) => rej(new Error(`qemu exited ${code}: ${stderr}`)));
  });
  const link = new McuLink((b) => socket.write(b), label);
  socket.on('data', (d: Buffer) => link.feed(d));
  const stop = () => {
    socket.destroy();
    qemu.kill();
    server.close();
  };
  try {
    await link.ready();
  } catch (e) {
    stop();
    throw e;
  }
  return { link, stop };
}

const stm32Targets = ['stm32-netduinoplus2', 'stm32-nucleo-f401re', 'stm32-nucleo-f411re'];
const stm32Skip = unavailable(stm32Targets, 'qemu-system-arm');

t.test('STM32 firmware in QEMU netduinoplus2', { skip: stm32Skip && !process.env.CI ? stm32Skip : false }, async (t) => {
  if (stm32Skip) return void t.fail(`unavailable on CI: ${stm32Skip}`);

  await t.test('stm32-netduinoplus2 on USART1', async (t) => {
    const { link, stop } = await startQemu(join(fwDir, 'stm32-netduinoplus2.elf'), 0, 'netduinoplus2');
    t.teardown(stop);
    await checkHello(t, link, 'qemu-netduinoplus2');
    const p = await ping(link);
    t.equal(p.framesBad, 0, 'no bad frames so far');
    t.equal(p.framesOk, 2, 'hello and this ping were received');

    // GPIO through the shadow (QEMU has no GPIO model).
    t.same(await link.call(T.gpioWrite, [5, 1]), Buffer.alloc(0), 'gpio_write PA5 1: done');
    t.same(await link.call(T.gpioRead, [5]), Buffer.from([1]), 'gpio_read PA5 reads back 1');
    await link.call(T.gpioWrite, [5, 0]);
    t.same(await link.call(T.gpioRead, [5]), Buffer.from([0]), 'and 0 after writing 0');
    await link.call(T.gpioMode, [45, 2]);
    t.same(await link.call(T.gpioRead, [45]), Buffer.from([1]), 'an input with pull-up reads 1');
    await link.call(T.gpioMode, [45, 0]);
    t.same(await link.call(T.gpioRead, [45]), Buffer.from([0]), 'a floating input reads 0');

    // Events: a watched pin that the firmware itself drives changes level.
    await link.call(T.watch, [6, 3]);
    await link.call(T.gpioWrite, [6, 1]);
    const e1 = parsePinEvent((await link.event(T.pinEvent, 'a pin_event for PA6 rising')).payload);
    await link.call(T.gpioWrite, [6, 0]);
    const e2 = parsePinEvent((await link.event(T.pinEvent, 'a pin_event for PA6 falling')).payload);
    t.match(e1, { pin: 6, value: 1 }, 'rising edge: pin_event PA6 = 1');
    t.match(e2, { pin: 6, value: 0 }, 'falling edge: pin_event PA6 = 0');
    t.equal(e2.seq, (e1.seq + 1) & 0xffff, 'event sequence numbers count up by one');
    t.ok(e2.ms >= e1.ms, 'event times do not go back');
    await link.call(T.watch, [6, 1]);
    await link.call(T.gpioWrite, [6, 1]);
    const e3 = parsePinEvent((await link.event(T.pinEvent, 'a rising pin_event')).payload);
    await link.call(T.gpioWrite, [6, 0]);
    await link.call(T.watch, [6, 0]);
    await link.call(T.gpioWrite, [6, 1]);
    await ping(link); // anything the writes caused was sent before this reply
    t.equal(e3.seq, (e2.seq + 1) & 0xffff, 'rising-only watch: one event for the rise');
    t.same(link.pending().filter((m) => m.type === T.pinEvent), [], 'no event for the fall, nor after the watch is off');
    t.ok(isError(await link.request(T.pwmWrite, [5, 100]), 4, Cap.pwm), 'no PWM on this board: error 4');

    // ADC: QEMU's model adds 7 per conversion, so two reads show exactly one conversion each.
    const a1 = (await link.call(T.adcRead, [0])).readUInt16LE(0);
    const a2 = (await link.call(T.adcRead, [0])).readUInt16LE(0);
    t.ok(a1 < 4096, 'adc_read: a 12-bit value');
    t.equal(a2, (a1 + 7) & 0xfff, 'one conversion per adc_read (QEMU adds 7 each time)');

    await errorReplies(t, link, { output: 5, noAdc: 8, link: 9 });
    await retries(t, link);
    await resync(t, link);
  });

  for (const [board, target] of [
    ['nucleo-f401re', 'stm32-nucleo-f401re'],
    ['nucleo-f411re', 'stm32-nucleo-f411re'],
  ] as const) {
    await t.test(`${target} on USART2 (QEMU's second serial port)`, async (t) => {
      const { link, stop } = await startQemu(join(fwDir, `${target}.elf`), 1, board);
      t.teardown(stop);
      await checkHello(t, link, board);
      await link.call(T.gpioWrite, [5, 1]);
      t.same(await link.call(T.gpioRead, [5]), Buffer.from([0]), 'gpio_read uses the real IDR, which QEMU reads as 0: no shadow in this build');
      t.same(await link.call(T.pwmWrite, [19, 128]), Buffer.alloc(0), 'pwm_write PB3 (TIM2_CH2): done');
      t.ok(isError(await link.request(T.gpioWrite, [2, 1]), 4, Cap.output), 'PA2, USART2 TX, is refused');
      const p = await ping(link);
      t.equal(p.framesBad, 0, 'no bad frames');
    });
  }
});

// ---- AVR in simavr ----

/** The harness's text control channel on fd 3: one line back per command, in order. */
class Control {
  private buffered = '';
  private lines: string[] = [];
  private waiting: ((line: string) => void) | null = null;

  constructor(private readonly stream: Duplex) {
    stream.on('data', (d: Buffer) => {
      this.buffered += d.toString();
      let nl: number;
      while ((nl = this.buffered.indexOf('\n')) >= 0) {
        const line = this.buffered.slice(0, nl);
        this.buffered = this.buffered.slice(nl + 1);
        if (this.waiting) {
          const w = this.waiting;
          this.waiting = null;
          w(line);
        } else this.lines.push(line);
      }
    });
  }

  line(): Promise<string> {
    const l = this.lines.shift();
    if (l !== undefined) return Promise.resolve(l);
    return new Promise((res, rej) => {
      const timer = setTimeout(() => rej(new Error('simavr harness: no answer on the control channel')), 10_000);
      this.waiting = (line) => {
        clearTimeout(timer);
        res(line);
      };
    });
  }

  async cmd(command: string): Promise<string> {
    this.stream.write(`${command}\n`);
    const answer = await this.line();
    if (answer.startsWith('error')) throw new Error(`simavr harness: ${command}: ${answer}`);
    return answer;
  }

  /** PORTx, DDRx and PINx as the CPU sees them. */
  async port(letter: string): Promise<{ port: number; ddr: number; pin: number }> {
    const [, , port, ddr, pin] = (await this.cmd(`port ${letter}`)).split(' ');
    return { port: parseInt(port!, 16), ddr: parseInt(ddr!, 16), pin: parseInt(pin!, 16) };
  }

  /** The share of time a pin was high over `ms` of simulated time, and how often it changed. */
  async duty(pin: string, ms: number): Promise<{ ratio: number; edges: number }> {
    const [, , high, total, edges] = (await this.cmd(`duty ${pin} ${ms}`)).split(' ');
    return { ratio: Number(high) / Number(total), edges: Number(edges) };
  }
}

async function startSimavr(mcu: string, elf: string, label: string): Promise<Running & { ctl: Control }> {
  const child: ChildProcess = spawn(harness, [mcu, '16000000', elf], { stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const ctl = new Control(child.stdio[3] as Duplex);
  const link = new McuLink((b) => child.stdin!.write(b), label);
  child.stdout!.on('data', (d: Buffer) => link.feed(d));
  const stop = () => {
    child.kill();
  };
  try {
    const ready = await ctl.line();
    if (!ready.startsWith('ready')) throw new Error(`simavr harness: ${ready} ${stderr}`);
    await link.ready();
  } catch (e) {
    stop();
    throw e;
  }
  return { link, ctl, stop };
}

const near = (t: Test, actual: number, expected: number, tolerance: number, what: string) =>
  t.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual} (expected ${expected} ± ${tolerance})`);

// The harness is the emulator: it is built only where libsimavr-dev is installed.
const avrSkip = unavailable(['avr-uno', 'avr-nano', 'avr-mega2560', 'pinclaw-simavr']);

t.test('AVR firmware in simavr', { skip: avrSkip && !process.env.CI ? avrSkip : false }, async (t) => {
  if (avrSkip) return void t.fail(`unavailable on CI: ${avrSkip}`);

  await t.test('avr-uno (ATmega328P)', async (t) => {
    const { link, ctl, stop } = await startSimavr('atmega328p', join(fwDir, 'avr-uno.elf'), 'uno');
    t.teardown(stop);
    await checkHello(t, link, 'arduino-uno');

    // D13 is PB5 (the LED).
    await link.call(T.gpioWrite, [13, 1]);
    let b = await ctl.port('B');
    t.ok(b.ddr & 0x20 && b.port & 0x20 && b.pin & 0x20, 'gpio_write D13 1: PB5 is an output and high');
    await link.call(T.gpioWrite, [13, 0]);
    b = await ctl.port('B');
    t.ok(b.ddr & 0x20 && !(b.port & 0x20) && !(b.pin & 0x20), 'gpio_write D13 0: PB5 low');

    // D7 is PD7: a pull-up, then driven from outside.
    await link.call(T.gpioMode, [7, 2]);
    let d = await ctl.port('D');
    t.ok(!(d.ddr & 0x80) && d.port & 0x80, 'gpio_mode D7 pull-up: PD7 input with its PORT bit (the pull-up) set');
    t.same(await link.call(T.gpioRead, [7]), Buffer.from([1]), 'nothing connected: the pull-up reads 1');
    await ctl.cmd('drive D7 0');
    t.same(await link.call(T.gpioRead, [7]), Buffer.from([0]), 'pulled low from outside: reads 0');
    await ctl.cmd('drive D7 1');

    // A retry of gpio_read answers from the cache, even though the pin changed meanwhile.
    const id = link.takeId();
    const r1 = await link.request(T.gpioRead, [7], { id });
    await ctl.cmd('drive D7 0');
    const r2 = await link.request(T.gpioRead, [7], { id });
    const r3 = await link.request(T.gpioRead, [7]);
    t.same([r1.payload[0], r2.payload[0], r3.payload[0]], [1, 1, 0], 'same id: the cached 1; a new id reads the pin again: 0');
    await link.call(T.gpioMode, [7, 0]);
    d = await ctl.port('D');
    t.notOk(d.port & 0x80, 'gpio_mode D7 input: the pull-up is off again');

    // Edge events on D2 (PD2).
    await ctl.cmd('drive D2 0');
    await link.call(T.watch, [2, 3]);
    await ctl.cmd('drive D2 1');
    const e1 = parsePinEvent((await link.event(T.pinEvent, 'a pin_event for D2 rising')).payload);
    await ctl.cmd('drive D2 0');
    const e2 = parsePinEvent((await link.event(T.pinEvent, 'a pin_event for D2 falling')).payload);
    t.match(e1, { pin: 2, value: 1 }, 'D2 driven high: pin_event D2 = 1');
    t.match(e2, { pin: 2, value: 0, seq: (e1.seq + 1) & 0xffff }, 'D2 driven low: pin_event D2 = 0, the next seq');
    t.ok(isError(await link.request(T.watch, [4, 3]), 4, Cap.edge), 'watch on D4 (no edge in the profile): error 4');

    // ADC: simavr converts the millivolts given against AVcc = 5 V.
    await ctl.cmd('adc 0 2500');
    await ctl.cmd('adc 1 1000');
    near(t, (await link.call(T.adcRead, [14])).readUInt16LE(0), 511, 1, 'adc_read A0 at 2.5 V');
    near(t, (await link.call(T.adcRead, [15])).readUInt16LE(0), 205, 1, 'adc_read A1 at 1.0 V');

    // adc_watch A0: thresholds 300 and 700, checked every 5 ms.
    await link.call(T.adcWatch, [14, ...u16(300), ...u16(700), ...u16(5)]);
    await ctl.cmd('adc 0 4000');
    const up = parseAdcEvent((await link.event(T.adcEvent, 'an adc_event above 700')).payload);
    await ctl.cmd('adc 0 100');
    const down = parseAdcEvent((await link.event(T.adcEvent, 'an adc_event below 300')).payload);
    t.match(up, { pin: 14, above: 1, seq: (e2.seq + 1) & 0xffff }, 'A0 to 4 V: adc_event above, the seq after the pin events');
    near(t, up.value, 818, 1, 'its value');
    t.match(down, { pin: 14, above: 0, seq: (up.seq + 1) & 0xffff }, 'A0 to 0.1 V: adc_event below');
    await link.call(T.adcWatch, [14, 0, 0, 0, 0, 0, 0]);
    await ctl.cmd('adc 0 4000');
    await ping(link);
    t.same(link.pending().filter((m) => m.type === T.adcEvent), [], 'after adc_watch with interval 0: no event');
    t.ok(isError(await link.request(T.adcWatch, [14, ...u16(700), ...u16(300), ...u16(5)]), 6, 1), 'adc_watch low > high: error 6');

    // PWM, measured on the pin over whole periods: D9 = PB1 (timer 1), D6 = PD6 (timer 0), D3 =
    // PD3 (timer 2). Fast PWM keeps the pin high for OCR + 1 counts of 256.
    await link.call(T.pwmWrite, [9, 64]);
    const d9 = await ctl.duty('B1', 20);
    near(t, Math.round(d9.ratio * 1000), 254, 5, 'pwm_write D9 64: PB1 high 65/256 of the time (‰)');
    t.ok(d9.edges >= 30, `D9 toggles at about 1 kHz (${d9.edges} edges in 20 ms)`);
    await link.call(T.pwmWrite, [6, 200]);
    near(t, Math.round((await ctl.duty('D6', 20)).ratio * 1000), 785, 5, 'pwm_write D6 200: 201/256 (‰)');
    await link.call(T.pwmWrite, [3, 128]);
    near(t, Math.round((await ctl.duty('D3', 20)).ratio * 1000), 504, 5, 'pwm_write D3 128: 129/256 (‰)');
    await link.call(T.gpioWrite, [9, 0]);
    const off = await ctl.duty('B1', 10);
    t.same([off.edges, off.ratio], [0, 0], 'gpio_write D9 0 ends the PWM: PB1 stays low');
    await link.call(T.pwmWrite, [9, 255]);
    const full = await ctl.duty('B1', 10);
    t.same([full.edges, full.ratio], [0, 1], 'pwm_write 255 is steadily high');
    t.ok(isError(await link.request(T.pwmWrite, [4, 10]), 4, Cap.pwm), 'pwm_write on D4: error 4');

    await errorReplies(t, link, { output: 13, noAdc: 13, link: 1 });
    await retries(t, link);
    await resync(t, link);
  });

  await t.test('avr-nano (ATmega328P, A6/A7 analog only)', async (t) => {
    const { link, ctl, stop } = await startSimavr('atmega328p', join(fwDir, 'avr-nano.elf'), 'nano');
    t.teardown(stop);
    await checkHello(t, link, 'arduino-nano');
    await ctl.cmd('adc 7 1250');
    near(t, (await link.call(T.adcRead, [21])).readUInt16LE(0), 256, 1, 'adc_read A7 at 1.25 V');
    t.ok(isError(await link.request(T.gpioWrite, [21, 1]), 4, Cap.output), 'A7 has no digital output: error 4');
  });

  await t.test('avr-mega2560 (ATmega2560)', async (t) => {
    const { link, ctl, stop } = await startSimavr('atmega2560', join(fwDir, 'avr-mega2560.elf'), 'mega');
    t.teardown(stop);
    await checkHello(t, link, 'arduino-mega-2560');
    await link.call(T.gpioWrite, [13, 1]);
    const b = await ctl.port('B');
    t.ok(b.ddr & 0x80 && b.port & 0x80, 'gpio_write D13 1: PB7 high (the Mega\'s LED pin)');
    await link.call(T.gpioWrite, [42, 1]);
    t.ok((await ctl.port('L')).port & 0x80, 'gpio_write D42 1: PL7 high (a port in extended I/O space)');
    await link.call(T.pwmWrite, [44, 128]);
    near(t, Math.round((await ctl.duty('L5', 20)).ratio * 1000), 504, 5, 'pwm_write D44 128: PL5 (timer 5, channel C) 129/256 (‰)');
    await ctl.cmd('adc 0 2500');
    near(t, (await link.call(T.adcRead, [54])).readUInt16LE(0), 511, 1, 'adc_read A0 at 2.5 V');
    const p = await ping(link);
    t.equal(p.framesBad, 0, 'no bad frames');
  });
});

function u16(v: number): number[] {
  return [v & 0xff, v >> 8];
}
