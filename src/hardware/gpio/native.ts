// The GPIO backend over pinclaw's addon (native/gpio*.cc): uAPI v2 ioctls on /dev/gpiochipN, edge
// events from the request fd watched by libuv.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { tryAddon } from '../../native/loader.js';
import { describeErrno, GpioError, type GroupOf } from './errors.js';
import type { ChipInfo, EdgeEvent, GpioBackend, LineConfig, LineInfo, LineRequest, Level } from './types.js';

interface NativeConfig {
  direction: string;
  activeLow?: boolean;
  bias?: string;
  drive?: string;
  edge?: string;
  debounceUs?: number;
  values?: number;
}

/** What native/gpio.cc exports. */
export interface GpioAddon {
  gpioChipInfo(path: string): ChipInfo;
  gpioLineInfo(path: string, offset: number): LineInfo;
  gpioRequest(path: string, offsets: number[], config: NativeConfig, consumer: string): number;
  gpioGetValues(fd: number, mask: number): number;
  gpioSetValues(fd: number, mask: number, bits: number): void;
  gpioSetConfig(fd: number, config: NativeConfig): void;
  gpioWatch(fd: number, callback: (err: Error | null, events: EdgeEvent[]) => void): void;
  gpioRelease(fd: number): void;
}

/** The addon, if it loads and has GPIO (a build from before GPIO lacks these functions). */
export function gpioAddon(): GpioAddon | null {
  const a = tryAddon<Partial<GpioAddon>>('pinclaw');
  return a && typeof a.gpioRequest === 'function' && typeof a.gpioWatch === 'function' ? (a as GpioAddon) : null;
}

export function nativeConfig(c: LineConfig): NativeConfig {
  return {
    direction: c.direction,
    ...(c.activeLow !== undefined ? { activeLow: c.activeLow } : {}),
    ...(c.bias ? { bias: c.bias } : {}),
    ...(c.drive ? { drive: c.drive } : {}),
    ...(c.edge ? { edge: c.edge } : {}),
    ...(c.debounceUs ? { debounceUs: c.debounceUs } : {}),
    ...(c.direction === 'output' && c.initial !== undefined ? { values: c.initial } : {}),
  };
}

/** /dev/gpiochip* in a directory, by number. */
export function listChips(dev = '/dev'): string[] {
  let names: string[];
  try {
    names = readdirSync(dev);
  } catch {
    return [];
  }
  return names
    .filter((n) => /^gpiochip\d+$/.test(n))
    .sort((a, b) => Number(a.slice(8)) - Number(b.slice(8)))
    .map((n) => join(dev, n));
}

/** The group owning a device file, by name from /etc/group. */
export const fileGroup: GroupOf = (path) => {
  try {
    const gid = statSync(path).gid;
    for (const line of readFileSync('/etc/group', 'utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (name && Number(id) === gid) return gid === 0 ? undefined : name;
    }
  } catch {
    // no advice then
  }
  return undefined;
};

function wrap(err: unknown, chip: string, line: string | undefined, holder: () => string | undefined): GpioError {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : 'EIO';
  const detail = typeof e?.message === 'string' ? e.message : String(err);
  const message = describeErrno(code, { chip, line, holder: code === 'EBUSY' ? holder() : undefined, group: code === 'EACCES' || code === 'EPERM' ? fileGroup(chip) : undefined }, detail);
  return new GpioError(message, { code, device: line ?? chip }, { cause: err });
}

export function nativeBackend(addon: GpioAddon, dev = '/dev'): GpioBackend {
  const lineInfo = (path: string, offset: number): LineInfo => {
    try {
      return addon.gpioLineInfo(path, offset);
    } catch (err) {
      throw wrap(err, path, `${path}:${offset}`, () => undefined);
    }
  };
  return {
    name: 'native',
    chips: () => listChips(dev),
    chipInfo(path) {
      try {
        return addon.gpioChipInfo(path);
      } catch (err) {
        throw wrap(err, path, undefined, () => undefined);
      }
    },
    lineInfo,
    request(path, offset, config, consumer, shown): LineRequest {
      const label = shown ?? `${path}:${offset}`;
      const holder = () => {
        try {
          return addon.gpioLineInfo(path, offset).consumer || undefined;
        } catch {
          return undefined;
        }
      };
      let fd: number;
      try {
        fd = addon.gpioRequest(path, [offset], nativeConfig(config), consumer);
      } catch (err) {
        throw wrap(err, path, label, holder);
      }
      let released = false;
      const live = () => {
        if (released) throw new GpioError(`line ${label} was released`, { code: 'EBADF', device: label });
        return fd;
      };
      return {
        read(): Level {
          try {
            return (addon.gpioGetValues(live(), 1) & 1) as Level;
          } catch (err) {
            throw err instanceof GpioError ? err : wrap(err, path, label, holder);
          }
        },
        write(value) {
          try {
            addon.gpioSetValues(live(), 1, value);
          } catch (err) {
            throw err instanceof GpioError ? err : wrap(err, path, label, holder);
          }
        },
        reconfigure(c) {
          try {
            addon.gpioSetConfig(live(), nativeConfig(c));
          } catch (err) {
            throw err instanceof GpioError ? err : wrap(err, path, label, holder);
          }
        },
        watch(onEvents) {
          addon.gpioWatch(live(), (err, events) => onEvents(err ? wrap(err, path, label, holder) : null, events));
        },
        release() {
          if (released) return;
          released = true;
          addon.gpioRelease(fd);
        },
      };
    },
  };
}
