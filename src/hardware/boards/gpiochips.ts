// The GPIO chips present: names from /dev/gpiochip* and /sys/bus/gpio/devices, labels and line
// counts from the sysfs class /sys/class/gpio/gpiochip<base>/{label,ngpio}, whose `device` link
// leads to the gpiochipN it describes. Without that class (CONFIG_GPIO_SYSFS off) the chips are
// still listed, unlabelled; the chip-info ioctl that would always work belongs to the GPIO code.
import { readdirSync, realpathSync } from 'node:fs';
import { basename, join } from 'node:path';
import { readText, type HostRoots } from './host-roots.js';
import { natural } from './order.js';

export interface GpioChipInfo {
  /** gpiochip0 */
  name: string;
  /** pinctrl-bcm2711; null when sysfs does not say */
  label: string | null;
  lines: number | null;
}

const CHIP = /^gpiochip\d+$/;

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** gpiochipN for a /sys/class/gpio entry: its device link, or a gpiochipN inside what it points at. */
function chipNameOf(classEntry: string): string | null {
  let target: string;
  try {
    target = realpathSync(join(classEntry, 'device'));
  } catch {
    return null;
  }
  if (CHIP.test(basename(target))) return basename(target);
  // Older kernels parent the class device on the controller; the gpiochipN sits below it.
  return list(target).find((n) => CHIP.test(n)) ?? null;
}

export function gpioChips(roots: HostRoots): GpioChipInfo[] {
  const names = new Set<string>([...list(roots.dev), ...list(join(roots.sys, 'bus', 'gpio', 'devices'))].filter((n) => CHIP.test(n)));
  const info = new Map<string, { label: string | null; lines: number | null }>();
  const classDir = join(roots.sys, 'class', 'gpio');
  for (const entry of list(classDir).filter((n) => CHIP.test(n))) {
    const dir = join(classDir, entry);
    const name = chipNameOf(dir);
    if (!name) continue;
    const label = readText(join(dir, 'label'))?.trim() || null;
    const n = Number(readText(join(dir, 'ngpio'))?.trim());
    info.set(name, { label, lines: Number.isInteger(n) && n > 0 ? n : null });
    names.add(name);
  }
  return [...names]
    .sort(natural)
    .map((name) => ({ name, label: info.get(name)?.label ?? null, lines: info.get(name)?.lines ?? null }));
}
