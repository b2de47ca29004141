// Which profile describes this machine: the configured one (board.profile) wins over detection,
// because the owner knows what they wired; detection is the fallback. Shared by `board detect`,
// doctor's board check and the prompt, so they never disagree.
import type { Detection } from './detect.js';
import { unknownProfileMessage, type BoardRegistry, type LoadedProfile } from './registry.js';

export type BoardChoice =
  | { how: 'configured' | 'detected'; loaded: LoadedProfile; detail: string }
  | { how: 'none'; loaded?: undefined; detail: string }
  /** board.profile names no known profile */
  | { how: 'unknown'; loaded?: undefined; detail: string };

export function chooseBoard(registry: BoardRegistry, configured: string | undefined, detection: Detection): BoardChoice {
  if (configured !== undefined) {
    const loaded = registry.get(configured);
    if (!loaded) return { how: 'unknown', detail: `board.profile: ${unknownProfileMessage(configured, registry)}` };
    const detected = detection.sbc?.profile.profile.id;
    const disagree = detected && detected !== configured ? `; detection says ${detected} (${JSON.stringify(detection.deviceTreeModel)})` : '';
    return { how: 'configured', loaded, detail: `${configured} (board.profile)${disagree}` };
  }
  if (detection.sbc) return { how: 'detected', loaded: detection.sbc.profile, detail: detection.summary };
  return { how: 'none', detail: detection.summary };
}
