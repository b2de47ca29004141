// From what a person or the model calls a line to a chip and an offset. In order: a name from
// hardware.lines ("garage_relay"), a line of the board profile by name or alias ("GPIO17", "TXD":
// the kernel may call pin 14 TXD1, so the profile's offset decides), "chip:offset" (gpiochip0:17,
// /dev/gpiochip0:17 or a chip label: pinctrl-bcm2835:17), and last the kernel's own line names.
import { basename } from 'node:path';
import type { PinclawConfig } from '../../config/schema.js';
import { closest } from '../../suggest.js';
import type { BoardLine, BoardProfile } from '../boards/schema.js';
import { chipOf } from '../boards/schema.js';
import { GpioError } from './errors.js';
import type { ChipInfo, GpioBackend } from './types.js';

export type NamedLine = PinclawConfig['hardware']['lines'][number];

export interface ResolvedLine {
  /** /dev/gpiochip0 */
  path: string;
  offset: number;
  /** how it is shown: "garage_relay (GPIO17, gpiochip0:17)" */
  display: string;
  /** the board profile's line, when there is one */
  boardLine?: BoardLine;
  /** the hardware.lines entry, when named through one */
  named?: NamedLine;
}

export interface Resolver {
  resolve(spec: string): ResolvedLine;
  /** every chip with its info, for board_info and errors */
  chips(): { path: string; info: ChipInfo }[];
}

export function createResolver(backend: GpioBackend, board: BoardProfile | undefined, named: readonly NamedLine[]): Resolver {
  let chipCache: { path: string; info: ChipInfo }[] | undefined;
  const chips = () =>
    (chipCache ??= backend.chips().flatMap((path) => {
      try {
        return [{ path, info: backend.chipInfo(path) }];
      } catch {
        return [];
      }
    }));
  const kernelNames = new Map<string, { path: string; offset: number }>();
  let namesRead = false;
  const readKernelNames = () => {
    if (namesRead) return;
    namesRead = true;
    for (const c of chips()) {
      for (let o = 0; o < c.info.lines; o++) {
        try {
          const n = backend.lineInfo(c.path, o).name;
          if (n && !kernelNames.has(n)) kernelNames.set(n, { path: c.path, offset: o });
        } catch {
          // a line that cannot be read is not nameable
        }
      }
    }
  };
  const chipByName = (name: string) => chips().find((c) => c.path === name || basename(c.path) === name || c.info.label === name);
  const checkOffset = (path: string, offset: number, label: string) => {
    const c = chips().find((x) => x.path === path);
    if (c && offset >= c.info.lines) throw new GpioError(`no line ${offset} on ${basename(path)} (${c.info.label}, ${c.info.lines} lines: 0-${c.info.lines - 1}), asked as '${label}'`, { code: 'ELINE', device: label });
  };

  function fromBoard(spec: string): ResolvedLine | undefined {
    const l = board?.gpio.lines.find((x) => x.name === spec || x.aliases?.includes(spec));
    if (!l || !board) return undefined;
    const label = chipOf(board, l);
    const chip = chipByName(label);
    if (!chip) {
      const present = chips().map((c) => `${basename(c.path)} (${c.info.label})`).join(', ') || 'none';
      throw new GpioError(`${spec} is on chip '${label}' of board ${board.id}, but no GPIO chip with that label is present (chips: ${present}); is board.profile right?`, { code: 'ENODEV', device: spec });
    }
    return { path: chip.path, offset: l.offset, display: `${l.name} (${basename(chip.path)}:${l.offset})`, boardLine: l };
  }

  function resolve(spec: string, depth = 0): ResolvedLine {
    const n = named.find((x) => x.name === spec);
    if (n && depth === 0) {
      if (!n.line) throw new GpioError(`hardware.lines entry '${spec}' has no line`, { code: 'ELINE', device: spec });
      const inner = resolve(n.line, 1);
      return { ...inner, named: n, display: `${n.name} (${inner.display})` };
    }
    const b = fromBoard(spec);
    if (b) return b;
    const m = /^(.+):(\d+)$/.exec(spec);
    if (m) {
      const chip = chipByName(m[1]!);
      if (!chip) throw new GpioError(`no GPIO chip '${m[1]}' (chips: ${chips().map((c) => `${basename(c.path)} (${c.info.label})`).join(', ') || 'none'})`, { code: 'ENODEV', device: spec });
      const offset = Number(m[2]);
      checkOffset(chip.path, offset, spec);
      const bl = board?.gpio.lines.find((l) => l.offset === offset && chipOf(board, l) === chip.info.label);
      return { path: chip.path, offset, display: bl ? `${bl.name} (${basename(chip.path)}:${offset})` : `${basename(chip.path)}:${offset}`, ...(bl ? { boardLine: bl } : {}) };
    }
    readKernelNames();
    const k = kernelNames.get(spec);
    if (k) {
      const chip = chips().find((c) => c.path === k.path)!;
      const bl = board?.gpio.lines.find((l) => l.offset === k.offset && chipOf(board, l) === chip.info.label);
      return { path: k.path, offset: k.offset, display: `${spec} (${basename(k.path)}:${k.offset})`, ...(bl ? { boardLine: bl } : {}) };
    }
    const known = [...named.flatMap((x) => (x.name ? [x.name] : [])), ...(board?.gpio.lines.map((l) => l.name) ?? []), ...kernelNames.keys()];
    const near = closest(spec, known);
    const chipList = chips().length ? `; or chip:offset, e.g. ${basename(chips()[0]!.path)}:0` : '; this machine has no GPIO chip';
    throw new GpioError(`unknown GPIO line '${spec}'${near ? ` (did you mean '${near}'?)` : ''}: name a hardware.lines entry${board ? `, a line of board ${board.id} (GPIO17)` : ''}${chipList}`, { code: 'ELINE', device: spec });
  }

  return { resolve: (spec) => resolve(spec), chips };
}
