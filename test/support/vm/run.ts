// runInVm: boots the arch's VM with the caller's files, modules and script, and returns the
// script's exit status and output. The only entry point tests need; see docs/vm-tests.md.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ARCHS, type VmArch } from './arch.js';
import { baseImage, runImage, type GuestFiles } from './image.js';
import { kernel } from './kernel.js';
import { mib, say } from './progress.js';
import { runQemu } from './qemu.js';

export interface RunInVmOptions {
  arch: VmArch;
  /** Guest path → host path (copied with its permission bits) or contents (ELF and "#!" files are made executable). */
  files?: GuestFiles;
  /** Shell script (busybox sh) run as root in /root after boot; stdin is /dev/null. */
  script: string;
  /**
   * Modules loaded before the script, modprobe-style "name param=value ...", dependencies first.
   * A name may be an absolute host path to an out-of-tree .ko built for this kernel.
   */
  modules?: string[];
  /** Kills QEMU and fails after this long, boot included. */
  timeoutMs: number;
  /** Extra kernel command line, appended to the defaults (later settings win). */
  appendCmdline?: string;
  /**
   * Another console instead of the arch's own, e.g. "ttyS1,115200" on raspi3b: the mini UART that
   * Debian's Raspberry Pi images use. The command line names only this one, as on such a system,
   * and QEMU connects that serial port to the harness instead of the first.
   */
  kernelConsole?: string;
  /**
   * Guest RAM in MiB instead of the arch's 1 GiB: the initramfs is unpacked into RAM, and a guest
   * holding both ffmpeg (with its libraries) and node (126 MB) needs more, or the last files are cut
   * short (a "Bus error" when they run).
   */
  memoryMiB?: number;
}

export interface VmResult {
  /** The script's exit status. */
  exitCode: number;
  /** The script's stdout and stderr as the serial console showed them (no kernel messages). */
  output: string;
  /** Kernel messages logged while the script ran (dmesg). */
  kernelLog: string;
  /** The whole console, boot included. */
  console: string;
  kernelRelease: string;
  timings: { prepareMs: number; bootMs: number; scriptMs: number; totalMs: number };
}

export async function runInVm(opts: RunInVmOptions): Promise<VmResult> {
  const spec = ARCHS[opts.arch];
  const started = Date.now();
  const k = await kernel(opts.arch);
  const base = await baseImage(k);
  const workDir = mkdtempSync(join(tmpdir(), `pinclaw-vm-${opts.arch}-`));
  try {
    const nonce = randomBytes(8).toString('hex');
    const image = runImage(spec, base, workDir, {
      files: opts.files ?? {},
      script: opts.script,
      modules: k.modules.resolve(opts.modules ?? [], base.modules),
      nonce,
    });
    const consoleName = opts.kernelConsole?.split(',')[0];
    const serial = consoleName === undefined ? 0 : spec.otherConsoles[consoleName];
    if (serial === undefined) throw new Error(`kernelConsole ${opts.kernelConsole}: the ${opts.arch} VM has ${spec.console}${Object.keys(spec.otherConsoles).map((c) => `, ${c}`).join('')}`);
    // loglevel=4: warnings and worse still show during boot, so a failed boot explains itself.
    const cmdline = [`console=${opts.kernelConsole ?? spec.console}`, 'loglevel=4', 'rdinit=/init', 'panic=-1', opts.appendCmdline ?? ''].join(' ').trim();
    const prepareMs = Date.now() - started;
    const machine = spec.machine;
    say(`booting ${k.kver} on ${machine} (${opts.arch}) with a ${mib(image.bytes)} initramfs`);
    const args = spec.qemuArgs(k.image, k.dtb, image.path, cmdline, serial);
    if (opts.memoryMiB) args[args.indexOf('-m') + 1] = `${opts.memoryMiB}M`;
    const result = await runQemu({
      cmd: spec.qemu,
      args,
      nonce,
      timeoutMs: opts.timeoutMs,
      label: `${opts.arch} VM (${spec.qemu} -M ${machine})`,
    });
    const totalMs = Date.now() - started;
    say(`${opts.arch} VM: booted in ${(result.bootMs / 1000).toFixed(1)} s, script exited ${result.exitCode} after ${(result.scriptMs / 1000).toFixed(1)} s`);
    return {
      exitCode: result.exitCode,
      output: result.output,
      kernelLog: result.kernelLog,
      console: result.console,
      kernelRelease: k.kver,
      timings: { prepareMs, bootMs: result.bootMs, scriptMs: result.scriptMs, totalMs },
    };
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}
