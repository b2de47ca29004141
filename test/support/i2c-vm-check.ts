// What the x64 VM (test/support/vm: Debian's kernel with the real i2c-stub and i2c-dev modules) must
// show about pinclaw's I2C, judged by the kernel and busybox's i2c tools rather than by pinclaw:
// the guest script fills registers with i2cset, runs pinclaw's self-test (src/hardware/i2c/selftest.ts:
// both backends, each value written by one and read back by both), then reads with i2cget what the
// self-test left and lists the bus with i2cdetect. checkI2cVmOutput turns the guest's output into
// named expectations. The self-test command is a parameter: the single executable's hidden command
// once it is wired, or `node <bundle>` where a Node binary is copied into the guest.
//
// Use from a VM test:
//   const r = await runInVm({ arch: 'x64', files, modules: I2C_VM_MODULES, script: i2cVmScript(cmd), timeoutMs });
//   for (const e of checkI2cVmOutput(r.output)) t.ok(e.ok, `${e.name}: ${e.detail}`);

/**
 * Three stub chips: 0x48 (the self-test's) is probed by quick write in a scan, 0x51 by receive byte
 * (an EEPROM address), and 0x50 gets the at24 EEPROM driver bound to it, so it is a driver's address
 * (i2cdetect's "UU", EBUSY for pinclaw).
 */
export const I2C_VM_MODULES = ['i2c-stub chip_addr=0x48,0x50,0x51', 'i2c-dev', 'at24'];
export const STUB_ADDRESS = 0x48;
export const FOUND_ADDRESSES = [0x48, 0x51];
export const DRIVER_ADDRESS = 0x50;
/** What the script writes with i2cset before the self-test, at SNAPSHOT_REGISTER (0x70) onwards. */
export const SNAPSHOT_BYTES = [0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7];

/** The busybox script. `selfTest` is a command taking "<bus> <address>" and printing the report as JSON on stdout. */
export function i2cVmScript(selfTest: string): string {
  // busybox's i2c tools read bare numbers as hex: 0x prefixes throughout.
  const snapshot = SNAPSHOT_BYTES.map((b, i) => `i2cset -y $bus 0x48 0x${hex2(0x70 + i)} 0x${hex2(b)}`).join('\n');
  return `
bus=
for d in /sys/class/i2c-dev/i2c-*; do [ "$(cat $d/name)" = "SMBus stub driver" ] && bus=\${d##*/i2c-}; done
echo "bus=$bus"
[ -n "$bus" ] || exit 1
echo 24c02 0x50 > /sys/bus/i2c/devices/i2c-$bus/new_device
echo "driver-0x50=$(basename "$(readlink /sys/bus/i2c/devices/$bus-0050/driver)")"
${snapshot}
echo "detect-begin"
i2cdetect -y $bus
echo "detect-end"
echo "funcs-begin"
i2cdetect -F $bus
echo "funcs-end"
${selfTest} $bus ${STUB_ADDRESS} > /tmp/report.json 2> /tmp/selftest.err
echo "selftest-exit=$?"
echo "report=$(cat /tmp/report.json)"
echo "selftest-stderr=$(tr '\\n' ' ' < /tmp/selftest.err)"
for r in 0x10 0x11 0x40 0x41 0x42 0x43 0x44 0x45 0x46 0x47 0x50 0x51 0x52 0x53 0x54 0x55 0x56 0x57; do echo "byte-$r=$(i2cget -y $bus 0x48 $r b)"; done
for r in 0x20 0x21; do echo "word-$r=$(i2cget -y $bus 0x48 $r w)"; done
`;
}

export interface VmExpectation {
  name: string;
  ok: boolean;
  detail: string;
}

/** The parts of the self-test report these checks read (src/hardware/i2c/selftest.ts, I2cSelfTestReport). */
interface Report {
  ok: boolean;
  unavailable: Record<string, string | null>;
  snapshot: Record<string, string>;
  leaves: { register: number; byte: number }[];
  leavesWords: { register: number; word: number }[];
  checks: { name: string; expected: string; native: string; i2cBus: string; ok: boolean }[];
}

function field(output: string, key: string): string | undefined {
  const m = output.match(new RegExp(`^${key}=(.*)$`, 'm'));
  return m?.[1];
}

function between(output: string, begin: string, end: string): string[] {
  const lines = output.split('\n');
  const from = lines.indexOf(begin);
  const to = lines.indexOf(end);
  return from >= 0 && to > from ? lines.slice(from + 1, to) : [];
}

function hex2(n: number): string {
  return n.toString(16).padStart(2, '0');
}

/** i2cdetect's grid: found addresses and "UU" ones. */
export function parseDetect(lines: string[]): { found: number[]; busy: number[] } {
  const found: number[] = [];
  const busy: number[] = [];
  for (const line of lines) {
    const m = /^([0-7])0:(.*)$/.exec(line);
    if (!m) continue;
    const cells = m[2]!.match(/.{1,3}/g) ?? [];
    cells.forEach((cell, col) => {
      const c = cell.trim();
      const address = Number(m[1]) * 16 + col;
      if (c === 'UU') busy.push(address);
      else if (/^[0-9a-f]{2}$/.test(c)) found.push(parseInt(c, 16));
    });
  }
  return { found, busy };
}

/** `i2cdetect -F` lines → pinclaw's names of the functionality bits. */
const FUNC_LINES: Record<string, string> = {
  i2c: 'i2c',
  'smbus quick command': 'quick',
  'smbus send byte': 'writeByte',
  'smbus receive byte': 'readByte',
  'smbus write byte': 'writeByteData',
  'smbus read byte': 'readByteData',
  'smbus write word': 'writeWordData',
  'smbus read word': 'readWordData',
  'smbus block write': 'writeBlockData',
  'smbus block read': 'readBlockData',
  'i2c block write': 'writeI2cBlockData',
  'i2c block read': 'readI2cBlockData',
  'smbus pec': 'smbusPec',
};

export function parseFuncs(lines: string[]): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const line of lines) {
    const m = /^(.+?)\s{2,}(yes|no)\s*$/.exec(line);
    const name = m && FUNC_LINES[m[1]!.trim().toLowerCase()];
    if (name) out.set(name, m[2] === 'yes');
  }
  return out;
}

export function checkI2cVmOutput(output: string): VmExpectation[] {
  const out: VmExpectation[] = [];
  const expect = (name: string, ok: boolean, detail: string) => out.push({ name, ok, detail });
  const bus = field(output, 'bus') ?? '';
  expect('i2c-stub and i2c-dev give a /dev/i2c-N named "SMBus stub driver"', /^\d+$/.test(bus), `bus=${bus}`);

  let report: Report | null = null;
  try {
    report = JSON.parse(field(output, 'report') ?? '') as Report;
  } catch {
    report = null;
  }
  expect('the self-test ran and printed its report', field(output, 'selftest-exit') === '0' && report !== null, `exit ${field(output, 'selftest-exit')}; stderr: ${field(output, 'selftest-stderr') ?? ''}`);
  if (!report) return out;

  expect('both backends loaded (the addon and i2c-bus)', report.unavailable.native === null && report.unavailable['i2c-bus'] === null, JSON.stringify(report.unavailable));
  for (const c of report.checks) expect(`self-test: ${c.name}`, c.ok, `expected ${c.expected}; native ${c.native}; i2c-bus ${c.i2cBus}`);

  const written = SNAPSHOT_BYTES.map(hex2).join(' ');
  expect('pinclaw reads what i2cset wrote', report.snapshot.native === written && report.snapshot['i2c-bus'] === written, `i2cset wrote ${written}; native read ${report.snapshot.native}; i2c-bus read ${report.snapshot['i2c-bus']}`);

  const badBytes = report.leaves.filter((l) => field(output, `byte-0x${hex2(l.register)}`) !== `0x${hex2(l.byte)}`);
  expect('i2cget reads the bytes pinclaw wrote', report.leaves.length > 0 && badBytes.length === 0, badBytes.map((l) => `0x${hex2(l.register)}: i2cget ${field(output, `byte-0x${hex2(l.register)}`)}, pinclaw wrote 0x${hex2(l.byte)}`).join('; ') || `${report.leaves.length} registers`);
  const badWords = report.leavesWords.filter((l) => field(output, `word-0x${hex2(l.register)}`) !== `0x${l.word.toString(16).padStart(4, '0')}`);
  expect('i2cget reads the words pinclaw wrote', report.leavesWords.length > 0 && badWords.length === 0, badWords.map((l) => `0x${hex2(l.register)}: i2cget ${field(output, `word-0x${hex2(l.register)}`)}, pinclaw wrote 0x${l.word.toString(16)}`).join('; ') || `${report.leavesWords.length} registers`);

  const detect = parseDetect(between(output, 'detect-begin', 'detect-end'));
  const scan = report.checks.find((c) => c.name === 'scan finds the chip');
  const scanned = (scan?.native.match(/^found ([^;]*);/)?.[1] ?? '').split(' ').filter((x) => x !== '-');
  const detected = detect.found.map((a) => `0x${hex2(a)}`);
  const want = FOUND_ADDRESSES.map((a) => `0x${hex2(a)}`);
  expect('pinclaw finds what i2cdetect finds', scanned.join(' ') === detected.join(' ') && detected.join(' ') === want.join(' '), `i2cdetect ${detected.join(' ')}; pinclaw ${scanned.join(' ')}; stub chips ${want.join(' ')}`);
  const held = scan?.native.match(/; busy ([^;]*);/)?.[1] ?? '';
  const uu = detect.busy.map((a) => `0x${hex2(a)}`).join(' ') || '-';
  expect(
    "pinclaw reports the driver's address as busy, as i2cdetect shows UU",
    field(output, 'driver-0x50') === 'at24' && held === uu && uu === `0x${hex2(DRIVER_ADDRESS)}`,
    `driver at 0x50: ${field(output, 'driver-0x50')}; i2cdetect UU ${uu}; pinclaw busy ${held}`,
  );

  const funcs = parseFuncs(between(output, 'funcs-begin', 'funcs-end'));
  const check = report.checks.find((c) => c.name === 'funcs');
  const pinclawFuncs = new Set((check?.native ?? '').split(' '));
  const differ = [...funcs].filter(([name, yes]) => pinclawFuncs.has(name) !== yes).map(([name, yes]) => `${name}: i2cdetect ${yes ? 'yes' : 'no'}`);
  expect("pinclaw's funcs equal i2cdetect -F", funcs.size >= 10 && differ.length === 0, differ.join('; ') || `${funcs.size} functionalities agree`);
  return out;
}
