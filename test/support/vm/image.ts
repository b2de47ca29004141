// The initramfs, in two concatenated cpio archives. The base (busybox, /init, device nodes, the
// modules every boot needs) depends only on package versions and this code, so it is built once and
// cached. The per-run archive holds what the caller passed (files, script, modules, the libraries
// its programs need) and is appended to a copy of the base: the kernel unpacks both in order.
import { copyFileSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { unpacked, type Package } from './apt.js';
import { ARCHS, type ArchSpec, type VmArch } from './arch.js';
import { cachePath, cached, sha256 } from './cache.js';
import { CpioWriter, writeCpio } from './cpio.js';
import { BASE_MODULES, initScript, RUN_DIR } from './init-script.js';
import type { Kernel } from './kernel.js';
import type { ModuleLoad } from './kmods.js';
import { planLibs } from './libs.js';
import { mib, say } from './progress.js';

/** Bump when the base image's layout changes in a way the inputs below do not capture. */
const BASE_LAYOUT = 1;

/** Directories of the base image; the per-run archive leaves them (and their modes) alone. */
const BASE_DIRS = ['/bin', '/dev', '/etc', '/lib', '/mnt', '/proc', '/root', '/run', '/sys', '/tmp', '/var'];

export interface BaseImage {
  path: string;
  busybox: Package;
  /** Modules /init loads from the base image, so a run must not load them again. */
  modules: string[];
}

function moduleList(modules: ModuleLoad[]): Buffer {
  return Buffer.from(modules.map((m) => `${m.guestPath} ${m.params}`.trimEnd()).join('\n') + '\n');
}

function addModules(w: CpioWriter, modules: ModuleLoad[]): void {
  for (const m of modules) w.hostFile(m.guestPath, m.hostPath, 0o644);
}

export async function baseImage(k: Kernel): Promise<BaseImage> {
  const spec = ARCHS[k.arch];
  const busybox = k.busybox;
  const init = initScript(spec);
  const modules = k.modules.resolve(spec.baseModules);
  const key = sha256(String(BASE_LAYOUT), k.arch, k.pkg.version, k.kver, busybox.version, init, moduleList(modules)).slice(0, 16);
  const path = cachePath('base', `${k.arch}-${k.kver}-${key}.cpio`);
  const names = modules.map((m) => m.name);
  if (existsSync(path)) return { path, busybox, modules: names };
  const busyboxRoot = await unpacked(busybox);
  await cached(path, (staging) => {
    say(`building the ${k.arch} base initramfs`);
    const bytes = writeCpio(staging, (w) => {
      for (const dir of BASE_DIRS) w.dir(dir, dir === '/tmp' ? 0o1777 : 0o755);
      w.hostFile('/bin/busybox', join(busyboxRoot, 'bin', 'busybox'), 0o755);
      w.symlink('/bin/sh', 'busybox');
      // The kernel opens /dev/console for init's stdio before /init can mount devtmpfs.
      w.charDevice('/dev/console', 5, 1);
      w.charDevice('/dev/null', 1, 3, 0o666);
      w.file('/etc/passwd', Buffer.from('root:x:0:0:root:/root:/bin/sh\n'));
      w.file('/etc/group', Buffer.from('root:x:0:\n'));
      w.file('/init', Buffer.from(init), 0o755);
      addModules(w, modules);
      w.file(BASE_MODULES, moduleList(modules));
    });
    say(`built the ${k.arch} base initramfs (${mib(bytes)})`);
  });
  return { path, busybox, modules: names };
}

export type GuestFiles = Record<string, string | Buffer>;

export interface RunImage {
  path: string;
  bytes: number;
  modules: ModuleLoad[];
}

const ELF_MAGIC = Buffer.from([0x7f, 0x45, 0x4c, 0x46]);

/**
 * Mode for in-memory files: programs and scripts (ELF or "#!") are executable, the rest is not.
 * Host files keep their own permission bits.
 */
function bufferMode(data: Buffer): number {
  return data.subarray(0, 4).equals(ELF_MAGIC) || data.subarray(0, 2).toString() === '#!' ? 0o755 : 0o644;
}

/**
 * Writes the initrd for one run into `workDir`: the cached base, then the per-run archive.
 * In-memory ELF files are written to `workDir` first so their libraries can be planned too.
 */
export function runImage(spec: ArchSpec, base: BaseImage, workDir: string, opts: { files: GuestFiles; script: string; modules: ModuleLoad[]; nonce: string }): RunImage {
  const programs: { hostPath: string; guestPath: string }[] = [];
  for (const [guestPath, source] of Object.entries(opts.files)) {
    if (!guestPath.startsWith('/')) throw new Error(`guest path ${guestPath} must be absolute`);
    if (typeof source === 'string') {
      if (!existsSync(source)) throw new Error(`file for ${guestPath} does not exist: ${source}`);
      programs.push({ hostPath: source, guestPath });
    } else if (source.subarray(0, 4).equals(ELF_MAGIC)) {
      const hostPath = join(workDir, `elf-${programs.length}`);
      writeFileSync(hostPath, source);
      programs.push({ hostPath, guestPath });
    }
  }
  const libs = planLibs(spec, programs);
  const path = join(workDir, 'initrd.cpio');
  copyFileSync(base.path, path);
  const baseBytes = statSync(base.path).size;
  const bytes = writeCpio(
    path,
    (w) => {
      w.file(posix.join(RUN_DIR, 'nonce'), Buffer.from(`${opts.nonce}\n`));
      w.file(posix.join(RUN_DIR, 'script.sh'), Buffer.from(opts.script), 0o755);
      w.file(posix.join(RUN_DIR, 'modules'), moduleList(opts.modules));
      addModules(w, opts.modules);
      for (const lib of libs.files) w.hostFile(lib.guestPath, lib.hostPath, 0o755);
      for (const link of libs.symlinks) w.symlink(link.guestPath, link.target);
      for (const [guestPath, source] of Object.entries(opts.files)) {
        if (typeof source === 'string') w.hostFile(guestPath, source);
        else w.file(guestPath, source, bufferMode(source));
      }
    },
    { dirs: BASE_DIRS },
  );
  return { path, bytes: baseBytes + bytes, modules: opts.modules };
}
