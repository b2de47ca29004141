// A GPIO chip in memory behind the GpioBackend interface: one chip 'pinctrl-bcm2835' at
// /dev/gpiochip0 with 54 lines named as the raspi3b's kernel names them. For tests of what sits
// above the backend (the service, the tools, the dashboard) on machines without a chip; the real
// backends (uAPI v2 and sysfs) are tested against the kernel in test/gpio-vm.test.ts. The same
// chip as test/gpio.test.ts's own.
import { GpioError } from '../../src/hardware/gpio/errors.js';
import type { GpioBackend, Level, LineConfig, LineInfo } from '../../src/hardware/gpio/types.js';

interface FakeLine {
  name: string;
  value: Level;
  config?: LineConfig;
  consumer: string;
}

export function fakeGpioBackend() {
  const lines: FakeLine[] = Array.from({ length: 54 }, (_, i) => ({ name: i === 14 ? 'TXD1' : `GPIO${i}`, value: 0, consumer: '' }));
  const backend: GpioBackend = {
    name: 'native',
    chips: () => ['/dev/gpiochip0'],
    chipInfo: (path) => {
      if (path !== '/dev/gpiochip0') throw new GpioError(`${path} does not exist`, { code: 'ENOENT', device: path });
      return { name: 'gpiochip0', label: 'pinctrl-bcm2835', lines: 54 };
    },
    lineInfo: (_path, offset): LineInfo => {
      const l = lines[offset]!;
      return { offset, name: l.name, consumer: l.consumer, used: l.consumer !== '', direction: l.config?.direction === 'output' ? 'output' : 'input', activeLow: false, bias: 'as-is', drive: 'push-pull', edge: 'none', debounceUs: 0 };
    },
    request(_path, offset, config, consumer, label) {
      const l = lines[offset]!;
      if (l.consumer) throw new GpioError(`line ${label} is busy: held by '${l.consumer}'`, { code: 'EBUSY', device: label ?? '' });
      l.consumer = consumer;
      const apply = (c: LineConfig) => {
        l.config = c;
        if (c.direction === 'output' && c.initial !== undefined) l.value = (c.initial ^ (c.activeLow ? 1 : 0)) as Level;
      };
      apply(config);
      return {
        read: () => (l.value ^ (l.config?.activeLow ? 1 : 0)) as Level,
        write: (v) => {
          l.value = (v ^ (l.config?.activeLow ? 1 : 0)) as Level;
        },
        reconfigure: apply,
        watch: () => {},
        release: () => {
          l.consumer = '';
        },
      };
    },
  };
  return { backend, lines };
}
