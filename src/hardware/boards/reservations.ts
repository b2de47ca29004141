// Which reserved lines are reserved right now. A reservation with `when: "always"` always is; one
// with `activeIf` is when one of its device paths exists (/dev/i2c-1 once I2C is on) or the kernel
// command line has one of its words (console=serial0); any other is reported as unknown, so a
// GPIO tool can warn instead of guessing.
import { join } from 'node:path';
import { entryExists, HOST_ROOTS, hostPath, readText, type HostRoots } from './host-roots.js';
import type { BoardProfile, Reservation } from './schema.js';

export interface ReservationState {
  reservation: Reservation;
  /** true: reserved now; false: not now; null: cannot tell on this machine */
  active: boolean | null;
  /** what made it active ("/dev/i2c-1 exists", "console=serial0,115200 on the kernel command line") */
  because?: string;
}

export function reservationStates(profile: BoardProfile, roots: HostRoots = HOST_ROOTS): ReservationState[] {
  let cmdline: string[] | undefined;
  return profile.reserved.map((r): ReservationState => {
    if (r.when === 'always') return { reservation: r, active: true, because: 'always' };
    if (!r.activeIf) return { reservation: r, active: null };
    for (const path of r.activeIf.anyExists ?? []) {
      const local = hostPath(roots, path);
      if (local && entryExists(local)) return { reservation: r, active: true, because: `${path} exists` };
    }
    if (r.activeIf.cmdlineHas) {
      cmdline ??= (readText(join(roots.proc, 'cmdline')) ?? '').split(/[\s\0]+/).filter(Boolean);
      for (const word of r.activeIf.cmdlineHas) {
        const hit = cmdline.find((w) => w === word || w.startsWith(`${word},`));
        if (hit) return { reservation: r, active: true, because: `${hit} on the kernel command line` };
      }
    }
    return { reservation: r, active: false };
  });
}

/** Line name → why it is reserved now, for a tool that is about to touch a line. */
export function reservedNow(states: readonly ReservationState[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of states) {
    if (s.active !== true) continue;
    for (const line of s.reservation.lines) if (!out.has(line)) out.set(line, s.reservation.reason);
  }
  return out;
}
