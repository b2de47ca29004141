// Boards of hardware.devices through the whole host stack, as a process: `pinclaw __tool-script`
// opens the port with the real serial layer (the serialport package on a socat pty pair, or a TCP
// socket://), says hello, and runs mcu_info, mcu_call and serial_list through the registry. The
// firmware on the other end is the protocol model of test/support/fake-mcu.ts (the real firmware
// in emulators is test/firmware.test.ts).
import t, { type Test } from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { openSerialLink } from '../src/hardware/serial/index.js';
import { fakeMcu } from './support/fake-mcu.js';
import { bundle, cleanEnv, runPinclawAsync, start, tempDir } from './support/proc.js';
import { startAnthropicServer, textReply } from './support/anthropic-server.js';

// arduino-uno's hello as the firmware model says it: D0, D3, D13, A0.
const HELLO = [1, 1, 0, 0, 10, 11, ...Buffer.from('arduino-uno'), 4, 0, 0x03, 3, 0x33, 13, 0x23, 14, 0x09];

interface Step {
  step: number;
  tool?: string;
  content?: string;
  isError?: boolean;
}

// Asynchronous: the firmware model lives in this process and must answer while pinclaw runs.
async function runScript(home: string, steps: unknown[]): Promise<Step[]> {
  const file = join(home, 'steps.json');
  writeFileSync(file, JSON.stringify(steps));
  const r = await runPinclawAsync(['__tool-script', file], { env: cleanEnv({ PINCLAW_HOME: home }) });
  if (r.code !== 0) throw new Error(`__tool-script exited ${r.code}: ${r.stderr}`);
  return r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Step);
}

/** The firmware model behind a TCP server, as an emulator or ser2net serves a board: its socket:// URL. */
async function boardOverTcp(t: Test) {
  const mcu = fakeMcu({ hello: HELLO });
  let peer: Socket | undefined;
  const server = createServer((s) => {
    peer = s;
    s.on('data', (b) => void mcu.link.write(b));
    s.on('error', () => {});
  });
  mcu.link.onData((b) => void peer?.write(b));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    peer?.destroy();
    server.close();
  });
  return { mcu, url: `socket://127.0.0.1:${(server.address() as { port: number }).port}` };
}

const steps = [
  { tool: 'mcu_info', input: { device: 'bench' } },
  { tool: 'mcu_call', input: { device: 'bench', command: 'gpio_write', args: { pin: 'D13', value: 1 } } },
  { tool: 'mcu_call', input: { device: 'bench', command: 'gpio_read', args: { pin: 'D13' } } },
  { tool: 'mcu_call', input: { device: 'bench', command: 'gpio_write', args: { pin: 'D0', value: 1 } } },
  { tool: 'serial_list', input: {} },
];

function check(t: Test, out: Step[], port: string) {
  t.equal(out.length, steps.length);
  t.match(out[0]!.content, new RegExp(`^bench \\(${port.replace(/[/.]/g, '\\$&')}\\): open; arduino-uno, firmware 1\\.0\\.0, protocol 1, ADC 10-bit, profile arduino-uno`));
  t.equal(out[1]!.content, 'bench D13 (pin 13): 0 -> 1');
  t.equal(out[2]!.content, 'bench D13 (pin 13): 1');
  t.match(out[3], { isError: true, content: /refused: reserved on arduino-uno: Serial/ });
  t.match(out[4]!.content, /devices:\nbench \(mcu, .*\): open/);
}

const socat = spawnSync('socat', ['-V'], { encoding: 'utf8' }).status === 0;
t.test('a board on a pty (socat) through the serialport package', { skip: socat ? false : 'socat is not installed' }, async (t) => {
  const dir = tempDir();
  const pair = spawn('socat', ['-d', '-d', `pty,raw,echo=0,link=${join(dir, 'a')}`, `pty,raw,echo=0,link=${join(dir, 'b')}`], { stdio: 'ignore' });
  t.teardown(() => pair.kill());
  for (let i = 0; i < 200 && !(existsSync(join(dir, 'a')) && existsSync(join(dir, 'b'))); i++) await new Promise((r) => setTimeout(r, 25));
  const mcu = fakeMcu({ hello: HELLO });
  const link = await openSerialLink(join(dir, 'b'), { baud: 115200 });
  t.teardown(() => link.close());
  link.onData((b) => void mcu.link.write(b));
  mcu.link.onData((b) => void link.write(b));
  const home = tempDir();
  // resetsOnOpen boards wait readyAfterMs (2 s for the Uno) before hello; this one is a model.
  writeFileSync(join(home, 'config.json'), JSON.stringify({ hardware: { devices: [{ name: 'bench', port: join(dir, 'a'), baud: 115200 }] } }));
  check(t, await runScript(home, steps), join(dir, 'a'));
  t.equal(mcu.pins.get(13), 1, 'the firmware model saw one write (a toggle would show two)');
});

t.test('a board behind socket:// (an emulator, ser2net)', async (t) => {
  const { url: port } = await boardOverTcp(t);
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ hardware: { devices: [{ name: 'bench', port, board: 'arduino-uno' }] } }));
  check(t, await runScript(home, steps), port);
  t.ok(bundle);
});

t.test('a device that is not there: the tools say so, nothing hangs', async (t) => {
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ hardware: { devices: [{ name: 'bench', port: '/dev/ttyACM97' }] } }));
  const out = await runScript(home, [{ tool: 'mcu_call', input: { device: 'bench', command: 'ping' } }, { tool: 'mcu_info', input: { device: 'lab' } }]);
  t.match(out[0], { isError: true, outcome: 'denied', rule: 'unavailable', content: /^mcu_call cannot run on this machine: device bench: \/dev\/ttyACM97 does not exist; serial ports here: / });
  t.match(out[1], { isError: true, content: "no MCU device 'lab' (configured: bench; hardware.devices)" });
  const list = await runPinclawAsync(['tool', 'list', '--json'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  const tools = JSON.parse(list.stdout) as { name: string; available: boolean; unavailable?: string }[];
  t.match(tools.find((x) => x.name === 'mcu_call'), { available: false, unavailable: /\/dev\/ttyACM97 does not exist/ }, 'tool list says why');
  t.match(tools.find((x) => x.name === 'serial_list'), { available: true }, 'serial_list still lists what there is');
});

t.test('a board whose device file is missing is unavailable until it is plugged in; then a call waits for its hello and works', { skip: socat ? false : 'socat is not installed' }, async (t) => {
  const dir = tempDir();
  const port = join(dir, 'a');
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ hardware: { devices: [{ name: 'bench', port, baud: 115200 }, { name: 'modem', port: join(dir, 'm'), baud: 9600, kind: 'raw' }] } }));
  const asked = join(dir, 'plug-it-in');
  const plugged = join(dir, 'plugged');
  // The board is plugged in while the script waits in its shell step: the watcher sees the file come.
  void (async () => {
    while (!existsSync(asked)) await new Promise((r) => setTimeout(r, 25));
    const pair = spawn('socat', [`pty,raw,echo=0,link=${port}`, `pty,raw,echo=0,link=${join(dir, 'b')}`], { stdio: 'ignore' });
    t.teardown(() => pair.kill());
    while (!(existsSync(port) && existsSync(join(dir, 'b')))) await new Promise((r) => setTimeout(r, 25));
    const mcu = fakeMcu({ hello: HELLO });
    const link = await openSerialLink(join(dir, 'b'), { baud: 115200 });
    t.teardown(() => link.close());
    link.onData((b) => void mcu.link.write(b));
    mcu.link.onData((b) => void link.write(b));
    writeFileSync(plugged, '');
  })();
  const out = await runScript(home, [
    { tool: 'mcu_call', input: { device: 'bench', command: 'ping' } },
    { tool: 'serial_write', input: { device: 'modem', data: 'AT' } },
    { sh: `touch ${asked}; while [ ! -e ${plugged} ]; do sleep 0.05; done` },
    { tool: 'mcu_call', input: { device: 'bench', command: 'gpio_write', args: { pin: 'D13', value: 1 } } },
  ]);
  t.match(out[0], { isError: true, rule: 'unavailable', content: new RegExp(`^mcu_call cannot run on this machine: device bench: ${port.replace(/[/.]/g, '\\$&')} does not exist`) });
  t.match(out[1], { isError: true, rule: 'unavailable', content: /^serial_write cannot run on this machine: device modem: .*\/m does not exist/ });
  t.match(out[3], { isError: false, content: /^bench pin 13: 0 -> 1|^bench D13 \(pin 13\): 0 -> 1/ }, `available again once the file is back: ${out[3]?.content}`);
});

t.test('an MCU pin as a trigger: the gateway asks the firmware to watch it, and its events become one turn per press', async (t) => {
  const { mcu, url } = await boardOverTcp(t);
  const provider = await startAnthropicServer(textReply('Someone pressed the bench button.'));
  t.teardown(() => provider.close());
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({
    hardware: {
      devices: [{ name: 'bench', port: url, board: 'arduino-uno' }],
      lines: [{ name: 'button', line: 'bench:D3', direction: 'input' }],
      triggers: [{ line: 'button', edge: 'falling', debounceMs: 50, session: 'bench', message: 'the bench button was pressed' }],
    },
  }));
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: provider.url }) });
  t.teardown(() => gw.child.kill());
  await gw.waitFor(/gateway listening/);
  for (let i = 0; i < 200 && mcu.watched.get(3) !== 3; i++) await new Promise((r) => setTimeout(r, 25));
  t.equal(mcu.watched.get(3), 3, 'the firmware was asked to watch D3 (both edges; the trigger filters)');
  // A press that bounces: falling, rising, falling within a few ms (board time), then released.
  const ev = (value: number, seq: number, ms: number) => mcu.event({ version: 1, type: 0x40, id: 0, payload: Uint8Array.from([3, value, seq & 0xff, seq >> 8, ms & 0xff, (ms >> 8) & 0xff, (ms >> 16) & 0xff, ms >>> 24]) });
  ev(0, 1, 10_000);
  ev(1, 2, 10_003);
  ev(0, 3, 10_006);
  ev(1, 4, 10_400);
  await gw.waitFor(/Someone pressed the bench button\./);
  await new Promise((r) => setTimeout(r, 300));
  t.equal(provider.requests.length, 1, 'one turn for the bouncing press');
  t.match(JSON.stringify(provider.requests[0]!.body), /the bench button was pressed\\n\(hardware trigger: line button, falling edge, value 0/);
  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0);
});

t.test('a raw device: serial_write and serial_read (text, hex, until, timeout), and mcu_call refused for it', async (t) => {
  const server = createServer((s) => {
    // A device that answers every line with "OK <line>".
    let buf = '';
    s.on('data', (b) => {
      buf += b.toString('latin1');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        s.write(`OK ${buf.slice(0, nl)}\r\n`);
        buf = buf.slice(nl + 1);
      }
    });
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ hardware: { devices: [{ name: 'modem', kind: 'raw', port: `socket://127.0.0.1:${(server.address() as { port: number }).port}` }] } }));
  const out = await runScript(home, [
    { tool: 'serial_write', input: { device: 'modem', data: 'AT\n' } },
    { tool: 'serial_read', input: { device: 'modem', until: '\r\n', timeoutMs: 3000 } },
    { tool: 'serial_write', input: { device: 'modem', data: '41 54 0a', encoding: 'hex' } },
    { tool: 'serial_read', input: { device: 'modem', until: '\n', timeoutMs: 3000 } },
    { tool: 'serial_read', input: { device: 'modem', timeoutMs: 100 } },
    { tool: 'serial_write', input: { device: 'modem', data: 'zz', encoding: 'hex' } },
    { tool: 'mcu_call', input: { device: 'modem', command: 'ping' } },
  ]);
  t.equal(out[0]!.content, 'modem: wrote 3 bytes');
  t.equal(out[1]!.content, 'modem: 7 bytes: "OK AT\\r\\n"');
  t.equal(out[3]!.content, 'modem: 7 bytes: "OK AT\\r\\n"', 'hex in, the same answer');
  t.equal(out[4]!.content, 'modem: nothing within 100 ms');
  t.match(out[5], { isError: true, content: 'serial_write: data is not hex (pairs of 0-9a-f, spaces allowed)' });
  t.match(out[6], { isError: true, content: "modem is a raw device (hardware.devices kind raw): use serial_write and serial_read" });
});

t.test('the board vanishes mid-call and comes back: the call fails in words, the next one works after a new hello', async (t) => {
  const mcu = fakeMcu({ hello: HELLO });
  let peer: Socket | undefined;
  let pings = 0;
  let server = createServer();
  const serve = (s: Socket) => {
    peer = s;
    s.on('data', (b) => {
      // The second ping is the moment the cable is pulled: no answer, the link drops, and the board
      // is unreachable for a while.
      if (b.includes(0x02) && ++pings === 2) {
        s.destroy();
        server.close();
        setTimeout(() => {
          server = createServer(serve);
          server.listen(port, '127.0.0.1');
        }, 800);
        return;
      }
      void mcu.link.write(b);
    });
    s.on('error', () => {});
  };
  server = createServer(serve);
  mcu.link.onData((b) => void peer?.write(b));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  t.teardown(() => {
    peer?.destroy();
    server.close();
  });
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ hardware: { devices: [{ name: 'bench', port: `socket://127.0.0.1:${port}`, board: 'arduino-uno', timeoutMs: 200 }] } }));
  const out = await runScript(home, [
    { tool: 'mcu_call', input: { device: 'bench', command: 'ping' } },
    { tool: 'mcu_call', input: { device: 'bench', command: 'ping' } },
    { sh: 'sleep 3' },
    { tool: 'mcu_call', input: { device: 'bench', command: 'gpio_write', args: { pin: 'D13', value: 1 } } },
  ]);
  t.match(JSON.parse(out[0]!.content!) as unknown, { uptimeMs: 10000 }, 'the first ping is answered');
  t.match(out[1], { isError: true, content: /^bench: ping: / }, `the ping the cable took fails with the device named: ${out[1]!.content}`);
  t.equal(out[3]!.content, 'bench D13 (pin 13): 0 -> 1', 'after the board came back: a new hello, and calls work again');
});

t.test('an MCU analog pin as a trigger: the firmware watches the band, a crossing above it is one turn', async (t) => {
  const { mcu, url } = await boardOverTcp(t);
  const provider = await startAnthropicServer(textReply('The soil is dry.'));
  t.teardown(() => provider.close());
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({
    hardware: {
      devices: [{ name: 'bench', port: url, board: 'arduino-uno' }],
      lines: [{ name: 'soil', line: 'bench:A0', direction: 'input' }],
      triggers: [{ line: 'soil', edge: 'rising', debounceMs: 0, session: 'garden', message: 'the soil is dry', adc: { low: 300, high: 700, intervalMs: 500 } }],
    },
  }));
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: provider.url }) });
  t.teardown(() => gw.child.kill());
  await gw.waitFor(/gateway listening/);
  for (let i = 0; i < 200 && !mcu.adcWatched.has(14); i++) await new Promise((r) => setTimeout(r, 25));
  t.same(mcu.adcWatched.get(14), [300, 700], 'the firmware was asked to watch A0 between 300 and 700');
  const adcEvent = (above: number, value: number, seq: number, ms: number) =>
    mcu.event({ version: 1, type: 0x41, id: 0, payload: Uint8Array.from([14, above, value & 0xff, value >> 8, seq & 0xff, seq >> 8, ms & 0xff, (ms >> 8) & 0xff, (ms >> 16) & 0xff, ms >>> 24]) });
  adcEvent(0, 250, 1, 5000); // below the band: a falling edge, which this trigger ignores
  adcEvent(1, 812, 2, 9000);
  await gw.waitFor(/The soil is dry\./);
  t.equal(provider.requests.length, 1, 'one turn, for the crossing above');
  t.match(JSON.stringify(provider.requests[0]!.body), /the soil is dry\\n\(hardware trigger: line soil, rising edge/);
  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0);
});
