// Board profiles and detection as text for people (`pinclaw board list|show|detect`). The --json
// forms are the data itself; this is only layout.
import type { Detection, SerialBoard } from './detect.js';
import type { LoadedProfile, SkippedProfile } from './registry.js';
import type { ReservationState } from './reservations.js';
import type { BoardLine } from './schema.js';
import type { BoardChoice } from './select.js';

/** Left-aligned columns; the last column is not padded. */
export function table(rows: readonly (readonly string[])[], indent = ''): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((r) => indent + r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd());
}

export function sourceText(p: LoadedProfile): string {
  if (p.source === 'built-in') return 'built-in';
  return `user ${p.file}${p.overrides ? ` (overrides the built-in ${p.overrides})` : ''}`;
}

/** "ttyACM0: arduino-uno", or why the port's board is uncertain. */
export function serialBoardText(s: SerialBoard): string {
  const id = s.usb ? `${s.usb.vid}:${s.usb.pid}` : 'no USB id';
  switch (s.match) {
    case 'exact':
      return `${s.tty}: ${s.profiles[0]}`;
    case 'ambiguous':
      return `${s.tty}: ${s.profiles.join(' or ')} (${id} is on each; set the board in use)`;
    case 'guess':
      return `${s.tty}: perhaps ${s.profiles.join(' or ')} (${id} is a generic USB-serial chip)`;
    case 'none':
      return `${s.tty}: ${id}, no profile`;
  }
}

export function renderList(profiles: readonly LoadedProfile[]): string[] {
  return table([['ID', 'KIND', 'NAME', 'SOURCE'], ...profiles.map((p) => [p.profile.id, p.profile.kind, p.profile.name, sourceText(p)])]);
}

export function renderSkipped(skipped: readonly SkippedProfile[]): string[] {
  return skipped.flatMap((s) => [`skipped ${s.file}:`, ...s.errors.map((e) => `  ${e}`)]);
}

/** "a", "a or b", "a, b or c" */
function orList(items: readonly string[]): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}

export function renderProfile(loaded: LoadedProfile): string[] {
  const p = loaded.profile;
  const out: string[] = [`${p.id}: ${p.name} (${p.kind}, ${sourceText(loaded) === 'built-in' ? `built-in ${loaded.file}` : sourceText(loaded)})`, p.description, ''];
  const facts: string[][] = [];
  if (p.identify.deviceTreeModel) facts.push(['identify', `device-tree model starting with ${p.identify.deviceTreeModel.map((m) => JSON.stringify(m)).join(' or ')}`]);
  for (const u of p.identify.usb ?? []) facts.push([facts.some((f) => f[0] === 'identify') ? '' : 'identify', `USB ${u.vid}:${u.pid}${u.generic ? ' (generic: a guess)' : ''}${u.note ? ` ${u.note}` : ''}`]);
  if (p.identify.network) facts.push(['identify', `on the network${p.identify.network.mdnsPrefix ? ` (mDNS ${p.identify.network.mdnsPrefix}…)` : ''}: ${p.identify.network.note}`]);
  if (!p.identify.deviceTreeModel && !p.identify.usb && !p.identify.network) facts.push(['identify', 'not detected: name it in the config']);
  const e = p.electrical;
  if (e) facts.push(['electrical', `${e.logicVolts} V logic${e.fiveVoltTolerant ? ', 5 V tolerant' : ', not 5 V tolerant'}${e.maxPinCurrentMa !== undefined ? `, at most ${e.maxPinCurrentMa} mA per pin` : ''}${e.note ? `; ${e.note}` : ''}`]);
  if (p.memory) facts.push(['memory', `${p.memory.totalMiB} MiB${p.memory.variantsMiB ? ` (variants ${p.memory.variantsMiB.join(', ')} MiB)` : ''}; pinclaw's budget ${p.memory.budgetMiB} MiB${p.memory.note ? ` (${p.memory.note})` : ''}`]);
  if (p.mcu) facts.push(['mcu', `${p.mcu.chip}, ${p.mcu.core} at ${p.mcu.clockMHz} MHz, ${p.mcu.flashKiB} KiB flash, ${p.mcu.ramKiB} KiB RAM${p.mcu.adcBits ? `, ${p.mcu.adcBits}-bit ADC` : ''}; firmware family ${p.mcu.firmware}`]);
  if (p.mcu) facts.push(['numbering', p.mcu.pinNumbering]);
  for (const c of p.gpio.chips) facts.push(['gpio chip', `${c.label}, ${c.lines} lines${c.note ? ` (${c.note})` : ''}`]);
  for (const b of p.i2c) facts.push(['i2c', `bus ${b.bus}: SDA ${b.sda}, SCL ${b.scl}${b.note ? ` (${b.note})` : ''}`]);
  for (const b of p.spi ?? []) facts.push(['spi', `bus ${b.bus}: MOSI ${b.mosi}, MISO ${b.miso}, SCLK ${b.sclk}, CS ${b.cs.join(', ')}${b.note ? ` (${b.note})` : ''}`]);
  if (p.serial) facts.push(['serial', `${p.serial.device ?? 'its USB serial port'} at ${p.serial.baud} baud${p.serial.resetsOnOpen ? `, resets when opened (ready after ${p.serial.readyAfterMs ?? 0} ms)` : ''}${p.serial.note ? `; ${p.serial.note}` : ''}`]);
  if (p.flash) facts.push(['flash', `${p.flash.tool}${p.flash.protocol ? ` -c ${p.flash.protocol}` : ''}${p.flash.baud ? ` at ${p.flash.baud} baud` : ''}${p.flash.note ? `; ${p.flash.note}` : ''}`]);
  out.push(...table(facts.map((f) => [f[0] ? `${f[0]}:` : '', f[1]!])));

  out.push('', `lines (${p.gpio.lines.length}):`);
  if (p.gpio.lines.length) {
    // Columns no line fills (HEADER on a microcontroller) are left out.
    const columns: [string, (l: BoardLine) => string][] = [
      ['NAME', (l) => l.name],
      ['OFFSET', (l) => String(l.offset)],
      ['HEADER', (l) => (l.header === undefined ? '' : String(l.header))],
      ['ALIASES', (l) => (l.aliases ?? []).join(' ')],
      ['CAPABILITIES', (l) => l.capabilities.join(' ')],
      ['NOTE', (l) => l.note ?? ''],
    ];
    const used = columns.filter(([, get], i) => i < 2 || p.gpio.lines.some((l) => get(l) !== ''));
    out.push(...table([used.map(([h]) => h), ...p.gpio.lines.map((l) => used.map(([, get]) => get(l)))], '  '));
  } else out.push('  none');

  out.push('', 'reserved:');
  if (!p.reserved.length) out.push('  none');
  for (const r of p.reserved) {
    const what = [...r.lines, ...(r.pins ?? [])].join(', ');
    const tests = [...(r.activeIf?.anyExists ?? []).map((x) => `${x} exists`)];
    if (r.activeIf?.cmdlineHas) tests.push(`${orList(r.activeIf.cmdlineHas)} on the kernel command line`);
    const test = tests.length ? ` [${orList(tests)}]` : '';
    out.push(`  ${what}: ${r.reason} (${r.when === 'always' ? 'always' : `when ${r.when}`}${test})`);
  }
  if (p.notes?.length) out.push('', 'notes:', ...p.notes.map((n) => `  - ${n}`));
  return out;
}

function chipLines(d: Detection): string[] {
  if (!d.chips.length) return ['none (no /dev/gpiochip*, nothing in /sys/bus/gpio): GPIO tools cannot work on this machine'];
  const lines = d.chips.map((c) => `${c.name}  ${c.label ?? '(label unknown)'}${c.lines ? `, ${c.lines} lines` : ''}`);
  for (const e of d.expectedChips) {
    lines.push(e.found ? `the profile's ${e.label}: ${e.found.name}${e.found.lines !== null && e.found.lines !== e.lines ? ` with ${e.found.lines} lines, not ${e.lines}` : ''}` : `the profile's ${e.label}: NOT FOUND`);
  }
  return lines;
}

export function renderDetection(d: Detection, choice: BoardChoice, configured: string | undefined, reservations: readonly ReservationState[] | undefined): string[] {
  const rows: [string, string][] = [];
  rows.push(['machine', d.summary]);
  rows.push(['config', configured === undefined ? 'board.profile is not set: detection decides' : `board.profile = ${configured}: ${choice.how === 'unknown' ? choice.detail : 'used instead of detection'}`]);
  const budget = choice.loaded?.profile.memory?.budgetMiB;
  if (d.memTotalMiB !== null || budget !== undefined) rows.push(['memory', `${d.memTotalMiB !== null ? `${d.memTotalMiB} MiB` : 'unknown'}${budget !== undefined ? `; pinclaw's budget on ${choice.loaded!.profile.id}: ${budget} MiB` : ''}`]);
  chipLines(d).forEach((l, i) => rows.push([i === 0 ? 'gpio' : '', l]));
  if (reservations) {
    const held = reservations.filter((r) => r.active).map((r) => `${r.held.concat(r.reservation.pins ?? []).join(', ')} (${r.because})`);
    rows.push(['reserved', held.length ? held.join('; ') : 'none now']);
    const released = reservations.flatMap((r) => r.released.map((x) => `${x.line} (${x.reason})`));
    if (released.length) rows.push(['released', `by the owner (hardware.release): ${released.join('; ')}`]);
  }
  if (!d.serial.length) rows.push(['serial', 'no USB serial ports (ttyACM*, ttyUSB*)']);
  d.serial.forEach((s, i) => {
    const usb = s.usb ? `${s.usb.vid}:${s.usb.pid}${s.usb.manufacturer || s.usb.product ? ` ${[s.usb.manufacturer, s.usb.product].filter(Boolean).join(' ')}` : ''}` : 'no USB device found';
    rows.push([i === 0 ? 'serial' : '', `${s.device}  ${usb}: ${serialBoardText(s).replace(/^[^:]*: /, '')}${s.byId ? `; ${s.byId}` : ''}`]);
  });
  return table(rows.map(([k, v]) => [k ? `${k}:` : '', v]));
}
