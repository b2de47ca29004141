// pinclaw's I2C against the real kernel: the x64 single executable inside the x64 VM, where Debian's
// own i2c-stub, i2c-dev and at24 modules give a real /dev/i2c-N with stub chips at 0x48 and 0x51 and
// an EEPROM driver bound to 0x50 (test/support/i2c-vm-check.ts). One boot runs:
// - the self-test (`pinclaw __i2c-selftest BUS ADDRESS`: the addon and i2c-bus, as the executable
//   extracts them, each value written by one and read back by both), judged against busybox's
//   i2cset/i2cget/i2cdetect by checkI2cVmOutput;
// - the I2C tools (`pinclaw __i2c-selftest tools JSON`): a scan, reads, a byte and a word write with
//   their before/after, and the errors of a driver's address, an empty address and a missing bus;
//   what the writes left is read back with i2cget, independently of pinclaw.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { checkI2cVmOutput, DRIVER_ADDRESS, FOUND_ADDRESSES, I2C_VM_MODULES, i2cVmScript, SNAPSHOT_BYTES, STUB_ADDRESS } from './support/i2c-vm-check.js';
import { root, seaX64 } from './support/proc.js';
import { runInVm, vmAvailable, type VmResult } from './support/vm/index.js';

// A cold VM cache downloads and unpacks the kernel first; a stale executable is rebuilt first.
t.setTimeout(900_000);

/** The newest modification time under a path (files and directories, recursively). */
function newest(path: string): number {
  if (!existsSync(path)) return 0;
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return readdirSync(path).reduce((m, name) => Math.max(m, newest(join(path, name))), s.mtimeMs);
}

/** What the single executable is built from (scripts/build-sea.mjs): older than any of it, it is stale. */
const SEA_INPUTS = ['src', 'native', 'boards', 'binding.gyp', 'package.json', 'scripts'];

/**
 * The x64 single executable with this tree's code: reused when it is newer than its sources (as
 * `npm test` leaves it), else rebuilt (incremental: only what changed is compiled). Its guest
 * commands are this tree's, so an executable from before them would fail for the wrong reason.
 */
function freshSeaX64(): { path: string; built: boolean } | { error: string } {
  const sources = Math.max(...SEA_INPUTS.map((p) => newest(join(root, p))));
  if (existsSync(seaX64) && statSync(seaX64).mtimeMs > sources) return { path: seaX64, built: false };
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build-sea.mjs'), '--arch', 'x64'], { cwd: root, encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) return { error: `building ${seaX64} failed (exit ${r.status ?? r.signal}):\n${r.stderr.slice(-3000)}` };
  return { path: seaX64, built: true };
}

const hex = (n: number) => `0x${n.toString(16).padStart(2, '0')}`;

/** The tool calls, in order; BUS is replaced in the guest by the stub's bus number. */
const CALLS = [
  { name: 'i2c_scan', input: { bus: 'BUS' } },
  { name: 'i2c_read', input: { bus: 'BUS', address: STUB_ADDRESS, register: 0x30, length: 1 } },
  { name: 'i2c_write', input: { bus: 'BUS', address: STUB_ADDRESS, register: 0x30, bytes: [0x3c] } },
  { name: 'i2c_read', input: { bus: 'BUS', address: STUB_ADDRESS, register: 0x30, length: 1 } },
  { name: 'i2c_write', input: { bus: 'BUS', address: STUB_ADDRESS, register: 0x31, bytes: [0x34, 0x12], mode: 'word' } },
  { name: 'i2c_read', input: { bus: 'BUS', address: STUB_ADDRESS, register: 0x70, length: 8 } },
  { name: 'i2c_read', input: { bus: 'BUS', address: DRIVER_ADDRESS, register: 0, length: 1 } },
  { name: 'i2c_read', input: { bus: 'BUS', address: 0x49, register: 0, length: 1 } },
  { name: 'i2c_read', input: { bus: 99, address: STUB_ADDRESS, register: 0, length: 1 } },
];
// The quoted placeholder becomes a bare number, so the guest's JSON has integers.
const callsJson = JSON.stringify(CALLS).replaceAll('"BUS"', 'BUS');

/** Runs after the i2c-vm-check script (which set $bus and left the self-test's values for its i2cget checks). */
const toolsScript = `
i2cset -y $bus 0x48 0x30 0x11
echo '${callsJson}' | sed "s/BUS/$bus/g" > /tmp/calls.json
/pinclaw __i2c-selftest tools "$(cat /tmp/calls.json)" > /tmp/tools.out 2> /tmp/tools.err
echo "tools-exit=$?"
sed 's/^/tool: /' /tmp/tools.out
echo "tools-stderr=$(tr '\\n' ' ' < /tmp/tools.err)"
echo "after-byte-0x30=$(i2cget -y $bus 0x48 0x30 b)"
echo "after-word-0x31=$(i2cget -y $bus 0x48 0x31 w)"
# The gateway with a sensor trigger on register 0x40: below 100, then 200 (crosses above 150: one
# turn), back to 140 (within the hysteresis of 20: nothing), 200 again (nothing: not re-armed).
i2cset -y $bus 0x48 0x40 100
export PINCLAW_HOME=/tmp/gw
mkdir -p $PINCLAW_HOME
echo '{"gateway":{"port":7421,"token":"vm"},"hardware":{"sensorTriggers":[{"bus":'$bus',"address":72,"register":64,"intervalMs":100,"above":150,"hysteresis":20,"session":"shed","message":"the shed is warm"}]}}' > $PINCLAW_HOME/config.json
ifconfig lo 127.0.0.1 up
/pinclaw gateway > /tmp/gw.log 2>&1 &
gw=$!
n=0; until wget -q -O /dev/null http://127.0.0.1:7421/healthz 2>/dev/null; do n=$((n+1)); [ $n -gt 600 ] && break; usleep 50000; done
for v in 100 200 140 200; do i2cset -y $bus 0x48 0x40 $v; usleep 600000; done
wget -q -O - --header 'Authorization: Bearer vm' http://127.0.0.1:7421/metrics | grep '^pinclaw_inbound_messages' | sed 's/^/metric: /'
kill -TERM $gw; wait $gw
echo "gateway-exit=$?"
sed 's/^/gw: /' /tmp/gw.log
`;

interface ToolLine {
  tool: string;
  isError: boolean;
  content: string;
  physical: { device: string; register: number | null; wrote: number[]; before?: number[] | null; after?: number[] | null } | null;
}

function field(output: string, key: string): string | undefined {
  const m = output.match(new RegExp(`^${key}=(.*)$`, 'gm'));
  return m?.at(-1)?.slice(key.length + 1);
}

const available = vmAvailable('x64');
const reason = available.ok ? null : `x64 VM unavailable: ${available.reason}`;
t.test('x64 executable: the I2C self-test and the I2C tools against i2c-stub, i2c-dev and at24', { skip: reason && !process.env.CI ? reason : false }, async (t) => {
  if (reason) return void t.fail(`unavailable on CI: ${reason}`);
  const sea = freshSeaX64();
  if ('error' in sea) return void t.fail(sea.error);
  if (sea.built) t.comment(`rebuilt ${sea.path}: it was older than its sources`);

  const r: VmResult = await runInVm({
    arch: 'x64',
    files: { '/pinclaw': sea.path },
    modules: I2C_VM_MODULES,
    timeoutMs: 300_000,
    // No config and no database: the extracted addons go under this home's cache.
    script: `export PINCLAW_HOME=/tmp/home\n${i2cVmScript('/pinclaw __i2c-selftest')}\n${toolsScript}`,
  });
  t.teardown(() => {
    if (!t.passing()) t.comment(`guest output:\n${r.output}\nkernel log:\n${r.kernelLog}`);
  });
  const s = (ms: number) => (ms / 1000).toFixed(1);
  t.comment(`x64 VM (${r.kernelRelease}): prepare ${s(r.timings.prepareMs)} s, boot ${s(r.timings.bootMs)} s, script ${s(r.timings.scriptMs)} s, total ${s(r.timings.totalMs)} s`);
  t.equal(r.exitCode, 0, 'the guest script ran to the end');

  // The self-test, judged by the kernel and busybox's i2c tools.
  const expectations = checkI2cVmOutput(r.output);
  t.ok(expectations.length >= 10, `the checker judged the self-test (${expectations.length} expectations)`);
  for (const e of expectations) t.ok(e.ok, `${e.name}: ${e.detail}`);

  // The tools.
  const bus = field(r.output, 'bus') ?? '?';
  t.equal(field(r.output, 'tools-exit'), '0', `the tool calls ran (stderr: ${field(r.output, 'tools-stderr')})`);
  const out = r.output
    .split('\n')
    .filter((l) => l.startsWith('tool: '))
    .map((l) => JSON.parse(l.slice(6)) as ToolLine);
  t.same(out.map((o) => o.tool), CALLS.map((c) => c.name), 'one result per call, in order');
  if (out.length !== CALLS.length) return;
  const [scan, read0, write0, read1, writeWord, snapshot, driver, absent, noBus] = out as [ToolLine, ToolLine, ToolLine, ToolLine, ToolLine, ToolLine, ToolLine, ToolLine, ToolLine];

  const found = FOUND_ADDRESSES.map(hex).join(' ');
  t.equal(
    scan.content,
    `bus ${bus} (SMBus stub driver): ${FOUND_ADDRESSES.length} devices answered: ${found}\nin use by a kernel driver (not probed; i2cdetect shows UU): ${hex(DRIVER_ADDRESS)}`,
    `i2c_scan lists ${found} as found and ${hex(DRIVER_ADDRESS)} (at24's) as busy`,
  );
  t.equal(read0.content, `bus ${bus}, 0x48 register 0x30: 0x11 (17)`, 'i2c_read reads what i2cset wrote');
  t.equal(write0.content, `bus ${bus}, 0x48 register 0x30: wrote 0x3c; before: 0x11 after: 0x3c`, 'i2c_write reports the register before and after');
  t.same(write0.physical, { device: `i2c-${bus}@0x48`, register: 0x30, wrote: [0x3c], before: [0x11], after: [0x3c] }, 'and records them as the physical action');
  t.equal(read1.content, `bus ${bus}, 0x48 register 0x30: 0x3c (60)`, 'i2c_read reads the write back');
  t.equal(field(r.output, 'after-byte-0x30'), '0x3c', 'i2cget reads the byte i2c_write wrote');
  t.equal(writeWord.content, `bus ${bus}, 0x48 register 0x31: wrote 0x34 0x12; before: 0x00 0x00 after: 0x34 0x12`, 'a word write, read before and after as a word');
  t.equal(field(r.output, 'after-word-0x31'), '0x1234', 'i2cget reads the word as [low, high] made it');
  t.equal(snapshot.content, `bus ${bus}, 0x48 register 0x70: ${SNAPSHOT_BYTES.map(hex).join(' ')}`, 'an 8-byte read in auto mode (an I2C block read on this SMBus-only adapter)');
  t.same(
    { isError: driver.isError, content: driver.content },
    { isError: true, content: `i2c_read failed on bus ${bus} at 0x50: address 0x50 on bus ${bus} is in use by a kernel driver (EBUSY); pinclaw does not take it from the driver` },
    "a driver's address is refused with the reason",
  );
  t.match(absent, { isError: true }, 'an empty address is an error result');
  t.match(absent.content, new RegExp(`^i2c_read failed on bus ${bus} at 0x49: no device answered at 0x49 on bus ${bus}$`), 'naming bus, address and reason');
  t.same(
    { isError: noBus.isError, content: noBus.content },
    { isError: true, content: `i2c_read failed on bus 99 at 0x48: no I2C bus 99 (/dev/i2c-99); buses here: ${bus} (SMBus stub driver)` },
    'a missing bus lists the buses there are, with their adapters',
  );
  const inbound = r.output.split('\n').filter((l) => l.startsWith('metric: ')).map((l) => Number(l.split(' ').at(-1)));
  t.equal(inbound.length, 4, 'the gateway served /metrics');
  t.equal(inbound.reduce((a, b) => a + b, 0), 1, 'the sensor crossing its threshold became one queue row; readings within the hysteresis did not');
  t.equal(field(r.output, 'gateway-exit'), '0', 'the gateway stopped cleanly');
  t.notMatch(r.kernelLog, /\b(BUG|Oops|Call trace)\b/i, 'no kernel oopses while pinclaw drove the bus');
});
