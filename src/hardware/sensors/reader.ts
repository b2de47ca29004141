// The named sensors of hardware.sensors: one reading is an I2C register (length bytes, big-endian,
// optionally two's complement) or an ADC pin of a board on a serial port, turned into a value with
// scale and offset. sensor_read and Home Assistant both read through here, so both show the same
// number for the same raw reading.
import type { PinclawConfig } from '../../config/schema.js';
import { errorMessage } from '../../errors.js';
import type { I2cBackend } from '../i2c/types.js';
import { resolvePin } from '../mcu/pins.js';
import type { McuDeviceHandle } from '../mcu/tools.js';

export type SensorConfig = PinclawConfig['hardware']['sensors'][number];

export interface SensorReading {
  name: string;
  /** raw × scale + offset */
  value: number;
  /** the number as read (after two's complement for a signed register) */
  raw: number;
  unit?: string;
  /** where it was read, for people: "I2C bus 1 address 0x48 register 0x00 (2 bytes)", "bench A0 (pin 14)" */
  source: string;
}

export interface SensorReaderDeps {
  sensors: readonly SensorConfig[];
  /** The I2C backend; absent when this machine has no I2C bus (an I2C sensor then says so). */
  i2c?: () => I2cBackend;
  /** the boards of hardware.devices */
  devices?: () => readonly McuDeviceHandle[];
}

export interface SensorReader {
  names(): string[];
  get(name: string): SensorConfig | undefined;
  read(name: string): Promise<SensorReading>;
}

/** An Arduino resets when its port opens: a read right after start waits for the hello this long at most. */
const READY_WAIT_MS = 4000;

const hex = (n: number) => `0x${n.toString(16).padStart(2, '0')}`;

/** Bytes as one big-endian number; two's complement of the whole width when signed. */
export function decodeRegister(bytes: Uint8Array, signed: boolean): number {
  let v = 0;
  for (const b of bytes) v = v * 256 + b;
  const full = 2 ** (8 * bytes.length);
  return signed && v >= full / 2 ? v - full : v;
}

/** raw × scale + offset, without the float noise of the multiplication (0.1 × 3 is 0.3, not 0.30000000000000004). */
export function scaled(raw: number, scale: number, offset: number): number {
  return Number((raw * scale + offset).toPrecision(12));
}

/** Where a sensor is read from, in words. */
export function sensorSource(s: SensorConfig): string {
  if (s.line !== undefined) return `${s.line.replace(':', ' ')} (ADC)`;
  return `I2C bus ${s.bus} address ${hex(s.address ?? 0)} register ${hex(s.register ?? 0)} (${s.length} byte${s.length === 1 ? '' : 's'}${s.signed ? ', signed' : ''})`;
}

export function createSensorReader(d: SensorReaderDeps): SensorReader {
  const byName = new Map(d.sensors.filter((s) => s.name).map((s) => [s.name!, s]));

  async function readRaw(s: SensorConfig): Promise<{ raw: number; source: string }> {
    if (s.line !== undefined) {
      const m = /^([^:]+):(.+)$/.exec(s.line);
      if (!m) throw new Error(`line ${JSON.stringify(s.line)} is not device:pin`);
      const all = d.devices?.() ?? [];
      const dev = all.find((x) => x.name === m[1]);
      if (!dev) throw new Error(`no board '${m[1]}' (hardware.devices: ${all.map((x) => x.name).join(', ') || 'none'})`);
      await dev.whenReady?.(READY_WAIT_MS);
      const client = dev.client();
      if (!client) throw new Error(`${dev.name} (${dev.port}) is not connected: ${dev.state()}`);
      const p = resolvePin(dev.name, m[2]!, 'adc_read', dev.profile(), dev.hello());
      return { raw: await client.adcRead(p.pin), source: `${dev.name} ${p.display}, ADC` };
    }
    if (!d.i2c) throw new Error(`no I2C bus on this machine (/dev/i2c-${s.bus} is missing; on a Raspberry Pi, dtparam=i2c_arm=on and the i2c-dev module)`);
    const bytes = await d.i2c().read(s.bus!, s.address!, { register: s.register!, length: s.length });
    return { raw: decodeRegister(bytes, s.signed), source: sensorSource(s) };
  }

  return {
    names: () => [...byName.keys()],
    get: (name) => byName.get(name),
    async read(name) {
      const s = byName.get(name);
      if (!s) throw new Error(`no sensor '${name}' (hardware.sensors: ${[...byName.keys()].join(', ') || 'none'})`);
      let r: { raw: number; source: string };
      try {
        r = await readRaw(s);
      } catch (err) {
        throw new Error(`sensor ${name} (${sensorSource(s)}): ${errorMessage(err)}`, { cause: err });
      }
      return { name, value: scaled(r.raw, s.scale, s.offset), raw: r.raw, ...(s.unit ? { unit: s.unit } : {}), source: r.source };
    },
  };
}
