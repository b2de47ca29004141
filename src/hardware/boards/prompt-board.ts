// The `## Board` text of the system prompt (TurnDeps.board), in one call for whoever assembles the
// runtime: the board in use (configured or detected), its reservations as they are now, and the
// microcontroller boards found on USB serial ports. Computed once at start: the prompt must stay
// byte-identical between turns for the provider's cache, and boards are not hot-plugged often.
import type { PinclawConfig } from '../../config/schema.js';
import type { Paths } from '../../paths.js';
import { detectWith } from './detect.js';
import { HOST_ROOTS, type HostRoots } from './host-roots.js';
import { loadBoardRegistry, userBoardsDir } from './registry.js';
import { reservationStates } from './reservations.js';
import { chooseBoard } from './select.js';
import { attachedSummary, boardSummary, type AttachedBoard } from './summary.js';

/** undefined when there is nothing to say (the prompt then says no board is known). */
export function boardPromptText(paths: Pick<Paths, 'home'>, config: Pick<PinclawConfig, 'board'> & { hardware?: Pick<PinclawConfig['hardware'], 'release'> }, roots: HostRoots = HOST_ROOTS): string | undefined {
  const registry = loadBoardRegistry({ userDir: userBoardsDir(paths) });
  const detection = detectWith(registry, roots);
  const choice = chooseBoard(registry, config.board.profile, detection);
  const attached: AttachedBoard[] = [];
  for (const s of detection.serial) {
    // An ambiguous port names several boards; the model would only be misled by picking one.
    if (s.match !== 'exact' && s.match !== 'guess') continue;
    const loaded = registry.get(s.profiles[0]!);
    if (loaded) attached.push({ profile: loaded.profile, device: s.byId ?? s.device, guess: s.match === 'guess' });
  }
  if (choice.loaded) {
    return boardSummary(choice.loaded.profile, { how: choice.how, reservations: reservationStates(choice.loaded.profile, { roots, release: config.hardware?.release ?? [] }), attached });
  }
  if (attached.length) return `This computer has no board profile (${detection.deviceTreeModel === null ? 'no device tree' : `device-tree model ${JSON.stringify(detection.deviceTreeModel)}`}) and no GPIO for pinclaw.\n${attachedSummary(attached)}`;
  return undefined;
}
