// Durations as people write them in flags and the config: "90s", "15m", "2h", "1d", "1w", or a
// sum such as "1h30m". Shared by `cron add --every`, `--at 20m` and heartbeat.every, so the same
// text means the same span everywhere.

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** What the error messages show as the accepted forms. */
export const DURATION_FORMS = '30s, 15m, 2h, 1d, 1w or a sum such as 1h30m';

/** The span in milliseconds, or undefined when the text is not a duration. "0" is 0. */
export function parseDuration(text: string): number | undefined {
  const s = text.trim().toLowerCase();
  if (s === '0') return 0;
  // Whole units only, largest first is not required ("90m" is fine); a bare number is refused
  // because "5" could mean seconds or minutes.
  if (!/^(\d+(ms|s|m|h|d|w))+$/.test(s)) return undefined;
  let total = 0;
  for (const [, n, unit] of s.matchAll(/(\d+)(ms|s|m|h|d|w)/g)) total += Number(n) * UNIT_MS[unit!]!;
  return Number.isSafeInteger(total) ? total : undefined;
}

/** 3_600_000 → "1h", 5_400_000 → "1h30m": the shortest sum of whole units. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0';
  let rest = ms;
  let out = '';
  for (const [unit, size] of Object.entries(UNIT_MS).sort((a, b) => b[1] - a[1])) {
    if (rest >= size) {
      out += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  return out;
}
