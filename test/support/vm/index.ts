// The VM harness: real Linux kernels (Debian 12's) under QEMU, for tests of code that talks to
// kernel drivers (GPIO character device, i2c-dev). See docs/vm-tests.md.
export type { VmArch } from './arch.js';
export { vmAvailable, toolchainAvailable, type Availability } from './available.js';
export { runInVm, type RunInVmOptions, type VmResult } from './run.js';
export { buildKernelModule, buildStaticProgram } from './toolchain.js';
export { cacheRoot } from './cache.js';
