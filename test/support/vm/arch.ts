// What differs between the two VMs: which Debian packages make them, how QEMU boots them, how the
// guest powers off, and where the target's C library lives on this host.
export type VmArch = 'arm64' | 'x64';

export interface ArchSpec {
  arch: VmArch;
  /** Debian's architecture name and the apt qualifier for it. */
  debArch: 'arm64' | 'amd64';
  /** Metapackage that points at the current kernel image package. */
  kernelMeta: string;
  kernelPrefix: string;
  busybox: string;
  /** Kernel header packages; "<ver>" is replaced by the kernel ABI name, e.g. 6.1.0-56. */
  headers: string[];
  qemu: string;
  /** QEMU machine model. */
  machine: 'raspi3b' | 'pc';
  /** Debian package that provides `qemu`, for the "not installed" message. */
  qemuPackage: string;
  /**
   * `serial`: which of the machine's serial ports carries the console to the harness (default 0,
   * with -nographic's own wiring); the others are left unconnected.
   */
  qemuArgs(kernel: string, dtb: string | null, initrd: string, cmdline: string, serial?: number): string[];
  console: string;
  /**
   * Other kernel consoles the machine has, by QEMU serial port: raspi3b's second port is the
   * BCM2835 mini UART, ttyS1 (the console of Debian's Raspberry Pi images).
   */
  otherConsoles: Record<string, number>;
  /** Device tree inside the kernel package (raspi3b boots with one; the PC does not). */
  dtb: string | null;
  /**
   * Modules in every image, loaded by /init before it mounts anything: configfs (a module in
   * Debian's kernels) for /sys/kernel/config, and on raspi3b the watchdog, its only way to stop
   * QEMU (see powerOff).
   */
  baseModules: string[];
  /**
   * How /init ends the VM. raspi3b has no power-off in QEMU; a watchdog reset with -no-reboot
   * makes QEMU exit. The PC powers off through ACPI.
   */
  powerOff: string;
  /** Target glibc on this host, for dynamically linked programs the caller puts in the guest. */
  libDirs: string[];
  /** Where glibc lives in a Debian guest of this arch (multiarch directory). */
  guestLibDir: string;
  cc: string;
  crossCompile: string | null;
  kbuildArch: string;
  elfMachine: number;
}

export const ARCHS: Record<VmArch, ArchSpec> = {
  arm64: {
    arch: 'arm64',
    debArch: 'arm64',
    kernelMeta: 'linux-image-arm64:arm64',
    kernelPrefix: 'linux-image-',
    busybox: 'busybox-static:arm64',
    headers: ['linux-headers-<ver>-arm64:arm64', 'linux-headers-<ver>-common', 'linux-kbuild-6.1:amd64'],
    qemu: 'qemu-system-aarch64',
    machine: 'raspi3b',
    qemuPackage: 'qemu-system-arm',
    // One TCG thread: multi-threaded TCG starves the boot CPU on a shared 2-core machine.
    qemuArgs: (kernel, dtb, initrd, cmdline, serial = 0) => [
      '-M', 'raspi3b', '-accel', 'tcg,thread=single', '-m', '1G',
      '-kernel', kernel, ...(dtb ? ['-dtb', dtb] : []), '-initrd', initrd, '-append', cmdline,
      '-nographic', '-no-reboot',
      ...(serial ? [...Array.from({ length: serial }, () => ['-serial', 'null']).flat(), '-serial', 'stdio', '-monitor', 'none'] : []),
    ],
    console: 'ttyAMA0',
    otherConsoles: { ttyS1: 1 },
    dtb: 'usr/lib/linux-image-<kver>/broadcom/bcm2837-rpi-3-b.dtb',
    baseModules: ['configfs', 'bcm2835_wdt'],
    powerOff: 'reboot -f',
    libDirs: ['/usr/aarch64-linux-gnu/lib'],
    guestLibDir: '/lib/aarch64-linux-gnu',
    cc: 'aarch64-linux-gnu-gcc',
    crossCompile: 'aarch64-linux-gnu-',
    kbuildArch: 'arm64',
    elfMachine: 0xb7,
  },
  x64: {
    arch: 'x64',
    debArch: 'amd64',
    kernelMeta: 'linux-image-amd64:amd64',
    kernelPrefix: 'linux-image-',
    busybox: 'busybox-static:amd64',
    headers: ['linux-headers-<ver>-amd64:amd64', 'linux-headers-<ver>-common', 'linux-kbuild-6.1:amd64'],
    qemu: 'qemu-system-x86_64',
    machine: 'pc',
    qemuPackage: 'qemu-system-x86',
    // -cpu max: Node 24 wants a newer x86-64 than QEMU's default qemu64 model offers.
    qemuArgs: (kernel, _dtb, initrd, cmdline) => [
      '-M', 'pc', '-accel', 'tcg,thread=single', '-cpu', 'max', '-m', '1G',
      '-kernel', kernel, '-initrd', initrd, '-append', cmdline,
      '-nographic', '-no-reboot', '-net', 'none',
    ],
    console: 'ttyS0',
    otherConsoles: {},
    dtb: null,
    baseModules: ['configfs'],
    powerOff: 'poweroff -f',
    // pulseaudio/: libpulse's RUNPATH, where its libpulsecommon is (ffmpeg links libpulse: test/camera-vm.test.ts).
    libDirs: ['/lib/x86_64-linux-gnu', '/usr/lib/x86_64-linux-gnu', '/usr/lib/x86_64-linux-gnu/pulseaudio'],
    guestLibDir: '/lib/x86_64-linux-gnu',
    cc: 'gcc',
    crossCompile: null,
    kbuildArch: 'x86',
    elfMachine: 0x3e,
  },
};
