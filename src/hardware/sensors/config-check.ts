// What the schema cannot say about hardware.sensors: a unique name, exactly one source (an I2C
// register: bus, address and register together; or an ADC pin of a hardware.devices board), and a
// device class Home Assistant can take for a number. The issues read like schema issues, with the
// exact path of each.
import type { PinclawConfig } from '../../config/schema.js';
import { formatIssues, type ConfigIssue } from '../../config/validate.js';
import { ConfigError } from '../../errors.js';
import { closest } from '../../suggest.js';

type Hardware = Pick<PinclawConfig['hardware'], 'sensors' | 'devices'>;

const SENSOR_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
/** Home Assistant's device classes are lower-case words joined by _. */
const DEVICE_CLASS = /^[a-z][a-z0-9_]*$/;
/** Classes whose state is not a number: a sensor here always publishes one. */
const NOT_NUMERIC = new Set(['timestamp', 'date', 'enum']);

const str = (v: unknown) => (typeof v === 'string' ? `string ${JSON.stringify(v)}` : 'nothing');

/** The I2C fields of a sensor, present or not. */
const I2C_KEYS = ['bus', 'address', 'register'] as const;

export function sensorConfigIssues(hw: Hardware): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const names = new Map<string, number>();
  const mcus = hw.devices.filter((d) => d.kind === 'mcu' && d.name).map((d) => d.name!);
  hw.sensors.forEach((s, i) => {
    const at = `hardware.sensors[${i}]`;
    if (s.name === undefined || s.name.trim() === '') issues.push({ path: `${at}.name`, expected: 'a non-empty string (required)', found: str(s.name) });
    else if (!SENSOR_NAME.test(s.name)) issues.push({ path: `${at}.name`, expected: 'a letter, then letters, digits, _ or - (at most 64)', found: str(s.name) });
    else if (names.has(s.name)) issues.push({ path: `${at}.name`, expected: 'a name no other hardware.sensors entry has', found: `${str(s.name)}, also hardware.sensors[${names.get(s.name)}]` });
    else names.set(s.name, i);

    const i2cGiven = I2C_KEYS.filter((k) => s[k] !== undefined);
    const lineGiven = s.line !== undefined;
    if (lineGiven && i2cGiven.length) {
      issues.push({ path: at, expected: 'one source: line (an ADC pin) or bus, address and register (an I2C register)', found: `both (line and ${i2cGiven.join(', ')})` });
    } else if (!lineGiven && !i2cGiven.length) {
      issues.push({ path: at, expected: 'a source: line (an ADC pin, "bench:A0") or bus, address and register (an I2C register)', found: 'neither' });
    } else if (!lineGiven) {
      for (const k of I2C_KEYS) if (s[k] === undefined) issues.push({ path: `${at}.${k}`, expected: `an integer (required with ${i2cGiven.join(', ')})`, found: 'nothing' });
    } else {
      const m = /^([^:]+):(.+)$/.exec(s.line!);
      if (!m) {
        issues.push({ path: `${at}.line`, expected: 'device:pin, an ADC pin of a hardware.devices board (bench:A0)', found: str(s.line) });
      } else if (!mcus.includes(m[1]!)) {
        const near = closest(m[1]!, mcus);
        const raw = hw.devices.some((d) => d.name === m[1] && d.kind === 'raw');
        issues.push({
          path: `${at}.line`,
          expected: mcus.length ? `a pin of an mcu board of hardware.devices: ${mcus.join(', ')}` : 'a pin of an mcu board of hardware.devices (there are none)',
          found: raw ? `${str(s.line)}, a raw device (no ADC through pinclaw's protocol)` : str(s.line),
          ...(near && !raw ? { hint: `did you mean '${near}:${m[2]}'?` } : {}),
        });
      }
    }
    if (s.deviceClass !== undefined) {
      if (!DEVICE_CLASS.test(s.deviceClass)) issues.push({ path: `${at}.deviceClass`, expected: "a Home Assistant sensor device class: lower-case words joined by _ (temperature, humidity, voltage)", found: str(s.deviceClass) });
      else if (NOT_NUMERIC.has(s.deviceClass)) issues.push({ path: `${at}.deviceClass`, expected: 'a device class of a number (temperature, humidity, voltage, ...)', found: `${str(s.deviceClass)}, whose state is not a number` });
    }
    if (s.scale === 0) issues.push({ path: `${at}.scale`, expected: 'a number other than 0 (0 makes every reading the offset)', found: 'number 0' });
  });
  return issues;
}

/** Throws a ConfigError listing every issue, each prefixed with the config file (exit 78). */
export function checkSensorConfig(hw: Hardware, configPath?: string): void {
  const issues = sensorConfigIssues(hw);
  if (issues.length) throw new ConfigError(formatIssues(issues, configPath));
}
