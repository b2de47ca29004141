// Smoke test of the VM harness (test/support/vm): real Debian 12 kernels under QEMU, checked with
// busybox and a static probe only, no pinclaw GPIO code. arm64 boots a Raspberry Pi 3 Model B
// (raspi3b) and finds the SoC's real GPIO driver; both VMs load our gpio-loopback module and see
// edge events through the GPIO character device; the x64 VM round-trips a byte over i2c-stub
// through /dev/i2c-N. Each VM also runs pinclaw's single executable when it has been built.
// See docs/vm-tests.md.
import t, { type Test } from 'tap';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { root, seaArm64, seaX64 } from './support/proc.js';
import {
  buildKernelModule,
  buildStaticProgram,
  runInVm,
  toolchainAvailable,
  vmAvailable,
  type VmArch,
  type VmResult,
} from './support/vm/index.js';

// Cold cache: ~140 MB of Debian packages to download and unpack before the first boot.
t.setTimeout(600_000);

const vmDir = join(root, 'test', 'support', 'vm');
const BOOT_TIMEOUT_MS = 240_000;

/** The reason this arch cannot run here, or null. */
function unavailable(arch: VmArch, builds: boolean): string | null {
  for (const a of [vmAvailable(arch), ...(builds ? [toolchainAvailable(arch)] : [])]) if (!a.ok) return a.reason;
  return null;
}

/**
 * Declares a VM test that skips with the reason off CI and fails with it on CI. `builds`: the
 * test also compiles the loopback module and the probe.
 */
function vmTest(name: string, arch: VmArch, builds: boolean, fn: (t: Test) => Promise<void>): void {
  const reason = unavailable(arch, builds);
  if (reason && !process.env.CI) {
    t.test(name, { skip: `${arch} VM unavailable: ${reason}` }, async () => {});
    return;
  }
  t.test(name, async (t) => {
    if (reason) {
      t.fail(`${arch} VM unavailable on CI: ${reason}`);
      return;
    }
    await fn(t);
  });
}

/** Values of "key=value" lines the scripts print. */
function field(output: string, key: string): string | undefined {
  const m = output.match(new RegExp(`^${key}=(.*)$`, 'gm'));
  return m?.at(-1)?.slice(key.length + 1);
}

function lines(output: string, prefix: string): string[] {
  return output.split('\n').filter((l) => l.startsWith(prefix));
}

/** Shows the whole guest output when something failed, so the failure explains itself. */
function explainOnFailure(t: Test, r: VmResult): void {
  t.teardown(() => {
    if (!t.passing()) t.comment(`guest output:\n${r.output}\nkernel log during the script:\n${r.kernelLog}`);
  });
}

/** Shell helpers every script uses: the probe and a wait on a file's contents. */
const prelude = `probe=/opt/vm/gpio-edge-probe
# waits until FILE has at least N lines starting with PREFIX, or PID is gone
# (a file not created yet counts as no lines: a background job's redirection may not have run)
wait_lines() { while n=$(grep -c "^$2" "$1" 2>/dev/null); [ "\${n:-0}" -lt "$3" ]; do kill -0 "$4" 2>/dev/null || return 1; usleep 5000; done; }
sysfs_base() { for c in /sys/class/gpio/gpiochip*; do [ "$(cat "$c/label")" = "$1" ] && cat "$c/base"; done; }
`;

/**
 * The loopback chip, through sysfs and through the character device: LOOP0 driven, LOOP4 read;
 * then LOOP4 requested with edge detection by the probe while LOOP0 toggles, one edge at a time
 * (each toggle waits for its event: edges closer together than the interrupt thread can run
 * merge into one, as on real hardware).
 */
const loopbackScript = `
chip=$($probe find pinclaw-loopback)
echo "loop-dev=$chip"
$probe info "$chip"
base=$(sysfs_base pinclaw-loopback)
echo $base > /sys/class/gpio/export
echo $((base + 4)) > /sys/class/gpio/export
# gpiolib names sysfs nodes after the chip's line names
out=/sys/class/gpio/LOOP0
in=/sys/class/gpio/LOOP4
echo out > $out/direction
echo 1 > $out/value
echo "loop-read-after-1=$(cat $in/value)"
echo 0 > $out/value
echo "loop-read-after-0=$(cat $in/value)"
if echo out > $in/direction 2>/dev/null; then echo loop-input-drive=accepted; else echo loop-input-drive=refused; fi
echo $((base + 4)) > /sys/class/gpio/unexport
: > /tmp/edges
$probe edges "$chip" 4 4 10000 > /tmp/edges 2>&1 &
pid=$!
wait_lines /tmp/edges ready 1 $pid
n=0
for v in 1 0 1 0; do
  echo $v > $out/value
  n=$((n + 1))
  wait_lines /tmp/edges event $n $pid
done
wait $pid
echo "edges-exit=$?"
cat /tmp/edges
echo $base > /sys/class/gpio/unexport
rmmod gpio_loopback && echo "loop-rmmod=ok"
$probe find pinclaw-loopback > /dev/null 2>&1 || echo "loop-gone=yes"
`;

const pinclawScript = `
if [ -x /opt/pinclaw/pinclaw ]; then
  start=$(cut -d' ' -f1 /proc/uptime)
  /opt/pinclaw/pinclaw --version > /tmp/version 2>&1
  echo "pinclaw-exit=$?"
  echo "pinclaw-seconds=$(awk -v s=$start '{ print $1 - s }' /proc/uptime)"
  echo "pinclaw-version=$(cat /tmp/version)"
fi
`;

function checkLoopback(t: Test, out: string): void {
  t.match(field(out, 'loop-dev'), /^\/dev\/gpiochip\d+$/, 'the loopback module registered a chip labelled pinclaw-loopback');
  const chip = field(out, 'loop-dev')!;
  t.match(out, new RegExp(`^chip ${chip} name=gpiochip\\d+ label=pinclaw-loopback lines=8$`, 'm'), 'chardev: 8 lines');
  const names = lines(out, `line ${chip} `).map((l) => /name=(\S+)/.exec(l)?.[1]);
  t.same(names, ['LOOP0', 'LOOP1', 'LOOP2', 'LOOP3', 'LOOP4', 'LOOP5', 'LOOP6', 'LOOP7'], 'lines are named LOOP0..LOOP7');
  t.equal(field(out, 'loop-read-after-1'), '1', 'sysfs: LOOP4 reads 1 while LOOP0 drives 1');
  t.equal(field(out, 'loop-read-after-0'), '0', 'sysfs: LOOP4 reads 0 while LOOP0 drives 0');
  t.equal(field(out, 'loop-input-drive'), 'refused', 'the input end of a wire cannot be driven');
  t.equal(field(out, 'edges-exit'), '0', 'the probe saw all 4 edges before its timeout');
  t.same(
    lines(out, 'event '),
    [
      'event rising offset=4 seqno=1 line_seqno=1 value=1',
      'event falling offset=4 seqno=2 line_seqno=2 value=0',
      'event rising offset=4 seqno=3 line_seqno=3 value=1',
      'event falling offset=4 seqno=4 line_seqno=4 value=0',
    ],
    'uAPI v2 edge events on LOOP4, one per toggle of LOOP0, in order',
  );
  t.equal(field(out, 'loop-rmmod'), 'ok', 'the module unloads once its lines are released');
  t.equal(field(out, 'loop-gone'), 'yes', 'and its chip is gone');
}

/** The kernel complained about nothing while the script ran (our module included). */
function checkKernelLog(t: Test, r: VmResult): void {
  t.notMatch(r.kernelLog, /\b(BUG|WARNING|Oops|Call trace)\b/i, 'no kernel warnings or oopses during the script');
}

function checkPinclaw(t: Test, out: string, arch: VmArch, exe: string): void {
  if (!existsSync(exe)) {
    t.comment(`${exe} is not built; skipped running it in the ${arch} VM (node scripts/build-sea.mjs --arch ${arch})`);
    return;
  }
  t.equal(field(out, 'pinclaw-exit'), '0', `${arch} single executable runs in the VM`);
  t.match(field(out, 'pinclaw-version'), /^pinclaw \d+\.\d+\.\d+$/, '--version prints the version');
  t.comment(`pinclaw --version took ${field(out, 'pinclaw-seconds')} s in the ${arch} VM`);
}

function report(t: Test, arch: VmArch, r: VmResult): void {
  const s = (ms: number): string => (ms / 1000).toFixed(1);
  t.comment(`${arch} VM (${r.kernelRelease}): prepare ${s(r.timings.prepareMs)} s, boot ${s(r.timings.bootMs)} s, script ${s(r.timings.scriptMs)} s, total ${s(r.timings.totalMs)} s`);
}

vmTest('arm64: Raspberry Pi 3 Model B (raspi3b) with the BCM2835 GPIO driver', 'arm64', true, async (t) => {
  const [loopback, probe] = await Promise.all([buildKernelModule('arm64', join(vmDir, 'gpio-loopback')), buildStaticProgram('arm64', join(vmDir, 'gpio-edge-probe.c'))]);
  const files: Record<string, string> = { '/opt/vm/gpio-edge-probe': probe };
  if (existsSync(seaArm64)) files['/opt/pinclaw/pinclaw'] = seaArm64;
  const r = await runInVm({
    arch: 'arm64',
    files,
    modules: [loopback],
    timeoutMs: BOOT_TIMEOUT_MS,
    script: `${prelude}
echo "model=$(tr -d '\\0' < /proc/device-tree/model)"
echo "release=$(uname -r)"
for c in /sys/class/gpio/gpiochip*; do echo "sysfs-chip label=$(cat $c/label) ngpio=$(cat $c/ngpio)"; done
$probe info /dev/gpiochip0
# The SoC's own chip. Another process requesting line 17 with edge detection (through the
# BCM2835's own irqchip) and releasing it shows up as line-info events on a watching fd.
: > /tmp/watch
$probe watch /dev/gpiochip0 17 2 10000 > /tmp/watch 2>&1 &
pid=$!
wait_lines /tmp/watch ready 1 $pid
$probe edges /dev/gpiochip0 17 0 0 > /tmp/request 2>&1
echo "bcm-edge-request=$(cat /tmp/request)"
wait $pid
echo "watch-exit=$?"
cat /tmp/watch
# And through sysfs: an output reads back what it drives.
base=$(sysfs_base pinctrl-bcm2835)
echo $((base + 17)) > /sys/class/gpio/export
echo out > /sys/class/gpio/gpio$((base + 17))/direction
echo 1 > /sys/class/gpio/gpio$((base + 17))/value
echo "bcm-readback=$(cat /sys/class/gpio/gpio$((base + 17))/value)"
echo $((base + 17)) > /sys/class/gpio/unexport
${loopbackScript}
${pinclawScript}`,
  });
  explainOnFailure(t, r);
  report(t, 'arm64', r);
  const out = r.output;
  t.equal(r.exitCode, 0, 'the script ran to the end');
  t.equal(field(out, 'model'), 'Raspberry Pi 3 Model B', '/proc/device-tree/model');
  t.equal(field(out, 'release'), r.kernelRelease, "Debian's arm64 kernel");
  t.ok(lines(out, 'sysfs-chip ').includes('sysfs-chip label=pinctrl-bcm2835 ngpio=54'), 'sysfs: pinctrl-bcm2835 with 54 lines');
  t.match(out, /^chip \/dev\/gpiochip0 name=gpiochip0 label=pinctrl-bcm2835 lines=54$/m, 'chardev: /dev/gpiochip0 is the BCM2835 with 54 lines');
  t.match(out, /^line \/dev\/gpiochip0 14 name=TXD1 /m, 'line names come from the device tree (pin 14 is TXD1)');
  t.equal(field(out, 'bcm-readback'), '1', 'a BCM2835 output reads back what it drives');
  t.equal(field(out, 'bcm-edge-request'), 'ready', 'line 17 can be requested with edge detection');
  t.equal(field(out, 'watch-exit'), '0', 'the line-info watch saw the request and the release');
  t.same(
    lines(out, 'info '),
    ['info requested offset=17 consumer=gpio-edge-probe input', 'info released offset=17 consumer= input'],
    'line-info events for the request and release of line 17 by another process',
  );
  checkLoopback(t, out);
  checkKernelLog(t, r);
  checkPinclaw(t, out, 'arm64', seaArm64);
});

vmTest('x64: PC with i2c-stub behind /dev/i2c-N, and the loopback GPIO chip', 'x64', true, async (t) => {
  const [loopback, probe] = await Promise.all([buildKernelModule('x64', join(vmDir, 'gpio-loopback')), buildStaticProgram('x64', join(vmDir, 'gpio-edge-probe.c'))]);
  const files: Record<string, string> = { '/opt/vm/gpio-edge-probe': probe };
  if (existsSync(seaX64)) files['/opt/pinclaw/pinclaw'] = seaX64;
  const r = await runInVm({
    arch: 'x64',
    files,
    modules: ['i2c-stub chip_addr=0x48', 'i2c-dev', loopback],
    timeoutMs: BOOT_TIMEOUT_MS,
    script: `${prelude}
echo "release=$(uname -r)"
for a in /sys/bus/i2c/devices/i2c-*; do [ "$(cat $a/name)" = "SMBus stub driver" ] && bus=\${a##*-}; done
echo "i2c-bus=$bus"
[ -c /dev/i2c-$bus ] && echo "i2c-dev-node=char"
i2cset -y $bus 0x48 0x10 0xa5 && i2cset -y $bus 0x48 0x11 0x5a
echo "i2c-set-exit=$?"
echo "i2c-get-10=$(i2cget -y $bus 0x48 0x10)"
echo "i2c-get-11=$(i2cget -y $bus 0x48 0x11)"
i2cdetect -y $bus | grep -q ' 48' && echo "i2c-detect=0x48"
${loopbackScript}
${pinclawScript}`,
  });
  explainOnFailure(t, r);
  report(t, 'x64', r);
  const out = r.output;
  t.equal(r.exitCode, 0, 'the script ran to the end');
  t.equal(field(out, 'release'), r.kernelRelease, "Debian's amd64 kernel");
  t.match(field(out, 'i2c-bus'), /^\d+$/, 'i2c-stub registered an SMBus adapter');
  t.equal(field(out, 'i2c-dev-node'), 'char', 'i2c-dev made /dev/i2c-N for it');
  t.equal(field(out, 'i2c-set-exit'), '0', 'i2cset wrote two registers of the stub chip at 0x48');
  t.equal(field(out, 'i2c-get-10'), '0xa5', 'i2cget reads back register 0x10');
  t.equal(field(out, 'i2c-get-11'), '0x5a', 'i2cget reads back register 0x11');
  t.equal(field(out, 'i2c-detect'), '0x48', 'i2cdetect finds the chip at 0x48');
  checkLoopback(t, out);
  checkKernelLog(t, r);
  checkPinclaw(t, out, 'x64', seaX64);
});

vmTest("harness: the script's exit status, output, files and kernel command line", 'arm64', false, async (t) => {
  const r = await runInVm({
    arch: 'arm64',
    files: { '/opt/hello.sh': Buffer.from('#!/bin/sh\necho "hello from $0"\n'), '/etc/pinclaw-data.txt': Buffer.from('some data\n') },
    appendCmdline: 'pinclaw.smoke=yes',
    timeoutMs: BOOT_TIMEOUT_MS,
    script: `/opt/hello.sh
cat /etc/pinclaw-data.txt
for word in $(cat /proc/cmdline); do case $word in pinclaw.*) echo "cmdline=$word";; esac; done
for fs in configfs debugfs devtmpfs; do grep -q " $fs " /proc/mounts && echo "mounted=$fs"; done
printf 'no newline at the end'
exit 7`,
  });
  explainOnFailure(t, r);
  t.equal(r.exitCode, 7, "the script's exit status");
  t.equal(
    r.output,
    'hello from /opt/hello.sh\nsome data\ncmdline=pinclaw.smoke=yes\nmounted=configfs\nmounted=debugfs\nmounted=devtmpfs\nno newline at the end',
    'exactly what the script printed: no kernel messages, no markers',
  );
});

vmTest('harness: a hung script is killed at the timeout and the error shows the console', 'arm64', false, async (t) => {
  await t.rejects(
    runInVm({ arch: 'arm64', timeoutMs: 20_000, script: 'echo still-running-before-the-hang\nsleep 600\n' }),
    { message: /timed out after 20000 ms[^]*killed QEMU[^]*still-running-before-the-hang/ },
  );
  await t.rejects(runInVm({ arch: 'arm64', timeoutMs: 20_000, modules: ['no-such-module'], script: 'true' }), {
    message: /kernel 6\.1\.\d+-\d+-arm64 has no module named no-such-module/,
  });
});
