// Which reserved lines are reserved right now. The rule fails closed: a reservation holds unless
// pinclaw can show its pins are free. `when: "always"` always holds. A conditional one (`activeIf`)
// holds when anything says the pins are in use: one of its device paths exists (/dev/i2c-1), the
// command line has one of its words or any serial console (for UART lines: console=ttyS1 is the
// Pi's mini UART on GPIO14/15), an enabled device-tree node takes the pin through pinctrl, pinctrl
// in debugfs shows a function other than GPIO or a mux owner, or the GPIO uAPI says another
// consumer holds the line. It is free only when a source that sees every pin (pinctrl in debugfs,
// or the device tree's pin assignments) was read and nothing said "in use". Otherwise it holds,
// saying pinclaw cannot tell. The owner may release a line in the config (hardware.release), which
// wins over all of this and is named wherever the reservation is shown.
import { HOST_ROOTS, entryExists, hostPath, type HostRoots } from './host-roots.js';
import { cmdlineWords, deviceTreePins, isGpioFunction, pinctrlPins, serialConsoles, type DeviceTreePins, type PinctrlPins } from './pin-usage.js';
import { chipOf, lineIndex, type BoardLine, type BoardProfile, type Reservation } from './schema.js';

/** hardware.release: a line the owner takes back from the profile's reservations, and why. */
export interface Release {
  line?: string;
  reason?: string;
}

export interface ReservationState {
  reservation: Reservation;
  /** true: held now (in use, or not shown free); false: shown free, or every line released */
  active: boolean;
  /** why, in words: "always", "console=ttyS1 on the kernel command line (a serial console)", … */
  because: string;
  /** the lines held now: all of them, less those the owner released */
  held: string[];
  /** lines the owner released (hardware.release), with the owner's reason */
  released: { line: string; reason: string }[];
}

/** What the GPIO uAPI says of a line (used, and by whom); undefined when it cannot be asked. */
export type LineProbe = (line: BoardLine, chipLabel: string) => { used: boolean; consumer: string } | undefined;

export interface ReservationOptions {
  roots?: HostRoots;
  release?: readonly Release[];
  /** the GPIO uAPI's line info, when a GPIO backend is open */
  probe?: LineProbe;
  /** our own consumer name: a line pinclaw holds is not "used by another" */
  ownConsumer?: string;
}

const UART_CAPS = new Set(['uart-tx', 'uart-rx']);

interface Sources {
  words: string[];
  consoles: string[];
  dt: DeviceTreePins;
  pinctrl: Map<string, PinctrlPins>;
}

/** One source's word that a line is in use; `line` is appended when the words hold for several lines. */
interface Evidence {
  text: string;
  line?: string;
}

/** Why one line is in use now, each source's words; [] when none says so. */
function lineEvidence(profile: BoardProfile, l: BoardLine, s: Sources, o: ReservationOptions, roots: HostRoots): { inUse: Evidence[]; seen: boolean } {
  const inUse: Evidence[] = [];
  const chip = chipOf(profile, l);
  if (l.capabilities.some((c) => UART_CAPS.has(c))) for (const c of s.consoles) inUse.push({ text: `console=${c} on the kernel command line: a serial console uses the UART` });
  const users = s.dt.users.get(l.offset);
  if (users?.length) inUse.push({ text: `${users.join(', ')} (enabled in the device tree) take${users.length === 1 ? 's' : ''}`, line: l.name });
  let pc = s.pinctrl.get(chip);
  if (!pc) s.pinctrl.set(chip, (pc = pinctrlPins(roots, chip)));
  const pin = pc.available ? pc.pins.get(l.offset) : undefined;
  if (pin?.owner) inUse.push({ text: `pinctrl: ${pin.owner}${pin.function ? ` (function ${pin.function})` : ''} holds`, line: l.name });
  else if (pin?.function && !isGpioFunction(pin.function)) inUse.push({ text: `pinctrl: function ${pin.function} (not GPIO) on`, line: l.name });
  const info = o.probe?.(l, chip);
  if (info?.used && info.consumer !== (o.ownConsumer ?? 'pinclaw')) inUse.push({ text: `the GPIO uAPI: ${info.consumer ? `'${info.consumer}'` : 'the kernel'} holds`, line: l.name });
  // Seen: a source that would have named this pin's user was read.
  return { inUse, seen: s.dt.available || (pc.available && pc.pins.has(l.offset)) };
}

/** "serial@7e215040 (enabled in the device tree) takes GPIO14, GPIO15": each source once, its lines after it. */
function words(evidence: readonly Evidence[]): string[] {
  const byText = new Map<string, string[]>();
  for (const e of evidence) {
    const lines = byText.get(e.text) ?? [];
    if (e.line && !lines.includes(e.line)) lines.push(e.line);
    byText.set(e.text, lines);
  }
  return [...byText].map(([text, lines]) => (lines.length ? `${text} ${lines.join(', ')}` : text));
}

export function reservationStates(profile: BoardProfile, opts: ReservationOptions | HostRoots = {}): ReservationState[] {
  const o: ReservationOptions = 'proc' in opts ? { roots: opts } : opts;
  const roots = o.roots ?? HOST_ROOTS;
  const index = lineIndex(profile);
  const released = new Map<string, string>();
  for (const r of o.release ?? []) {
    const l = r.line ? index.get(r.line) : undefined;
    if (l && !released.has(l.name)) released.set(l.name, r.reason ?? '');
  }
  let sources: Sources | undefined;
  const src = (): Sources => {
    if (sources) return sources;
    const words = cmdlineWords(roots);
    return (sources = { words, consoles: serialConsoles(words), dt: deviceTreePins(roots), pinctrl: new Map() });
  };

  return profile.reserved.map((r): ReservationState => {
    const rel = r.lines.filter((n) => released.has(n)).map((n) => ({ line: n, reason: released.get(n)! }));
    const held = r.lines.filter((n) => !released.has(n));
    const state = (active: boolean, because: string): ReservationState => ({ reservation: r, active: active && (held.length > 0 || (r.pins?.length ?? 0) > 0), because, held: active ? held : [], released: rel });
    if (rel.length && !held.length && !r.pins?.length) return state(false, `released by the owner (hardware.release: ${rel.map((x) => `${x.line}: ${x.reason}`).join('; ')})`);
    if (r.when === 'always' || !r.activeIf) return state(true, 'always');
    const because: string[] = [];
    for (const path of r.activeIf.anyExists ?? []) {
      const local = hostPath(roots, path);
      if (local && entryExists(local)) because.push(`${path} exists`);
    }
    const s = src();
    // A console word is said once, by the per-line console evidence below, when the lines are the UART.
    const uart = held.some((n) => index.get(n)?.capabilities.some((c) => UART_CAPS.has(c)));
    for (const word of r.activeIf.cmdlineHas ?? []) {
      const hit = s.words.find((w) => w === word || w.startsWith(`${word},`));
      if (hit && !(uart && s.consoles.some((c) => hit.startsWith(`console=${c}`)))) because.push(`${hit} on the kernel command line`);
    }
    let allSeen = true;
    const evidence: Evidence[] = [];
    for (const name of held) {
      const l = index.get(name);
      if (!l) continue;
      const e = lineEvidence(profile, l, s, o, roots);
      evidence.push(...e.inUse);
      allSeen &&= e.seen;
    }
    because.push(...words(evidence));
    if (because.length) return state(true, because.join('; '));
    if (!allSeen) return state(true, 'pinclaw cannot show the pins are free (neither pinctrl in debugfs nor the device tree says what uses them)');
    return state(false, 'free: nothing in the device tree, pinctrl or the kernel command line uses them');
  });
}

/** Line name → why it is reserved now, for a tool that is about to touch a line. */
export function reservedNow(states: readonly ReservationState[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of states) {
    if (!s.active) continue;
    for (const line of s.held) if (!out.has(line)) out.set(line, s.because === 'always' ? s.reservation.reason : `${s.reservation.reason} (${s.because})`);
  }
  return out;
}

/** Line name → the owner's reason, for the lines hardware.release took back (the audit row names it). */
export function releasedLines(states: readonly ReservationState[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of states) for (const r of s.released) out.set(r.line, r.reason);
  return out;
}
