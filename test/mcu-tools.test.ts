// mcu_call and mcu_info against the firmware model (test/support/fake-mcu.ts) with the Arduino Uno's
// real board profile: pin names, the reserved serial pins, capabilities, the firmware's own pin list,
// rate limits, errors in words, and through the registry the policy and the audit of physical actions.
import t, { type Test } from 'tap';
import { join } from 'node:path';
import { createMcuClient, type McuClient } from '../src/hardware/mcu/client.js';
import { mcuTools, type McuDeviceHandle } from '../src/hardware/mcu/tools.js';
import type { HelloInfo } from '../src/hardware/mcu/messages.js';
import { loadBoardRegistry } from '../src/hardware/boards/registry.js';
import { createWriteLimiter } from '../src/hardware/write-limit.js';
import { createRegistry } from '../src/tools/registry.js';
import { createPolicy } from '../src/tools/policy.js';
import { dbAudit } from '../src/setup/registry.js';
import { openDatabase } from '../src/store/db.js';
import { queryAudit } from '../src/store/audit.js';
import { validateConfig } from '../src/config/validate.js';
import { fakeMcu } from './support/fake-mcu.js';
import { tempDir } from './support/proc.js';

const uno = loadBoardRegistry().get('arduino-uno')!.profile;
// The firmware model reports D0, D3, D13 and A0 (pin 14).
const HELLO = [1, 1, 0, 0, 10, 11, ...Buffer.from('arduino-uno'), 4, 0, 0x03, 3, 0x33, 13, 0x23, 14, 0x09];

async function setup(t: Test, opts: { connected?: boolean; perLine?: number } = {}) {
  const mcu = fakeMcu({ hello: HELLO });
  const client: McuClient = createMcuClient(mcu.link, { device: 'bench', timeoutMs: 50 });
  t.teardown(() => client.close());
  const hello: HelloInfo = await client.hello();
  const connected = opts.connected ?? true;
  const dev: McuDeviceHandle = {
    name: 'bench',
    port: '/dev/ttyACM0',
    state: () => (connected ? 'open' : 'connecting (next try in 500 ms)'),
    client: () => (connected ? client : undefined),
    hello: () => hello,
    profile: () => uno,
  };
  const limiter = createWriteLimiter({ perLine: opts.perLine ?? 100, perSeconds: 60, noun: 'pin' });
  const [info, call] = mcuTools({ devices: () => [dev], writeLimiter: limiter });
  return { mcu, info: info!, call: call!, dev };
}

const ctx = { sessionKey: 's', channel: 'cli', chatId: 'local' };

t.test('mcu_info and mcu_call: names, the reserved serial pins, capabilities, the firmware\'s pins', async (t) => {
  const { mcu, info, call } = await setup(t);
  t.match(await info.execute({ device: 'bench' }, ctx), { content: /^bench \(\/dev\/ttyACM0\): open; arduino-uno, firmware 1\.0\.0, protocol 1, ADC 10-bit, profile arduino-uno\npins: D0\[input,output\] D3\[input,output,pwm,edge\] D13\[input,output,edge\] A0\[input,adc\]$/ });
  const w = await call.execute({ device: 'bench', command: 'gpio_write', args: { pin: 'D13', value: 1 } }, ctx);
  t.same(w, { content: 'bench D13 (pin 13): 0 -> 1', physical: { device: 'bench D13 (pin 13)', before: 0, after: 1 } });
  t.equal(mcu.pins.get(13), 1);
  t.match(await call.execute({ device: 'bench', command: 'gpio_write', args: { pin: 'D0', value: 1 } }, ctx), { isError: true, content: /bench: gpio_write on D0 \(pin 0\) refused: reserved on arduino-uno: Serial/ });
  t.match(await call.execute({ device: 'bench', command: 'pwm_write', args: { pin: 'D13', duty: 10 } }, ctx), { isError: true, content: 'bench: pwm_write on D13 (pin 13) refused: arduino-uno says this pin has no pwm (it has: input, output, pull-up, spi-sclk)' });
  t.same(await call.execute({ device: 'bench', command: 'pwm_write', args: { pin: 'D3', duty: 128 } }, ctx), { content: 'bench D3 (pin 3): PWM duty 128/255', physical: { device: 'bench D3 (pin 3)', after: 128 } });
  t.match(await call.execute({ device: 'bench', command: 'gpio_write', args: { pin: 'D12', value: 1 } }, ctx), { isError: true, content: 'bench: the firmware has no D12 (pin 12) (it reports 4 pins)' });
  t.match(await call.execute({ device: 'bench', command: 'gpio_write', args: { pin: 'D99', value: 1 } }, ctx), { isError: true, content: /^bench: no pin 'D99' on arduino-uno \(pins: D0, D1/ });
  t.match(await call.execute({ device: 'bench', command: 'gpio_write', args: { pin: 'D13', value: 2 } }, ctx), { isError: true, content: 'args.value must be an integer from 0 to 1' });
  t.match(await call.execute({ device: 'bench', command: 'gpio_read', args: { pin: '13' } }, ctx), { content: 'bench D13 (pin 13): 1' }, 'a pin by its number as text');
  t.match(await call.execute({ device: 'bench', command: 'adc_read', args: { pin: 'A0' } }, ctx), { isError: true, content: /bench: adc_read: unknown command/ }, "the firmware's own error passes through in words");
  t.match(await call.execute({ device: 'lab', command: 'ping' }, ctx), { isError: true, content: "no MCU device 'lab' (configured: bench; hardware.devices)" });
});

t.test('a device that is not connected, and the per-pin write limit', async (t) => {
  const off = await setup(t, { connected: false });
  t.match(await off.call.execute({ device: 'bench', command: 'gpio_write', args: { pin: 'D13', value: 1 } }, ctx), { isError: true, content: 'bench (/dev/ttyACM0) is not connected: connecting (next try in 500 ms)' });
  const { call } = await setup(t, { perLine: 2 });
  await call.execute({ device: 'bench', command: 'gpio_write', args: { pin: 'D13', value: 1 } }, ctx);
  await call.execute({ device: 'bench', command: 'gpio_write', args: { pin: 'D13', value: 0 } }, ctx);
  t.match(await call.execute({ device: 'bench', command: 'gpio_write', args: { pin: 'D13', value: 1 } }, ctx), { isError: true, content: /gpio_write on bench D13 \(pin 13\) refused: 2 writes within 60 s is the limit for one pin/ });
  t.match(await call.execute({ device: 'bench', command: 'gpio_read', args: { pin: 'D13' } }, ctx), { content: 'bench D13 (pin 13): 0' }, 'reads are not limited');
});

t.test('through the registry: a physical action, confirmed outside the owner\'s chats, audited with before and after', async (t) => {
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  const { info, call } = await setup(t);
  const registry = createRegistry([info, call], { policy: createPolicy(validateConfig({ tools: { allow: ['mcu_call', 'mcu_info'] } }).config!.tools), audit: dbAudit(db) });
  const stranger = await registry.call({ name: 'mcu_call', input: { device: 'bench', command: 'gpio_write', args: { pin: 'D13', value: 1 } } }, { sessionKey: 's', channel: 'telegram', chatId: '9' });
  t.equal(stranger.outcome, 'denied');
  const ok = await registry.call({ name: 'mcu_call', input: { device: 'bench', command: 'gpio_write', args: { pin: 'D13', value: 1 } } }, { ...ctx, caller: 'owner' });
  t.equal(ok.outcome, 'ok');
  const rows = queryAudit(db, { tool: 'mcu_call', limit: 10 });
  t.same(rows.filter((r) => r.physical).map((r) => JSON.parse(r.physical!) as unknown), [{ device: 'bench D13 (pin 13)', before: 0, after: 1 }]);
});
