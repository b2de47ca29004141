// USB serial ports (ttyACM*, ttyUSB*) and the USB device behind each: /sys/class/tty/<tty>/device
// leads to the USB interface (ttyACM) or the usb-serial port (ttyUSB); walking up the resolved
// sysfs path reaches the USB device, the first directory with idVendor and idProduct.
import { readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { readText, type HostRoots } from './host-roots.js';
import { natural } from './order.js';

export interface UsbIdentity {
  vid: string;
  pid: string;
  manufacturer?: string;
  product?: string;
  serial?: string;
}

export interface UsbSerialPort {
  tty: string;
  /** /dev/ttyACM0 under the roots */
  device: string;
  /** a stable /dev/serial/by-id/... name for the same port, when udev made one */
  byId?: string;
  /** null when no USB device was found above the tty (a broken or unusual sysfs) */
  usb: UsbIdentity | null;
}

const USB_TTY = /^tty(ACM|USB)\d+$/;

function attr(dir: string, name: string): string | undefined {
  const v = readText(join(dir, name))?.trim();
  return v ? v : undefined;
}

function usbDeviceAbove(start: string, sysRoot: string): UsbIdentity | null {
  let dir = start;
  // Stop at the sysfs root: a fake tree must never be read from outside itself.
  while (dir.startsWith(sysRoot + '/') && dir !== sysRoot) {
    const vid = attr(dir, 'idVendor');
    const pid = attr(dir, 'idProduct');
    if (vid && pid) {
      const id: UsbIdentity = { vid: vid.toLowerCase(), pid: pid.toLowerCase() };
      const manufacturer = attr(dir, 'manufacturer');
      const product = attr(dir, 'product');
      const serial = attr(dir, 'serial');
      if (manufacturer) id.manufacturer = manufacturer;
      if (product) id.product = product;
      if (serial) id.serial = serial;
      return id;
    }
    dir = dirname(dir);
  }
  return null;
}

/** tty name → its /dev/serial/by-id link. */
function byIdLinks(devRoot: string): Map<string, string> {
  const dir = join(devRoot, 'serial', 'by-id');
  const out = new Map<string, string>();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    try {
      const target = readlinkSync(join(dir, name));
      out.set(resolve(dir, target).split('/').pop()!, join(dir, name));
    } catch {
      // not a link: udev did not make it, ignore
    }
  }
  return out;
}

export function usbSerialPorts(roots: HostRoots): UsbSerialPort[] {
  const classDir = join(roots.sys, 'class', 'tty');
  let names: string[];
  try {
    names = readdirSync(classDir).filter((n) => USB_TTY.test(n));
  } catch {
    return [];
  }
  let sysRoot: string;
  try {
    sysRoot = realpathSync(roots.sys);
  } catch {
    return [];
  }
  const links = byIdLinks(roots.dev);
  // ttyACM0 before ttyACM10 before ttyUSB0
  names.sort(natural);
  return names.map((tty) => {
    let usb: UsbIdentity | null = null;
    try {
      usb = usbDeviceAbove(realpathSync(join(classDir, tty, 'device')), sysRoot);
    } catch {
      usb = null;
    }
    const port: UsbSerialPort = { tty, device: join(roots.dev, tty), usb };
    const byId = links.get(tty);
    if (byId) port.byId = byId;
    return port;
  });
}
