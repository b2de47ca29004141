// Kernel modules for the guest, with their dependencies. Debian's kernel packages ship no
// modules.dep (the package's postinst runs depmod on the installed system), so the dependency
// graph comes from where depmod gets it: each module's own `depends=` in .modinfo.
import { readdirSync } from 'node:fs';
import { basename, isAbsolute, join, relative } from 'node:path';
import { readModinfo } from './elf.js';

/** A module to load at boot, in load order: dependencies first. */
export interface ModuleLoad {
  name: string;
  hostPath: string;
  /** Where it goes in the guest: /lib/modules/<kver>/... for the kernel's own, /lib/modules/extra for others. */
  guestPath: string;
  params: string;
}

/** Module names treat '-' and '_' alike (the kernel does too). */
export function canonical(name: string): string {
  return name.replace(/-/g, '_');
}

export class ModuleTree {
  private index: Map<string, string> | null = null;

  /** `root` is an unpacked linux-image package; `kver` its release, e.g. 6.1.0-56-arm64. */
  constructor(readonly root: string, readonly kver: string) {}

  private get dir(): string {
    return join(this.root, 'lib', 'modules', this.kver);
  }

  private lookup(name: string): string {
    if (!this.index) {
      this.index = new Map();
      const walk = (dir: string): void => {
        for (const entry of readdirSync(dir, { withFileTypes: true })) {
          const path = join(dir, entry.name);
          if (entry.isDirectory()) walk(path);
          else if (entry.name.endsWith('.ko')) this.index!.set(canonical(entry.name.slice(0, -3)), path);
        }
      };
      walk(join(this.dir, 'kernel'));
    }
    const found = this.index.get(canonical(name));
    if (!found) throw new Error(`kernel ${this.kver} has no module named ${name} (built in, or not built at all for this kernel?)`);
    return found;
  }

  /**
   * Resolves "name [param=value ...]" requests (modprobe's syntax) into a load order. A request
   * whose name is an absolute host path to a .ko is an out-of-tree module; its dependencies still
   * come from this kernel. Modules in `alreadyLoaded` (the image's base modules) are left out.
   */
  resolve(requests: string[], alreadyLoaded: string[] = []): ModuleLoad[] {
    const order: ModuleLoad[] = [];
    const loaded = new Set(alreadyLoaded.map(canonical));
    const seen = new Set<string>();
    const visit = (name: string, hostPath: string, params: string, chain: string[]): void => {
      const key = canonical(name);
      if (loaded.has(key)) return;
      if (seen.has(key)) {
        if (params) {
          const loaded = order.find((m) => canonical(m.name) === key);
          if (loaded && !loaded.params) loaded.params = params;
        }
        return;
      }
      if (chain.includes(key)) throw new Error(`module dependency cycle: ${[...chain, key].join(' → ')}`);
      const depends = readModinfo(hostPath).get('depends')?.[0] ?? '';
      for (const dep of depends.split(',').filter(Boolean)) visit(dep, this.lookup(dep), '', [...chain, key]);
      seen.add(key);
      const guestPath = hostPath.startsWith(this.dir)
        ? join('/lib/modules', this.kver, relative(this.dir, hostPath))
        : join('/lib/modules', this.kver, 'extra', basename(hostPath));
      order.push({ name, hostPath, guestPath, params });
    };
    for (const request of requests) {
      const [target, ...params] = request.trim().split(/\s+/);
      if (!target) continue;
      if (isAbsolute(target)) visit(basename(target, '.ko'), target, params.join(' '), []);
      else visit(target, this.lookup(target), params.join(' '), []);
    }
    return order;
  }
}
