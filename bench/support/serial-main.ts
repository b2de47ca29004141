// bench/serial's body: an MCU round trip (gpio_write and its acknowledgement) through the whole host
// stack (client, frames, CRC, COBS, the serial layer, the serialport package, a pty) against a raw
// echo of the same number of bytes over the same kind of link, in one run; and requests per second
// sustained with several in flight. The far end is another process (bench/support/serial-peer.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createMcuClient } from '../../src/hardware/mcu/client.js';
import { encodeFrame } from '../../src/hardware/mcu/frame.js';
import { openSerialLink } from '../../src/hardware/serial/index.js';

const { values } = parseArgs({ options: { n: { type: 'string', default: '2000' }, peer: { type: 'string' }, json: { type: 'boolean', default: false } } });
const n = Number(values.n);
const dir = mkdtempSync(join(tmpdir(), 'pinclaw-bench-serial-'));
const a = join(dir, 'a');
const b = join(dir, 'b');
const socat = spawn('socat', [`pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`], { stdio: 'ignore' });
const cleanup = () => {
  socat.kill();
  rmSync(dir, { recursive: true, force: true });
};
process.on('exit', cleanup);
for (let i = 0; i < 400 && !(existsSync(a) && existsSync(b)); i++) await new Promise((r) => setTimeout(r, 10));

function peer(mode: string): Promise<ChildProcess> {
  const p = spawn(process.execPath, [values.peer!, mode, b], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve) => p.stdout!.once('data', () => resolve(p)));
}
const stop = (p: ChildProcess) => new Promise<void>((r) => (p.once('exit', () => r()), p.kill('SIGTERM')));
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

// The bytes of a gpio_write request on the wire: the raw echo moves as many.
const frameBytes = encodeFrame({ version: 1, type: 0x12, id: 1, payload: Uint8Array.from([13, 1]) });

const echo = await peer('echo');
const raw = await openSerialLink(a, { baud: 115200 });
const rawTimes: number[] = [];
{
  let got = 0;
  let waiting: (() => void) | undefined;
  raw.onData((d) => {
    got += d.length;
    if (got >= frameBytes.length && waiting) waiting();
  });
  for (let i = 0; i < n; i++) {
    got = 0;
    const t0 = process.hrtime.bigint();
    await new Promise<void>((r) => {
      waiting = r;
      void raw.write(frameBytes);
    });
    rawTimes.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
}
await raw.close();
await stop(echo);

const fw = await peer('mcu');
const link = await openSerialLink(a, { baud: 115200 });
const client = createMcuClient(link, { device: 'bench', timeoutMs: 1000 });
await client.hello();
const mcuTimes: number[] = [];
for (let i = 0; i < n; i++) {
  const t0 = process.hrtime.bigint();
  await client.gpioWrite(13, (i & 1) as 0 | 1);
  mcuTimes.push(Number(process.hrtime.bigint() - t0) / 1000);
}
// Sustained: 8 requests in flight at a time.
const total = n * 2;
const t0 = process.hrtime.bigint();
for (let i = 0; i < total; i += 8) await Promise.all(Array.from({ length: 8 }, () => client.ping()));
const perSecond = total / (Number(process.hrtime.bigint() - t0) / 1e9);
const { badFrames } = client.stats();
client.close();
await link.close();
await stop(fw);

const res = { n, rawMedianUs: median(rawTimes), mcuMedianUs: median(mcuTimes), ratio: median(mcuTimes) / median(rawTimes), requestsPerSecond: perSecond, frameBytes: frameBytes.length, badFrames };
if (values.json) console.log(JSON.stringify(res, null, 2));
else {
  console.log(`serial round trips over a socat pty pair, ${n} each, far end in another process`);
  console.log('measure                                         median      ratio');
  console.log(`raw echo of ${res.frameBytes} bytes                        ${(res.rawMedianUs / 1000).toFixed(3)} ms`);
  console.log(`gpio_write + acknowledgement (whole stack)     ${(res.mcuMedianUs / 1000).toFixed(3)} ms   ${res.ratio.toFixed(2)}x  (target <= 2x: ${res.ratio <= 2 ? 'met' : 'NOT met'})`);
  console.log(`sustained, 8 in flight: ${res.requestsPerSecond.toFixed(0)} requests/s (ping + reply frames), ${badFrames} bad frames`);
}
process.exit(0);
