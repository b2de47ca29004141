// The I2C buses of this machine: the /dev/i2c-N files (i2c-dev must be loaded for them to exist),
// each with its adapter's name from /sys/class/i2c-dev/i2c-N/name. Roots are parameters so the tests
// can point them at a fake tree.
import { readdirSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { I2cBusInfo } from './types.js';

export interface I2cRoots {
  /** Where the i2c-N device files are; default /dev. */
  dev?: string;
  /** Where i2c-dev's class directories are; default /sys/class/i2c-dev. */
  sys?: string;
}

export const DEFAULT_DEV = '/dev';
export const DEFAULT_SYS = '/sys/class/i2c-dev';

function busNumberOf(name: string): number | null {
  const m = /^i2c-(\d{1,9})$/.exec(name);
  return m ? Number(m[1]) : null;
}

/** The N of every i2c-N entry in a directory, ascending; none if it cannot be read. Synchronous: error messages use it. */
export function busNumbers(dir: string = DEFAULT_DEV): number[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((n) => busNumberOf(n) ?? []).sort((a, b) => a - b);
}

export async function listBuses(roots: I2cRoots = {}): Promise<I2cBusInfo[]> {
  const dev = roots.dev ?? DEFAULT_DEV;
  const sys = roots.sys ?? DEFAULT_SYS;
  let names: string[];
  try {
    names = await readdir(dev);
  } catch {
    return [];
  }
  const numbers = names.flatMap((n) => busNumberOf(n) ?? []).sort((a, b) => a - b);
  return Promise.all(
    numbers.map(async (bus) => {
      let name: string | null = null;
      try {
        name = (await readFile(join(sys, `i2c-${bus}`, 'name'), 'utf8')).trim() || null;
      } catch {
        // i2c-dev makes the sysfs entry with the device file; a missing one only costs the name
      }
      return { bus, path: join(dev, `i2c-${bus}`), name };
    }),
  );
}

/** The adapter name of one bus, or null. */
export async function adapterName(bus: number, roots: I2cRoots = {}): Promise<string | null> {
  try {
    return (await readFile(join(roots.sys ?? DEFAULT_SYS, `i2c-${bus}`, 'name'), 'utf8')).trim() || null;
  } catch {
    return null;
  }
}
