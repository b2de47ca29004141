// Shared libraries a dynamically linked program needs in the guest (the single executables link
// glibc and libstdc++), found the way the loader would: PT_INTERP plus the DT_NEEDED closure,
// taken from the target's glibc on this host (the cross sysroot for arm64).
import { existsSync } from 'node:fs';
import { basename, join, posix } from 'node:path';
import type { ArchSpec } from './arch.js';
import { readElfInfo } from './elf.js';

export interface GuestLib {
  guestPath: string;
  hostPath: string;
}

export interface LibPlan {
  files: GuestLib[];
  /** The loader's path from PT_INTERP, pointed at the copy in the multiarch directory. */
  symlinks: { guestPath: string; target: string }[];
}

function findLib(spec: ArchSpec, name: string, neededBy: string): string {
  for (const dir of spec.libDirs) {
    const path = join(dir, name);
    if (existsSync(path)) return path;
  }
  throw new Error(`${neededBy} needs ${name}, which is in none of ${spec.libDirs.join(', ')}`);
}

/** Plans the libraries for `programs` (host paths; non-ELF and static files need nothing). */
export function planLibs(spec: ArchSpec, programs: { hostPath: string; guestPath: string }[]): LibPlan {
  const libs = new Map<string, string>();
  const symlinks = new Map<string, string>();
  const queue: { hostPath: string; label: string }[] = programs.map((p) => ({ hostPath: p.hostPath, label: p.guestPath }));
  while (queue.length) {
    const { hostPath, label } = queue.shift()!;
    const info = readElfInfo(hostPath);
    if (!info) continue;
    if (info.machine !== spec.elfMachine) {
      throw new Error(`${label} is an ELF file for machine ${info.machine}, not ${spec.arch} (${spec.elfMachine})`);
    }
    if (info.interp) {
      const name = basename(info.interp);
      const target = posix.join(spec.guestLibDir, name);
      if (info.interp !== target) symlinks.set(info.interp, target);
      if (!libs.has(name)) {
        libs.set(name, findLib(spec, name, label));
      }
    }
    for (const name of info.needed) {
      if (libs.has(name)) continue;
      const path = findLib(spec, name, label);
      libs.set(name, path);
      queue.push({ hostPath: path, label: name });
    }
  }
  return {
    files: [...libs].map(([name, hostPath]) => ({ guestPath: posix.join(spec.guestLibDir, name), hostPath })),
    symlinks: [...symlinks].map(([guestPath, target]) => ({ guestPath, target })),
  };
}
