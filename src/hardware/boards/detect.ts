// Which boards this machine is and has: the single-board computer from its device-tree model,
// the microcontroller boards on USB serial ports by their USB ids, the GPIO chips present. Reads
// only, never opens a device, and never throws: a machine it does not understand is an answer.
import { join } from 'node:path';
import { gpioChips, type GpioChipInfo } from './gpiochips.js';
import { HOST_ROOTS, readText, type HostRoots } from './host-roots.js';
import type { BoardRegistry, LoadedProfile } from './registry.js';
import { usbSerialPorts, type UsbSerialPort } from './usb-serial.js';

export interface ModelMatch {
  profile: LoadedProfile;
  /** the identify.deviceTreeModel prefix that matched */
  prefix: string;
}

export interface SerialBoard extends UsbSerialPort {
  /** ids of the profiles listing this port's USB id */
  profiles: string[];
  /**
   * exact: one profile names this USB id; ambiguous: several do (the same debugger on several
   * boards); guess: only as a generic USB-serial bridge; none: no profile knows it.
   */
  match: 'exact' | 'ambiguous' | 'guess' | 'none';
  /** the matching identify.usb entries' notes */
  notes: string[];
}

export interface ExpectedChip {
  label: string;
  lines: number;
  /** the chip present with that label, or null */
  found: GpioChipInfo | null;
}

export interface Detection {
  /** /proc/device-tree/model without its NUL; null on machines without a device tree */
  deviceTreeModel: string | null;
  /** the single-board computer profile that matched, or null */
  sbc: ModelMatch | null;
  /** other profiles that matched as well as `sbc` (two profiles claiming one model) */
  alsoMatched: string[];
  /** one line saying what the machine is, for people */
  summary: string;
  chips: GpioChipInfo[];
  /** the matched profile's chips, each with the chip found for it */
  expectedChips: ExpectedChip[];
  serial: SerialBoard[];
  memTotalMiB: number | null;
}

/** The device-tree model string: NUL-terminated in the file, sometimes with stray whitespace. */
export function readDeviceTreeModel(roots: HostRoots): string | null {
  const raw = readText(join(roots.proc, 'device-tree', 'model')) ?? readText(join(roots.sys, 'firmware', 'devicetree', 'base', 'model'));
  const model = raw?.replace(/\0+$/, '').split('\0')[0]?.trim();
  return model ? model : null;
}

/**
 * Profiles whose model prefix the model starts with, at a word end ("Raspberry Pi 3 Model B" does
 * not match "Raspberry Pi 3 Model B+"); the longest prefix wins, so a specific profile beats a
 * general one. Several profiles with equally long prefixes are all returned.
 */
export function matchDeviceTreeModel(model: string, profiles: readonly LoadedProfile[]): ModelMatch[] {
  const hits: ModelMatch[] = [];
  for (const p of profiles) {
    for (const prefix of p.profile.identify.deviceTreeModel ?? []) {
      const rest = model.slice(prefix.length);
      if (model.startsWith(prefix) && (rest === '' || /^\s/.test(rest))) hits.push({ profile: p, prefix });
    }
  }
  const longest = Math.max(0, ...hits.map((h) => h.prefix.length));
  const best = hits.filter((h) => h.prefix.length === longest);
  // One entry per profile even if two of its prefixes tie.
  return best.filter((h, i) => best.findIndex((o) => o.profile === h.profile) === i);
}

export function matchUsbSerial(port: UsbSerialPort, profiles: readonly LoadedProfile[]): SerialBoard {
  if (!port.usb) return { ...port, profiles: [], match: 'none', notes: [] };
  const { vid, pid } = port.usb;
  const exact: string[] = [];
  const generic: string[] = [];
  const notes: string[] = [];
  for (const p of profiles) {
    const entry = p.profile.identify.usb?.find((u) => u.vid === vid && u.pid === pid);
    if (!entry) continue;
    (entry.generic ? generic : exact).push(p.profile.id);
    if (entry.note && !notes.includes(entry.note)) notes.push(entry.note);
  }
  if (exact.length) return { ...port, profiles: exact, match: exact.length === 1 ? 'exact' : 'ambiguous', notes };
  if (generic.length) return { ...port, profiles: generic, match: 'guess', notes };
  return { ...port, profiles: [], match: 'none', notes };
}

function memTotalMiB(roots: HostRoots): number | null {
  const m = /^MemTotal:\s+(\d+)\s+kB/m.exec(readText(join(roots.proc, 'meminfo')) ?? '');
  return m ? Math.round(Number(m[1]) / 1024) : null;
}

function summarize(model: string | null, matches: ModelMatch[]): string {
  if (matches[0]) {
    const p = matches[0].profile.profile;
    const others = matches.slice(1).map((m) => m.profile.profile.id);
    return `${p.name} (${p.id}), from the device-tree model ${JSON.stringify(model)}${others.length ? `; ${others.join(', ')} match${others.length === 1 ? 'es' : ''} it as well` : ''}`;
  }
  if (model === null) return 'no board profile matches this machine (device-tree model: none; this looks like a PC or a container)';
  return `no board profile matches this machine (device-tree model: ${JSON.stringify(model)}); a profile in $PINCLAW_HOME/boards/ can describe it (docs/hardware.md)`;
}

/**
 * detectBoards over only the profiles that could match what this machine shows: the same answer,
 * validating one or two profiles instead of all (for the gateway; the CLI lists them all anyway).
 */
export function detectWith(registry: Pick<BoardRegistry, 'candidates'>, roots: HostRoots = HOST_ROOTS): Detection {
  // The model and the serial ports are read once here and handed on: /sys/class/tty is a scan of
  // every tty, and a gateway's start detects three times (config check, hardware, prompt).
  const model = readDeviceTreeModel(roots);
  const ports = usbSerialPorts(roots);
  return detectBoards(registry.candidates(model, ports.flatMap((p) => (p.usb ? [p.usb] : []))), roots, { model, ports });
}

export function detectBoards(profiles: readonly LoadedProfile[], roots: HostRoots = HOST_ROOTS, read?: { model: string | null; ports: UsbSerialPort[] }): Detection {
  const model = read ? read.model : readDeviceTreeModel(roots);
  const sbcProfiles = profiles.filter((p) => p.profile.kind === 'sbc');
  const matches = model ? matchDeviceTreeModel(model, sbcProfiles) : [];
  const chips = gpioChips(roots);
  const sbc = matches[0] ?? null;
  const expectedChips: ExpectedChip[] = (sbc?.profile.profile.gpio.chips ?? []).map((c) => ({
    label: c.label,
    lines: c.lines,
    found: chips.find((g) => g.label === c.label) ?? null,
  }));
  return {
    deviceTreeModel: model,
    sbc,
    alsoMatched: matches.slice(1).map((m) => m.profile.profile.id),
    summary: summarize(model, matches),
    chips,
    expectedChips,
    serial: (read?.ports ?? usbSerialPorts(roots)).map((port) => matchUsbSerial(port, profiles)),
    memTotalMiB: memTotalMiB(roots),
  };
}
