// The hardware runtime's lines, boards and sensors as Home Assistant entities (entities.ts). Part
// of the lazy `mqtt` chunk: the hardware runtime hands over its parts (HardwareSources), and only a
// gateway with a broker turns them into entities.
import type { PinclawConfig } from '../config/schema.js';
import type { GpioService } from '../hardware/gpio/service.js';
import type { ManagedDevice } from '../hardware/mcu/devices.js';
import type { McuEvent } from '../hardware/mcu/messages.js';
import { resolvePin } from '../hardware/mcu/pins.js';
import type { SensorReader } from '../hardware/sensors/reader.js';
import { log } from '../log.js';
import type { HaEntities, HaLine, Level } from './entities.js';

/** What the hardware runtime (src/setup/hardware.ts) has that Home Assistant can show. */
export interface HardwareSources {
  config: PinclawConfig;
  gpio?: GpioService;
  /** the board profile's id */
  board?: string;
  devices: readonly ManagedDevice[];
  sensors?: SensorReader;
  /** listeners of the boards' pin events and hellos, shared with the triggers */
  mcuEvents: Set<(device: string, e: McuEvent) => void>;
  mcuHellos: Set<(device: string) => void>;
}

/**
 * What Home Assistant sees of this machine's hardware: every named line that can be reached (on the
 * GPIO chip, or on a connected board), the boards of hardware.devices and the sensors. Values are
 * logical (1 = active) on both kinds of line: the GPIO service hands activeLow to the kernel, and
 * on a board, where mcu_call writes levels, activeLow is applied here both ways.
 */
export function haEntitiesOf(o: HardwareSources): HaEntities {
  const config = o.config;
  const lines: HaLine[] = [];
  for (const l of config.hardware.lines) {
    if (!l.name || !l.line) continue;
    const name = l.name;
    const direction = l.direction ?? 'input';
    const flip = (v: Level): Level => (l.activeLow ? ((v ^ 1) as Level) : v);
    const m = /^([^:]+):(.+)$/.exec(l.line);
    const dev = m ? o.devices.find((d) => d.name === m[1] && d.kind === 'mcu') : undefined;
    if (dev && m) {
      const pinSpec = m[2]!;
      const pinOf = (command: 'gpio_read' | 'watch') => resolvePin(dev.name, pinSpec, command, dev.profile(), dev.hello()).pin;
      lines.push({
        name,
        direction,
        target: l.line,
        device: dev.name,
        async read() {
          const client = dev.client();
          if (!client) throw new Error(`${dev.name} (${dev.port}) is not connected: ${dev.state()}`);
          return flip(await client.gpioRead(pinOf('gpio_read')));
        },
        ...(direction === 'input'
          ? {
              // The firmware is asked to report the pin's edges after every hello (a board that reset
              // forgot); a trigger on the same pin asks for the same, and neither turns it off.
              watch(onChange: (v: Level) => void) {
                let pin: number | undefined;
                const arm = () => {
                  const client = dev.client();
                  if (!client) return;
                  try {
                    pin = pinOf('watch');
                  } catch (err) {
                    log.warn(`home assistant: ${name}: ${(err as Error).message}`);
                    return;
                  }
                  client.watch(pin, 'both').catch((err: unknown) => log.warn(`home assistant: ${name}: the firmware did not take the watch: ${(err as Error).message}`));
                };
                const onHello = (d: string) => d === dev.name && arm();
                const onEvent = (d: string, e: McuEvent) => {
                  if (d === dev.name && e.kind === 'pin' && e.pin === pin) onChange(flip(e.value));
                };
                o.mcuHellos.add(onHello);
                o.mcuEvents.add(onEvent);
                arm();
                return () => {
                  o.mcuHellos.delete(onHello);
                  o.mcuEvents.delete(onEvent);
                };
              },
            }
          : { setCall: (v: Level) => ({ name: 'mcu_call', input: { device: dev.name, command: 'gpio_write', args: { pin: pinSpec, value: flip(v) } } }) }),
      });
      continue;
    }
    const gpio = o.gpio;
    // A line of a GPIO chip this machine does not have cannot be shown: nothing could read it.
    if (!gpio || (m && config.hardware.devices.some((d) => d.name === m[1]))) continue;
    lines.push({
      name,
      direction,
      target: l.line,
      read: async () => gpio.read(name).value,
      ...(direction === 'input'
        ? {
            watch(onChange: (v: Level) => void) {
              const w = gpio.watchEdges(name, 'both', (err, events) => {
                if (err) return log.warn(`home assistant: watching ${name}: ${err.message}`);
                const last = events[events.length - 1];
                if (last) onChange(last.edge === 'rising' ? 1 : 0);
              });
              return () => w.close();
            },
          }
        : { setCall: (v: Level) => ({ name: 'gpio_write', input: { line: name, value: v } }) }),
    });
  }
  const sensors = o.sensors;
  return {
    lines,
    devices: o.devices.filter((d) => d.kind === 'mcu').map((d) => ({ name: d.name, connected: () => d.client() !== undefined })),
    sensors: config.hardware.sensors
      .filter((s) => s.name && sensors)
      .map((s) => {
        const device = s.line !== undefined ? /^([^:]+):/.exec(s.line)?.[1] : undefined;
        return {
          name: s.name!,
          ...(s.unit ? { unit: s.unit } : {}),
          ...(s.deviceClass ? { deviceClass: s.deviceClass } : {}),
          ...(s.intervalMs !== undefined ? { intervalMs: s.intervalMs } : {}),
          ...(device ? { device } : {}),
          read: async () => (await sensors!.read(s.name!)).value,
        };
      }),
    ...(o.board ? { board: o.board } : {}),
  };
}

