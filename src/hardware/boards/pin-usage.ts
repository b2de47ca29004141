// What the kernel says about who uses a pin, for the board's conditional reservations: the serial
// consoles on the command line, the pins the enabled device-tree nodes take through pinctrl, and
// pinctrl's own view in debugfs (each pin's current function and its mux owner). Each source says
// "in use" with a reason a person can check, or that it could be read at all, which is what lets a
// reservation be shown free (boards/reservations.ts holds a pin no source can vouch for).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readText, type HostRoots } from './host-roots.js';

/** The kernel command line as words; [] when it cannot be read. */
export function cmdlineWords(roots: HostRoots): string[] {
  return (readText(join(roots.proc, 'cmdline')) ?? '').split(/[\s\0]+/).filter(Boolean);
}

/**
 * Every serial console the command line names ("console=ttyS1,115200" → "ttyS1"): any console but a
 * virtual terminal (tty0, tty1) or none. Which UART a name means differs by board and by kernel
 * (ttyS1 is the Pi's mini UART, serial0 an alias), so a caller treats each as using the UART pins.
 */
export function serialConsoles(words: readonly string[]): string[] {
  const out: string[] = [];
  for (const w of words) {
    const m = /^console=([^,\s]+)/.exec(w);
    if (!m) continue;
    const name = m[1]!;
    if (/^tty\d*$/.test(name) || name === 'null' || name === 'netcon0') continue;
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

export interface DeviceTreePins {
  /** the device tree could be read and has pin groups under a GPIO controller */
  available: boolean;
  /** pin number → the enabled nodes whose pinctrl states take it ("serial@7e215040") */
  users: Map<number, string[]>;
}

interface DtNode {
  path: string;
  name: string;
  enabled: boolean;
  pinctrl: number[];
  gpioController: boolean;
  /** pin numbers of this node itself (brcm,pins or pins = "gpio14") */
  pins: number[];
  children: DtNode[];
}

function list(dir: string): { name: string; dir: boolean }[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).map((e) => ({ name: e.name, dir: e.isDirectory() }));
  } catch {
    return [];
  }
}

function readBytes(file: string): Buffer | null {
  try {
    return readFileSync(file);
  } catch {
    return null;
  }
}

/** A device-tree cell list: big-endian 32-bit integers. */
function cells(b: Buffer | null): number[] {
  if (!b) return [];
  const out: number[] = [];
  for (let i = 0; i + 4 <= b.length; i += 4) out.push(b.readUInt32BE(i));
  return out;
}

/** A device-tree string list: NUL-separated. */
function strings(b: Buffer | null): string[] {
  return b ? b.toString('latin1').split('\0').filter(Boolean) : [];
}

/** status absent, "okay" or "ok": the kernel probes the node. */
function enabledStatus(b: Buffer | null): boolean {
  if (!b) return true;
  const s = strings(b)[0] ?? '';
  return s === 'okay' || s === 'ok';
}

function readNode(dir: string, path: string, name: string, phandles: Map<number, DtNode>, parentEnabled: boolean): DtNode {
  const entries = list(dir);
  const files = new Set(entries.filter((e) => !e.dir).map((e) => e.name));
  const node: DtNode = { path, name, enabled: parentEnabled && enabledStatus(files.has('status') ? readBytes(join(dir, 'status')) : null), pinctrl: [], gpioController: files.has('gpio-controller'), pins: [], children: [] };
  for (const f of files) if (/^pinctrl-\d+$/.test(f)) node.pinctrl.push(...cells(readBytes(join(dir, f))));
  if (files.has('phandle')) {
    const [ph] = cells(readBytes(join(dir, 'phandle')));
    if (ph !== undefined) phandles.set(ph, node);
  }
  // Pin numbers: Broadcom's binding (brcm,pins = <14 15>) or the generic one (pins = "gpio14").
  if (files.has('brcm,pins')) node.pins.push(...cells(readBytes(join(dir, 'brcm,pins'))));
  if (files.has('pins')) for (const s of strings(readBytes(join(dir, 'pins')))) {
    const m = /^gpio(\d+)$/.exec(s);
    if (m) node.pins.push(Number(m[1]));
  }
  for (const e of entries) if (e.dir) node.children.push(readNode(join(dir, e.name), `${path}/${e.name}`, e.name, phandles, node.enabled));
  return node;
}

function groupPins(n: DtNode): number[] {
  return [...n.pins, ...n.children.flatMap(groupPins)];
}

/** Where the kernel shows the device tree: /proc/device-tree, or its target in /sys/firmware. */
function deviceTreeRoot(roots: HostRoots): string | null {
  for (const dir of [join(roots.proc, 'device-tree'), join(roots.sys, 'firmware', 'devicetree', 'base')]) if (list(dir).length) return dir;
  return null;
}

/**
 * The pins the enabled device-tree nodes take: each node's pinctrl-N states point (by phandle) at
 * pin groups under a GPIO controller, whose pin numbers are the controller's GPIO offsets (true of
 * the Broadcom and RP1 bindings the Raspberry Pi profiles use). A node the kernel does not probe
 * (status "disabled") takes none; the controller's own pinctrl states are hogs and count.
 */
export function deviceTreePins(roots: HostRoots): DeviceTreePins {
  const users = new Map<number, string[]>();
  const dt = deviceTreeRoot(roots);
  if (!dt) return { available: false, users };
  const phandles = new Map<number, DtNode>();
  const root = readNode(dt, '', '', phandles, true);
  const groups = new Set<DtNode>();
  const walk = (n: DtNode, fn: (n: DtNode) => void) => {
    fn(n);
    n.children.forEach((c) => walk(c, fn));
  };
  walk(root, (n) => {
    if (n.gpioController) for (const c of n.children) if (groupPins(c).length) groups.add(c);
  });
  walk(root, (n) => {
    if (!n.enabled) return;
    for (const ph of n.pinctrl) {
      const g = phandles.get(ph);
      if (!g || !groups.has(g)) continue;
      for (const pin of groupPins(g)) {
        const u = users.get(pin) ?? [];
        if (!u.includes(n.name)) u.push(n.name);
        users.set(pin, u);
      }
    }
  });
  return { available: groups.size > 0, users };
}

export interface PinctrlPin {
  /** the pin's function as the driver reads it from the hardware now: "alt5", "gpio_in" */
  function?: string;
  /** the device that muxed it ("3f215040.serial"); undefined when unclaimed */
  owner?: string;
}

export interface PinctrlPins {
  /** pinctrl's debugfs directory of the chip was found and read (debugfs is mounted and readable) */
  available: boolean;
  dir?: string;
  pins: Map<number, PinctrlPin>;
}

/** A function that leaves the pin to GPIO: what the pin is when nothing else has it. */
export function isGpioFunction(fn: string): boolean {
  return /^(gpio|gpio_in|gpio_out|input|output|none)$/i.test(fn);
}

/**
 * pinctrl's view of a GPIO chip's pins, from /sys/kernel/debug/pinctrl/<device>-<label>/: `pins`
 * (the function register as the driver reads it: "pin 14 (gpio14) 0:? function alt5 in lo; …") and
 * `pinmux-pins` (who muxed it: "pin 14 (gpio14): 3f215040.serial (GPIO UNCLAIMED) function alt5 …").
 * Pin numbers are the chip's offsets on the Raspberry Pi controllers (one GPIO range from pin 0).
 */
export function pinctrlPins(roots: HostRoots, chipLabel: string): PinctrlPins {
  const base = join(roots.sys, 'kernel', 'debug', 'pinctrl');
  const entry = list(base).find((e) => e.dir && (e.name === chipLabel || e.name.endsWith(`-${chipLabel}`)));
  const pins = new Map<number, PinctrlPin>();
  if (!entry) return { available: false, pins };
  const dir = join(base, entry.name);
  const pinsText = readText(join(dir, 'pins'));
  const muxText = readText(join(dir, 'pinmux-pins'));
  if (pinsText === null && muxText === null) return { available: false, pins };
  for (const l of (pinsText ?? '').split('\n')) {
    const m = /^pin (\d+) \([^)]*\).*?\bfunction (\S+)/.exec(l);
    if (m) pins.set(Number(m[1]), { function: m[2]!.replace(/[;,]$/, '') });
  }
  for (const l of (muxText ?? '').split('\n')) {
    const m = /^pin (\d+) \([^)]*\):\s*(.*)$/.exec(l);
    if (!m) continue;
    const p = pins.get(Number(m[1])) ?? {};
    const owner = m[2]!.split(/\s+/)[0] ?? '';
    if (owner && owner !== 'UNCLAIMED' && !owner.startsWith('(')) p.owner = owner;
    const fn = /\bfunction (\S+)/.exec(m[2]!);
    if (fn && !p.function) p.function = fn[1];
    pins.set(Number(m[1]), p);
  }
  return { available: true, dir, pins };
}
