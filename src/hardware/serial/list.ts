// The serial ports this machine has: USB ones (ttyACM*, ttyUSB*) with the USB id behind them, and
// UARTs (ttyAMA* on a Pi, ttyS*), each with the stable names udev and the Pi's firmware give it
// (/dev/serial/by-id/..., /dev/serial0). A PC has 4-32 ttyS nodes whatever the hardware; those
// whose sysfs "type" is 0 (PORT_UNKNOWN: no UART answered at that address) are left out.
import { readdirSync, readlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { HOST_ROOTS, readText, type HostRoots } from '../boards/host-roots.js';
import { natural } from '../boards/order.js';
import { usbSerialPorts, type UsbIdentity } from '../boards/usb-serial.js';

export interface SerialPortInfo {
  /** /dev/ttyACM0 (under the roots) */
  path: string;
  tty: string;
  /** usb: ttyACM/ttyUSB, a USB device; uart: ttyAMA/ttyS, on the board itself */
  kind: 'usb' | 'uart';
  /** Other names of the same port: /dev/serial/by-id/... first, then /dev/serialN. */
  aliases: string[];
  /** The USB device behind a usb port; null for a uart or when sysfs does not say. */
  usb: UsbIdentity | null;
}

const PORT = /^tty(ACM|USB|AMA|S)\d+$/;

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** tty name → the links in `dir` that point at it. */
function linksTo(dir: string, names: string[], into: Map<string, string[]>): void {
  for (const name of names) {
    try {
      const tty = resolve(dir, readlinkSync(join(dir, name))).split('/').pop()!;
      into.set(tty, [...(into.get(tty) ?? []), join(dir, name)]);
    } catch {
      // not a symlink
    }
  }
}

/** A ttyS node the kernel registered without a UART behind it. */
function phantomUart(roots: HostRoots, tty: string): boolean {
  return readText(join(roots.sys, 'class', 'tty', tty, 'type'))?.trim() === '0';
}

export function listSerialPorts(roots: HostRoots = HOST_ROOTS): SerialPortInfo[] {
  const ttys = safeReaddir(roots.dev)
    .filter((n) => PORT.test(n))
    .filter((n) => !(n.startsWith('ttyS') && phantomUart(roots, n)))
    .sort(natural);
  if (!ttys.length) return [];
  const aliases = new Map<string, string[]>();
  const byIdDir = join(roots.dev, 'serial', 'by-id');
  linksTo(byIdDir, safeReaddir(byIdDir).sort(natural), aliases);
  linksTo(roots.dev, safeReaddir(roots.dev).filter((n) => /^serial\d+$/.test(n)).sort(natural), aliases);
  const usb = new Map(usbSerialPorts(roots).map((p) => [p.tty, p.usb]));
  return ttys.map((tty) => ({
    path: join(roots.dev, tty),
    tty,
    kind: /^tty(ACM|USB)/.test(tty) ? 'usb' : 'uart',
    aliases: aliases.get(tty) ?? [],
    usb: usb.get(tty) ?? null,
  }));
}

/** "/dev/ttyACM0 (USB 2341:0043 Arduino Uno, /dev/serial/by-id/usb-Arduino...), /dev/ttyS0", or "none". */
export function describePorts(ports: readonly SerialPortInfo[]): string {
  if (!ports.length) return 'none';
  return ports
    .map((p) => {
      const bits: string[] = [];
      if (p.usb) bits.push(`USB ${p.usb.vid}:${p.usb.pid}${p.usb.product ? ` ${p.usb.product}` : ''}`);
      bits.push(...p.aliases);
      return bits.length ? `${p.path} (${bits.join(', ')})` : p.path;
    })
    .join(', ');
}
