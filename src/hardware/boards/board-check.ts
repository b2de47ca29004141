// doctor's 'board' check: which profile describes this machine and how it was chosen, whether its
// GPIO chips are there, which boards sit on USB serial ports, and what is wrong with profiles or
// the board/hardware config. A machine without any hardware is fine (ok, and says so).
import type { PinclawConfig } from '../../config/schema.js';
import { formatIssues } from '../../config/validate.js';
import type { Paths } from '../../paths.js';
import { boardConfigIssues } from './config-check.js';
import { detectBoards, type Detection } from './detect.js';
import { HOST_ROOTS, type HostRoots } from './host-roots.js';
import { loadBoardRegistry, userBoardsDir } from './registry.js';
import { serialBoardText } from './render.js';
import { reservationStates } from './reservations.js';
import { chooseBoard } from './select.js';

export interface BoardCheck {
  name: 'board';
  state: 'ok' | 'warn' | 'fail';
  detail: string;
}

function chipsText(d: Detection): string {
  if (!d.chips.length) return 'no GPIO chips';
  return `GPIO ${d.chips.map((c) => `${c.name}${c.label ? ` ${c.label}` : ''}${c.lines ? ` (${c.lines})` : ''}`).join(', ')}`;
}

export function boardCheck(paths: Pick<Paths, 'home' | 'config'>, config: PinclawConfig | undefined, roots: HostRoots = HOST_ROOTS): BoardCheck {
  const registry = loadBoardRegistry({ userDir: userBoardsDir(paths) });
  const detection = detectBoards(registry.profiles, roots);
  const choice = chooseBoard(registry, config?.board.profile, detection);
  let state: BoardCheck['state'] = 'ok';
  const parts: string[] = [choice.detail];
  if (choice.how === 'unknown') state = 'fail';

  // The chip check applies to the chosen profile, detected or configured.
  for (const c of choice.loaded?.profile.gpio.chips ?? []) {
    const found = detection.chips.find((g) => g.label === c.label);
    if (!found) {
      parts.push(`no gpiochip labelled ${c.label}: the GPIO tools cannot reach this board's lines`);
      state = state === 'fail' ? state : 'warn';
    } else if (found.lines !== null && found.lines !== c.lines) {
      parts.push(`${found.name} ${c.label} has ${found.lines} lines, the profile says ${c.lines}`);
      state = state === 'fail' ? state : 'warn';
    }
  }
  parts.push(chipsText(detection));
  // The owner's releases: named every time, with what would hold the line without them.
  const profile = choice.loaded?.profile;
  if (profile?.kind === 'sbc' && config?.hardware.release.length) {
    const without = reservationStates(profile, { roots });
    for (const s of reservationStates(profile, { roots, release: config.hardware.release })) {
      for (const r of s.released) {
        const would = without.find((w) => w.reservation === s.reservation);
        parts.push(`${r.line} released by the owner (hardware.release: ${r.reason})${would?.active ? `; without the release it is reserved: ${s.reservation.reason} (${would.because})` : ''}`);
      }
    }
  }
  parts.push(detection.serial.length ? detection.serial.map(serialBoardText).join(', ') : 'no USB serial boards');

  for (const s of registry.skipped) {
    parts.push(`skipped ${s.file}: ${s.errors.length} error${s.errors.length === 1 ? '' : 's'} (pinclaw board list shows them)`);
    state = state === 'fail' ? state : 'warn';
  }
  for (const p of registry.problems) {
    parts.push(p);
    state = state === 'fail' ? state : 'warn';
  }
  if (config) {
    const issues = boardConfigIssues(config, registry, choice.loaded?.profile).filter((i) => !(choice.how === 'unknown' && i.path === 'board.profile'));
    if (issues.length) {
      parts.push(formatIssues(issues).split('\n').join('; '));
      state = 'fail';
    }
  }
  return { name: 'board', state, detail: parts.join('; ') };
}
