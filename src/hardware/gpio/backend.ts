// Which GPIO backend pinclaw uses: the addon's uAPI v2 ioctls, unless the addon lacks GPIO or the
// kernel does not speak uAPI v2 (ENOTTY from the chip), then the sysfs interface.
// PINCLAW_GPIO_BACKEND=native|sysfs pins one (tests compare the two on the same lines).
import { gpioAddon, listChips, nativeBackend, type GpioAddon } from './native.js';
import { sysfsBackend } from './sysfs.js';
import type { GpioBackend } from './types.js';

export interface GpioChoice {
  backend: GpioBackend;
  reason: string;
}

export function chooseGpioBackend(opts: { env?: NodeJS.ProcessEnv; addon?: GpioAddon | null; dev?: string; sys?: string } = {}): GpioChoice {
  const env = opts.env ?? process.env;
  const wanted = env.PINCLAW_GPIO_BACKEND || 'auto';
  if (!['auto', 'native', 'sysfs'].includes(wanted)) throw new Error(`PINCLAW_GPIO_BACKEND must be auto, native or sysfs, got '${wanted}'`);
  const sysfs = () => sysfsBackend({ sys: opts.sys, dev: opts.dev });
  if (wanted === 'sysfs') return { backend: sysfs(), reason: 'sysfs chosen by PINCLAW_GPIO_BACKEND' };
  const addon = opts.addon === undefined ? gpioAddon() : opts.addon;
  if (!addon) {
    if (wanted === 'native') throw new Error('PINCLAW_GPIO_BACKEND=native, but the addon has no GPIO (or does not load)');
    return { backend: sysfs(), reason: 'the addon has no GPIO; using sysfs' };
  }
  const native = nativeBackend(addon, opts.dev);
  if (wanted === 'native') return { backend: native, reason: 'native chosen by PINCLAW_GPIO_BACKEND' };
  const first = listChips(opts.dev)[0];
  if (first) {
    try {
      addon.gpioChipInfo(first);
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOTTY') return { backend: sysfs(), reason: `${first} has no uAPI v2 (ENOTTY); using sysfs` };
    }
  }
  return { backend: native, reason: 'the addon speaks uAPI v2' };
}
