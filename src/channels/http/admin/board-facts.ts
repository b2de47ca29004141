// The board's temperature, throttling and the disk of the home, for the Home view. Each fact that
// cannot be read on this machine is null with the reason, never a guess: a PC has no vcgencmd, a
// container may hide /sys/class/thermal.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statfsSync } from 'node:fs';
import { join } from 'node:path';

export interface BoardFacts {
  /** degrees Celsius of the hottest thermal zone, or null */
  temperatureC: number | null;
  temperatureNote?: string;
  /** vcgencmd get_throttled in words ("ok", "under-voltage now", ...) or "unknown" */
  throttling: string;
  /** raw value of get_throttled, when read */
  throttledRaw?: string;
  disk: { path: string; freeBytes: number; totalBytes: number } | null;
}

/** The bits of `vcgencmd get_throttled` (Raspberry Pi firmware documentation). */
const THROTTLE_BITS: [number, string][] = [
  [0x1, 'under-voltage now'],
  [0x2, 'ARM frequency capped now'],
  [0x4, 'throttled now'],
  [0x8, 'soft temperature limit now'],
  [0x10000, 'under-voltage has occurred'],
  [0x20000, 'frequency capping has occurred'],
  [0x40000, 'throttling has occurred'],
  [0x80000, 'soft temperature limit has occurred'],
];

export function throttleText(value: number): string {
  const said = THROTTLE_BITS.filter(([bit]) => value & bit).map(([, text]) => text);
  return said.length ? said.join(', ') : 'ok';
}

function temperature(root: string): { c: number | null; note?: string } {
  const dir = join(root, 'class', 'thermal');
  let zones: string[];
  try {
    zones = readdirSync(dir).filter((z) => z.startsWith('thermal_zone'));
  } catch {
    return { c: null, note: `${dir} cannot be read on this machine` };
  }
  const temps = zones.flatMap((z) => {
    try {
      const milli = Number(readFileSync(join(dir, z, 'temp'), 'utf8').trim());
      return Number.isFinite(milli) ? [milli / 1000] : [];
    } catch {
      return [];
    }
  });
  return temps.length ? { c: Math.max(...temps) } : { c: null, note: `no readable thermal zone in ${dir}` };
}

function throttled(): Promise<{ text: string; raw?: string }> {
  return new Promise((resolve) => {
    execFile('vcgencmd', ['get_throttled'], { timeout: 2000 }, (err, stdout) => {
      const m = /throttled=(0x[0-9a-f]+)/i.exec(String(stdout));
      if (err || !m) return resolve({ text: 'unknown' });
      resolve({ text: throttleText(Number(m[1])), raw: m[1] });
    });
  });
}

export async function boardFacts(home: string, sysRoot = '/sys'): Promise<BoardFacts> {
  const t = temperature(sysRoot);
  const th = await throttled();
  let disk: { freeBytes: number; totalBytes: number } | undefined;
  try {
    // As doctor and the disk-full messages count it (store/disk.ts): what an unprivileged writer may use.
    const st = statfsSync(home);
    disk = { freeBytes: st.bavail * st.bsize, totalBytes: st.blocks * st.bsize };
  } catch {
    disk = undefined;
  }
  return {
    temperatureC: t.c,
    ...(t.note ? { temperatureNote: t.note } : {}),
    throttling: th.text,
    ...(th.raw ? { throttledRaw: th.raw } : {}),
    disk: disk ? { path: home, ...disk } : null,
  };
}
