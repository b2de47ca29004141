// A fake device tree and pinctrl debugfs under a fake /proc and /sys, laid out as a Raspberry Pi's
// kernel shows them (seen in the raspi3b VM): /proc/device-tree/<node>/<property> files holding
// big-endian cells or NUL-terminated strings, and /sys/kernel/debug/pinctrl/<dev>-<label>/{pins,
// pinmux-pins} in the bcm2835 driver's words.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HostRoots } from '../../src/hardware/boards/host-roots.js';

/** A property: a string (NUL-terminated), several strings, cells, or true for an empty one. */
export type DtValue = string | string[] | number[] | true;

function encode(v: DtValue): Buffer {
  if (v === true) return Buffer.alloc(0);
  if (typeof v === 'string') return Buffer.from(`${v}\0`, 'latin1');
  if (v.every((x) => typeof x === 'string')) return Buffer.from((v as string[]).map((x) => `${x}\0`).join(''), 'latin1');
  const b = Buffer.alloc(v.length * 4);
  (v as number[]).forEach((x, i) => b.writeUInt32BE(x, i * 4));
  return b;
}

/** Node path ("soc/serial@7e215040") → its properties. */
export function writeDeviceTree(roots: HostRoots, nodes: Record<string, Record<string, DtValue>>): void {
  for (const [path, props] of Object.entries(nodes)) {
    const dir = join(roots.proc, 'device-tree', path);
    mkdirSync(dir, { recursive: true });
    for (const [k, v] of Object.entries(props)) writeFileSync(join(dir, k), encode(v));
  }
}

export interface PiDevice {
  /** node path, e.g. "soc/serial@7e215040" */
  node: string;
  /** the pin groups it takes: offsets on the GPIO controller */
  groups: number[][];
  enabled: boolean;
}

/**
 * A Pi's device tree: the GPIO controller with one pin group per device's group (Broadcom's
 * brcm,pins binding, or RP1's pins = "gpioN" strings), and each device pointing at its groups.
 */
export function writePiDeviceTree(roots: HostRoots, devices: PiDevice[], binding: 'brcm' | 'rp1' = 'brcm'): void {
  const nodes: Record<string, Record<string, DtValue>> = { gpio: { 'gpio-controller': true, phandle: [900], compatible: 'brcm,bcm2835-gpio' } };
  let ph = 1;
  devices.forEach((d, i) => {
    const phs: number[] = [];
    d.groups.forEach((g, j) => {
      const p = ph++;
      phs.push(p);
      nodes[`gpio/group${i}_${j}`] = binding === 'brcm' ? { phandle: [p], 'brcm,pins': g, 'brcm,function': [2] } : { phandle: [p], function: 'f', pins: g.map((n) => `gpio${n}`) };
    });
    nodes[d.node] = { status: d.enabled ? 'okay' : 'disabled', 'pinctrl-names': 'default', 'pinctrl-0': phs };
  });
  writeDeviceTree(roots, nodes);
}

export interface PinctrlPin {
  pin: number;
  fn: string;
  owner?: string;
}

/** pinctrl's debugfs for a chip: `pins` and `pinmux-pins` as the bcm2835 driver (6.1) writes them. */
export function writePinctrl(roots: HostRoots, label: string, pins: PinctrlPin[]): void {
  const dir = join(roots.sys, 'kernel', 'debug', 'pinctrl', `3f200000.gpio-${label}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'pins'), `registered pins: ${pins.length}\n${pins.map((p) => `pin ${p.pin} (gpio${p.pin}) 0:? function ${p.fn} in lo; irq 0 (none)`).join('\n')}\n`);
  writeFileSync(
    join(dir, 'pinmux-pins'),
    `Pinmux settings per pin\nFormat: pin (name): mux_owner gpio_owner hog?\n${pins.map((p) => `pin ${p.pin} (gpio${p.pin}): ${p.owner ? `${p.owner} (GPIO UNCLAIMED) function ${p.fn} group gpio${p.pin}` : '(MUX UNCLAIMED) (GPIO UNCLAIMED)'}`).join('\n')}\n`,
  );
}
