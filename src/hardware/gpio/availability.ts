// Why the GPIO tools cannot run on this machine, in the words doctor uses and with the fix (the
// group to join, the board to name, the driver or overlay to load); undefined when they can. The
// tools stay registered either way, so a call answers this instead of "unknown tool".
import { basename } from 'node:path';
import { errorMessage } from '../../errors.js';
import type { BoardProfile } from '../boards/schema.js';
import { describeErrno, type GroupOf } from './errors.js';
import type { GpioBackend } from './types.js';

export interface GpioAvailabilityInput {
  /** the backend chosen, or the error choosing one threw */
  backend: GpioBackend | Error;
  /** the board profile in use (board.profile or detection) */
  board?: Pick<BoardProfile, 'id' | 'name' | 'gpio'>;
  /** how the board was chosen: a configured profile may be the wrong one */
  configured: boolean;
  groupOf: GroupOf;
}

const WHICH_BOARD = '`pinclaw board detect` says which board this is';

export function gpioUnavailable(i: GpioAvailabilityInput): string | undefined {
  if (i.backend instanceof Error) return `the GPIO backend cannot start: ${errorMessage(i.backend)}`;
  const backend = i.backend;
  const board = i.board;
  const paths = backend.chips();
  if (!paths.length) {
    if (!board) return 'no GPIO chip on this machine (no /dev/gpiochip*)';
    const wanted = board.gpio.chips.map((c) => c.label).join(', ');
    return `no GPIO chip on this machine (no /dev/gpiochip*), but the board profile ${board.name} (${board.id}) has ${wanted || 'GPIO'}: `
      + (i.configured ? `if this is not a ${board.name}, set board.profile to this machine's board or remove it (${WHICH_BOARD}); if it is, its GPIO driver is not loaded (check the kernel and its device tree)` : 'its GPIO driver is not loaded (check the kernel and its device tree)');
  }
  // A chip that cannot be opened: the same words as a failed call (the group to join).
  const chips: { path: string; label?: string }[] = [];
  let firstError: { path: string; err: unknown } | undefined;
  for (const path of paths) {
    try {
      chips.push({ path, label: backend.chipInfo(path).label });
    } catch (err) {
      chips.push({ path });
      firstError ??= { path, err };
    }
  }
  const labels = chips.flatMap((c) => (c.label === undefined ? [] : [c.label]));
  if (!labels.length && firstError) {
    const code = (firstError.err as { code?: unknown }).code;
    return describeErrno(typeof code === 'string' ? code : 'EIO', { chip: firstError.path, group: i.groupOf(firstError.path) }, errorMessage(firstError.err));
  }
  // A profile whose chips are all absent names lines this machine does not have: a wrong board.
  const wanted = board?.gpio.chips.map((c) => c.label) ?? [];
  if (board && wanted.length && !wanted.some((l) => labels.includes(l))) {
    const found = chips.map((c) => `${basename(c.path)}${c.label ? ` (${c.label})` : ''}`).join(', ');
    return `no gpiochip labelled ${wanted.join(' or ')}: the GPIO tools cannot reach the ${board.name} (${board.id}) profile's lines; this machine has ${found}. `
      + (i.configured ? `Set board.profile to this machine's board or remove it (${WHICH_BOARD}).` : `Set board.profile to this machine's board (${WHICH_BOARD}).`);
  }
  return undefined;
}
