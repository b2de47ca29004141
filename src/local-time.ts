// The day and the clock time the prompt shows, without ICU when the zone is the host's own.
// Why: the first Intl.DateTimeFormat of a process loads ICU's locale, calendar and pattern tables
// into the C heap, 1.4 MiB resident that no collection gives back (measured in a settled Node 24
// process), and every turn formats the date. V8's Date local-time methods use the host's zone without
// that cost, so for the host's zone the text is built from them, in the words Intl gives for 'en-GB'
// (test/local-time.test.ts compares the two over a year of days and hours, in zones with and without
// daylight saving time). Any other zone goes through Intl, one cached formatter per zone.
// Hand-written on purpose: two fixed English formats, no parsing.
import { readlinkSync } from 'node:fs';

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const IANA = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;
// ICU reports these aliases of UTC as 'UTC'.
const UTC_ALIASES = new Set(['UTC', 'Etc/UTC', 'Etc/UCT', 'UCT', 'Etc/Universal', 'Universal', 'Etc/Zulu', 'Zulu', 'Etc/GMT', 'GMT', 'Etc/Greenwich', 'Greenwich', 'GMT0', 'Etc/GMT0', 'GMT+0', 'Etc/GMT+0', 'GMT-0', 'Etc/GMT-0']);

/**
 * The host's zone as ICU finds it (TZ, else the /etc/localtime link), or undefined when it cannot be
 * read that way (a TZ rule such as "CET-1CEST", a copied /etc/localtime): then Intl is asked.
 */
export function hostZoneName(env: NodeJS.ProcessEnv = process.env, localtime = '/etc/localtime'): string | undefined {
  let name: string | undefined;
  if (env.TZ !== undefined && env.TZ !== '') {
    name = env.TZ.startsWith(':') ? env.TZ.slice(1) : env.TZ;
  } else {
    try {
      const link = readlinkSync(localtime);
      const at = link.lastIndexOf('zoneinfo/');
      if (at >= 0) name = link.slice(at + 'zoneinfo/'.length).replace(/^(?:posix|right)\//, '');
    } catch {
      return undefined;
    }
  }
  if (name === undefined || !IANA.test(name)) return undefined;
  if (UTC_ALIASES.has(name)) return 'UTC';
  // A digit without a slash is a POSIX rule ("CET-1CEST", "UTC0") or a legacy name ("EST5EDT"):
  // Intl knows what ICU makes of it.
  return !name.includes('/') && /\d/.test(name) ? undefined : name;
}

let hostZone: string | undefined;
/** The host's IANA zone: read without ICU where possible (see the top of this file). */
export function systemZone(): string {
  return (hostZone ??= hostZoneName() ?? Intl.DateTimeFormat().resolvedOptions().timeZone);
}

const isHost = (tz: string | undefined): boolean => tz === undefined || tz === systemZone();

const two = (n: number) => String(n).padStart(2, '0');

// ICU formatters are costly to build and hold native memory: one per zone, reused.
const days = new Map<string, Intl.DateTimeFormat>();
const clocks = new Map<string, Intl.DateTimeFormat>();

/** "Sunday, 1 March 2026" in the zone (undefined: the host's), as Intl's 'en-GB' full date style. */
export function dayText(now: Date, tz: string | undefined): string {
  if (isHost(tz)) return `${DAYS[now.getDay()]}, ${now.getDate()} ${MONTHS[now.getMonth()]} ${now.getFullYear()}`;
  let f = days.get(tz!);
  if (!f) days.set(tz!, (f = new Intl.DateTimeFormat('en-GB', { timeZone: tz, dateStyle: 'full' })));
  return f.format(now);
}

/** "HH:MM" in the zone (undefined: the host's), 24-hour. */
export function clockTime(now: Date, tz: string | undefined): string {
  if (isHost(tz)) return `${two(now.getHours())}:${two(now.getMinutes())}`;
  let f = clocks.get(tz!);
  if (!f) clocks.set(tz!, (f = new Intl.DateTimeFormat('en-GB', { timeZone: tz, hour: '2-digit', minute: '2-digit', hour12: false })));
  return f.format(now);
}

const stamps = new Map<string, Intl.DateTimeFormat>();

/**
 * "Sunday, 1 March 2026 at 11:05:07 GMT+01:00" in the zone (undefined: the host's). The host's zone
 * shows its UTC offset; another zone shows what Intl's 'en-GB' long time style gives (its
 * abbreviation where it has one: "CET").
 */
export function dateTimeText(now: Date, tz: string | undefined): string {
  if (isHost(tz)) {
    const off = -now.getTimezoneOffset();
    const abs = Math.abs(off);
    const zone = `GMT${off < 0 ? '-' : '+'}${two(Math.floor(abs / 60))}:${two(abs % 60)}`;
    return `${dayText(now, undefined)} at ${two(now.getHours())}:${two(now.getMinutes())}:${two(now.getSeconds())} ${zone}`;
  }
  let f = stamps.get(tz!);
  if (!f) stamps.set(tz!, (f = new Intl.DateTimeFormat('en-GB', { timeZone: tz, dateStyle: 'full', timeStyle: 'long' })));
  return f.format(now);
}

/** Whether Intl knows the zone; the host's is known without asking it. */
export function knownZone(tz: string): boolean {
  if (isHost(tz)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

