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
  /** what the owner can do about each problem found, said after them */
  const fixes = new Set<string>();
  const detected = detection.sbc?.profile.profile;
  const setProfile = (id: string) => `pinclaw config set board.profile ${id}`;
  const WHICH = '`pinclaw board detect` says which board this is, `pinclaw board list` shows the profiles';
  if (choice.how === 'unknown') {
    state = 'fail';
    const near = /did you mean '([^']+)'/.exec(choice.detail)?.[1];
    fixes.add(detected
      ? `${setProfile(detected.id)} (detection says this is a ${detected.name}), or delete board.profile from ${paths.config} to use detection`
      : `${setProfile(near ?? 'ID')} with the profile of this machine (${WHICH}), or delete board.profile from ${paths.config}`);
  }
  /** The chosen profile's chips are not all there: the wrong profile, or a driver not loaded. */
  const wrongChips = () => {
    const name = choice.loaded?.profile.name ?? 'this board';
    if (choice.how === 'configured') {
      fixes.add(detected && detected.id !== choice.loaded?.profile.id
        ? `${setProfile(detected.id)} (detection says this is a ${detected.name}), or delete board.profile from ${paths.config} to use detection`
        : `if this is not a ${name}, ${setProfile('ID')} with this machine's profile (${WHICH}); if it is, its GPIO driver is not loaded (check the kernel and its device tree)`);
    } else {
      fixes.add(`the ${name}'s GPIO driver is not loaded (check the kernel and its device tree); if detection chose the wrong board, ${setProfile('ID')} (${WHICH})`);
    }
  };

  // The chip check applies to the chosen profile, detected or configured.
  for (const c of choice.loaded?.profile.gpio.chips ?? []) {
    const found = detection.chips.find((g) => g.label === c.label);
    if (!found) {
      parts.push(`no gpiochip labelled ${c.label}: the GPIO tools cannot reach this board's lines`);
      state = state === 'fail' ? state : 'warn';
      wrongChips();
    } else if (found.lines !== null && found.lines !== c.lines) {
      parts.push(`${found.name} ${c.label} has ${found.lines} lines, the profile says ${c.lines}`);
      state = state === 'fail' ? state : 'warn';
      wrongChips();
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
    fixes.add(`correct or remove the skipped profile files (pinclaw board list names each error with its JSON path)`);
  }
  for (const p of registry.problems) {
    parts.push(p);
    state = state === 'fail' ? state : 'warn';
    fixes.add(`correct the profiles named (pinclaw board list, pinclaw board show NAME)`);
  }
  if (config) {
    const issues = boardConfigIssues(config, registry, choice.loaded?.profile).filter((i) => !(choice.how === 'unknown' && i.path === 'board.profile'));
    if (issues.length) {
      parts.push(formatIssues(issues).split('\n').join('; '));
      state = 'fail';
      fixes.add(`correct the keys named (pinclaw config set KEY VALUE; pinclaw config validate lists every problem)`);
    }
  }
  if (fixes.size) parts.push(`fix: ${[...fixes].join('; ')}`);
  return { name: 'board', state, detail: parts.join('; ') };
}
