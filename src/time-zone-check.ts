// An unknown time zone named with the nearest known one (Europe/Berln, Europe/Berlin), for the
// config checks and `cron add --tz`. Apart from local-time.ts, which test/local-time.test.ts imports
// in a bare Node (no build), so that one imports nothing of src/.
import { knownZone } from './local-time.js';
import { closest } from './suggest.js';

/**
 * Why `zone` is refused, with the nearest known name when one is close (a typo such as
 * Europe/Berln); undefined when the zone is known. Intl's list is asked only for an unknown zone.
 */
export function unknownZoneText(zone: string): string | undefined {
  if (knownZone(zone)) return undefined;
  const hint = closest(zone, Intl.supportedValuesOf('timeZone'));
  return `unknown time zone '${zone}'${hint ? ` (did you mean '${hint}'?)` : ''}; use an IANA name such as Europe/Berlin`;
}
