// What a long-running process pays for hardware it does not have: nothing is loaded when the
// machine shows no hardware and none is configured; profiles are validated only when they could
// describe the machine; names are ordered without Intl (whose collation data costs MiB of RSS).
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateConfig } from '../src/config/validate.js';
import { hardwarePresence } from '../src/hardware/presence.js';
import { loadBoardRegistry } from '../src/hardware/boards/registry.js';
import { detectBoards, detectWith } from '../src/hardware/boards/detect.js';
import { byText, natural } from '../src/hardware/boards/order.js';
import { tempDir } from './support/proc.js';

function fakeRoots() {
  const root = tempDir();
  const roots = { proc: join(root, 'proc'), sys: join(root, 'sys'), dev: join(root, 'dev') };
  for (const d of Object.values(roots)) mkdirSync(d, { recursive: true });
  return { root, roots };
}

t.test('presence: nothing to load on a machine without hardware; each reason named', async (t) => {
  const { root, roots } = fakeRoots();
  const config = validateConfig({}).config!;
  const home = { home: join(root, 'home') };
  t.equal(hardwarePresence(config, home, roots), undefined, 'a container: no device tree, no chip, no bus, no port, no config');
  t.equal(hardwarePresence(validateConfig({ board: { profile: 'rpi-4b' } }).config!, home, roots), 'board.profile is set');
  t.equal(hardwarePresence(validateConfig({ hardware: { lines: [{ name: 'a', line: 'GPIO17' }] } }).config!, home, roots), 'the hardware section is configured');
  writeFileSync(join(roots.dev, 'i2c-1'), '');
  t.equal(hardwarePresence(config, home, roots), 'an I2C bus exists');
  writeFileSync(join(roots.dev, 'gpiochip0'), '');
  t.equal(hardwarePresence(config, home, roots), 'a GPIO chip exists');
  mkdirSync(join(roots.proc, 'device-tree'));
  writeFileSync(join(roots.proc, 'device-tree', 'model'), 'Raspberry Pi 4 Model B Rev 1.4\0');
  t.equal(hardwarePresence(config, home, roots), 'the machine has a device tree');
});

t.test('detection over candidates gives the answer detection over every profile gives', async (t) => {
  for (const model of ['Raspberry Pi 3 Model B Rev 1.2', 'Raspberry Pi 3 Model B Plus Rev 1.3', 'Raspberry Pi 5 Model B Rev 1.0', 'Some Other Board', null]) {
    const { roots } = fakeRoots();
    if (model) {
      mkdirSync(join(roots.proc, 'device-tree'));
      writeFileSync(join(roots.proc, 'device-tree', 'model'), `${model}\0`);
    }
    const all = detectBoards(loadBoardRegistry().profiles, roots);
    const lazy = detectWith(loadBoardRegistry(), roots);
    t.same({ summary: lazy.summary, sbc: lazy.sbc?.profile.profile.id ?? null, also: lazy.alsoMatched }, { summary: all.summary, sbc: all.sbc?.profile.profile.id ?? null, also: all.alsoMatched }, `model ${JSON.stringify(model)}`);
  }
  const r = loadBoardRegistry();
  t.same(r.candidates('Raspberry Pi 3 Model B Rev 1.2', []).map((p) => p.profile.id), ['rpi-3b'], 'one candidate for a Pi 3 B');
  t.same(r.candidates(null, [{ vid: '2341', pid: '0043' }]).map((p) => p.profile.id), ['arduino-uno'], 'an Uno by its USB id');
});

t.test('orderings without Intl', async (t) => {
  t.same(['gpiochip10', 'gpiochip2', 'gpiochip1'].sort(natural), ['gpiochip1', 'gpiochip2', 'gpiochip10']);
  t.same(['ttyUSB10', 'ttyACM0', 'ttyUSB9'].sort(natural), ['ttyACM0', 'ttyUSB9', 'ttyUSB10']);
  t.same(['rpi-5', 'arduino-uno', 'rpi-3b-plus', 'rpi-3b'].sort(byText), ['arduino-uno', 'rpi-3b', 'rpi-3b-plus', 'rpi-5']);
  t.equal(natural('a01', 'a1') !== 0, true, 'equal numbers with other digits still order');
});
