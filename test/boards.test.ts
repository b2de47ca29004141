// Board profiles: every shipped profile passes the schema, broken ones fail with exact errors,
// user profiles override built-ins, detection on fake /proc, /sys and /dev trees, and the
// `pinclaw board` command through the bundle.
import t from 'tap';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { detectBoards, matchDeviceTreeModel, readDeviceTreeModel } from '../src/hardware/boards/detect.js';
import { hostPath, type HostRoots } from '../src/hardware/boards/host-roots.js';
import { filesFromAsset, readProfileDir } from '../src/hardware/boards/builtins.js';
import { loadBoardRegistry, type BoardRegistry } from '../src/hardware/boards/registry.js';
import { releasedLines, reservationStates, reservedNow } from '../src/hardware/boards/reservations.js';
import { parseProfile, validateProfile, type BoardProfile } from '../src/hardware/boards/schema.js';
import { boardSummary, nameRanges } from '../src/hardware/boards/summary.js';
import { boardCheck } from '../src/hardware/boards/board-check.js';
import { boardPromptText } from '../src/hardware/boards/prompt-board.js';
import { runBoard } from '../src/cli/board-command.js';
import type { CliContext } from '../src/cli/context.js';
import { resolvePaths } from '../src/paths.js';
import { defaults } from '../src/config/index.js';
import { bundle, cleanEnv, root, runPinclaw, tempDir } from './support/proc.js';
import { link, write } from './support/fs-tree.js';
import { writeDeviceTree, writePiDeviceTree, writePinctrl, type PiDevice } from './support/fake-dt.js';

const boardsDir = join(root, 'boards');
const REQUIRED = ['rpi-zero-2-w', 'rpi-3b', 'rpi-3b-plus', 'rpi-4b', 'rpi-5', 'maixcam', 'arduino-uno', 'arduino-nano', 'arduino-mega-2560', 'nucleo-f401re', 'nucleo-f411re', 'qemu-netduinoplus2'];

function builtin(id: string): BoardProfile {
  return JSON.parse(readFileSync(join(boardsDir, `${id}.json`), 'utf8')) as BoardProfile;
}


// ---- fake machines ------------------------------------------------------------------------

function emptyRoots(): HostRoots {
  const dir = tempDir('pinclaw-boards-');
  for (const d of ['proc', 'sys', 'dev']) mkdirSync(join(dir, d));
  return { proc: join(dir, 'proc'), sys: join(dir, 'sys'), dev: join(dir, 'dev') };
}

interface FakeChip {
  n: number;
  label: string;
  ngpio: number;
  base: number;
  /** the controller device the chip hangs off in /sys/devices */
  parent: string;
}

/** A machine with a device-tree model and GPIO chips laid out as a 6.x kernel does. */
function sbcRoots(model: string, chips: FakeChip[]): HostRoots {
  const r = emptyRoots();
  // The file is NUL-terminated, as the kernel writes device-tree strings.
  write(join(r.proc, 'device-tree', 'model'), `${model}\0`);
  write(join(r.proc, 'meminfo'), 'MemTotal:        3884376 kB\nMemFree:          123456 kB\n');
  for (const c of chips) {
    const dev = join(r.sys, 'devices', 'platform', c.parent, `gpiochip${c.n}`);
    mkdirSync(dev, { recursive: true });
    link(dev, join(r.sys, 'bus', 'gpio', 'devices', `gpiochip${c.n}`));
    const cls = join(r.sys, 'devices', 'platform', c.parent, `gpiochip${c.n}`, 'gpio', `gpiochip${c.base}`);
    write(join(cls, 'label'), `${c.label}\n`);
    write(join(cls, 'ngpio'), `${c.ngpio}\n`);
    write(join(cls, 'base'), `${c.base}\n`);
    link(dev, join(cls, 'device'));
    link(cls, join(r.sys, 'class', 'gpio', `gpiochip${c.base}`));
    write(join(r.dev, `gpiochip${c.n}`), '');
  }
  return r;
}

interface FakeUsb {
  tty: string;
  port: string;
  vid: string;
  pid: string;
  manufacturer?: string;
  product?: string;
  serial?: string;
}

/** USB serial ports as sysfs shows them: the tty under the USB interface (ttyUSB: under the usb-serial port). */
function addUsbSerial(r: HostRoots, u: FakeUsb): void {
  const usbDev = join(r.sys, 'devices', 'pci0000:00', '0000:00:14.0', 'usb1', u.port);
  write(join(usbDev, 'idVendor'), `${u.vid}\n`);
  write(join(usbDev, 'idProduct'), `${u.pid}\n`);
  if (u.manufacturer) write(join(usbDev, 'manufacturer'), `${u.manufacturer}\n`);
  if (u.product) write(join(usbDev, 'product'), `${u.product}\n`);
  if (u.serial) write(join(usbDev, 'serial'), `${u.serial}\n`);
  const iface = join(usbDev, `${u.port}:1.0`);
  write(join(iface, 'bInterfaceClass'), '02\n');
  const ttyParent = u.tty.startsWith('ttyUSB') ? join(iface, u.tty) : iface;
  const classEntry = join(ttyParent, 'tty', u.tty);
  mkdirSync(classEntry, { recursive: true });
  link(ttyParent, join(classEntry, 'device'));
  link(classEntry, join(r.sys, 'class', 'tty', u.tty));
  write(join(r.dev, u.tty), '');
}

function laptopRoots(): HostRoots {
  const r = emptyRoots();
  write(join(r.proc, 'meminfo'), 'MemTotal:       16314280 kB\n');
  // A built-in serial port: not USB, not listed.
  mkdirSync(join(r.sys, 'devices', 'platform', 'serial8250', 'tty', 'ttyS0'), { recursive: true });
  link(join(r.sys, 'devices', 'platform', 'serial8250', 'tty', 'ttyS0'), join(r.sys, 'class', 'tty', 'ttyS0'));
  addUsbSerial(r, { tty: 'ttyACM0', port: '1-2', vid: '2341', pid: '0043', manufacturer: 'Arduino (www.arduino.cc)', serial: '85734323430351D0E1F1' });
  addUsbSerial(r, { tty: 'ttyUSB0', port: '1-3', vid: '1a86', pid: '7523', product: 'USB2.0-Serial' });
  link('../../ttyACM0', join(r.dev, 'serial', 'by-id', 'usb-Arduino__www.arduino.cc__0043_85734323430351D0E1F1-if00'));
  return r;
}

const registry = loadBoardRegistry();

// ---- the shipped profiles ---------------------------------------------------------------

t.test('every profile in boards/ passes the schema', async (t) => {
  const names = readdirSync(boardsDir).filter((n) => n.endsWith('.json')).sort();
  t.ok(names.length >= REQUIRED.length, `${names.length} profiles`);
  for (const name of names) {
    const r = parseProfile(readFileSync(join(boardsDir, name), 'utf8'), `boards/${name}`, name.slice(0, -5));
    t.same(r.errors, [], `boards/${name} has no errors`);
    t.ok(r.profile, `boards/${name} loads`);
  }
  // Nothing else in the directory but the firmware sources: a file that is not a profile would be
  // silently ignored.
  t.same(readdirSync(boardsDir).filter((n) => !n.endsWith('.json') && n !== 'firmware'), []);
  t.same(registry.skipped, [], 'the registry skipped none');
  t.same(registry.problems, []);
  for (const id of REQUIRED) t.ok(registry.get(id), `${id} is built in`);
});

t.test('profile facts that other code relies on', async (t) => {
  const header = Object.fromEntries(registry.get('rpi-4b')!.profile.gpio.lines.map((l) => [l.name, l.header]));
  // The 40-pin header, BCM numbering: a few pins people wire most.
  t.same([header.GPIO2, header.GPIO3, header.GPIO4, header.GPIO14, header.GPIO15, header.GPIO17, header.GPIO18, header.GPIO27, header.GPIO21], [3, 5, 7, 8, 10, 11, 12, 13, 40]);
  for (const id of ['rpi-zero-2-w', 'rpi-3b', 'rpi-3b-plus', 'rpi-4b', 'rpi-5']) {
    const p = registry.get(id)!.profile;
    t.equal(p.gpio.lines.length, 28, `${id}: GPIO0-27 on the header`);
    t.same(p.gpio.lines.map((l) => l.offset), [...Array(28).keys()], `${id}: offset = BCM number`);
    t.same(new Set(p.gpio.lines.map((l) => l.header)).size, 28, `${id}: 28 distinct header pins`);
  }
  t.same(registry.get('rpi-5')!.profile.gpio.chips, [{ label: 'pinctrl-rp1', lines: 54 }]);
  t.same(registry.get('rpi-4b')!.profile.gpio.chips, [{ label: 'pinctrl-bcm2711', lines: 58 }]);
  t.same(registry.get('rpi-3b')!.profile.gpio.chips, [{ label: 'pinctrl-bcm2835', lines: 54 }]);
  const uno = registry.get('arduino-uno')!.profile;
  t.same(uno.gpio.lines.filter((l) => l.capabilities.includes('pwm')).map((l) => l.name), ['D3', 'D5', 'D6', 'D9', 'D10', 'D11']);
  t.same(uno.gpio.lines.filter((l) => l.capabilities.includes('adc')).map((l) => l.name), ['A0', 'A1', 'A2', 'A3', 'A4', 'A5']);
  t.same(uno.identify.usb?.[0], { vid: '2341', pid: '0043', note: 'Uno R3 (ATmega16U2 USB-serial)' });
  const nucleo = registry.get('nucleo-f401re')!.profile;
  const byAlias = Object.fromEntries(nucleo.gpio.lines.flatMap((l) => (l.aliases ?? []).map((a) => [a, l.name])));
  t.same([byAlias.D0, byAlias.D1, byAlias.D13, byAlias.D14, byAlias.D15, byAlias.A0], ['PA3', 'PA2', 'PA5', 'PB9', 'PB8', 'PA0']);
  t.same(registry.get('maixcam')!.profile.gpio, { chips: [], lines: [] }, 'the camera has no lines for pinclaw');
});

// ---- the schema ---------------------------------------------------------------------------

t.test('a structurally broken profile: every error with file and JSON path', async (t) => {
  const p = builtin('rpi-4b') as unknown as { gpio: { lines: Record<string, unknown>[] }; kind: string; memory: Record<string, unknown>; wifi: boolean };
  p.gpio.lines[3]!.offset = '3';
  p.gpio.lines[5]!.capabilites = p.gpio.lines[5]!.capabilities;
  delete p.gpio.lines[5]!.capabilities;
  (p.gpio.lines[6]!.capabilities as string[])[1] = 'ouput';
  p.kind = 'computer';
  delete p.memory.budgetMiB;
  p.wifi = true;
  const r = validateProfile(p, 'boards/rpi-4b.json', 'rpi-4b');
  t.equal(r.profile, undefined);
  t.same(r.errors, [
    'boards/rpi-4b.json: kind: expected one of "sbc", "mcu", "peripheral", found string "computer"',
    'boards/rpi-4b.json: gpio.lines[3].offset: expected an integer >= 0, found string "3"',
    'boards/rpi-4b.json: gpio.lines[5].capabilities: missing (expected an array (each item one of "input", "output", "edge", "pull-up", "pull-down", "pwm", "adc", "dac", "i2c-sda", "i2c-scl", "spi-mosi", "spi-miso", "spi-sclk", "spi-cs", "uart-tx", "uart-rx", "swd"))',
    "boards/rpi-4b.json: gpio.lines[5].capabilites: unknown key (did you mean 'capabilities'?)",
    'boards/rpi-4b.json: gpio.lines[6].capabilities[1]: expected one of "input", "output", "edge", "pull-up", "pull-down", "pwm", "adc", "dac", "i2c-sda", "i2c-scl", "spi-mosi", "spi-miso", "spi-sclk", "spi-cs", "uart-tx", "uart-rx", "swd", found string "ouput" (did you mean "output"?)',
    'boards/rpi-4b.json: memory.budgetMiB: missing (expected an integer >= 16)',
    "boards/rpi-4b.json: wifi: unknown key (expected one of 'id', 'name', 'kind', 'description', 'notes', 'identify', 'electrical', 'gpio', 'reserved', 'i2c', 'camera', 'spi', 'serial', 'memory', 'mcu', 'flash')",
  ]);
});

t.test('cross-references: names, offsets, header pins, buses, kinds', async (t) => {
  const p = builtin('rpi-4b');
  p.id = 'rpi4';
  p.gpio.lines[4]!.offset = 3; // GPIO4 onto GPIO3's offset
  p.gpio.lines[5]!.header = 3; // GPIO5 onto GPIO2's header pin
  p.gpio.lines[6]!.name = 'GPIO2';
  p.gpio.lines[7]!.chip = 'pinctrl-bcm2835';
  p.gpio.lines[8]!.offset = 58;
  p.reserved[0]!.lines.push('GPIO99');
  p.i2c[0]!.sda = 'GPIO4';
  p.memory!.budgetMiB = 2048;
  const r = validateProfile(p, 'boards/rpi-4b.json', 'rpi-4b');
  t.same(r.errors, [
    'boards/rpi-4b.json: id: expected "rpi-4b" (the file name), found "rpi4"',
    'boards/rpi-4b.json: gpio.lines[4].offset: offset 3 on chip "pinctrl-bcm2711" is already gpio.lines[3]',
    'boards/rpi-4b.json: gpio.lines[5].header: header pin 3 is already gpio.lines[2]',
    'boards/rpi-4b.json: gpio.lines[6].name: "GPIO2" is already used by gpio.lines[2]',
    'boards/rpi-4b.json: gpio.lines[7].chip: no chip labelled "pinctrl-bcm2835" in gpio.chips',
    'boards/rpi-4b.json: gpio.lines[8].offset: expected an integer below 58 (chip "pinctrl-bcm2711" has 58 lines), found 58',
    'boards/rpi-4b.json: reserved[0].lines[2]: no line named "GPIO99" in gpio.lines',
    'boards/rpi-4b.json: i2c[0].sda: line "GPIO4" lacks the capability "i2c-sda"',
    'boards/rpi-4b.json: memory.budgetMiB: expected at most memory.totalMiB (1024), found 2048',
  ]);

  const mcu = builtin('arduino-uno') as Partial<BoardProfile>;
  delete mcu.serial;
  t.same(validateProfile(mcu, '/home/x/.pinclaw/boards/arduino-uno.json', 'arduino-uno').errors, [
    '/home/x/.pinclaw/boards/arduino-uno.json: serial: missing (pinclaw talks to an mcu over serial: at least serial.baud)',
  ]);
});

t.test('profile text that is not JSON names the line and column', async (t) => {
  const r = parseProfile('{\n  "id": "x",,\n}\n', '/h/boards/x.json', 'x');
  t.equal(r.errors.length, 1);
  t.match(r.errors[0]!, /^\/h\/boards\/x\.json:2:13: invalid JSON: /);
  t.same(parseProfile('[]', 'boards/x.json').errors, ['boards/x.json: expected a JSON object at the top level, found array of 0 items']);
});

// ---- the registry -------------------------------------------------------------------------

t.test('user profiles: a new one, one that overrides a built-in, a broken one skipped', async (t) => {
  const home = tempDir();
  const dir = join(home, 'boards');
  const mine = builtin('rpi-4b');
  mine.name = 'My Pi 4 with a relay HAT';
  write(join(dir, 'rpi-4b.json'), JSON.stringify(mine));
  const custom = builtin('rpi-3b');
  custom.id = 'my-board';
  custom.identify = { deviceTreeModel: ['Acme Board'] };
  write(join(dir, 'my-board.json'), JSON.stringify(custom));
  const broken = builtin('rpi-5') as unknown as Record<string, unknown>;
  broken.id = 'broken';
  delete broken.gpio;
  write(join(dir, 'broken.json'), JSON.stringify(broken));
  write(join(dir, 'notes.txt'), 'not a profile');

  const r = loadBoardRegistry({ userDir: dir });
  const pi4 = r.get('rpi-4b')!;
  t.equal(pi4.profile.name, 'My Pi 4 with a relay HAT');
  t.equal(pi4.source, 'user');
  t.equal(pi4.file, join(dir, 'rpi-4b.json'));
  t.equal(pi4.overrides, 'boards/rpi-4b.json');
  t.equal(r.get('my-board')?.source, 'user');
  t.equal(r.get('my-board')?.overrides, undefined);
  t.equal(r.get('rpi-5')?.source, 'built-in', 'the others stay');
  t.same(r.skipped, [{ file: join(dir, 'broken.json'), errors: [`${join(dir, 'broken.json')}: gpio: missing (expected an object)`] }]);
  t.equal(r.profiles.length, REQUIRED.length + 1);

  // The override is what detection uses.
  const d = detectBoards(r.profiles, sbcRoots('Raspberry Pi 4 Model B Rev 1.4', []));
  t.equal(d.sbc?.profile.profile.name, 'My Pi 4 with a relay HAT');
  t.equal(detectBoards(r.profiles, sbcRoots('Acme Board v2', [])).sbc?.profile.profile.id, 'my-board');
});

t.test('a missing or unreadable user directory is not an error for the others', async (t) => {
  t.same(loadBoardRegistry({ userDir: join(tempDir(), 'nope') }).problems, []);
  const file = join(tempDir(), 'boards');
  writeFileSync(file, 'a file, not a directory');
  const r = loadBoardRegistry({ userDir: file });
  t.same(r.problems, [`cannot read the board profile directory ${file}: not a directory`]);
  t.equal(r.profiles.length, REQUIRED.length);
});

t.test('the single-executable asset holds the same profiles', async (t) => {
  const work = tempDir();
  const url = pathToFileURL(join(root, 'scripts', 'boards-assets.mjs')).href;
  const { boardsAssets } = (await import(url)) as { boardsAssets(root: string, work: string): Record<string, string> };
  const assets = boardsAssets(root, work);
  t.same(Object.keys(assets), ['boards/boards.json']);
  const files = filesFromAsset(readFileSync(assets['boards/boards.json']!, 'utf8'));
  const fromDir = readProfileDir(boardsDir, (n) => `boards/${n}`);
  t.same(files.map((f) => [f.source, f.id]), fromDir.map((f) => [f.source, f.id]));
  t.same(files.map((f) => f.text), fromDir.map((f) => f.text), "each profile is its file's text");
  const r = loadBoardRegistry({ builtins: { files } });
  t.same(r.skipped, []);
  t.same(r.profiles.map((p) => p.profile), registry.profiles.map((p) => p.profile), 'identical to the dev tree');
  // Detection reads the identify sections the asset carries beside the texts.
  const fresh = loadBoardRegistry({ builtins: { files: filesFromAsset(readFileSync(assets['boards/boards.json']!, 'utf8')) } });
  t.same(fresh.candidates('Raspberry Pi 4 Model B Rev 1.4', []).map((p) => p.profile.id), ['rpi-4b']);
  t.same(fresh.candidates(null, [{ vid: '2341', pid: '0043' }]).map((p) => p.profile.id), ['arduino-uno']);
  t.throws(() => filesFromAsset(JSON.stringify({ profiles: {} })), { message: 'no "identify" object' });
  t.throws(() => filesFromAsset(JSON.stringify({ identify: {}, profiles: { 'a.json': { id: 'a' } } })), { message: 'profiles["a.json"] is not the text of a file' });

  // A profile whose id is not its file name stops the build.
  const bad = tempDir();
  mkdirSync(join(bad, 'boards'));
  writeFileSync(join(bad, 'boards', 'a.json'), '{"id":"b"}');
  t.throws(() => boardsAssets(bad, work), { message: 'boards/a.json: its id must be the file name without .json, found "b"' });
});

t.test("an asset's profile that does not validate is skipped with its file name, the others load", async (t) => {
  const asset = JSON.parse(readFileSync(join(boardsDir, 'rpi-4b.json'), 'utf8')) as Record<string, unknown>;
  const { gpio: _gpio, ...noGpio } = asset;
  const broken = { ...noGpio, id: 'broken' };
  const files = filesFromAsset(JSON.stringify({ identify: { 'rpi-4b.json': asset.identify, 'broken.json': asset.identify }, profiles: { 'rpi-4b.json': JSON.stringify(asset), 'broken.json': JSON.stringify(broken) } }));
  // The text validation reads: the profile as it stands in the asset.
  t.same(JSON.parse(files[1]!.text), { ...noGpio, id: 'broken' });
  const r = loadBoardRegistry({ builtins: { files } });
  t.same(r.profiles.map((p) => p.profile.id), ['rpi-4b']);
  t.same(r.skipped, [{ file: 'boards/broken.json', errors: ['boards/broken.json: gpio: missing (expected an object)'] }]);
});

// ---- detection ----------------------------------------------------------------------------

const PI3_CHIPS: FakeChip[] = [
  { n: 0, label: 'pinctrl-bcm2835', ngpio: 54, base: 512, parent: 'soc/3f200000.gpio' },
  { n: 1, label: 'raspberrypi-exp-gpio', ngpio: 8, base: 566, parent: 'soc/soc:firmware/soc:firmware:gpio' },
];

t.test('a Raspberry Pi 3', async (t) => {
  const roots = sbcRoots('Raspberry Pi 3 Model B Rev 1.2', PI3_CHIPS);
  t.equal(readDeviceTreeModel(roots), 'Raspberry Pi 3 Model B Rev 1.2', 'the NUL is gone');
  const d = detectBoards(registry.profiles, roots);
  t.equal(d.sbc?.profile.profile.id, 'rpi-3b');
  t.equal(d.sbc?.prefix, 'Raspberry Pi 3 Model B');
  t.equal(d.summary, 'Raspberry Pi 3 Model B (rpi-3b), from the device-tree model "Raspberry Pi 3 Model B Rev 1.2"');
  t.same(d.chips, [
    { name: 'gpiochip0', label: 'pinctrl-bcm2835', lines: 54 },
    { name: 'gpiochip1', label: 'raspberrypi-exp-gpio', lines: 8 },
  ]);
  t.same(d.expectedChips, [{ label: 'pinctrl-bcm2835', lines: 54, found: { name: 'gpiochip0', label: 'pinctrl-bcm2835', lines: 54 } }]);
  t.equal(d.memTotalMiB, 3793);
  t.same(d.serial, []);
  // Mainline kernels and QEMU's raspi3b say it without the revision.
  t.equal(detectBoards(registry.profiles, sbcRoots('Raspberry Pi 3 Model B', [])).sbc?.profile.profile.id, 'rpi-3b');
});

t.test('model prefixes end at a word: the 3 B+ is not a 3 B, a Pi 400 is not a Pi 4', async (t) => {
  const sbc = registry.profiles.filter((p) => p.profile.kind === 'sbc');
  const id = (model: string) => matchDeviceTreeModel(model, sbc).map((m) => m.profile.profile.id);
  t.same(id('Raspberry Pi 3 Model B Plus Rev 1.3'), ['rpi-3b-plus']);
  t.same(id('Raspberry Pi 3 Model B+'), ['rpi-3b-plus']);
  t.same(id('Raspberry Pi Zero 2 W Rev 1.0'), ['rpi-zero-2-w']);
  t.same(id('Raspberry Pi 400 Rev 1.0'), []);
  t.same(id('Raspberry Pi Compute Module 4 Rev 1.0'), []);
  t.same(id('Raspberry Pi 4 Model B'), ['rpi-4b']);
});

t.test('a Raspberry Pi 4 with I2C and the serial console on', async (t) => {
  const roots = sbcRoots('Raspberry Pi 4 Model B Rev 1.4', [
    { n: 0, label: 'pinctrl-bcm2711', ngpio: 58, base: 512, parent: 'soc/fe200000.gpio' },
    { n: 1, label: 'raspberrypi-exp-gpio', ngpio: 8, base: 570, parent: 'soc/soc:firmware/soc:firmware:gpio' },
  ]);
  write(join(roots.dev, 'i2c-1'), '');
  write(join(roots.proc, 'cmdline'), 'coherent_pool=1M 8250.nr_uarts=1 console=serial0,115200 console=tty1 root=PARTUUID=1-02 rootwait\n');
  writePiDeviceTree(roots, piDevices(['i2c1', 'uart1']));
  const d = detectBoards(registry.profiles, roots);
  t.equal(d.sbc?.profile.profile.id, 'rpi-4b');
  t.equal(d.expectedChips[0]?.found?.name, 'gpiochip0');
  const states = reservationStates(d.sbc!.profile.profile, roots);
  t.same(
    states.map((s) => [s.reservation.lines.join(','), s.active, s.because]),
    [
      ['GPIO0,GPIO1', true, 'always'],
      ['GPIO2,GPIO3', true, '/dev/i2c-1 exists; i2c@7e804000 (enabled in the device tree) takes GPIO2, GPIO3'],
      ['GPIO14,GPIO15', true, 'console=serial0 on the kernel command line: a serial console uses the UART; serial@7e215040 (enabled in the device tree) takes GPIO14, GPIO15'],
      ['GPIO7,GPIO8,GPIO9,GPIO10,GPIO11', false, 'free: nothing in the device tree, pinctrl or the kernel command line uses them'],
      ['GPIO16,GPIO17,GPIO18,GPIO19,GPIO20,GPIO21', false, 'free: nothing in the device tree, pinctrl or the kernel command line uses them'],
      ['GPIO4', false, 'free: nothing in the device tree, pinctrl or the kernel command line uses them'],
    ],
  );
  t.same([...reservedNow(states).keys()], ['GPIO0', 'GPIO1', 'GPIO2', 'GPIO3', 'GPIO14', 'GPIO15']);
  t.equal(reservedNow(states).get('GPIO2'), 'I2C1 (SDA1/SCL1): in use by the I2C bus (/dev/i2c-1 exists; i2c@7e804000 (enabled in the device tree) takes GPIO2, GPIO3)');
  t.equal(reservedNow(states).get('GPIO0'), 'ID_SD/ID_SC: the firmware reads a HAT\'s ID EEPROM over these at boot; leave them to HATs');
});

t.test("Debian's Raspberry Pi 3 image: console=ttyS1 (the mini UART) holds GPIO14/15", async (t) => {
  // What the issue found: the old rule knew only serial0, ttyS0 and ttyAMA0 and let GPIO14 go.
  const pi3 = registry.get('rpi-3b')!.profile;
  const roots = sbcRoots('Raspberry Pi 3 Model B', PI3_CHIPS);
  write(join(roots.proc, 'cmdline'), 'console=tty0 console=ttyS1,115200 root=LABEL=RASPIROOT rw fsck.repair=yes net.ifnames=0 rootwait\n');
  const uart = () => reservationStates(pi3, roots).find((s) => s.reservation.lines.includes('GPIO14'))!;
  t.match(uart(), { active: true, held: ['GPIO14', 'GPIO15'], because: 'console=ttyS1 on the kernel command line: a serial console uses the UART' });
  // No device tree to read either way: the console alone holds it, and so would nothing at all.
  write(join(roots.proc, 'cmdline'), 'root=LABEL=RASPIROOT rw\n');
  t.match(uart(), { active: true, because: /^pinclaw cannot show the pins are free/ });
  // With the device tree: the mini UART enabled takes the pins even without a console.
  writePiDeviceTree(roots, piDevices(['uart1']));
  t.match(uart(), { active: true, because: 'serial@7e215040 (enabled in the device tree) takes GPIO14, GPIO15' });
});

/** A Raspberry Pi's header devices as its device tree describes them; `on` lists the enabled ones. */
function piDevices(on: string[]): PiDevice[] {
  const all: Record<string, Omit<PiDevice, 'enabled'>> = {
    i2c1: { node: 'soc/i2c@7e804000', groups: [[2, 3]] },
    uart1: { node: 'soc/serial@7e215040', groups: [[14, 15]] },
    spi0: { node: 'soc/spi@7e204000', groups: [[9, 10, 11], [8, 7]] },
    spi1: { node: 'soc/spi@7e215080', groups: [[19, 20, 21], [18, 17, 16]] },
    w1: { node: 'onewire@0', groups: [[4]] },
  };
  return Object.entries(all).map(([k, d]) => ({ ...d, enabled: on.includes(k) }));
}

t.test('every reservation kind of every profile fails closed, and is free only when shown free', async (t) => {
  const FREE = 'free: nothing in the device tree, pinctrl or the kernel command line uses them';
  for (const { profile } of registry.profiles) {
    const rp1 = profile.gpio.chips[0]?.label === 'pinctrl-rp1';
    const label = profile.gpio.chips[0]?.label ?? '(board)';
    const offset = (name: string) => profile.gpio.lines.find((l) => l.name === name)!.offset;
    profile.reserved.forEach((r, i) => {
      const at = `${profile.id} reserved[${i}] (${[...r.lines, ...(r.pins ?? [])].join(', ')})`;
      const state = (roots: HostRoots, release: { line: string; reason: string }[] = []) => reservationStates(profile, { roots, release })[i]!;
      const bare = emptyRoots();
      if (r.when === 'always' || !r.activeIf) {
        // Always: held on any machine, even one whose device tree says nothing uses the pins.
        writePiDeviceTree(bare, [{ node: 'soc/x', groups: [[999]], enabled: true }], rp1 ? 'rp1' : 'brcm');
        t.match(state(bare), { active: true, because: 'always', held: r.lines }, `${at}: always held`);
        if (r.lines.length) {
          const released = state(bare, r.lines.map((line) => ({ line, reason: 'the owner knows' })));
          t.equal(released.active, (r.pins?.length ?? 0) > 0, `${at}: released by the owner (pins that are not lines stay)`);
          t.same(released.released.map((x) => x.line), r.lines, `${at}: the release is named`);
        }
        return;
      }
      const offsets = r.lines.map(offset);
      // Nothing readable (a container, no device tree, no debugfs): held.
      t.match(state(bare), { active: true, because: /^pinclaw cannot show the pins are free/ }, `${at}: held when nothing can be read`);
      // The device tree's pin groups, no enabled device on these pins: shown free.
      const dtFree = emptyRoots();
      writePiDeviceTree(dtFree, [{ node: 'soc/other', groups: [offsets], enabled: false }, { node: 'soc/elsewhere', groups: [[40, 41]], enabled: true }], rp1 ? 'rp1' : 'brcm');
      t.match(state(dtFree), { active: false, because: FREE, held: [] }, `${at}: free when the device tree shows nothing enabled on the pins`);
      // An enabled device takes one of the pins: held, naming it.
      const dtUsed = emptyRoots();
      writePiDeviceTree(dtUsed, [{ node: 'soc/dev@1', groups: [[offsets.at(-1)!]], enabled: true }], rp1 ? 'rp1' : 'brcm');
      t.match(state(dtUsed), { active: true, because: `dev@1 (enabled in the device tree) takes ${r.lines.at(-1)}` }, `${at}: held by an enabled device-tree node`);
      // pinctrl in debugfs: a pin in a function other than GPIO, or muxed by a device: held.
      const pcUsed = emptyRoots();
      writePinctrl(pcUsed, label, offsets.map((pin, j) => (j === 0 ? { pin, fn: 'alt0', owner: '3f204000.spi' } : { pin, fn: 'alt3' })));
      t.match(state(pcUsed).because, new RegExp(`^pinctrl: 3f204000\\.spi \\(function alt0\\) holds ${r.lines[0]}`), `${at}: held by pinctrl's mux owner`);
      if (r.lines.length > 1) t.match(state(pcUsed).because, new RegExp(`pinctrl: function alt3 \\(not GPIO\\) on ${r.lines.slice(1).join(', ')}$`), `${at}: and by a function that is not GPIO`);
      // pinctrl shows every pin as a plain GPIO: free even without a device tree.
      const pcFree = emptyRoots();
      writePinctrl(pcFree, label, offsets.map((pin) => ({ pin, fn: 'gpio_in' })));
      t.match(state(pcFree), { active: false, because: FREE }, `${at}: free when pinctrl shows plain GPIO`);
      // pinctrl lists only some of the pins: the others cannot be shown free.
      if (offsets.length > 1) {
        const pcPart = emptyRoots();
        writePinctrl(pcPart, label, [{ pin: offsets[0]!, fn: 'gpio_in' }]);
        t.equal(state(pcPart).active, true, `${at}: held when pinctrl does not list every pin`);
      }
      // The uAPI says another consumer holds a line: held; pinclaw's own hold is not "another".
      const uapi = (consumer: string) => reservationStates(profile, { roots: dtFree, probe: (l) => (l.name === r.lines[0] ? { used: true, consumer } : { used: false, consumer: '' }) })[i]!;
      t.match(uapi('w1-gpio'), { active: true, because: `the GPIO uAPI: 'w1-gpio' holds ${r.lines[0]}` }, `${at}: held by another consumer`);
      t.equal(uapi('pinclaw').active, false, `${at}: a line pinclaw itself holds is no evidence`);
      // The activeIf device paths and words still hold it.
      for (const path of r.activeIf.anyExists ?? []) {
        const dev = emptyRoots();
        writePiDeviceTree(dev, [], rp1 ? 'rp1' : 'brcm');
        write(hostPath(dev, path)!, '');
        t.match(state(dev), { active: true, because: new RegExp(`^${path.replace(/[.]/g, '\\.')} exists`) }, `${at}: held while ${path} exists`);
      }
      // A serial console (any name) holds UART lines only.
      const cons = emptyRoots();
      writePiDeviceTree(cons, [{ node: 'soc/other', groups: [offsets], enabled: false }], rp1 ? 'rp1' : 'brcm');
      write(join(cons.proc, 'cmdline'), 'console=tty1 console=serial1,115200 rootwait\n');
      const uartLines = r.lines.some((n) => profile.gpio.lines.find((l) => l.name === n)!.capabilities.some((c) => c === 'uart-tx' || c === 'uart-rx'));
      t.match(state(cons), uartLines ? { active: true, because: /console=serial1 on the kernel command line: a serial console uses the UART/ } : { active: false }, `${at}: a serial console ${uartLines ? 'holds' : 'does not concern'} these lines`);
      // The owner's release: the released lines are free, the rest stay held.
      const rel = state(bare, [{ line: r.lines[0]!, reason: 'nothing wired there' }]);
      t.same(rel.released, [{ line: r.lines[0], reason: 'nothing wired there' }], `${at}: the release is named`);
      t.same(rel.held, r.lines.slice(1), `${at}: only the released line is taken back`);
      t.equal(releasedLines([rel]).get(r.lines[0]!), 'nothing wired there');
    });
  }
});

t.test('a Raspberry Pi 5: the header is on RP1, found by label whatever its number', async (t) => {
  const rp1 = (n: number): FakeChip => ({ n, label: 'pinctrl-rp1', ngpio: 54, base: 569, parent: 'axi/1000120000.pcie/1f000d0000.gpio' });
  const brcm: FakeChip[] = [
    { n: 10, label: 'gpio-brcmstb@107d508500', ngpio: 32, base: 512, parent: 'soc/107d508500.gpio' },
    { n: 11, label: 'gpio-brcmstb@107d508520', ngpio: 4, base: 544, parent: 'soc/107d508500.gpio/x' },
  ];
  for (const n of [0, 4]) {
    const d = detectBoards(registry.profiles, sbcRoots('Raspberry Pi 5 Model B Rev 1.0', [rp1(n), ...brcm]));
    t.equal(d.sbc?.profile.profile.id, 'rpi-5');
    t.same(d.expectedChips, [{ label: 'pinctrl-rp1', lines: 54, found: { name: `gpiochip${n}`, label: 'pinctrl-rp1', lines: 54 } }], `RP1 as gpiochip${n}`);
    t.same(d.chips.map((c) => c.name), [`gpiochip${n}`, 'gpiochip10', 'gpiochip11'], 'sorted by number');
  }
  // A Pi 5 kernel without the sysfs class still lists the chips, unlabelled.
  const bare = sbcRoots('Raspberry Pi 5 Model B Rev 1.0', []);
  write(join(bare.dev, 'gpiochip0'), '');
  const d = detectBoards(registry.profiles, bare);
  t.same(d.chips, [{ name: 'gpiochip0', label: null, lines: null }]);
  t.same(d.expectedChips, [{ label: 'pinctrl-rp1', lines: 54, found: null }]);
});

t.test('a laptop with an Arduino Uno on ttyACM0 and a CH340 Nano on ttyUSB0', async (t) => {
  const roots = laptopRoots();
  const d = detectBoards(registry.profiles, roots);
  t.equal(d.deviceTreeModel, null);
  t.equal(d.sbc, null);
  t.equal(d.summary, 'no board profile matches this machine (device-tree model: none; this looks like a PC or a container)');
  t.same(d.chips, []);
  t.equal(d.memTotalMiB, 15932);
  t.same(d.serial, [
    {
      tty: 'ttyACM0',
      device: join(roots.dev, 'ttyACM0'),
      byId: join(roots.dev, 'serial', 'by-id', 'usb-Arduino__www.arduino.cc__0043_85734323430351D0E1F1-if00'),
      usb: { vid: '2341', pid: '0043', manufacturer: 'Arduino (www.arduino.cc)', serial: '85734323430351D0E1F1' },
      profiles: ['arduino-uno'],
      match: 'exact',
      notes: ['Uno R3 (ATmega16U2 USB-serial)'],
    },
    {
      tty: 'ttyUSB0',
      device: join(roots.dev, 'ttyUSB0'),
      usb: { vid: '1a86', pid: '7523', product: 'USB2.0-Serial' },
      profiles: ['arduino-nano'],
      match: 'guess',
      notes: ['CH340 USB-serial: most Nano clones, but also Uno and Mega clones and plain adapters'],
    },
  ]);
});

t.test('a Nucleo: the ST-LINK id is on two profiles, so the match is ambiguous', async (t) => {
  const roots = emptyRoots();
  addUsbSerial(roots, { tty: 'ttyACM0', port: '1-1', vid: '0483', pid: '374B', product: 'STM32 STLink' });
  const [s] = detectBoards(registry.profiles, roots).serial;
  t.same([s?.usb?.pid, s?.profiles, s?.match], ['374b', ['nucleo-f401re', 'nucleo-f411re'], 'ambiguous'], 'ids are compared in lower case');
  // An unknown USB device, and a tty whose sysfs has no USB device above it.
  addUsbSerial(roots, { tty: 'ttyACM1', port: '1-4', vid: 'dead', pid: 'beef' });
  mkdirSync(join(roots.sys, 'devices', 'virtual', 'tty', 'ttyUSB9'), { recursive: true });
  link(join(roots.sys, 'devices', 'virtual', 'tty'), join(roots.sys, 'devices', 'virtual', 'tty', 'ttyUSB9', 'device'));
  link(join(roots.sys, 'devices', 'virtual', 'tty', 'ttyUSB9'), join(roots.sys, 'class', 'tty', 'ttyUSB9'));
  const serial = detectBoards(registry.profiles, roots).serial;
  t.same(serial.map((x) => [x.tty, x.match, x.usb?.vid ?? null]), [['ttyACM0', 'ambiguous', '0483'], ['ttyACM1', 'none', 'dead'], ['ttyUSB9', 'none', null]]);
});

t.test('an empty tree, and roots that do not exist: no board, no chips, no crash', async (t) => {
  const d = detectBoards(registry.profiles, emptyRoots());
  t.same({ ...d }, {
    deviceTreeModel: null,
    sbc: null,
    alsoMatched: [],
    summary: 'no board profile matches this machine (device-tree model: none; this looks like a PC or a container)',
    chips: [],
    expectedChips: [],
    serial: [],
    memTotalMiB: null,
  });
  const gone = join(tempDir(), 'gone');
  t.same(detectBoards(registry.profiles, { proc: gone, sys: gone, dev: gone }).chips, []);
  const unknown = detectBoards(registry.profiles, sbcRoots('Acme SBC 9000', []));
  t.equal(unknown.summary, 'no board profile matches this machine (device-tree model: "Acme SBC 9000"); a profile in $PINCLAW_HOME/boards/ can describe it (docs/hardware.md)');
});

// ---- prompt summary and doctor ------------------------------------------------------------

t.test('boardSummary: what the model is told', async (t) => {
  t.equal(nameRanges(['D0', 'D1', 'D2', 'A0', 'A1', 'D13', 'PA5']), 'A0-A1, D0-D2, D13, PA5');
  const pi4 = registry.get('rpi-4b')!.profile;
  const roots = sbcRoots('Raspberry Pi 4 Model B Rev 1.4', []);
  write(join(roots.dev, 'i2c-1'), '');
  writePiDeviceTree(roots, piDevices(['i2c1']));
  const text = boardSummary(pi4, { how: 'detected', reservations: reservationStates(pi4, roots), attached: [{ profile: registry.get('arduino-uno')!.profile, device: '/dev/ttyACM0' }] });
  const lines = text.split('\n');
  t.equal(lines[0], `Raspberry Pi 4 Model B (board profile rpi-4b, detected). ${pi4.description}`);
  t.ok(lines.includes('Lines GPIO0-GPIO27 (gpiochip pinctrl-bcm2711, line = offset).'));
  t.match(text, /Header pin → line: 3=GPIO2 5=GPIO3 7=GPIO4 8=GPIO14 10=GPIO15 11=GPIO17 /);
  t.ok(lines.includes('PWM: GPIO12-GPIO13, GPIO18-GPIO19.'));
  t.ok(lines.includes('I2C bus 1: SDA GPIO2, SCL GPIO3.'));
  // Only what is reserved now or always: SPI is off on this machine, so it is not mentioned.
  t.ok(lines.includes('Leave alone: GPIO0, GPIO1: ID_SD/ID_SC; GPIO2, GPIO3: I2C1 (SDA1/SCL1), held now.'), text);
  t.equal(lines.at(-1), 'Attached on /dev/ttyACM0: Arduino Uno (R3) (arduino-uno), lines A0-A5, D0-D13.');
  t.ok(text.length < 1500, `short enough for every turn (${text.length} characters)`);
  const maix = boardSummary(registry.get('maixcam')!.profile);
  t.match(maix, /\nNo GPIO lines for pinclaw on this board\.$/);
});

t.test('boardPromptText: the prompt\'s Board section in one call', async (t) => {
  const home = tempDir();
  const none = defaults();
  t.equal(boardPromptText({ home }, none, emptyRoots()), undefined, 'nothing known: the prompt says so itself');
  const laptop = laptopRoots();
  t.equal(
    boardPromptText({ home }, none, laptop),
    [
      'This computer has no board profile (no device tree) and no GPIO for pinclaw.',
      `Attached on ${join(laptop.dev, 'serial', 'by-id', 'usb-Arduino__www.arduino.cc__0043_85734323430351D0E1F1-if00')}: Arduino Uno (R3) (arduino-uno), lines A0-A5, D0-D13.`,
      `Attached on ${join(laptop.dev, 'ttyUSB0')}: probably Arduino Nano (ATmega328P) (arduino-nano), lines A0-A7, D0-D13.`,
    ].join('\n'),
  );
  const configured = defaults();
  configured.board.profile = 'rpi-3b-plus';
  const text = boardPromptText({ home }, configured, sbcRoots('Raspberry Pi 3 Model B Rev 1.2', PI3_CHIPS))!;
  t.match(text, /^Raspberry Pi 3 Model B\+ \(board profile rpi-3b-plus, configured\)\. /, 'the configured profile wins');
});

t.test('doctor\'s board check', async (t) => {
  const home = tempDir();
  const paths = resolvePaths({ home }, {});
  const laptop = boardCheck(paths, defaults(), laptopRoots());
  t.same(laptop, {
    name: 'board',
    state: 'ok',
    detail: 'no board profile matches this machine (device-tree model: none; this looks like a PC or a container); no GPIO chips; ttyACM0: arduino-uno, ttyUSB0: perhaps arduino-nano (1a86:7523 is a generic USB-serial chip)',
  });
  const pi3 = boardCheck(paths, defaults(), sbcRoots('Raspberry Pi 3 Model B Rev 1.2', PI3_CHIPS));
  t.equal(pi3.state, 'ok');
  t.equal(pi3.detail, 'Raspberry Pi 3 Model B (rpi-3b), from the device-tree model "Raspberry Pi 3 Model B Rev 1.2"; GPIO gpiochip0 pinctrl-bcm2835 (54), gpiochip1 raspberrypi-exp-gpio (8); no USB serial boards');

  // Configured, but this machine is a Pi 3 whose chip does not match the profile's.
  const config = defaults();
  config.board.profile = 'rpi-4b';
  const wrong = boardCheck(paths, config, sbcRoots('Raspberry Pi 3 Model B Rev 1.2', PI3_CHIPS));
  t.equal(wrong.state, 'warn');
  t.match(wrong.detail, /^rpi-4b \(board\.profile\); detection says rpi-3b \("Raspberry Pi 3 Model B Rev 1\.2"\); no gpiochip labelled pinctrl-bcm2711: /);
  t.match(wrong.detail, /; fix: pinclaw config set board\.profile rpi-3b \(detection says this is a Raspberry Pi 3 Model B\), or delete board\.profile from .*config\.json to use detection$/, 'the fix: the detected profile');
  // Configured and not detected (no device tree): which to set is the owner's to find out.
  const noChips = boardCheck(paths, config, emptyRoots());
  t.match(noChips.detail, /; fix: if this is not a Raspberry Pi 4 Model B, pinclaw config set board\.profile ID with this machine's profile \(`pinclaw board detect` says which board this is, `pinclaw board list` shows the profiles\); if it is, its GPIO driver is not loaded/);

  config.board.profile = 'rpi4';
  const unknown = boardCheck(paths, config, emptyRoots());
  t.equal(unknown.state, 'fail');
  t.match(unknown.detail, /^board\.profile: unknown board profile 'rpi4' \(did you mean 'rpi-4b'\?\)/);
  t.match(unknown.detail, /; fix: pinclaw config set board\.profile rpi-4b with the profile of this machine \(`pinclaw board detect` says which board this is/);

  write(join(home, 'boards', 'bad.json'), '{}');
  const skipped = boardCheck(paths, defaults(), emptyRoots());
  t.equal(skipped.state, 'warn');
  t.match(skipped.detail, new RegExp(`skipped ${join(home, 'boards', 'bad.json')}: 8 errors \\(pinclaw board list shows them\\)`));
  t.match(skipped.detail, /; fix: correct or remove the skipped profile files/);
});

// ---- the command --------------------------------------------------------------------------

function cli(home: string, json = false) {
  const out: string[] = [];
  const err: string[] = [];
  const ctx: CliContext = { paths: resolvePaths({ home }, {}), json, out: (l) => out.push(l), err: (l) => err.push(l), env: {} };
  return { ctx, out, err };
}

t.test('board detect in-process on fake machines', async (t) => {
  const home = tempDir();
  let c = cli(home);
  t.equal(await runBoard('detect', [], c.ctx, laptopRoots()), 0);
  const text = c.out.join('\n');
  t.match(text, /^machine: {2}no board profile matches this machine \(device-tree model: none; this looks like a PC or a container\)$/m);
  t.match(text, /^gpio: {5}none \(no \/dev\/gpiochip\*, nothing in \/sys\/bus\/gpio\): GPIO tools cannot work on this machine$/m);
  t.match(text, /^serial: {3}\S+\/dev\/ttyACM0 {2}2341:0043 Arduino \(www\.arduino\.cc\): arduino-uno; \S+usb-Arduino/m);
  t.match(text, /\/dev\/ttyUSB0 {2}1a86:7523 USB2\.0-Serial: perhaps arduino-nano \(1a86:7523 is a generic USB-serial chip\)$/m);

  const roots = sbcRoots('Raspberry Pi 5 Model B Rev 1.0', [{ n: 0, label: 'pinctrl-rp1', ngpio: 54, base: 569, parent: 'axi/rp1' }]);
  write(join(roots.dev, 'i2c-1'), '');
  writePiDeviceTree(roots, piDevices(['i2c1']), 'rp1');
  c = cli(home, true);
  t.equal(await runBoard('detect', [], c.ctx, roots), 0);
  const j = JSON.parse(c.out.join('\n')) as { board: unknown; detected: unknown; gpioChips: unknown; reservations: { lines: string[]; active: boolean | null }[] };
  t.same(j.board, { id: 'rpi-5', how: 'detected' });
  t.same(j.detected, { id: 'rpi-5', prefix: 'Raspberry Pi 5 Model B', alsoMatched: [] });
  t.same(j.gpioChips, [{ name: 'gpiochip0', label: 'pinctrl-rp1', lines: 54 }]);
  t.same(j.reservations.filter((r) => r.active).map((r) => r.lines), [['GPIO0', 'GPIO1'], ['GPIO2', 'GPIO3']]);

  // The owner releases GPIO2: board detect names it, and GPIO3 stays held.
  write(join(home, 'config.json'), JSON.stringify({ hardware: { release: [{ line: 'SDA1', reason: 'the I2C bus is unused, a button is on pin 3' }] } }));
  c = cli(home);
  t.equal(await runBoard('detect', [], c.ctx, roots), 0);
  t.match(c.out.join('\n'), /^reserved: +GPIO0, GPIO1 \(always\); GPIO3 \(\/dev\/i2c-1 exists; i2c@7e804000 \(enabled in the device tree\) takes GPIO3\)$/m);
  t.match(c.out.join('\n'), /^released: +by the owner \(hardware\.release\): GPIO2 \(the I2C bus is unused, a button is on pin 3\)$/m);
  const doctor = boardCheck(resolvePaths({ home }, {}), { ...defaults(), hardware: { ...defaults().hardware, release: [{ line: 'SDA1', reason: 'the I2C bus is unused, a button is on pin 3' }] } }, roots);
  t.match(doctor.detail, /GPIO2 released by the owner \(hardware\.release: the I2C bus is unused, a button is on pin 3\); without the release it is reserved: I2C1 \(SDA1\/SCL1\): in use by the I2C bus \(\/dev\/i2c-1 exists; i2c@7e804000 \(enabled in the device tree\) takes GPIO2, GPIO3\)/);
  t.equal(doctor.state, 'ok', 'a release is the owner\'s choice: named, not a warning');

  // A configured unknown id: the detection still prints, and the exit code is the config one.
  write(join(home, 'config.json'), JSON.stringify({ board: { profile: 'rpi-6' } }));
  c = cli(home);
  t.equal(await runBoard('detect', [], c.ctx, roots), 78);
  t.match(c.out.join('\n'), /^config: {3}board\.profile = rpi-6: board\.profile: unknown board profile 'rpi-6' \(did you mean 'rpi-5'\?\)$/m);
});

t.test('pinclaw board through the bundle', async (t) => {
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home });
  t.ok(readFileSync(bundle, 'utf8').length > 0, 'the bundle is built');
  t.notMatch(readFileSync(bundle, 'utf8'), 'Raspberry Pi Zero 2 W', 'the profiles are not in the main bundle');

  let r = runPinclaw(['board', 'list'], { env });
  t.equal(r.code, 0, r.stderr);
  const rows = r.stdout.trimEnd().split('\n');
  t.match(rows[0]!, /^ID +KIND +NAME +SOURCE$/);
  t.equal(rows.length, REQUIRED.length + 1);
  t.match(r.stdout, /^rpi-5 +sbc +Raspberry Pi 5 +built-in$/m);
  t.match(r.stdout, /^arduino-uno +mcu +Arduino Uno \(R3\) +built-in$/m);
  t.equal(r.stderr, '');

  // A user override and a broken user profile.
  const mine = builtin('arduino-uno');
  mine.name = 'Uno on the garage door';
  write(join(home, 'boards', 'arduino-uno.json'), JSON.stringify(mine));
  write(join(home, 'boards', 'oops.json'), JSON.stringify({ id: 'oops', name: 'x', kind: 'mcu', description: 'x', identify: {}, gpio: { chips: [], lines: [{ name: 'D1', offset: -1, capabilities: [] }] }, reserved: [], i2c: [] }));
  r = runPinclaw(['board', 'list'], { env });
  t.equal(r.code, 0);
  t.match(r.stdout, new RegExp(`^arduino-uno +mcu +Uno on the garage door +user ${join(home, 'boards', 'arduino-uno.json')} \\(overrides the built-in boards/arduino-uno\\.json\\)$`, 'm'));
  t.equal(
    r.stderr,
    [
      `pinclaw board: skipped ${join(home, 'boards', 'oops.json')}:`,
      `pinclaw board:   ${join(home, 'boards', 'oops.json')}: gpio.lines[0].offset: expected an integer >= 0, found number -1`,
      '',
    ].join('\n'),
  );
  r = runPinclaw(['board', 'list', '--json'], { env });
  const list = JSON.parse(r.stdout) as { profiles: { id: string; source: string; overrides?: string }[]; skipped: { file: string; errors: string[] }[] };
  t.same(list.profiles.find((p) => p.id === 'arduino-uno'), { id: 'arduino-uno', name: 'Uno on the garage door', kind: 'mcu', source: 'user', file: join(home, 'boards', 'arduino-uno.json'), overrides: 'boards/arduino-uno.json' });
  t.equal(list.skipped.length, 1);
  rmSync(join(home, 'boards'), { recursive: true });

  r = runPinclaw(['board', 'show', 'rpi-4b'], { env });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^rpi-4b: Raspberry Pi 4 Model B \(sbc, built-in boards\/rpi-4b\.json\)$/m);
  t.match(r.stdout, /^ {2}NAME +OFFSET +HEADER +ALIASES +CAPABILITIES +NOTE$/m);
  t.match(r.stdout, /^ {2}GPIO17 +17 +11 +input output edge pull-up pull-down spi-cs +SPI1 CE1$/m);
  t.match(r.stdout, /^ {2}GPIO2, GPIO3: I2C1 \(SDA1\/SCL1\): in use by the I2C bus \(when I2C enabled \(dtparam=i2c_arm=on\) \[\/dev\/i2c-1 exists\]\)$/m);
  t.match(r.stdout, /^i2c: +bus 1: SDA GPIO2, SCL GPIO3 \(dtparam=i2c_arm=on: \/dev\/i2c-1\)$/m);
  t.match(r.stdout, /^memory: +1024 MiB \(variants 1024, 2048, 4096, 8192 MiB\); pinclaw's budget 320 MiB/m);

  // The owner's release, named by board show; config validate refuses a release without a reason
  // or of a line the profile never reserves.
  write(join(home, 'config.json'), JSON.stringify({ board: { profile: 'rpi-4b' }, hardware: { release: [{ line: 'TXD', reason: 'no serial console; a relay on pin 8' }] } }));
  r = runPinclaw(['board', 'show', 'rpi-4b'], { env });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /\nreleased by the owner \(hardware\.release\):\n {2}GPIO14: no serial console; a relay on pin 8$/m);
  r = runPinclaw(['config', 'validate'], { env });
  t.equal(r.code, 0, r.stderr);
  write(join(home, 'config.json'), JSON.stringify({ board: { profile: 'rpi-4b' }, hardware: { release: [{ line: 'GPIO22' }, { line: 'GPIO14', reason: 'x' }, { line: 'TXD', reason: 'y' }] } }));
  r = runPinclaw(['config', 'validate'], { env });
  t.equal(r.code, 78);
  t.match(r.stdout, /hardware\.release\[0\]\.reason: expected why the line is safe to use/);
  t.match(r.stdout, /hardware\.release\[0\]\.line: expected a line rpi-4b reserves/);
  t.match(r.stdout, /hardware\.release\[2\]\.line: expected a line no other hardware\.release entry names, found string "TXD", also hardware\.release\[1\]/);
  rmSync(join(home, 'config.json'));

  r = runPinclaw(['board', 'show', 'nucleo-f401re', '--json'], { env });
  t.equal(r.code, 0);
  t.same(JSON.parse(r.stdout), { source: 'built-in', file: 'boards/nucleo-f401re.json', released: [], profile: builtin('nucleo-f401re') });

  r = runPinclaw(['board', 'show', 'rpi4'], { env });
  t.equal(r.code, 2);
  t.equal(r.stderr, "pinclaw: board show: unknown board profile 'rpi4' (did you mean 'rpi-4b'?)\nusage: pinclaw board show NAME [--json]\n");
  r = runPinclaw(['board', 'show'], { env });
  t.equal(r.code, 2);
  t.match(r.stderr, /board show: expected NAME, got none\nusage: pinclaw board show NAME/);
  r = runPinclaw(['board', 'lsit'], { env });
  t.equal(r.code, 2);
  t.match(r.stderr, /unknown subcommand 'lsit' \(did you mean 'list'\?\)/);

  // This machine, whatever it is: the command answers and never crashes.
  r = runPinclaw(['board', 'detect', '--json'], { env });
  t.equal(r.code, 0, r.stderr);
  const d = JSON.parse(r.stdout) as { summary: string; gpioChips: unknown[]; serial: unknown[] };
  t.type(d.summary, 'string');
  t.ok(Array.isArray(d.gpioChips) && Array.isArray(d.serial));
  r = runPinclaw(['board', 'detect'], { env });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^machine: /);
});
