// GPIO above the kernel: line resolution, pin safety (reserved lines, capabilities, rate limit),
// holding and sharing of lines, edge collection, the tools and the policy around them, the audit of
// physical actions. The backend here is an in-memory chip behind the GpioBackend interface; the
// real ones (the addon's uAPI v2 and the sysfs twin) run against the kernel in test/gpio-vm.test.ts.
// The addon's own argument checks and its errors on a machine without GPIO are tested for real here.
import t from 'tap';
import { join } from 'node:path';
import { createGpioService } from '../src/hardware/gpio/service.js';
import { describeErrno } from '../src/hardware/gpio/errors.js';
import { gpioAddon, nativeBackend } from '../src/hardware/gpio/native.js';
import { chooseGpioBackend } from '../src/hardware/gpio/backend.js';
import { gpioTools } from '../src/hardware/gpio/tools.js';
import { gpioUnavailable } from '../src/hardware/gpio/availability.js';
import type { GpioBackend, Level } from '../src/hardware/gpio/types.js';
import { loadBoardRegistry } from '../src/hardware/boards/registry.js';
import { createPolicy } from '../src/tools/policy.js';
import { createRegistry } from '../src/tools/registry.js';
import { dbAudit } from '../src/setup/registry.js';
import { openDatabase } from '../src/store/db.js';
import { queryAudit } from '../src/store/audit.js';
import { validateConfig } from '../src/config/validate.js';

const defaultConfig = () => validateConfig({}).config!;
import type { Tool } from '../src/tools/types.js';
import { tempDir } from './support/proc.js';
import { fakeGpioChip as fakeBackend } from './support/fake-gpio-chip.js';


const rpi3b = loadBoardRegistry().get('rpi-3b')!.profile;
const hardware = (over: Partial<ReturnType<typeof defaultConfig>['hardware']> = {}) => ({ ...defaultConfig().hardware, ...over });

function service(opts: { reserved?: Map<string, string>; released?: Map<string, string>; now?: () => number; hw?: Partial<ReturnType<typeof defaultConfig>['hardware']> } = {}) {
  const f = fakeBackend();
  const gpio = createGpioService({
    backend: f.backend,
    board: rpi3b,
    reserved: opts.reserved ?? new Map([['GPIO14', 'the primary UART (serial0)'], ['GPIO15', 'the primary UART (serial0)']]),
    hardware: hardware({ lines: [{ name: 'relay', line: 'GPIO17', activeLow: true, direction: 'output' }, { name: 'button', line: 'GPIO27', direction: 'input', activeLow: false }], ...opts.hw }),
    now: opts.now,
    ...(opts.released ? { released: opts.released } : {}),
  });
  return { ...f, gpio };
}

t.test('lines resolve by hardware.lines name, board name or alias, chip:offset and kernel name', async (t) => {
  const { gpio } = service();
  t.match(gpio.resolve('relay'), { path: '/dev/gpiochip0', offset: 17, display: 'relay (GPIO17 (gpiochip0:17))' });
  // The kernel calls pin 14 TXD1; the profile's GPIO14 and its alias TXD find offset 14 all the same.
  t.match(gpio.resolve('GPIO14'), { offset: 14, boardLine: { name: 'GPIO14' } });
  t.match(gpio.resolve('TXD'), { offset: 14 });
  t.match(gpio.resolve('gpiochip0:4'), { offset: 4, display: 'GPIO4 (gpiochip0:4)' });
  t.match(gpio.resolve('pinctrl-bcm2835:40'), { offset: 40, display: 'gpiochip0:40' }, 'by chip label; a line the profile does not list');
  t.match(gpio.resolve('TXD1'), { offset: 14 }, "the kernel's own line name");
  t.throws(() => gpio.resolve('GPIO99'), { code: 'ELINE', message: /unknown GPIO line 'GPIO99' \(did you mean 'GPIO9'\?\)/ });
  t.throws(() => gpio.resolve('gpiochip0:60'), { code: 'ELINE', message: /no line 60 on gpiochip0 \(pinctrl-bcm2835, 54 lines: 0-53\)/ });
  t.throws(() => gpio.resolve('gpiochip7:1'), { code: 'ENODEV', message: /no GPIO chip 'gpiochip7' \(chips: gpiochip0 \(pinctrl-bcm2835\)\)/ });
});

t.test('writes: before and after, activeLow, the line stays held; reads do not change it', async (t) => {
  const { gpio, lines, requests } = service();
  lines[17]!.value = 1; // high: an active-low relay that is off
  const w = gpio.write('relay', 1);
  t.same(w, { line: 'relay (GPIO17 (gpiochip0:17))', before: 0, after: 1 });
  t.equal(lines[17]!.value, 0, 'active low: logical 1 is the low level');
  t.same(requests, ['17:as-is:active-low'], 'requested as-is first (the value before is read without changing the line)');
  t.equal(lines[17]!.config?.direction, 'output');
  t.equal(lines[17]!.consumer, 'pinclaw', 'held after the write: releasing would let the pin go');
  t.same(gpio.write('relay', 0), { line: 'relay (GPIO17 (gpiochip0:17))', before: 1, after: 0 });
  t.equal(requests.length, 1, 'the held request is reused');
  t.same(gpio.read('GPIO17'), { line: 'GPIO17 (gpiochip0:17)', value: 0, direction: 'output', held: true });
  lines[4]!.value = 1;
  t.same(gpio.read('GPIO4'), { line: 'GPIO4 (gpiochip0:4)', value: 1, direction: 'input', held: false });
  t.equal(lines[4]!.consumer, '', 'a read of a free line releases it again');
  t.same(gpio.held(), [{ line: 'relay (GPIO17 (gpiochip0:17))', mode: 'output', watchers: 0 }]);
  gpio.close();
  t.equal(lines[17]!.consumer, '', 'close releases every held line');
});

t.test('pin safety: reserved lines, capabilities, declared inputs, rate limit, busy lines', async (t) => {
  let now = 1_000_000;
  const { gpio, lines } = service({ now: () => now, hw: { writeRateLimit: { perLine: 2, perSeconds: 10 } } });
  t.throws(() => gpio.write('GPIO14', 1), {
    code: 'ERESERVED',
    message: `write to GPIO14 (gpiochip0:14) refused: reserved on board rpi-3b: the primary UART (serial0). Rule: a reserved line stays untouched unless pinclaw can show it is free; pick another line, or turn off what uses it (the serial console, the bus), or if nothing is wired to it, release it: pinclaw config set hardware.release '[{"line":"GPIO14","reason":"..."}]'`,
  });
  t.throws(() => gpio.read('TXD'), { code: 'ERESERVED' }, 'reading a reserved line is refused too: the request and release would take the pin from the UART');
  t.equal(lines[14]!.consumer, '', 'the reserved line was never requested');
  t.throws(() => gpio.write('button', 1), { code: 'EDIRECTION', message: /hardware.lines declares button an input/ });
  t.ok(gpio.write('GPIO22', 1));
  t.ok(gpio.write('GPIO22', 0));
  t.throws(() => gpio.write('GPIO22', 1), { code: 'ERATE', message: 'write to GPIO22 (gpiochip0:22) refused: 2 writes within 10 s is the limit for one line (hardware.writeRateLimit); try again in 10 s' });
  t.ok(gpio.write('GPIO23', 1), 'the limit is per line');
  now += 10_001;
  t.ok(gpio.write('GPIO22', 1), 'allowed again after the window');
  lines[5]!.consumer = 'w1-gpio';
  t.throws(() => gpio.write('GPIO5', 1), { code: 'EBUSY', message: /line GPIO5 \(gpiochip0:5\) is busy: held by 'w1-gpio'/ });
});

t.test('a line the owner released is written, and the write says whose release it was', async (t) => {
  const { gpio, lines } = service({ reserved: new Map([['GPIO15', 'the primary UART (serial0)']]), released: new Map([['GPIO14', 'a relay board on pin 8, no serial console']]) });
  t.same(gpio.write('GPIO14', 1), { line: 'GPIO14 (gpiochip0:14)', before: 0, after: 1, released: 'a relay board on pin 8, no serial console' });
  t.equal(lines[14]!.config?.direction, 'output');
  t.throws(() => gpio.write('GPIO15', 1), { code: 'ERESERVED' }, 'the other UART line stays reserved');
  t.same(gpio.write('GPIO22', 1), { line: 'GPIO22 (gpiochip0:22)', before: 0, after: 1 }, 'a line never reserved carries no release');
});

t.test('edges: watchers share one request, per-watcher edge kinds, the last close releases', async (t) => {
  const { gpio, lines, drive, requests } = service();
  const a: string[] = [];
  const b: string[] = [];
  const wa = gpio.watchEdges('button', 'both', (err, ev) => a.push(...ev.map((e) => e.edge)));
  const wb = gpio.watchEdges('GPIO27', 'falling', (err, ev) => b.push(...ev.map((e) => e.edge)));
  t.same(requests, ['27:input'], 'one request for both watchers');
  drive(27, 1);
  drive(27, 0);
  t.same(a, ['rising', 'falling']);
  t.same(b, ['falling']);
  t.throws(() => gpio.write('GPIO27', 1), { code: 'EDIRECTION', message: /pinclaw watches it as an input \(2 watchers/ });
  wa.close();
  t.equal(lines[27]!.consumer, 'pinclaw', 'still held for the other watcher');
  wb.close();
  wb.close();
  t.equal(lines[27]!.consumer, '', 'released with the last watcher');
  gpio.write('GPIO22', 1);
  t.throws(() => gpio.watchEdges('GPIO22', 'both', () => {}), { code: 'EDIRECTION', message: /drives it as an output/ });
});

t.test('collectEdges: stops at maxEvents, at the time limit, or on abort; releases the line', async (t) => {
  const { gpio, lines, drive } = service();
  const p = gpio.collectEdges('GPIO27', 'both', 5000, undefined, 3);
  for (const v of [1, 0, 1, 0] as Level[]) drive(27, v);
  t.same((await p).map((e) => e.edge), ['rising', 'falling', 'rising']);
  t.equal(lines[27]!.consumer, '');
  t.same(await gpio.collectEdges('GPIO27', 'rising', 30), [], 'nothing within the time');
  const ac = new AbortController();
  const q = gpio.collectEdges('GPIO27', 'both', 60_000, ac.signal);
  drive(27, 1);
  ac.abort();
  t.equal((await q).length, 1, 'abort returns what came so far');
  await t.rejects(gpio.collectEdges('GPIO14', 'both', 10), { code: 'ERESERVED' });
});

const ctx = (channel: string, chatId = 'c1') => ({ sessionKey: 's', channel, chatId, caller: 'owner' });

t.test('tools through the registry: policy, hardware.confirm, the physical action in the audit row', async (t) => {
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  const { gpio, lines } = service();
  lines[17]!.value = 1; // the active-low relay is off
  const tools: Tool[] = gpioTools({ gpio, confirm: ['relay'], boardInfo: () => '' });
  const settings = { ...defaultConfig().tools, controlChats: ['telegram:owner'] };
  const registry = createRegistry(tools, { policy: createPolicy(settings), audit: dbAudit(db) });

  const fromCli = await registry.call({ name: 'gpio_write', input: { line: 'GPIO22', value: 1 } }, ctx('cli'));
  t.equal(fromCli.outcome, 'ok', 'the owner on the CLI: no question');
  t.equal(fromCli.result.content, 'GPIO22 (gpiochip0:22): 0 -> 1');
  const stranger = await registry.call({ name: 'gpio_write', input: { line: 'GPIO22', value: 0 } }, ctx('telegram', '99'));
  t.equal(stranger.outcome, 'denied');
  t.match(stranger.result.content, /needs the owner's confirmation \(physical action outside the owner's chats \(tools.controlChats\)\)/);
  const asked: string[] = [];
  const confirmed = await registry.call({ name: 'gpio_write', input: { line: 'GPIO22', value: 0 } }, { ...ctx('telegram', '99'), confirm: async (r) => (asked.push(r.summary), true) });
  t.equal(confirmed.outcome, 'ok', 'asked and confirmed elsewhere');
  t.equal(asked.length, 1);
  const control = await registry.call({ name: 'gpio_write', input: { line: 'GPIO23', value: 1 } }, ctx('telegram', 'owner'));
  t.equal(control.outcome, 'ok', 'a control chat is the owner\'s: no question');

  // hardware.confirm: this line asks even the owner.
  const noAsk = await registry.call({ name: 'gpio_write', input: { line: 'relay', value: 1 } }, ctx('cli'));
  t.match(noAsk.result.content, /hardware.confirm asks the owner first, and channel cli cannot ask/);
  const no = await registry.call({ name: 'gpio_write', input: { line: 'relay', value: 1 } }, { ...ctx('cli'), confirm: async () => false });
  t.match(no.result.content, /the owner said no \(hardware.confirm\)/);
  t.equal(lines[17]!.consumer, '', 'a refused write touches nothing');
  const yes = await registry.call({ name: 'gpio_write', input: { line: 'relay', value: 1 } }, { ...ctx('cli'), confirm: async (r) => (asked.push(r.summary), true) });
  t.equal(yes.result.content, 'relay (GPIO17 (gpiochip0:17)): 0 -> 1');
  t.equal(asked.at(-1), 'gpio_write relay (GPIO17 (gpiochip0:17)) = 1');

  const bad = await registry.call({ name: 'gpio_write', input: { line: 'GPIO22', value: 2 } }, ctx('cli'));
  t.match(bad.result.content, /invalid arguments for gpio_write: input.value/);
  const reserved = await registry.call({ name: 'gpio_read', input: { line: 'GPIO15' } }, ctx('cli'));
  t.match(reserved.result, { isError: true, content: /reserved on board rpi-3b/ });

  const rows = queryAudit(db, { tool: 'gpio_write', limit: 50 });
  const physical = rows.filter((r) => r.physical !== null).map((r) => JSON.parse(r.physical!) as unknown);
  t.same(physical, [
    { device: 'GPIO22 (gpiochip0:22)', before: 0, after: 1 },
    { device: 'GPIO22 (gpiochip0:22)', before: 1, after: 0 },
    { device: 'GPIO23 (gpiochip0:23)', before: 0, after: 1 },
    { device: 'relay (GPIO17 (gpiochip0:17))', before: 0, after: 1 },
  ], 'every write that ran is audited with its values before and after');
  t.equal(rows.filter((r) => r.outcome === 'denied').length, 1, 'the refused call is audited too');
});

t.test('a write to a released line: the audit row names the release and its reason', async (t) => {
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  const { gpio } = service({ reserved: new Map(), released: new Map([['GPIO14', 'a relay board on pin 8, no serial console']]) });
  const registry = createRegistry(gpioTools({ gpio, confirm: [], boardInfo: () => '' }), { policy: createPolicy(defaultConfig().tools), audit: dbAudit(db) });
  t.equal((await registry.call({ name: 'gpio_write', input: { line: 'GPIO14', value: 1 } }, ctx('cli'))).outcome, 'ok');
  const rows = queryAudit(db, { tool: 'gpio_write', limit: 5 });
  t.same(rows.map((r) => JSON.parse(r.physical!) as unknown), [{ device: 'GPIO14 (gpiochip0:14)', before: 0, after: 1, released: 'a relay board on pin 8, no serial console' }]);
});

t.test('the addon on a machine without GPIO: argument checks and errors name the device', async (t) => {
  const addon = gpioAddon();
  if (!addon) return void t.fail('the addon has no GPIO functions');
  t.throws(() => addon.gpioChipInfo(5 as unknown as string), { name: 'TypeError', message: 'path must be a string' });
  t.throws(() => addon.gpioRequest('/dev/null', [], { direction: 'input' }, 'x'), { message: 'offsets must hold 1 to 32 line offsets' });
  t.throws(() => addon.gpioRequest('/dev/null', [1], { direction: 'sideways' }, 'x'), { message: 'config.direction must be one of as-is, input, output' });
  t.throws(() => addon.gpioGetValues(123456, 1), { code: 'EBADF', message: /not a GPIO line request of this process/ }, 'an fd it did not return is never touched');
  t.throws(() => addon.gpioChipInfo('/dev/gpiochip-none'), { code: 'ENOENT', step: 'open', path: '/dev/gpiochip-none' });
  t.throws(() => addon.gpioChipInfo('/dev/null'), { code: 'ENOTTY', step: 'GPIO_GET_CHIPINFO_IOCTL' }, '/dev/null is no GPIO chip');
  const backend = nativeBackend(addon, tempDir());
  t.same(backend.chips(), [], 'no /dev/gpiochip* here');
  t.throws(() => backend.request('/dev/null', 0, { direction: 'input' }, 'pinclaw', 'GPIO0'), { message: '/dev/null does not speak the GPIO character device uAPI v2 (kernel older than 5.10?)' });
  t.throws(() => backend.chipInfo('/dev/gpiochip-none'), { message: '/dev/gpiochip-none does not exist (or was unplugged)' });
  const choice = chooseGpioBackend({ env: {}, dev: tempDir() });
  t.equal(choice.backend.name, 'native');
  t.throws(() => chooseGpioBackend({ env: { PINCLAW_GPIO_BACKEND: 'gpiod' } }), /PINCLAW_GPIO_BACKEND must be auto, native or sysfs, got 'gpiod'/);
  t.equal(chooseGpioBackend({ env: {}, addon: null }).backend.name, 'sysfs', 'without the addon: the sysfs twin');
});

t.test('claimOutputs: declared outputs take their initial value at start; a bad one is reported, the rest claimed', async (t) => {
  const f = fakeBackend();
  f.lines[17]!.value = 0;
  f.lines[5]!.consumer = 'w1-gpio';
  const gpio = createGpioService({
    backend: f.backend,
    board: rpi3b,
    reserved: new Map([['GPIO14', 'the primary UART (serial0)']]),
    hardware: hardware({
      lines: [
        { name: 'relay', line: 'GPIO17', activeLow: true, direction: 'output' },
        { name: 'lamp', line: 'GPIO22', activeLow: false, direction: 'output', initial: 'active' },
        { name: 'busy', line: 'GPIO5', activeLow: false, direction: 'output' },
        { name: 'uart', line: 'GPIO14', activeLow: false, direction: 'output' },
        { name: 'button', line: 'GPIO27', activeLow: false, direction: 'input' },
      ],
    }),
  });
  const problems = gpio.claimOutputs();
  t.equal(f.lines[17]!.value, 1, 'relay: inactive by default, which is high for an active-low line');
  t.equal(f.lines[22]!.value, 1, 'lamp: initial active');
  t.equal(f.lines[27]!.consumer, '', 'inputs are not claimed');
  t.same(problems.map((p) => p.split(':')[0]), ['hardware.lines busy', 'hardware.lines uart']);
  t.match(problems[1], /claiming uart \(GPIO14 \(gpiochip0:14\)\) refused: reserved/);
  t.same(gpio.write('relay', 1), { line: 'relay (GPIO17 (gpiochip0:17))', before: 0, after: 1 }, 'a claimed output is written through its held request');
});

t.test('kernel refusals in words: the group to join, the holder, a missing chip, no uAPI v2', async (t) => {
  const chip = '/dev/gpiochip0';
  t.equal(describeErrno('EACCES', { chip, group: 'gpio' }, ''), "permission denied on /dev/gpiochip0: add this user to the 'gpio' group (sudo usermod -aG gpio $USER, then log in again)");
  t.match(describeErrno('EPERM', { chip }, ''), /run pinclaw as a user that may open it \(usually the gpio group\)/);
  t.equal(describeErrno('EBUSY', { chip, line: 'GPIO4 (gpiochip0:4)', holder: 'w1-gpio' }, ''), "line GPIO4 (gpiochip0:4) is busy: held by 'w1-gpio'; free it there first");
  t.match(describeErrno('EBUSY', { chip, line: 'GPIO4' }, ''), /held by a kernel driver or another process/);
  t.equal(describeErrno('ENODEV', { chip }, ''), '/dev/gpiochip0 does not exist (or was unplugged)');
  t.match(describeErrno('ENOTTY', { chip }, ''), /does not speak the GPIO character device uAPI v2/);
  t.equal(describeErrno('EIO', { chip, line: 'GPIO4' }, 'read failed'), 'line GPIO4: read failed');
});

t.test('why GPIO cannot run here: no chip, permission denied (the group), a wrong board; the tools say it', async (t) => {
  const board = rpi3b;
  const { backend } = fakeBackend();
  const groupOf = () => 'gpio';
  t.equal(gpioUnavailable({ backend, board, configured: true, groupOf }), undefined, 'the profile\'s chip is there');
  t.equal(gpioUnavailable({ backend, configured: false, groupOf }), undefined, 'no board: any chip will do');

  const none: GpioBackend = { ...backend, chips: () => [] };
  t.equal(gpioUnavailable({ backend: none, configured: false, groupOf }), 'no GPIO chip on this machine (no /dev/gpiochip*)');
  t.match(gpioUnavailable({ backend: none, board, configured: true, groupOf }), /^no GPIO chip on this machine \(no \/dev\/gpiochip\*\), but the board profile Raspberry Pi 3 Model B \(rpi-3b\) has pinctrl-bcm2835: if this is not a Raspberry Pi 3 Model B, set board\.profile to this machine's board or remove it \(`pinclaw board detect` says which board this is\)/);

  const locked: GpioBackend = {
    ...backend,
    chipInfo: (path) => {
      throw Object.assign(new Error(`open ${path}: permission denied`), { code: 'EACCES' });
    },
  };
  t.equal(gpioUnavailable({ backend: locked, board, configured: true, groupOf }), "permission denied on /dev/gpiochip0: add this user to the 'gpio' group (sudo usermod -aG gpio $USER, then log in again)");

  const other: GpioBackend = { ...backend, chipInfo: () => ({ name: 'gpiochip0', label: 'gpio-sim.0-node0', lines: 8 }) };
  t.equal(gpioUnavailable({ backend: other, board, configured: true, groupOf }), "no gpiochip labelled pinctrl-bcm2835: the GPIO tools cannot reach the Raspberry Pi 3 Model B (rpi-3b) profile's lines; this machine has gpiochip0 (gpio-sim.0-node0). Set board.profile to this machine's board or remove it (`pinclaw board detect` says which board this is).");
  t.match(gpioUnavailable({ backend: new Error('PINCLAW_GPIO_BACKEND must be auto, native or sysfs'), configured: false, groupOf }), /^the GPIO backend cannot start: PINCLAW_GPIO_BACKEND/);

  // The tools exist without a service: listed, each with the reason, and a call answers it.
  const why = gpioUnavailable({ backend: locked, board, configured: true, groupOf })!;
  const tools = gpioTools({ gpio: undefined, unavailable: why, confirm: [], boardInfo: () => '' });
  t.same(tools.map((x) => [x.name, x.unavailable?.()]), [['gpio_read', why], ['gpio_write', why], ['gpio_watch', why]]);
  const registry = createRegistry(tools);
  t.same((await registry.call({ name: 'gpio_write', input: { line: 'GPIO17', value: 1 } }, ctx('telegram', 'owner'))).result, { content: `gpio_write cannot run on this machine: ${why}`, isError: true });
  t.same((await tools[0]!.execute({ line: 'GPIO17' }, ctx('cli'))).isError, true, 'a direct execute is refused too');
});
