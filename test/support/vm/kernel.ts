// The guest kernel: Debian 12's current kernel image package for the arch, unpacked into the cache.
// The same kernel (same ABI, same config) runs on real Debian-based boards, which is the point.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { packages, pinnedDependency, unpacked, type Package } from './apt.js';
import { ARCHS, type VmArch } from './arch.js';
import { ModuleTree } from './kmods.js';

export interface Kernel {
  arch: VmArch;
  pkg: Package;
  /** The static busybox that goes with it (resolved in the same apt call). */
  busybox: Package;
  /** Kernel release, e.g. 6.1.0-56-arm64 (what uname -r prints, and the modules directory). */
  kver: string;
  /** ABI name shared by the header packages, e.g. 6.1.0-56. */
  abi: string;
  image: string;
  dtb: string | null;
  modules: ModuleTree;
}

/** The kernel apt would install now (what the metapackage pins); needs only the local apt lists. */
export async function kernel(arch: VmArch): Promise<Kernel> {
  const spec = ARCHS[arch];
  const [meta, busybox] = packages([spec.kernelMeta, spec.busybox]) as [Package, Package];
  const pkg = pinnedDependency(meta, spec.kernelPrefix);
  const kver = pkg.name.slice(spec.kernelPrefix.length);
  const abi = kver.slice(0, kver.lastIndexOf('-'));
  const root = await unpacked(pkg);
  const image = join(root, 'boot', `vmlinuz-${kver}`);
  const dtb = spec.dtb ? join(root, spec.dtb.replace('<kver>', kver)) : null;
  for (const path of [image, dtb]) {
    if (path && !existsSync(path)) throw new Error(`${pkg.name} ${pkg.version} has no ${path.slice(root.length)}`);
  }
  return { arch, pkg, busybox, kver, abi, image, dtb, modules: new ModuleTree(root, kver) };
}
