// An in-memory GPIO chip behind the GpioBackend interface, for tests of what sits above the kernel
// (the service, the tools, the dashboard, the README recipe); the real backends run against the
// kernel in test/gpio-vm.test.ts. One chip 'pinctrl-bcm2835' at /dev/gpiochip0 with 54 lines named
// as the raspi3b's kernel names them. `drive` is the outside world changing an input: the watcher
// gets the edge event the kernel would send.
import { GpioError } from '../../src/hardware/gpio/errors.js';
import type { EdgeEvent, GpioBackend, LineConfig, LineInfo, Level } from '../../src/hardware/gpio/types.js';

interface FakeLine {
  name: string;
  value: Level;
  config?: LineConfig;
  consumer: string;
  watcher?: (err: Error | null, events: EdgeEvent[]) => void;
}

export function fakeGpioChip() {
  const lines: FakeLine[] = Array.from({ length: 54 }, (_, i) => ({ name: i === 14 ? 'TXD1' : `GPIO${i}`, value: 0, consumer: '' }));
  const requests: string[] = [];
  let seq = 0;
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
      requests.push(`${offset}:${config.direction}${config.activeLow ? ':active-low' : ''}`);
      const logical = (): Level => ((l.value ^ (l.config?.activeLow ? 1 : 0)) as Level);
      const apply = (c: LineConfig) => {
        l.config = c;
        if (c.direction === 'output' && c.initial !== undefined) l.value = (c.initial ^ (c.activeLow ? 1 : 0)) as Level;
      };
      apply(config);
      return {
        read: logical,
        write: (v) => {
          l.value = (v ^ (l.config?.activeLow ? 1 : 0)) as Level;
        },
        reconfigure: apply,
        watch: (cb) => {
          l.watcher = cb;
        },
        release: () => {
          l.consumer = '';
          l.watcher = undefined;
        },
      };
    },
  };
  /** The outside world drives an input: an edge event as the kernel would send it. */
  /** `atNs`: the kernel's timestamp of the edge; default 1 ms per edge driven so far. */
  const drive = (offset: number, v: Level, atNs?: bigint) => {
    const l = lines[offset]!;
    if (l.value === v) return;
    l.value = v;
    seq++;
    l.watcher?.(null, [{ offset, edge: v ? 'rising' : 'falling', timestampNs: atNs ?? BigInt(seq) * 1_000_000n, seqno: seq, lineSeqno: seq }]);
  };
  return { backend, lines, requests, drive };
}
