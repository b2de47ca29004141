// An MCU board's pins as the protocol numbers them, named as its board profile names them ("D13",
// "A0", "PA5"; the profile's line offset is the protocol's pin number), with the profile's rules:
// a pin the profile reserves always (the UART that links the board to pinclaw) is refused with the
// reason, and a command needs the capability it uses.
import type { BoardProfile, Capability } from '../boards/schema.js';
import type { Command, HelloInfo } from './messages.js';

export class McuPinError extends Error {}

/** The profile capability a command needs on its pin, if any. */
const NEEDS: Partial<Record<Command, Capability>> = {
  gpio_read: 'input',
  gpio_write: 'output',
  adc_read: 'adc',
  pwm_write: 'pwm',
  watch: 'edge',
  adc_watch: 'adc',
};

export interface ResolvedPin {
  pin: number;
  /** "D13 (pin 13)" */
  display: string;
}

export function resolvePin(device: string, spec: string | number, command: Command, profile: BoardProfile | undefined, hello: HelloInfo | undefined): ResolvedPin {
  let pin: number | undefined;
  let name: string | undefined;
  if (typeof spec === 'number') {
    pin = spec;
    name = profile?.gpio.lines.find((l) => l.offset === spec)?.name;
  } else {
    const line = profile?.gpio.lines.find((l) => l.name === spec || l.aliases?.includes(spec));
    if (line) {
      pin = line.offset;
      name = line.name;
    } else if (/^\d+$/.test(spec)) {
      pin = Number(spec);
      name = profile?.gpio.lines.find((l) => l.offset === pin)?.name;
    }
  }
  if (pin === undefined || pin > 255) {
    const names = profile ? profile.gpio.lines.map((l) => l.name).join(', ') : 'pin numbers';
    throw new McuPinError(`${device}: no pin '${spec}'${profile ? ` on ${profile.id}` : ''} (pins: ${names})`);
  }
  const display = name ? `${name} (pin ${pin})` : `pin ${pin}`;
  if (hello && !hello.pins.some((p) => p.pin === pin)) throw new McuPinError(`${device}: the firmware has no ${display} (it reports ${hello.pins.length} pins)`);
  if (profile) {
    const reserved = profile.reserved.find((r) => r.when === 'always' && name !== undefined && r.lines.includes(name));
    if (reserved && command !== 'gpio_read' && command !== 'adc_read') throw new McuPinError(`${device}: ${command} on ${display} refused: reserved on ${profile.id}: ${reserved.reason}`);
    const need = NEEDS[command];
    const line = profile.gpio.lines.find((l) => l.offset === pin);
    if (need && line && !line.capabilities.includes(need)) throw new McuPinError(`${device}: ${command} on ${display} refused: ${profile.id} says this pin has no ${need} (it has: ${line.capabilities.join(', ')})`);
  }
  return { pin, display };
}
