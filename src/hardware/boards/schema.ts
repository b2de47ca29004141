// The board profile schema (boards/*.json and $PINCLAW_HOME/boards/*.json): its shape, the
// BoardProfile type inferred from it, and the cross-reference checks a shape cannot express (names
// that must exist, offsets unique per chip). Every problem is reported with the file and the exact
// JSON path, all at once; docs/hardware.md describes each field.
import { ConfigError } from '../../errors.js';
import { parseConfigText } from '../../config/parse.js';
import { array, boolean, integer, INVALID, joinPath, number, object, oneOf, optional, string, type SpecIssue, type SpecType } from './spec.js';

export const BOARD_KINDS = ['sbc', 'mcu', 'peripheral'] as const;

/**
 * What a line can do. `edge`: it can report edges (the kernel's edge detection on an SBC, an
 * external interrupt on an MCU); `pull-up`/`pull-down`: bias the hardware offers.
 */
export const CAPABILITIES = [
  'input', 'output', 'edge', 'pull-up', 'pull-down', 'pwm', 'adc', 'dac',
  'i2c-sda', 'i2c-scl', 'spi-mosi', 'spi-miso', 'spi-sclk', 'spi-cs', 'uart-tx', 'uart-rx', 'swd',
] as const;

export const PROFILE_ID = /^[a-z0-9][a-z0-9-]{0,63}$/;
const LINE_NAME = /^[A-Za-z][A-Za-z0-9_]{0,31}$/;
const HEX4 = /^[0-9a-f]{4}$/;
/** Paths a reservation may test; detection maps their roots onto its own (tests use a fake tree). */
const DEVICE_PATH = /^\/(dev|sys|proc)\/[^\0]+$/;

const usbId = object({
  vid: string({ pattern: HEX4, patternText: '4 lower-case hex digits, as sysfs idVendor shows them' }),
  pid: string({ pattern: HEX4, patternText: '4 lower-case hex digits, as sysfs idProduct shows them' }),
  note: optional(string()),
  /** a USB-serial bridge sold on many boards: a match is a guess, not an identification */
  generic: optional(boolean()),
});

const line = object({
  name: string({ pattern: LINE_NAME, patternText: 'a letter then letters, digits or _ (at most 32)' }),
  /** the gpiochip label; omitted: the first chip in gpio.chips, or the MCU's own pin numbering */
  chip: optional(string()),
  offset: integer({ min: 0 }),
  /** pin number on the board's main header (the Pi's 40-pin header) */
  header: optional(integer({ min: 1 })),
  aliases: optional(array(string({ pattern: LINE_NAME, patternText: 'a letter then letters, digits or _ (at most 32)' }))),
  capabilities: array(oneOf(CAPABILITIES)),
  note: optional(string()),
});

export const profileSpec = object({
  id: string({ pattern: PROFILE_ID, patternText: 'lower-case letters, digits and -' }),
  name: string(),
  kind: oneOf(BOARD_KINDS),
  description: string({ maxLength: 400 }),
  notes: optional(array(string())),
  identify: object({
    deviceTreeModel: optional(array(string(), { minItems: 1 })),
    usb: optional(array(usbId, { minItems: 1 })),
    network: optional(object({ mdnsPrefix: optional(string()), note: string() })),
  }),
  electrical: optional(
    object({
      logicVolts: number({ min: 1, max: 12 }),
      fiveVoltTolerant: boolean(),
      maxPinCurrentMa: optional(number({ min: 0 })),
      note: optional(string()),
    }),
  ),
  gpio: object({
    chips: array(object({ label: string(), lines: integer({ min: 1 }), note: optional(string()) })),
    lines: array(line),
  }),
  reserved: array(
    object({
      lines: array(string()),
      /** pins that are not GPIO lines (BOOT0, NRST): named for the reader, not checked */
      pins: optional(array(string())),
      reason: string(),
      when: string(),
      activeIf: optional(
        object({
          anyExists: optional(array(string({ pattern: DEVICE_PATH, patternText: 'an absolute path under /dev, /sys or /proc' }), { minItems: 1 })),
          cmdlineHas: optional(array(string(), { minItems: 1 })),
        }),
      ),
    }),
  ),
  i2c: array(object({ bus: integer({ min: 0 }), sda: string(), scl: string(), note: optional(string()) })),
  /**
   * The camera interfaces of the board: csi (a ribbon camera, read through rpicam-still: device
   * "rpicam" in hardware.cameras) and usb (a webcam, a V4L2 /dev/videoN). Omitted: none known.
   */
  camera: optional(object({ interfaces: array(oneOf(['csi', 'usb'] as const), { minItems: 1 }), note: optional(string()) })),
  spi: optional(array(object({ bus: integer({ min: 0 }), mosi: string(), miso: string(), sclk: string(), cs: array(string(), { minItems: 1 }), note: optional(string()) }))),
  serial: optional(
    object({
      device: optional(string({ pattern: /^\/dev\//, patternText: 'a path under /dev' })),
      baud: integer({ min: 50, max: 4_000_000 }),
      /** opening the port resets the board (Arduino auto-reset through DTR) */
      resetsOnOpen: optional(boolean()),
      /** how long after opening the firmware can listen (a bootloader runs first) */
      readyAfterMs: optional(integer({ min: 0, max: 60_000 })),
      note: optional(string()),
    }),
  ),
  memory: optional(
    object({
      /** RAM of the smallest variant */
      totalMiB: integer({ min: 1 }),
      variantsMiB: optional(array(integer({ min: 1 }), { minItems: 1 })),
      /** what pinclaw itself may use (later the systemd unit's MemoryMax) */
      budgetMiB: integer({ min: 16 }),
      note: optional(string()),
    }),
  ),
  mcu: optional(
    object({
      chip: string(),
      core: string(),
      clockMHz: number({ min: 1 }),
      flashKiB: integer({ min: 1 }),
      ramKiB: integer({ min: 1 }),
      adcBits: optional(integer({ min: 1, max: 24 })),
      /** boards/firmware/<family>/: the reference firmware that speaks pinclaw's protocol */
      firmware: oneOf(['avr', 'stm32']),
      pinNumbering: string(),
    }),
  ),
  flash: optional(
    object({
      tool: oneOf(['avrdude', 'openocd', 'st-flash', 'mass-storage', 'qemu']),
      protocol: optional(string()),
      baud: optional(integer({ min: 50 })),
      note: optional(string()),
    }),
  ),
});

export type BoardProfile = SpecType<typeof profileSpec>;
export type BoardKind = BoardProfile['kind'];
export type Capability = (typeof CAPABILITIES)[number];
export type BoardLine = BoardProfile['gpio']['lines'][number];
export type Reservation = BoardProfile['reserved'][number];
export type UsbId = NonNullable<BoardProfile['identify']['usb']>[number];

/** The chip a line belongs to: its own, else the first chip, else the board's own numbering. */
export function chipOf(profile: BoardProfile, l: BoardLine): string {
  return l.chip ?? profile.gpio.chips[0]?.label ?? '(board)';
}

/** Every name and alias → the line, for lookups by either. */
export function lineIndex(profile: BoardProfile): Map<string, BoardLine> {
  const index = new Map<string, BoardLine>();
  for (const l of profile.gpio.lines) {
    index.set(l.name, l);
    for (const a of l.aliases ?? []) index.set(a, l);
  }
  return index;
}

/** Checks what the shape cannot: references, uniqueness, kind-specific sections. */
function crossCheck(p: BoardProfile, expectedId: string | undefined, issues: SpecIssue[]): void {
  const add = (path: string, message: string) => issues.push({ path, message });
  if (expectedId !== undefined && p.id !== expectedId) add('id', `expected ${JSON.stringify(expectedId)} (the file name), found ${JSON.stringify(p.id)}`);

  const chips = new Map<string, number>();
  p.gpio.chips.forEach((c, i) => {
    if (chips.has(c.label)) add(`gpio.chips[${i}].label`, `duplicate chip label ${JSON.stringify(c.label)}`);
    chips.set(c.label, c.lines);
  });

  const names = new Map<string, string>(); // name or alias → path of the line that has it
  const offsets = new Map<string, string>(); // chip + offset → path
  const headers = new Map<number, string>();
  p.gpio.lines.forEach((l, i) => {
    const at = `gpio.lines[${i}]`;
    for (const [n, where] of [[l.name, `${at}.name`] as const, ...(l.aliases ?? []).map((a, j) => [a, `${at}.aliases[${j}]`] as const)]) {
      const prev = names.get(n);
      if (prev) add(where, `${JSON.stringify(n)} is already used by ${prev}`);
      else names.set(n, at);
    }
    if (l.chip !== undefined && !chips.has(l.chip)) add(`${at}.chip`, `no chip labelled ${JSON.stringify(l.chip)} in gpio.chips`);
    const chip = chipOf(p, l);
    const size = chips.get(chip);
    if (size !== undefined && l.offset >= size) add(`${at}.offset`, `expected an integer below ${size} (chip ${JSON.stringify(chip)} has ${size} lines), found ${l.offset}`);
    const key = `${chip}\0${l.offset}`;
    const prevOffset = offsets.get(key);
    if (prevOffset) add(`${at}.offset`, `offset ${l.offset} on ${chip === '(board)' ? 'the board' : `chip ${JSON.stringify(chip)}`} is already ${prevOffset}`);
    else offsets.set(key, at);
    if (l.header !== undefined) {
      const prevHeader = headers.get(l.header);
      if (prevHeader) add(`${at}.header`, `header pin ${l.header} is already ${prevHeader}`);
      else headers.set(l.header, at);
    }
    const caps = new Set<string>();
    l.capabilities.forEach((c, j) => {
      if (caps.has(c)) add(`${at}.capabilities[${j}]`, `duplicate capability ${JSON.stringify(c)}`);
      caps.add(c);
    });
  });

  const index = lineIndex(p);
  const mustBeLine = (path: string, name: string, capability?: Capability) => {
    const l = index.get(name);
    if (!l) add(path, `no line named ${JSON.stringify(name)} in gpio.lines`);
    else if (capability && !l.capabilities.includes(capability)) add(path, `line ${JSON.stringify(name)} lacks the capability ${JSON.stringify(capability)}`);
  };
  p.reserved.forEach((r, i) => {
    if (!r.lines.length && !r.pins?.length) add(`reserved[${i}]`, 'expected at least one entry in lines or pins');
    r.lines.forEach((n, j) => mustBeLine(`reserved[${i}].lines[${j}]`, n));
  });
  const buses = new Set<number>();
  p.i2c.forEach((b, i) => {
    if (buses.has(b.bus)) add(`i2c[${i}].bus`, `duplicate bus ${b.bus}`);
    buses.add(b.bus);
    mustBeLine(`i2c[${i}].sda`, b.sda, 'i2c-sda');
    mustBeLine(`i2c[${i}].scl`, b.scl, 'i2c-scl');
  });
  p.spi?.forEach((b, i) => {
    mustBeLine(`spi[${i}].mosi`, b.mosi, 'spi-mosi');
    mustBeLine(`spi[${i}].miso`, b.miso, 'spi-miso');
    mustBeLine(`spi[${i}].sclk`, b.sclk, 'spi-sclk');
    b.cs.forEach((n, j) => mustBeLine(`spi[${i}].cs[${j}]`, n, 'spi-cs'));
  });

  const usb = new Set<string>();
  p.identify.usb?.forEach((u, i) => {
    const k = `${u.vid}:${u.pid}`;
    if (usb.has(k)) add(joinPath(`identify.usb[${i}]`, 'pid'), `duplicate USB id ${k}`);
    usb.add(k);
  });
  if (p.memory) {
    if (p.memory.budgetMiB > p.memory.totalMiB) add('memory.budgetMiB', `expected at most memory.totalMiB (${p.memory.totalMiB}), found ${p.memory.budgetMiB}`);
    const smallest = p.memory.variantsMiB ? Math.min(...p.memory.variantsMiB) : p.memory.totalMiB;
    if (p.memory.totalMiB !== smallest) add('memory.totalMiB', `expected the smallest of memory.variantsMiB (${smallest}), found ${p.memory.totalMiB}`);
  }

  // What each kind needs for the code that uses it: detection, the memory budget, the MCU client.
  if (p.kind === 'sbc') {
    if (!p.memory) add('memory', 'missing (an sbc profile needs memory.totalMiB and memory.budgetMiB)');
    if (!p.identify.deviceTreeModel) add('identify.deviceTreeModel', 'missing (an sbc profile is detected by its device-tree model)');
  }
  if (p.kind === 'mcu') {
    if (!p.mcu) add('mcu', 'missing (an mcu profile needs its chip, memory and firmware family)');
    if (!p.serial) add('serial', 'missing (pinclaw talks to an mcu over serial: at least serial.baud)');
  }
  if (p.kind !== 'mcu' && p.mcu) add('mcu', `only for kind "mcu", this profile is ${JSON.stringify(p.kind)}`);
  if (!p.identify.deviceTreeModel && !p.identify.usb && !p.identify.network && p.kind !== 'mcu') {
    add('identify', 'expected deviceTreeModel, usb or network');
  }
}

export interface ProfileResult {
  profile?: BoardProfile;
  /** "boards/rpi-4b.json: gpio.lines[3].offset: expected an integer >= 0, found string \"3\"" */
  errors: string[];
}

/**
 * Validates one parsed profile. `source` names the file in every error; `expectedId` (the file name
 * without .json) must equal the profile's id, so `board show NAME` and the file always agree.
 */
export function validateProfile(raw: unknown, source: string, expectedId?: string): ProfileResult {
  const issues: SpecIssue[] = [];
  const checked = profileSpec.check(raw, '', issues);
  if (checked !== INVALID) crossCheck(checked, expectedId, issues);
  const errors = issues.map((i) => `${source}: ${i.path || '(top level)'}: ${i.message}`);
  return checked === INVALID || errors.length ? { errors } : { profile: checked, errors };
}

/** Parses and validates a profile file's text; a JSON syntax error names the line and column. */
export function parseProfile(text: string, source: string, expectedId?: string): ProfileResult {
  let raw: unknown;
  try {
    raw = parseConfigText(text, source);
  } catch (err) {
    if (err instanceof ConfigError) return { errors: [err.message] };
    throw err;
  }
  return validateProfile(raw, source, expectedId);
}
