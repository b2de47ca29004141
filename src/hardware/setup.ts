// The hardware of one process, assembled from the config and what the machine has: the board
// profile in use (board.profile, else detection), its reservations as they are now, the GPIO
// service when a usable GPIO chip exists, and the tools that go with them. The GPIO tools are always
// registered here (this runs only where there is hardware to care about, src/hardware/presence.ts):
// without a usable chip they are listed as unavailable with the reason and its fix, and a call
// answers that reason instead of "unknown tool". Nothing here throws for a missing device.
import type { PinclawConfig } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import { log } from '../log.js';
import type { Paths } from '../paths.js';
import type { Tool } from '../tools/types.js';
import { detectWith } from './boards/detect.js';
import { HOST_ROOTS, type HostRoots } from './boards/host-roots.js';
import { loadBoardRegistry, userBoardsDir } from './boards/registry.js';
import { releasedLines, reservationStates, reservedNow, type ReservationState } from './boards/reservations.js';
import type { BoardProfile } from './boards/schema.js';
import { boardPromptText } from './boards/prompt-board.js';
import { chooseBoard } from './boards/select.js';
import { boardSummary } from './boards/summary.js';
import { gpioUnavailable } from './gpio/availability.js';
import { chooseGpioBackend } from './gpio/backend.js';
import { fileGroup } from './gpio/native.js';
import { CONSUMER, createGpioService, type GpioService } from './gpio/service.js';
import type { GpioBackend } from './gpio/types.js';
import type { LineProbe } from './boards/reservations.js';
import { boardInfoTool, gpioTools } from './gpio/tools.js';
import { busNumbers } from './i2c/buses.js';

export interface Hardware {
  board?: BoardProfile;
  /** how the board was chosen, in words */
  boardDetail: string;
  gpio?: GpioService;
  /** why there is no GPIO service, or which backend runs it */
  gpioDetail: string;
  /** why the GPIO tools cannot run here, with the fix; undefined when they can */
  gpioUnavailable?: string;
  i2cBuses: number[];
  tools: Tool[];
  /** the system prompt's board section, undefined when there is nothing to say */
  promptText?: string;
  close(): void;
}

export interface HardwareOptions {
  config: PinclawConfig;
  paths: Pick<Paths, 'home'>;
  env: NodeJS.ProcessEnv;
  roots?: HostRoots;
  /** the group owning a device file, for "join the group" advice (tests); default /etc/group */
  groupOf?: (path: string) => string | undefined;
  /** I2C tools for the buses present, given by the caller (which loads the I2C code only then) */
  i2cTools?: (buses: number[]) => Tool[];
}

/** The uAPI's view of a profile line: its chip found by label; undefined when it cannot be asked. */
function uapiProbe(backend: GpioBackend): LineProbe {
  let labels: Map<string, string> | undefined;
  return (line, chipLabel) => {
    try {
      labels ??= new Map(backend.chips().flatMap((p) => {
        try {
          return [[backend.chipInfo(p).label, p] as const];
        } catch {
          return [];
        }
      }));
      const path = labels.get(chipLabel);
      if (!path) return undefined;
      const info = backend.lineInfo(path, line.offset);
      return { used: info.used, consumer: info.consumer };
    } catch {
      return undefined;
    }
  };
}

export function setupHardware(o: HardwareOptions): Hardware {
  const roots = o.roots ?? HOST_ROOTS;
  const registry = loadBoardRegistry({ userDir: userBoardsDir(o.paths) });
  const detection = detectWith(registry, roots);
  const choice = chooseBoard(registry, o.config.board.profile, detection);
  const board = choice.loaded?.profile.kind === 'sbc' ? choice.loaded.profile : undefined;
  const release = o.config.hardware.release;
  let states: ReservationState[] | undefined;

  let gpio: GpioService | undefined;
  let gpioDetail: string;
  let unavailable: string | undefined;
  try {
    const { backend, reason } = chooseGpioBackend({ env: o.env, dev: roots.dev, sys: roots.sys });
    unavailable = gpioUnavailable({ backend, board, configured: choice.how === 'configured', groupOf: o.groupOf ?? fileGroup });
    if (unavailable !== undefined) {
      gpioDetail = unavailable;
    } else {
      // With a chip open, the uAPI's line info joins the evidence (a line another consumer holds).
      states = board ? reservationStates(board, { roots, release, probe: uapiProbe(backend), ownConsumer: CONSUMER }) : [];
      gpio = createGpioService({ backend, board, reserved: reservedNow(states), released: releasedLines(states), hardware: o.config.hardware });
      gpioDetail = `${backend.name} backend (${reason})`;
    }
  } catch (err) {
    unavailable = gpioUnavailable({ backend: err instanceof Error ? err : new Error(errorMessage(err)), board, configured: false, groupOf: o.groupOf ?? fileGroup });
    gpioDetail = `GPIO unavailable: ${errorMessage(err)}`;
    log.warn(gpioDetail);
  }
  // Without an open chip (none here, or GPIO unavailable) the states are still shown: no uAPI evidence.
  const shownStates = states ?? (board ? reservationStates(board, { roots, release }) : []);
  const i2cBuses = busNumbers(roots.dev);

  const info = (): string => {
    const lines: string[] = [];
    lines.push(board ? boardSummary(board, { how: choice.how === 'configured' ? 'configured' : 'detected', reservations: shownStates }) : `No board profile: ${choice.detail}.`);
    lines.push(`GPIO: ${gpioDetail}`);
    if (gpio) {
      for (const c of gpio.resolver.chips()) lines.push(`  ${c.path}: ${c.info.label}, ${c.info.lines} lines`);
      const held = gpio.held();
      lines.push(held.length ? `Held by pinclaw: ${held.map((h) => `${h.line} as ${h.mode}`).join(', ')}` : 'No line held by pinclaw.');
    }
    if (o.config.hardware.lines.length) lines.push(`Named lines: ${o.config.hardware.lines.map((l) => `${l.name}=${l.line}${l.activeLow ? ' (active low)' : ''}`).join(', ')}`);
    lines.push(`I2C buses: ${i2cBuses.length ? i2cBuses.map((b) => `/dev/i2c-${b}`).join(', ') : 'none'}`);
    return lines.join('\n');
  };

  const tools: Tool[] = [boardInfoTool(info)];
  tools.push(...gpioTools({ gpio, unavailable, confirm: o.config.hardware.confirm, boardInfo: info }));
  if (i2cBuses.length && o.i2cTools) tools.push(...o.i2cTools(i2cBuses));
  let i2cWhy: string | undefined;
  if (!i2cBuses.length && board?.i2c.length && o.i2cTools) {
    // The board has I2C, this machine shows no bus: the tools say how to enable it, until a bus appears.
    const why = (i2cWhy = i2cUnavailable(board));
    tools.push(...o.i2cTools([]).map((t) => ({ ...t, unavailable: () => (busNumbers(roots.dev).length ? undefined : why) })));
  }
  return {
    board,
    boardDetail: choice.detail,
    gpio,
    gpioDetail,
    gpioUnavailable: unavailable,
    i2cBuses,
    tools,
    promptText: withUnavailable(boardPromptText(o.paths, o.config, roots), [
      ['GPIO tools (gpio_read, gpio_write, gpio_watch)', unavailable],
      ['I2C tools (i2c_scan, i2c_read, i2c_write)', i2cWhy],
    ]),
    close: () => gpio?.close(),
  };
}

/** Why the I2C tools of a board with I2C cannot run: no /dev/i2c-*, and what enables the profile's buses. */
export function i2cUnavailable(board: Pick<BoardProfile, 'name' | 'id' | 'i2c'>): string {
  const buses = board.i2c.map((b) => `bus ${b.bus}${b.note ? ` (${b.note})` : ''}`).join(', ');
  return `no I2C bus on this machine (no /dev/i2c-*): the ${board.name} (${board.id}) profile has I2C ${buses}; enable it, load the i2c-dev module (sudo modprobe i2c-dev; add i2c-dev to /etc/modules to keep it), then try again`;
}

/**
 * Tools that cannot run are not offered to the model: the prompt says why, so the model can tell
 * the owner without calling them to find out.
 */
function withUnavailable(text: string | undefined, groups: [tools: string, why: string | undefined][]): string | undefined {
  const lines = groups.flatMap(([tools, why]) => (why === undefined ? [] : [`${tools} are unavailable on this machine: ${why}`]));
  if (!lines.length) return text;
  return [...(text === undefined ? [] : [text]), ...lines].join('\n');
}
