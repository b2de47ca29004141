// What the config schema cannot check alone about `board` and `hardware`: that board.profile names a
// known profile (built-in or the user's), that hardware.lines name lines the board has and can do
// what is asked of them, and that confirm and triggers refer to hardware.lines. Run by `config
// validate` and doctor, like the tools' own checks; the issues read like schema issues.
import { ConfigError } from '../../errors.js';
import type { PinclawConfig } from '../../config/schema.js';
import { formatIssues, type ConfigIssue } from '../../config/validate.js';
import type { Paths } from '../../paths.js';
import { closest } from '../../suggest.js';
import { detectWith } from './detect.js';
import { HOST_ROOTS, type HostRoots } from './host-roots.js';
import { loadBoardRegistry, userBoardsDir, type BoardRegistry } from './registry.js';
import { lineIndex, type BoardProfile, type Capability } from './schema.js';
import { chooseBoard } from './select.js';
import { sensorConfigIssues } from '../sensors/config-check.js';

const LINE_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

function str(v: unknown): string {
  return typeof v === 'string' ? `string ${JSON.stringify(v)}` : 'nothing';
}

function required(issues: ConfigIssue[], path: string, value: string | undefined, expected = 'a non-empty string (required)'): boolean {
  if (value !== undefined && value.trim() !== '') return true;
  issues.push({ path, expected, found: str(value) });
  return false;
}

/** Issues of `board` and `hardware` given the known profiles and the board in use (if any). */
export function boardConfigIssues(config: PinclawConfig, registry: BoardRegistry, board: BoardProfile | undefined): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const configured = config.board.profile;
  if (configured !== undefined) {
    const loaded = registry.get(configured);
    const ids = registry.profiles.filter((p) => p.profile.kind === 'sbc').map((p) => p.profile.id);
    if (!loaded) {
      const near = closest(configured, registry.profiles.map((p) => p.profile.id));
      issues.push({ path: 'board.profile', expected: `a board profile id (pinclaw board list): ${ids.join(', ')}`, found: str(configured), ...(near ? { hint: `did you mean '${near}'?` } : {}) });
    } else if (loaded.profile.kind !== 'sbc') {
      issues.push({ path: 'board.profile', expected: `the profile of the computer pinclaw runs on (kind sbc): ${ids.join(', ')}`, found: `${str(configured)}, a ${loaded.profile.kind} profile`, hint: 'microcontroller boards are found on their serial ports' });
    }
  }

  const hw = config.hardware;
  const index = board ? lineIndex(board) : undefined;
  // A line the owner released (hardware.release) may be named; checked below like a line.
  const released = new Set(hw.release.flatMap((r) => (r.line && index?.get(r.line) ? [index.get(r.line)!.name] : [])));
  const always = new Map<string, string>();
  for (const r of board?.reserved ?? []) if (r.when === 'always') for (const l of r.lines) if (!released.has(l)) always.set(l, r.reason);
  const names = new Map<string, number>();
  const boardLines = new Map<string, string>(); // the board line's own name → hardware.lines name
  hw.lines.forEach((l, i) => {
    const at = `hardware.lines[${i}]`;
    if (required(issues, `${at}.name`, l.name)) {
      if (!LINE_NAME.test(l.name!)) issues.push({ path: `${at}.name`, expected: 'a letter, then letters, digits, _ or - (at most 64)', found: str(l.name) });
      else if (names.has(l.name!)) issues.push({ path: `${at}.name`, expected: 'a name no other hardware.lines entry has', found: `${str(l.name)}, also hardware.lines[${names.get(l.name!)}]` });
      else names.set(l.name!, i);
    }
    if (l.initial !== undefined && l.direction !== 'output') issues.push({ path: `${at}.initial`, expected: 'nothing unless direction is "output"', found: str(l.initial) });
    if (!required(issues, `${at}.line`, l.line) || !index || !board) return;
    // chip:offset (an expander such as an MCP23017, or a chip the profile does not describe) is
    // the user's to get right: the GPIO layer checks it when the line is first used.
    if (/^.+:\d+$/.test(l.line!)) return;
    // device:pin, a pin of a board on a serial port (hardware.devices): its profile arrives with the
    // firmware's hello and the pin is checked then.
    const onDevice = /^([^:]+):./.exec(l.line!);
    if (onDevice && hw.devices.some((d) => d.name === onDevice[1])) return;
    const target = index.get(l.line!);
    if (!target) {
      const near = closest(l.line!, [...index.keys()]);
      issues.push({ path: `${at}.line`, expected: `a line of ${board.id} (pinclaw board show ${board.id})`, found: str(l.line), ...(near ? { hint: `did you mean '${near}'?` } : {}) });
      return;
    }
    const reserved = always.get(target.name);
    if (reserved) issues.push({ path: `${at}.line`, expected: `a line ${board.id} does not reserve`, found: `${str(l.line)}, reserved: ${reserved}`, hint: `release it only if nothing uses it: hardware.release [{"line":"${target.name}","reason":"..."}]` });
    const prev = boardLines.get(target.name);
    if (prev !== undefined) issues.push({ path: `${at}.line`, expected: 'a line no other hardware.lines entry uses', found: `${str(l.line)}, also ${JSON.stringify(prev)}` });
    else boardLines.set(target.name, l.name ?? `hardware.lines[${i}]`);
    const needs: Capability[] = [];
    if (l.direction === 'output') needs.push('output');
    if (l.bias === 'pull-up' || l.bias === 'pull-down') needs.push(l.bias);
    for (const cap of needs) {
      if (!target.capabilities.includes(cap)) issues.push({ path: `${at}.line`, expected: `a line with the capability ${JSON.stringify(cap)}`, found: `${str(l.line)} (${target.capabilities.join(', ') || 'no capabilities'})` });
    }
  });

  const lineRef = (path: string, name: string | undefined): number | undefined => {
    if (!required(issues, path, name, 'a hardware.lines name (required)')) return undefined;
    const i = names.get(name!);
    if (i === undefined) {
      const near = closest(name!, [...names.keys()]);
      issues.push({ path, expected: names.size ? `a hardware.lines name: ${[...names.keys()].join(', ')}` : 'a hardware.lines name (there are none)', found: str(name), ...(near ? { hint: `did you mean '${near}'?` } : {}) });
    }
    return i;
  };
  hw.confirm.forEach((n, i) => lineRef(`hardware.confirm[${i}]`, n));
  const releasedAt = new Map<string, number>();
  hw.release.forEach((r, i) => {
    const at = `hardware.release[${i}]`;
    required(issues, `${at}.reason`, r.reason, 'why the line is safe to use (required: board detect, doctor and the audit show it)');
    if (!required(issues, `${at}.line`, r.line) || !index || !board) return;
    const target = index.get(r.line!);
    if (!target) {
      const near = closest(r.line!, [...index.keys()]);
      issues.push({ path: `${at}.line`, expected: `a line of ${board.id} (pinclaw board show ${board.id})`, found: str(r.line), ...(near ? { hint: `did you mean '${near}'?` } : {}) });
      return;
    }
    if (!board.reserved.some((x) => x.lines.includes(target.name))) issues.push({ path: `${at}.line`, expected: `a line ${board.id} reserves (pinclaw board show ${board.id})`, found: `${str(r.line)}, never reserved` });
    const prev = releasedAt.get(target.name);
    if (prev !== undefined) issues.push({ path: `${at}.line`, expected: 'a line no other hardware.release entry names', found: `${str(r.line)}, also hardware.release[${prev}]` });
    else releasedAt.set(target.name, i);
  });
  hw.triggers.forEach((tr, i) => {
    const at = `hardware.triggers[${i}]`;
    const li = lineRef(`${at}.line`, tr.line);
    const l = li === undefined ? undefined : hw.lines[li];
    if (l?.direction === 'output') issues.push({ path: `${at}.line`, expected: 'an input line', found: `${str(tr.line)}, an output` });
    const target = l?.line ? index?.get(l.line) : undefined;
    if (target && !target.capabilities.includes('edge')) issues.push({ path: `${at}.line`, expected: 'a line that can report edges', found: `${str(tr.line)} (${board!.id} ${target.name}: ${target.capabilities.join(', ')})` });
    const owner = config.owner.notify !== undefined && config.owner.notify !== '';
    if (tr.action === 'notify') {
      required(issues, `${at}.text`, tr.text, 'the text to send (required with action notify)');
      // A notify trigger sends to its session's chat or the owner's: with neither it has nobody to tell.
      if (!owner && !/^[a-z]+:.+/.test(tr.session ?? '')) {
        issues.push({ path: `${at}.session`, expected: 'a chat to send to: a CHANNEL:CHAT session such as telegram:12345, or owner.notify set (pinclaw onboard learns it)', found: str(tr.session) });
      }
    } else {
      if (!owner) required(issues, `${at}.session`, tr.session, 'a non-empty string (required unless owner.notify is set)');
      required(issues, `${at}.message`, tr.message);
    }
  });
  hw.sensorTriggers.forEach((s, i) => {
    const at = `hardware.sensorTriggers[${i}]`;
    for (const key of ['bus', 'address', 'register'] as const) {
      if (s[key] === undefined) issues.push({ path: `${at}.${key}`, expected: 'an integer (required)', found: 'nothing' });
    }
    if (s.above === undefined && s.below === undefined) issues.push({ path: at, expected: 'above, below or both', found: 'neither' });
    if (s.above !== undefined && s.below !== undefined && s.below > s.above) issues.push({ path: `${at}.below`, expected: `a number not above "above" (${s.above})`, found: `number ${s.below}` });
    if (s.action === 'notify') {
      required(issues, `${at}.text`, s.text, 'the text to send (required with action notify)');
      if (!config.owner.notify && !/^[a-z]+:.+/.test(s.session ?? '')) {
        issues.push({ path: `${at}.session`, expected: 'a chat to send to: a CHANNEL:CHAT session such as telegram:12345, or owner.notify set (pinclaw onboard learns it)', found: str(s.session) });
      }
    } else {
      if (!config.owner.notify) required(issues, `${at}.session`, s.session, 'a non-empty string (required unless owner.notify is set)');
      required(issues, `${at}.message`, s.message);
    }
  });
  issues.push(...sensorConfigIssues(hw));
  return issues;
}

/**
 * `config validate`'s and doctor's entry: loads the profiles ($PINCLAW_HOME/boards too), finds the
 * board in use, and throws a ConfigError listing every issue, each prefixed with the config file.
 */
export function checkBoardConfig(config: PinclawConfig, paths: Pick<Paths, 'home' | 'config'>, roots: HostRoots = HOST_ROOTS): void {
  const registry = loadBoardRegistry({ userDir: userBoardsDir(paths) });
  const choice = chooseBoard(registry, config.board.profile, detectWith(registry, roots));
  const issues = boardConfigIssues(config, registry, choice.loaded?.profile);
  if (issues.length) throw new ConfigError(formatIssues(issues, paths.config));
}

/** The board profile the gateway would choose, with its camera interfaces: for hardware.cameras' check. */
export function chosenCameraBoard(config: PinclawConfig, paths: Pick<Paths, 'home' | 'config'>, roots: HostRoots = HOST_ROOTS): { id: string; interfaces?: readonly string[] } | undefined {
  const registry = loadBoardRegistry({ userDir: userBoardsDir(paths) });
  const profile = chooseBoard(registry, config.board.profile, detectWith(registry, roots)).loaded?.profile;
  return profile && { id: profile.id, interfaces: profile.camera?.interfaces };
}
