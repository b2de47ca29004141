// bench/gpio's body: boots the raspi3b VM (Debian's arm64 kernel, the loopback GPIO chip) with the
// arm64 single executable and runs its hidden `__gpio-bench` there: bare ioctls against the tool
// layer, and an edge's way from the kernel to a committed queue row. Everything inside one VM run,
// so the ratios compare like with like (TCG emulation makes absolute times slower than a real Pi).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildKernelModule, runInVm, toolchainAvailable, vmAvailable } from '../../test/support/vm/index.js';

// Run by bench/gpio.mjs with the repository as the working directory.
const root = process.cwd();
const { values } = parseArgs({ options: { n: { type: 'string', default: '300' }, edges: { type: 'string', default: '60' }, json: { type: 'boolean', default: false } } });
const sea = join(root, 'dist', 'pinclaw-linux-arm64');
for (const a of [vmAvailable('arm64'), toolchainAvailable('arm64')]) if (!a.ok) throw new Error(`bench/gpio needs the arm64 VM: ${a.reason}`);
if (!existsSync(sea)) throw new Error(`${sea} is missing: npm run build:sea -- --arch arm64`);

const config = {
  hardware: {
    lines: [
      { name: 'loop_out', line: 'pinclaw-loopback:0', direction: 'output' },
      { name: 'loop_in', line: 'pinclaw-loopback:4', direction: 'input' },
    ],
    writeRateLimit: { perLine: 1_000_000, perSeconds: 1 },
    triggers: [{ line: 'loop_in', edge: 'both', debounceMs: 0, session: 'bench', message: 'edge', rateLimit: { max: 1_000_000, perSeconds: 1 } }],
  },
  log: { level: 'warn' },
};
const loopback = await buildKernelModule('arm64', join(root, 'test', 'support', 'vm', 'gpio-loopback'));
const r = await runInVm({
  arch: 'arm64',
  files: { '/opt/pinclaw/pinclaw': sea },
  modules: [loopback],
  timeoutMs: 600_000,
  script: `export PINCLAW_HOME=/tmp/home; mkdir -p $PINCLAW_HOME
echo '${JSON.stringify(config)}' > $PINCLAW_HOME/config.json
/opt/pinclaw/pinclaw __gpio-bench --out loop_out --in loop_in --n ${values.n} --edges ${values.edges} > /tmp/out 2>&1
echo "exit=$?"; echo "result=$(cat /tmp/out)"`,
});
const line = r.output.split('\n').find((l) => l.startsWith('result='));
if (!line || !/exit=0/.test(r.output)) throw new Error(`the bench failed in the VM:\n${r.output}`);
const res = JSON.parse(line.slice('result='.length)) as {
  ioctl: { writeUs: number; readUs: number };
  tools: { writeUs: number; readUs: number; writesPerSecond: number; readsPerSecond: number; writeRatio: number; readRatio: number };
  edges: { callbackUs: { median: number; p90: number; n: number }; queuedRowUs: { median: number; p90: number; n: number }; ratio: number };
};
if (values.json) {
  console.log(JSON.stringify(res, null, 2));
} else {
  const ms = (us: number) => `${(us / 1000).toFixed(3)} ms`;
  console.log(`GPIO in the raspi3b VM (TCG, ${r.kernelRelease}), the arm64 single executable, ${values.n} calls, ${values.edges} edges`);
  console.log('measure                                    pinclaw      baseline      ratio');
  console.log(`gpio_write through the tool layer       ${ms(res.tools.writeUs).padStart(11)}  ${ms(res.ioctl.writeUs).padStart(11)} ioctl  ${res.tools.writeRatio.toFixed(1)}x  (${res.tools.writesPerSecond.toFixed(0)} calls/s)`);
  console.log(`gpio_read through the tool layer        ${ms(res.tools.readUs).padStart(11)}  ${ms(res.ioctl.readUs).padStart(11)} ioctl  ${res.tools.readRatio.toFixed(1)}x  (${res.tools.readsPerSecond.toFixed(0)} calls/s)`);
  const e = res.edges;
  console.log(`edge -> queued row (median, p90 ${ms(e.queuedRowUs.p90)})  ${ms(e.queuedRowUs.median).padStart(11)}  ${ms(e.callbackUs.median).padStart(11)} callback  ${e.ratio.toFixed(1)}x`);
  console.log(`target: edge -> queued row <= 5 ms median: ${e.queuedRowUs.median <= 5000 ? 'met' : 'NOT met'} (${ms(e.queuedRowUs.median)}, ${e.queuedRowUs.n} edges)`);
}
