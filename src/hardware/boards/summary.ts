// The board as the model reads it in the system prompt (PromptInput.board): what the machine is,
// how its lines are named, which to leave alone. Short, because it is sent with every turn, and
// stable for a given board and setup, so the prompt cache keeps working.
import type { ReservationState } from './reservations.js';
import type { BoardProfile, Capability } from './schema.js';
import { byText } from './order.js';

export interface SummaryOptions {
  /** how the profile was chosen; shown so the model knows how sure the identification is */
  how?: 'configured' | 'detected';
  /** the reservations' current state; without it each is given with its condition */
  reservations?: readonly ReservationState[];
  /** microcontroller boards attached over serial */
  attached?: readonly AttachedBoard[];
}

export interface AttachedBoard {
  profile: BoardProfile;
  /** the port, preferably its stable /dev/serial/by-id name */
  device: string;
  /** identified only by a generic USB-serial chip */
  guess?: boolean;
}

/** "GPIO0-GPIO27", "D0-D13, A0-A5", "PA0-PA10, PA13-PA14, PB0": runs of consecutive numbers. */
export function nameRanges(names: readonly string[]): string {
  const parsed = names.map((n) => {
    const m = /^(.*?)(\d+)$/.exec(n);
    return m ? { prefix: m[1]!, n: Number(m[2]), name: n } : { prefix: n, n: NaN, name: n };
  });
  parsed.sort((a, b) => byText(a.prefix, b.prefix) || a.n - b.n);
  const out: string[] = [];
  for (let i = 0; i < parsed.length; ) {
    let j = i;
    while (j + 1 < parsed.length && parsed[j + 1]!.prefix === parsed[i]!.prefix && parsed[j + 1]!.n === parsed[j]!.n + 1) j++;
    out.push(j > i ? `${parsed[i]!.name}-${parsed[j]!.name}` : parsed[i]!.name);
    i = j + 1;
  }
  return out.join(', ');
}

/** The reason up to its first colon or semicolon: "I2C1 (SDA1/SCL1)". */
function shortReason(reason: string): string {
  return reason.split(/[:;]/)[0]!.trim();
}

function withCapability(profile: BoardProfile, cap: Capability): string[] {
  return profile.gpio.lines.filter((l) => l.capabilities.includes(cap)).map((l) => l.name);
}

function linesPart(p: BoardProfile): string[] {
  const lines = p.gpio.lines;
  if (!lines.length) return ['No GPIO lines for pinclaw on this board.'];
  const parts: string[] = [];
  const chip = p.gpio.chips[0];
  parts.push(`Lines ${nameRanges(lines.map((l) => l.name))}${chip ? ` (gpiochip ${chip.label}, line = offset)` : ''}.`);
  const headered = lines.filter((l) => l.header !== undefined).sort((a, b) => a.header! - b.header!);
  if (headered.length) parts.push(`Header pin → line: ${headered.map((l) => `${l.header}=${l.name}`).join(' ')}.`);
  const aliases = lines.flatMap((l) => (l.aliases ?? []).map((a) => `${a}=${l.name}`));
  if (aliases.length) parts.push(`Other names: ${aliases.join(' ')}.`);
  const pwm = withCapability(p, 'pwm');
  const adc = withCapability(p, 'adc');
  if (pwm.length) parts.push(`PWM: ${nameRanges(pwm)}.`);
  if (adc.length) parts.push(`Analog in: ${nameRanges(adc)}${p.mcu?.adcBits ? ` (${p.mcu.adcBits}-bit)` : ''}.`);
  for (const b of p.i2c) parts.push(`I2C bus ${b.bus}: SDA ${b.sda}, SCL ${b.scl}.`);
  return parts;
}

function reservedPart(p: BoardProfile, states?: readonly ReservationState[]): string | undefined {
  if (!p.reserved.length) return undefined;
  const items = p.reserved.map((r, i) => {
    const what = [...r.lines, ...(r.pins ?? [])].join(', ');
    const state = states?.[i];
    const released = state?.released.length ? ` (released by the owner: ${state.released.map((x) => x.line).join(', ')})` : '';
    if (state && !state.active) return released ? `${what}: free to use${released}` : undefined;
    const held = state ? [...state.held, ...(r.pins ?? [])].join(', ') : what;
    if (r.when === 'always') return `${held}: ${shortReason(r.reason)}${released}`;
    if (state) return `${held}: ${shortReason(r.reason)}, held now${released}`;
    return `${what}: ${shortReason(r.reason)} when ${r.when}`;
  });
  const shown = items.filter((x): x is string => x !== undefined);
  return shown.length ? `Leave alone: ${shown.join('; ')}.` : undefined;
}

export function boardSummary(profile: BoardProfile, opts: SummaryOptions = {}): string {
  const head = `${profile.name} (board profile ${profile.id}${opts.how ? `, ${opts.how}` : ''}). ${profile.description}`;
  const parts = [head];
  if (profile.electrical) parts.push(`Logic level ${profile.electrical.logicVolts} V${profile.electrical.fiveVoltTolerant ? '' : ', not 5 V tolerant'}.`);
  parts.push(...linesPart(profile));
  const reserved = reservedPart(profile, opts.reservations);
  if (reserved) parts.push(reserved);
  const attached = attachedSummary(opts.attached ?? []);
  if (attached) parts.push(attached);
  return parts.join('\n');
}

/** The microcontroller boards on serial ports, one line each; '' when there are none. */
export function attachedSummary(attached: readonly AttachedBoard[]): string {
  return attached
    .map((a) => `Attached on ${a.device}: ${a.guess ? 'probably ' : ''}${a.profile.name} (${a.profile.id}), lines ${nameRanges(a.profile.gpio.lines.map((l) => l.name))}.`)
    .join('\n');
}
