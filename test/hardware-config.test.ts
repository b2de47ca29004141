// The `board` and `hardware` config sections: schema defaults and errors, and the checks that need
// the board profiles (known ids, the board's line names and capabilities, references between keys).
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../src/errors.js';
import { defaults, formatIssues, loadConfig, validateConfig, type PinclawConfig } from '../src/config/index.js';
import { boardConfigIssues, checkBoardConfig } from '../src/hardware/boards/config-check.js';
import { loadBoardRegistry } from '../src/hardware/boards/registry.js';
import { resolvePaths } from '../src/paths.js';
import { tempDir } from './support/proc.js';

const registry = loadBoardRegistry();
const pi4 = registry.get('rpi-4b')!.profile;

function config(raw: unknown): PinclawConfig {
  const r = validateConfig(raw);
  if (!r.config) throw new Error(formatIssues(r.errors));
  return r.config;
}

t.test('defaults: no board, no lines, no triggers, a write rate limit', async (t) => {
  const d = defaults();
  t.same(d.board, {});
  t.same(d.hardware, { lines: [], confirm: [], release: [], writeRateLimit: { perLine: 30, perSeconds: 60 }, triggers: [], sensorTriggers: [], sensors: [], devices: [], maixcam: { host: '0.0.0.0', triggers: [] }, cameras: [] });
});

t.test('a full hardware section validates and gets its item defaults', async (t) => {
  const c = config({
    board: { profile: 'rpi-4b' },
    hardware: {
      lines: [
        { name: 'garage_relay', line: 'GPIO17', activeLow: true, direction: 'output', initial: 'inactive' },
        { name: 'doorbell', line: 'GPIO27', direction: 'input', bias: 'pull-up' },
      ],
      confirm: ['garage_relay'],
      writeRateLimit: { perLine: 4 },
      triggers: [{ line: 'doorbell', edge: 'falling', session: 'home', message: 'the doorbell rang' }],
      sensorTriggers: [{ bus: 1, address: 0x48, register: 0, length: 2, intervalMs: 5000, above: 7680, hysteresis: 256, session: 'home', message: 'the shed is warm' }],
    },
  });
  t.same(c.hardware.lines[1], { name: 'doorbell', line: 'GPIO27', activeLow: false, direction: 'input', bias: 'pull-up' });
  t.same(c.hardware.writeRateLimit, { perLine: 4, perSeconds: 60 });
  t.same(c.hardware.triggers[0], { line: 'doorbell', edge: 'falling', debounceMs: 50, action: 'turn', session: 'home', message: 'the doorbell rang', rateLimit: { max: 6, perSeconds: 60 }, adc: { intervalMs: 100 } });
  t.same(c.hardware.sensorTriggers[0], { bus: 1, address: 72, register: 0, length: 2, intervalMs: 5000, above: 7680, hysteresis: 256, action: 'turn', session: 'home', message: 'the shed is warm' });
  t.same(boardConfigIssues(c, registry, pi4), [], 'and it fits the Pi 4');
});

t.test('schema errors name the exact path', async (t) => {
  const r = validateConfig({
    board: { profile: 4 },
    hardware: {
      lines: [{ name: 'relay', line: 'GPIO17', direction: 'out', activelow: true }],
      writeRateLimit: { perLine: 0 },
      triggers: [{ line: 'relay', edge: 'up', debounceMs: -1 }],
      sensorTriggers: [{ bus: 1, address: 200, register: 256 }],
    },
  });
  t.same(formatIssues(r.errors).split('\n'), [
    'board.profile: expected a string, found number 4',
    'hardware.lines[0].direction: expected one of "input", "output", found string "out"',
    "hardware.lines[0].activelow: unknown key (did you mean 'activeLow'?)",
    'hardware.writeRateLimit.perLine: expected an integer >= 1, found number 0',
    'hardware.triggers[0].edge: expected one of "rising", "falling", "both", found string "up"',
    'hardware.triggers[0].debounceMs: expected an integer between 0 and 60000, found number -1',
    'hardware.sensorTriggers[0].address: expected an integer between 3 and 119, found number 200',
    'hardware.sensorTriggers[0].register: expected an integer between 0 and 255, found number 256',
  ]);
});

t.test('environment overrides reach both sections', async (t) => {
  const home = tempDir();
  const c = loadConfig(resolvePaths({ home }, {}), { PINCLAW_BOARD_PROFILE: 'rpi-5', PINCLAW_HARDWARE_LINES: '[{"name":"fan","line":"GPIO18","direction":"output"}]' });
  t.equal(c.board.profile, 'rpi-5');
  t.same(c.hardware.lines, [{ name: 'fan', line: 'GPIO18', activeLow: false, direction: 'output' }]);
});

t.test('board.profile must name a known computer profile', async (t) => {
  const issues = (profile: string) => formatIssues(boardConfigIssues(config({ board: { profile } }), registry, undefined));
  t.equal(issues('rpi4'), "board.profile: expected a board profile id (pinclaw board list): rpi-3b, rpi-3b-plus, rpi-4b, rpi-5, rpi-zero-2-w, found string \"rpi4\" (did you mean 'rpi-4b'?)");
  t.equal(issues('arduino-uno'), 'board.profile: expected the profile of the computer pinclaw runs on (kind sbc): rpi-3b, rpi-3b-plus, rpi-4b, rpi-5, rpi-zero-2-w, found string "arduino-uno", a mcu profile (microcontroller boards are found on their serial ports)');
  t.equal(issues('rpi-5'), '');
});

t.test('hardware.lines against the board: names, reservations, capabilities, duplicates', async (t) => {
  const c = config({
    hardware: {
      lines: [
        { line: 'GPIO5' },
        { name: 'relay', line: 'GPI017', direction: 'output' },
        { name: 'relay', line: 'GPIO0' },
        { name: 'bad name!', line: 'GPIO22' },
        { name: 'led', line: 'GPIO22', initial: 'active' },
        { name: 'fan', line: 'SDA1', direction: 'output', bias: 'pull-down' },
        { name: 'fan2', line: 'GPIO2' },
      ],
    },
  });
  t.same(formatIssues(boardConfigIssues(c, registry, pi4)).split('\n'), [
    'hardware.lines[0].name: expected a non-empty string (required), found nothing',
    "hardware.lines[1].line: expected a line of rpi-4b (pinclaw board show rpi-4b), found string \"GPI017\" (did you mean 'GPIO17'?)",
    'hardware.lines[2].name: expected a name no other hardware.lines entry has, found string "relay", also hardware.lines[1]',
    "hardware.lines[2].line: expected a line rpi-4b does not reserve, found string \"GPIO0\", reserved: ID_SD/ID_SC: the firmware reads a HAT's ID EEPROM over these at boot; leave them to HATs (release it only if nothing uses it: hardware.release [{\"line\":\"GPIO0\",\"reason\":\"...\"}])",
    'hardware.lines[3].name: expected a letter, then letters, digits, _ or - (at most 64), found string "bad name!"',
    'hardware.lines[4].initial: expected nothing unless direction is "output", found string "active"',
    'hardware.lines[4].line: expected a line no other hardware.lines entry uses, found string "GPIO22", also "bad name!"',
    'hardware.lines[6].line: expected a line no other hardware.lines entry uses, found string "GPIO2", also "fan"',
  ]);
  // Without a known board the lines cannot be checked against one; the rest still is.
  t.same(formatIssues(boardConfigIssues(c, registry, undefined)).split('\n').length, 4);
  // Released by the owner (hardware.release), an always-reserved line may be named.
  const released = config({ hardware: { lines: [{ name: 'hat_id', line: 'GPIO0', direction: 'output' }], release: [{ line: 'ID_SD', reason: 'no HAT on this Pi' }] } });
  t.same(boardConfigIssues(released, registry, pi4), []);

  // An analog-only pin cannot be an output.
  const nano = registry.get('arduino-nano')!.profile;
  t.same(formatIssues(boardConfigIssues(config({ hardware: { lines: [{ name: 'x', line: 'A6', direction: 'output', bias: 'pull-down' }] } }), registry, nano)).split('\n'), [
    'hardware.lines[0].line: expected a line with the capability "output", found string "A6" (adc)',
    'hardware.lines[0].line: expected a line with the capability "pull-down", found string "A6" (adc)',
  ]);
});

t.test('confirm and triggers refer to hardware.lines; sensor triggers need a threshold', async (t) => {
  const c = config({
    hardware: {
      lines: [
        { name: 'garage_relay', line: 'GPIO17', direction: 'output' },
        { name: 'doorbell', line: 'GPIO27' },
      ],
      confirm: ['garage_rely', 'fan'],
      triggers: [{ line: 'garage_relay', session: 'home', message: 'x' }, { line: 'doorbel' }],
      sensorTriggers: [{ bus: 1, address: 72, register: 0, session: 's', message: 'm' }, { address: 72, register: 0, above: 1, below: 2 }],
    },
  });
  t.same(formatIssues(boardConfigIssues(c, registry, pi4)).split('\n'), [
    "hardware.confirm[0]: expected a hardware.lines name: garage_relay, doorbell, found string \"garage_rely\" (did you mean 'garage_relay'?)",
    'hardware.confirm[1]: expected a hardware.lines name: garage_relay, doorbell, found string "fan"',
    'hardware.triggers[0].line: expected an input line, found string "garage_relay", an output',
    "hardware.triggers[1].line: expected a hardware.lines name: garage_relay, doorbell, found string \"doorbel\" (did you mean 'doorbell'?)",
    'hardware.triggers[1].session: expected a non-empty string (required unless owner.notify is set), found nothing',
    'hardware.triggers[1].message: expected a non-empty string (required), found nothing',
    'hardware.sensorTriggers[0]: expected above, below or both, found neither',
    'hardware.sensorTriggers[1].bus: expected an integer (required), found nothing',
    'hardware.sensorTriggers[1].below: expected a number not above "above" (1), found number 2',
    'hardware.sensorTriggers[1].session: expected a non-empty string (required unless owner.notify is set), found nothing',
    'hardware.sensorTriggers[1].message: expected a non-empty string (required), found nothing',
  ]);
});

t.test('notify triggers need a text and somebody to tell; owner.notify stands in for a session', async (t) => {
  const lines = [{ name: 'door', line: 'GPIO27', direction: 'input', bias: 'pull-up' }];
  const without = config({
    hardware: {
      lines,
      triggers: [{ line: 'door', action: 'notify' }, { line: 'door', action: 'notify', text: 'door {value}', session: 'home' }, { line: 'door', message: 'the door moved' }],
    },
  });
  t.same(formatIssues(boardConfigIssues(without, registry, pi4)).split('\n'), [
    'hardware.triggers[0].text: expected the text to send (required with action notify), found nothing',
    'hardware.triggers[0].session: expected a chat to send to: a CHANNEL:CHAT session such as telegram:12345, or owner.notify set (pinclaw onboard learns it), found nothing',
    'hardware.triggers[1].session: expected a chat to send to: a CHANNEL:CHAT session such as telegram:12345, or owner.notify set (pinclaw onboard learns it), found string "home"',
    'hardware.triggers[2].session: expected a non-empty string (required unless owner.notify is set), found nothing',
  ]);
  const withOwner = config({
    owner: { notify: 'telegram:42' },
    hardware: { lines, triggers: [{ line: 'door', action: 'notify', text: 'door {value}' }, { line: 'door', message: 'the door moved' }, { line: 'door', action: 'notify', text: 'x', session: 'telegram:7' }] },
  });
  t.same(boardConfigIssues(withOwner, registry, pi4), [], 'with owner.notify, neither needs a session');
  t.same(boardConfigIssues(config({ hardware: { lines, triggers: [{ line: 'door', action: 'notify', text: 'x', session: 'telegram:7' }] } }), registry, pi4), [], 'a chat session is somebody to tell');
  t.match(validateConfig({ hardware: { triggers: [{ line: 'door', action: 'shout' }] } }).errors, [{ path: 'hardware.triggers[0].action' }], 'the action is one of turn, notify');
  // The same for an I2C threshold.
  const i2c = { bus: 1, address: 0x48, register: 0, above: 30 };
  t.same(formatIssues(boardConfigIssues(config({ hardware: { sensorTriggers: [{ ...i2c, action: 'notify' }, { ...i2c, action: 'notify', text: 'hot', session: 'home' }] } }), registry, pi4)).split('\n'), [
    'hardware.sensorTriggers[0].text: expected the text to send (required with action notify), found nothing',
    'hardware.sensorTriggers[0].session: expected a chat to send to: a CHANNEL:CHAT session such as telegram:12345, or owner.notify set (pinclaw onboard learns it), found nothing',
    'hardware.sensorTriggers[1].session: expected a chat to send to: a CHANNEL:CHAT session such as telegram:12345, or owner.notify set (pinclaw onboard learns it), found string "home"',
  ]);
  t.same(boardConfigIssues(config({ owner: { notify: 'telegram:42' }, hardware: { sensorTriggers: [{ ...i2c, action: 'notify', text: '{value}' }] } }), registry, pi4), [], 'owner.notify is somebody to tell');
});

t.test('checkBoardConfig: the ids include the user\'s own, errors name the config file', async (t) => {
  const home = tempDir();
  const paths = resolvePaths({ home }, {});
  const empty = { proc: join(home, 'none'), sys: join(home, 'none'), dev: join(home, 'none') };
  const c = config({ board: { profile: 'my-pi' }, hardware: { lines: [{ name: 'relay', line: 'GPIO17', direction: 'output' }] } });
  t.throws(() => checkBoardConfig(c, paths, empty), new ConfigError(`${paths.config}: board.profile: expected a board profile id (pinclaw board list): rpi-3b, rpi-3b-plus, rpi-4b, rpi-5, rpi-zero-2-w, found string "my-pi"`));
  mkdirSync(join(home, 'boards'));
  const mine = { ...pi4, id: 'my-pi', name: 'My Pi' };
  writeFileSync(join(home, 'boards', 'my-pi.json'), JSON.stringify(mine));
  t.doesNotThrow(() => checkBoardConfig(c, paths, empty), 'a user profile is a known id');
  const wrongLine = config({ board: { profile: 'my-pi' }, hardware: { lines: [{ name: 'relay', line: 'GPIO177' }] } });
  t.throws(() => checkBoardConfig(wrongLine, paths, empty), { message: `${paths.config}: hardware.lines[0].line: expected a line of my-pi (pinclaw board show my-pi), found string "GPIO177" (did you mean 'GPIO17'?)` });
});
