// Whether this machine can run the VMs (and build what the smoke test boots into them), with the
// reason and the fix when it cannot. Tests skip with that reason locally and fail with it in CI.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { ARCHS, type VmArch } from './arch.js';

export type Availability = { ok: true } | { ok: false; reason: string };

function onPath(cmd: string): boolean {
  return spawnSync('sh', ['-c', 'command -v "$1"', 'sh', cmd], { stdio: 'ignore' }).status === 0;
}

function firstMissing(checks: [ok: boolean, reason: string][]): Availability {
  const missing = checks.find(([ok]) => !ok);
  return missing ? { ok: false, reason: missing[1] } : { ok: true };
}

/** QEMU for the arch, and apt able to fetch the guest kernel and busybox. */
export function vmAvailable(arch: VmArch): Availability {
  const spec = ARCHS[arch];
  return firstMissing([
    [onPath(spec.qemu), `${spec.qemu} is not installed (apt-get install ${spec.qemuPackage})`],
    [onPath('apt-get') && onPath('apt-cache') && onPath('dpkg-deb'), 'apt-get/apt-cache/dpkg-deb are missing: the VM images come from Debian packages'],
    [
      spawnSync('apt-cache', ['show', '--no-all-versions', spec.kernelMeta], { stdio: 'ignore' }).status === 0,
      `apt does not know ${spec.kernelMeta}` + (spec.debArch === 'arm64' ? ' (dpkg --add-architecture arm64 && apt-get update)' : ' (apt-get update)'),
    ],
  ]);
}

/** What buildKernelModule and buildStaticProgram need for the arch, beyond vmAvailable. */
export function toolchainAvailable(arch: VmArch): Availability {
  const spec = ARCHS[arch];
  const cc12 = `${spec.crossCompile ?? ''}gcc-12`;
  const libc = arch === 'arm64' ? '/usr/aarch64-linux-gnu/lib/libc.a' : '/usr/lib/x86_64-linux-gnu/libc.a';
  const pkg = arch === 'arm64' ? 'g++-aarch64-linux-gnu' : 'g++';
  return firstMissing([
    [onPath('make'), 'make is not installed (apt-get install make)'],
    [onPath(cc12), `${cc12} is not installed (apt-get install ${pkg})`],
    [onPath(spec.cc), `${spec.cc} is not installed (apt-get install ${pkg})`],
    [existsSync(libc), `${libc} is missing: static probes need the target's libc (apt-get install ${pkg})`],
  ]);
}
