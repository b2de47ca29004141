// hardware.sensors: the checks the schema cannot make (each naming the exact path), the reading
// (register decoding, scale and offset, errors naming the sensor and where it is read), sensor_read,
// and a real process reading an ADC pin through the firmware model over socket://. I2C sensors are
// read here through a stand-in behind the I2cBackend interface (there is no I2C bus in this
// container; the backends themselves are tested against i2c-stub in test/i2c-vm.test.ts).
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatIssues, validateConfig, type PinclawConfig } from '../src/config/index.js';
import { ConfigError } from '../src/errors.js';
import type { I2cBackend, I2cReadOptions } from '../src/hardware/i2c/types.js';
import { checkSensorConfig, sensorConfigIssues } from '../src/hardware/sensors/config-check.js';
import { createSensorReader, decodeRegister, scaled } from '../src/hardware/sensors/reader.js';
import { sensorReadTool } from '../src/hardware/sensors/tool.js';
import { fakeMcuOverTcp } from './support/fake-mcu.js';
import { cleanEnv, runPinclawAsync, tempDir } from './support/proc.js';

function config(raw: unknown): PinclawConfig {
  const r = validateConfig(raw);
  if (!r.config) throw new Error(formatIssues(r.errors));
  return r.config;
}

const issuesOf = (hardware: unknown) => formatIssues(sensorConfigIssues(config({ hardware }).hardware)).split('\n');

t.test('the schema: defaults of a sensor, and what it refuses itself', async (t) => {
  const c = config({ hardware: { sensors: [{ name: 'shed', bus: 1, address: 0x48, register: 0 }] } });
  t.match(c.hardware.sensors[0], { name: 'shed', length: 1, signed: false, scale: 1, offset: 0 });
  t.notOk('intervalMs' in c.hardware.sensors[0]!, 'no interval unless given: Home Assistant then uses its own');
  const r = validateConfig({ hardware: { sensors: [{ name: 'x', bus: 1, address: 0x80, register: 0, length: 5, intervalMs: 10 }] } });
  const text = formatIssues(r.errors);
  t.match(text, /hardware\.sensors\[0\]\.address/);
  t.match(text, /hardware\.sensors\[0\]\.length/);
  t.match(text, /hardware\.sensors\[0\]\.intervalMs/);
});

t.test('valid sensors have no issues', async (t) => {
  t.same(
    sensorConfigIssues(config({
      hardware: {
        devices: [{ name: 'bench', port: 'socket://127.0.0.1:1' }],
        sensors: [
          { name: 'shed_temperature', bus: 1, address: 0x48, register: 0, length: 2, signed: true, scale: 0.00390625, unit: '°C', deviceClass: 'temperature' },
          { name: 'soil', line: 'bench:A0', scale: 0.1, unit: '%', deviceClass: 'moisture' },
        ],
      },
    }).hardware),
    [],
  );
});

t.test('each problem names its exact path', async (t) => {
  const lines = issuesOf({
    devices: [{ name: 'bench', port: 'socket://127.0.0.1:1' }, { name: 'gps', kind: 'raw', port: '/dev/ttyUSB0' }],
    sensors: [
      { bus: 1, address: 0x48, register: 0 },
      { name: '1st', line: 'bench:A0' },
      { name: 'a', line: 'bench:A0' },
      { name: 'a', line: 'bench:A1' },
      { name: 'both', line: 'bench:A0', bus: 1 },
      { name: 'neither', unit: 'V' },
      { name: 'partial', bus: 1 },
      { name: 'nocolon', line: 'A0' },
      { name: 'typo', line: 'bnech:A0' },
      { name: 'raw', line: 'gps:A0' },
      { name: 'cls', line: 'bench:A0', deviceClass: 'Temperature' },
      { name: 'ts', line: 'bench:A0', deviceClass: 'timestamp' },
      { name: 'zero', line: 'bench:A0', scale: 0 },
    ],
  });
  t.match(lines, [
    /^hardware\.sensors\[0\]\.name: expected a non-empty string \(required\)/,
    /^hardware\.sensors\[1\]\.name: expected a letter, then letters, digits, _ or -/,
    /^hardware\.sensors\[3\]\.name: expected a name no other hardware\.sensors entry has, found string "a", also hardware\.sensors\[2\]/,
    /^hardware\.sensors\[4\]: expected one source: line \(an ADC pin\) or bus, address and register \(an I2C register\), found both \(line and bus\)/,
    /^hardware\.sensors\[5\]: expected a source: line .* found neither/,
    /^hardware\.sensors\[6\]\.address: expected an integer \(required with bus\)/,
    /^hardware\.sensors\[6\]\.register: expected an integer \(required with bus\)/,
    /^hardware\.sensors\[7\]\.line: expected device:pin/,
    /^hardware\.sensors\[8\]\.line: expected a pin of an mcu board of hardware\.devices: bench, found string "bnech:A0".*did you mean 'bench:A0'\?/,
    /^hardware\.sensors\[9\]\.line: .*found string "gps:A0", a raw device/,
    /^hardware\.sensors\[10\]\.deviceClass: expected a Home Assistant sensor device class/,
    /^hardware\.sensors\[11\]\.deviceClass: expected a device class of a number .* whose state is not a number/,
    /^hardware\.sensors\[12\]\.scale: expected a number other than 0/,
  ]);
  t.equal(lines.length, 13, 'one line per problem');
  t.throws(() => checkSensorConfig(config({ hardware: { sensors: [{ name: 'x' }] } }).hardware, '/etc/pinclaw.json'), new ConfigError('/etc/pinclaw.json: hardware.sensors[0]: expected a source: line (an ADC pin, "bench:A0") or bus, address and register (an I2C register), found neither'));
});

t.test('register decoding, scale and offset', async (t) => {
  t.equal(decodeRegister(Uint8Array.from([0x12, 0x34]), false), 0x1234);
  t.equal(decodeRegister(Uint8Array.from([0xff, 0xf0]), false), 0xfff0);
  t.equal(decodeRegister(Uint8Array.from([0xff, 0xf0]), true), -16);
  t.equal(decodeRegister(Uint8Array.from([0x80]), true), -128);
  t.equal(decodeRegister(Uint8Array.from([0x7f]), true), 127);
  t.equal(decodeRegister(Uint8Array.from([1, 0, 0, 0]), false), 16777216);
  t.equal(scaled(3, 0.1, 0), 0.3, 'no float noise');
  t.equal(scaled(0x1710, 0.00390625, 0), 23.0625);
  t.equal(scaled(512, 0.1, -1.5), 49.7);
});

/** A bus behind the backend interface: what each address and register answers, and what was asked. */
function standInBus(answers: Record<string, number[]>) {
  const asked: { bus: number; address: number; options: I2cReadOptions }[] = [];
  const backend: I2cBackend = {
    kind: 'native',
    buses: async () => [{ bus: 1, path: '/dev/i2c-1', name: 'stand-in' }],
    funcs: async () => {
      throw new Error('not used');
    },
    scan: async () => ({ bus: 1, found: [], busy: [], skipped: [] }),
    async read(bus, address, options) {
      asked.push({ bus, address, options });
      const a = answers[`${bus}:${address}:${options.register}`];
      if (!a) throw new Error(`no device answered at 0x${address.toString(16)} on bus ${bus}`);
      return Uint8Array.from(a.slice(0, options.length));
    },
    write: async () => {},
  };
  return { backend, asked };
}

t.test('sensor_read over I2C (a stand-in bus): the value, its unit, the source; errors name the sensor', async (t) => {
  const c = config({
    hardware: {
      sensors: [
        { name: 'shed', bus: 1, address: 0x48, register: 0, length: 2, signed: true, scale: 0.00390625, unit: '°C', deviceClass: 'temperature' },
        { name: 'frost', bus: 1, address: 0x49, register: 0, length: 2, signed: true, scale: 0.00390625, unit: '°C' },
        { name: 'gone', bus: 1, address: 0x50, register: 3 },
      ],
    },
  });
  const bus = standInBus({ '1:72:0': [0x17, 0x10], '1:73:0': [0xfe, 0x80] });
  const reader = createSensorReader({ sensors: c.hardware.sensors, i2c: () => bus.backend });
  t.same(reader.names(), ['shed', 'frost', 'gone']);
  const tool = sensorReadTool(reader);
  t.equal(tool.name, 'sensor_read');
  t.notOk(tool.physical, 'read-only');
  t.match(tool.description, /Sensors: shed, frost, gone/);
  const ctx = { sessionKey: 's', channel: 'cli', chatId: 'local' };
  t.same(await tool.execute({ name: 'shed' }, ctx), { content: 'shed: 23.0625 °C (raw 5904, I2C bus 1 address 0x48 register 0x00 (2 bytes, signed))' });
  t.same(bus.asked[0], { bus: 1, address: 0x48, options: { register: 0, length: 2 } });
  t.same(await tool.execute({ name: 'frost' }, ctx), { content: 'frost: -1.5 °C (raw -384, I2C bus 1 address 0x49 register 0x00 (2 bytes, signed))' });
  t.same(await tool.execute({ name: 'gone' }, ctx), { content: 'sensor gone (I2C bus 1 address 0x50 register 0x03 (1 byte)): no device answered at 0x50 on bus 1', isError: true });
  t.same(await tool.execute({ name: 'nope' }, ctx), { content: "no sensor 'nope' (hardware.sensors: shed, frost, gone)", isError: true });
  const noBus = createSensorReader({ sensors: c.hardware.sensors });
  await t.rejects(noBus.read('shed'), /^sensor shed \(I2C bus 1 .*\): no I2C bus on this machine \(\/dev\/i2c-1 is missing/);
});

t.test('sensor_read of an ADC pin through a real process and the firmware model over socket://', async (t) => {
  // The model has no ADC: adc_read is answered here (pin 14 reads 512), the rest by the model.
  const asked: number[] = [];
  const { url: port } = await fakeMcuOverTcp(t, { adc: (pin) => (asked.push(pin), 512) });
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({
    hardware: {
      devices: [{ name: 'bench', port, board: 'arduino-uno' }],
      sensors: [{ name: 'soil', line: 'bench:A0', scale: 0.1, offset: -1.5, unit: '%' }, { name: 'wrong', line: 'bench:D13' }],
    },
  }));
  const env = cleanEnv({ PINCLAW_HOME: home });
  const r = await runPinclawAsync(['tool', 'run', 'sensor_read', JSON.stringify({ name: 'soil' })], { env });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /soil: 49\.7 % \(raw 512, bench A0 \(pin 14\), ADC\)/);
  t.same(asked, [14], 'the firmware was asked for pin 14 (A0)');
  // D13 has no ADC on an Uno: refused by the board profile, before the firmware is asked.
  const bad = await runPinclawAsync(['tool', 'run', 'sensor_read', JSON.stringify({ name: 'wrong' })], { env });
  t.not(bad.code, 0);
  t.match(bad.stdout + bad.stderr, /sensor wrong \(bench D13 \(ADC\)\): bench: adc_read on D13 \(pin 13\) refused: arduino-uno says this pin has no adc/);
  t.same(asked, [14]);
});

t.test('a sensor that names nothing stops a process with exit 78 and the path', async (t) => {
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ hardware: { sensors: [{ name: 'soil', line: 'bench:A0' }] } }));
  const r = await runPinclawAsync(['tool', 'run', 'sensor_read', JSON.stringify({ name: 'soil' })], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(r.code, 78, r.stderr);
  t.match(r.stderr, /hardware\.sensors\[0\]\.line: expected a pin of an mcu board of hardware\.devices \(there are none\), found string "bench:A0"/);
});
