// The TypeScript twin of the addon's GPIO: the deprecated sysfs interface (/sys/class/gpio), used
// only when the kernel has no uAPI v2 (or PINCLAW_GPIO_BACKEND=sysfs says so), and in the VM tests
// as the reference the addon is compared with. The sysfs number of a line is its chip's `base` plus
// the offset, read from /sys/class/gpio/gpiochip<base> whose `device` link leads to gpiochipN —
// never a hard-coded 512 or 571. What sysfs cannot do: bias, drive modes and kernel debounce (a
// request asking for them is refused), and a poll(2) on POLLPRI that Node cannot make; so edges
// are found by reading the value every few milliseconds, which is why this is the fallback.
import { existsSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describeErrno, GpioError } from './errors.js';
import { fileGroup, listChips } from './native.js';
import type { ChipInfo, EdgeEvent, GpioBackend, LineConfig, LineInfo, LineRequest, Level } from './types.js';

/** How often a watched sysfs line is read for edges. */
export const SYSFS_POLL_MS = 5;

interface SysfsChip {
  /** gpiochipN, the character device's name, or gpiochip<base> when sysfs does not link one */
  name: string;
  base: number;
  label: string;
  lines: number;
}

function read(file: string): string {
  return readFileSync(file, 'utf8').trim();
}

export function sysfsChips(sys = '/sys'): SysfsChip[] {
  const dir = join(sys, 'class', 'gpio');
  let entries: string[];
  try {
    entries = readdirSync(dir).filter((n) => /^gpiochip\d+$/.test(n));
  } catch {
    return [];
  }
  const out: SysfsChip[] = [];
  for (const e of entries) {
    try {
      let name = e;
      try {
        const target = realpathSync(join(dir, e, 'device'));
        if (/^gpiochip\d+$/.test(basename(target))) name = basename(target);
        else name = readdirSync(target).find((n) => /^gpiochip\d+$/.test(n)) ?? e;
      } catch {
        // no device link: keep the class name
      }
      out.push({ name, base: Number(read(join(dir, e, 'base'))), label: read(join(dir, e, 'label')), lines: Number(read(join(dir, e, 'ngpio'))) });
    } catch {
      // a chip going away while listed
    }
  }
  return out.sort((a, b) => a.base - b.base);
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function fsCode(err: unknown): string {
  const c = (err as NodeJS.ErrnoException)?.code;
  return typeof c === 'string' ? c : 'EIO';
}

export function sysfsBackend(opts: { sys?: string; dev?: string } = {}): GpioBackend {
  const sys = opts.sys ?? '/sys';
  const dev = opts.dev ?? '/dev';
  const classDir = join(sys, 'class', 'gpio');
  const chipFor = (path: string): SysfsChip => {
    const chip = sysfsChips(sys).find((c) => c.name === basename(path));
    if (!chip) throw new GpioError(`${path} has no entry in ${classDir} (sysfs GPIO is off in this kernel, or the chip does not exist)`, { code: 'ENODEV', device: path });
    return chip;
  };
  const lineDir = (n: number) => join(classDir, `gpio${n}`);
  const numberOf = (path: string, offset: number): number => {
    const chip = chipFor(path);
    if (!Number.isInteger(offset) || offset < 0 || offset >= chip.lines) throw new GpioError(`no line ${offset} on ${path} (it has ${chip.lines}: 0-${chip.lines - 1})`, { code: 'EINVAL', device: `${path}:${offset}` });
    return chip.base + offset;
  };
  const fail = (err: unknown, path: string, label: string, file: string): GpioError => {
    const code = fsCode(err);
    return new GpioError(describeErrno(code, { chip: path, line: label, group: code === 'EACCES' ? fileGroup(file) : undefined }, `${file}: ${(err as Error).message}`), { code, device: label }, { cause: err });
  };

  return {
    name: 'sysfs',
    chips: () => {
      const fromDev = listChips(dev);
      return fromDev.length ? fromDev : sysfsChips(sys).map((c) => join(dev, c.name));
    },
    chipInfo(path): ChipInfo {
      const c = chipFor(path);
      return { name: c.name, label: c.label, lines: c.lines };
    },
    lineInfo(path, offset): LineInfo {
      const n = numberOf(path, offset);
      const exported = existsSync(lineDir(n));
      let direction: 'input' | 'output' = 'input';
      let activeLow = false;
      let edge: LineInfo['edge'] = 'none';
      if (exported) {
        try {
          direction = read(join(lineDir(n), 'direction')) === 'out' ? 'output' : 'input';
          activeLow = read(join(lineDir(n), 'active_low')) === '1';
          const e = read(join(lineDir(n), 'edge'));
          if (e === 'rising' || e === 'falling' || e === 'both') edge = e;
        } catch {
          // unexported meanwhile
        }
      }
      // sysfs knows neither line names nor holders other than itself.
      return { offset, name: '', consumer: exported ? 'sysfs' : '', used: exported, direction, activeLow, bias: 'as-is', drive: 'push-pull', edge, debounceUs: 0 };
    },
    request(path, offset, config, _consumer, shown): LineRequest {
      const label = shown ?? `${path}:${offset}`;
      const unsupported = [config.bias && config.bias !== 'as-is' ? `bias ${config.bias}` : '', config.drive && config.drive !== 'push-pull' ? `drive ${config.drive}` : '', config.debounceUs ? 'kernel debounce' : ''].filter(Boolean);
      if (unsupported.length) throw new GpioError(`line ${label}: the sysfs GPIO interface cannot set ${unsupported.join(', ')}`, { code: 'EINVAL', device: label });
      const n = numberOf(path, offset);
      const before = new Set(listDir(classDir));
      try {
        writeFileSync(join(classDir, 'export'), String(n));
      } catch (err) {
        throw fail(err, path, label, join(classDir, 'export'));
      }
      // The node is gpio<N>, unless the driver names its lines (gc->names): then it carries the
      // line's name (LOOP4). Which one appeared tells.
      const appeared = listDir(classDir).find((e) => !before.has(e) && !e.startsWith('gpiochip'));
      const dir = existsSync(lineDir(n)) ? lineDir(n) : join(classDir, appeared ?? `gpio${n}`);
      const value = join(dir, 'value');
      let timer: NodeJS.Timeout | undefined;
      let released = false;
      const apply = (c: LineConfig) => {
        writeFileSync(join(dir, 'active_low'), c.activeLow ? '1' : '0');
        if (c.direction === 'output') {
          // "high"/"low" set the direction and the first value in one step, as raw levels.
          const logical = c.initial ?? 0;
          writeFileSync(join(dir, 'direction'), (logical ^ (c.activeLow ? 1 : 0)) === 1 ? 'high' : 'low');
        } else if (c.direction === 'input') {
          writeFileSync(join(dir, 'direction'), 'in');
        }
      };
      try {
        apply(config);
      } catch (err) {
        const e = fail(err, path, label, dir);
        try {
          writeFileSync(join(classDir, 'unexport'), String(n));
        } catch {
          // it may not have been exported at all
        }
        throw e;
      }
      const live = () => {
        if (released) throw new GpioError(`line ${label} was released`, { code: 'EBADF', device: label });
      };
      const readLevel = (): Level => (read(value) === '1' ? 1 : 0);
      return {
        read() {
          live();
          try {
            return readLevel();
          } catch (err) {
            throw fail(err, path, label, value);
          }
        },
        write(v) {
          live();
          try {
            writeFileSync(value, v ? '1' : '0');
          } catch (err) {
            throw fail(err, path, label, value);
          }
        },
        reconfigure(c) {
          live();
          try {
            apply(c);
          } catch (err) {
            throw fail(err, path, label, dir);
          }
        },
        watch(onEvents) {
          live();
          let last = readLevel();
          let seqno = 0;
          timer = setInterval(() => {
            let now: Level;
            try {
              now = readLevel();
            } catch (err) {
              clearInterval(timer);
              onEvents(fail(err, path, label, value), []);
              return;
            }
            if (now === last) return;
            last = now;
            seqno++;
            const e: EdgeEvent = { offset, edge: now ? 'rising' : 'falling', timestampNs: process.hrtime.bigint(), seqno, lineSeqno: seqno };
            onEvents(null, [e]);
          }, SYSFS_POLL_MS);
          timer.unref();
        },
        release() {
          if (released) return;
          released = true;
          if (timer) clearInterval(timer);
          try {
            writeFileSync(join(classDir, 'unexport'), String(n));
          } catch {
            // gone already (the chip was removed)
          }
        },
      };
    },
  };
}
