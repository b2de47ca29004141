// `npm run build:firmware`: builds the reference MCU firmware (boards/firmware/) into
// dist/firmware/<target>.{elf,hex} (STM32 also .bin, for the Nucleo's mass-storage copy), and the
// simavr test harness into dist/firmware/pinclaw-simavr.
//
//   node scripts/build-firmware.mjs [--strict] [--force] [--quiet] [TARGET…]
//
// A family whose toolchain is missing is skipped with a message (exit 0) unless --strict. A target
// is rebuilt only when the hash of its sources, flags and compiler version changed. What happened
// to each target is written to dist/firmware/build.json, which test/firmware.test.ts reads.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'boards', 'firmware');
const out = join(root, 'dist', 'firmware');

const args = process.argv.slice(2);
const strict = args.includes('--strict');
const force = args.includes('--force');
const quiet = args.includes('--quiet');
const only = args.filter((a) => !a.startsWith('--'));
const say = (msg) => {
  if (!quiet) console.log(`firmware: ${msg}`);
};

const common = ['-std=c99', '-Wall', '-Wextra', '-Os', '-ffunction-sections', '-fdata-sections', '-Wl,--gc-sections', '-I', join(src, 'common')];
const avrFlags = (mcu, board) => [...common, `-mmcu=${mcu}`, '-DF_CPU=16000000UL', `-DPC_BOARD_${board}`, '-I', join(src, 'avr')];
const stm32Flags = (board) => [
  ...common,
  '-mcpu=cortex-m4',
  '-mthumb',
  '-mfloat-abi=soft', // no floating point in the firmware: the FPU stays off
  '-ffreestanding',
  '-nostdlib',
  `-DPC_BOARD_${board}`,
  '-I',
  join(src, 'stm32'),
  '-T',
  join(src, 'stm32', 'stm32f4.ld'),
];

const families = {
  avr: {
    cc: 'avr-gcc',
    tools: ['avr-objcopy', 'avr-size'],
    dirs: ['common', 'avr'],
    probe: { args: ['-mmcu=atmega328p', '-E', '-x', 'c', '-'], input: '#include <avr/io.h>\n' },
    install: 'apt-get install gcc-avr avr-libc binutils-avr',
  },
  stm32: {
    cc: 'arm-none-eabi-gcc',
    tools: ['arm-none-eabi-objcopy', 'arm-none-eabi-size'],
    dirs: ['common', 'stm32'],
    probe: { args: ['-mcpu=cortex-m4', '-mthumb', '-E', '-x', 'c', '-'], input: '#include <stdint.h>\n' },
    install: 'apt-get install gcc-arm-none-eabi',
  },
  sim: {
    cc: 'cc',
    tools: [],
    dirs: ['sim'],
    probe: { args: ['-E', '-x', 'c', '-'], input: '#include <simavr/sim_avr.h>\n' },
    install: 'apt-get install gcc libsimavr-dev',
  },
};

const cSources = (family) => families[family].dirs.flatMap((d) => readdirSync(join(src, d)).filter((f) => f.endsWith('.c')).map((f) => join(src, d, f)));

const targets = [
  { name: 'avr-uno', family: 'avr', flags: avrFlags('atmega328p', 'UNO') },
  { name: 'avr-nano', family: 'avr', flags: avrFlags('atmega328p', 'NANO') },
  { name: 'avr-mega2560', family: 'avr', flags: avrFlags('atmega2560', 'MEGA') },
  { name: 'stm32-netduinoplus2', family: 'stm32', flags: stm32Flags('NETDUINOPLUS2') },
  { name: 'stm32-nucleo-f401re', family: 'stm32', flags: stm32Flags('NUCLEO_F401RE') },
  { name: 'stm32-nucleo-f411re', family: 'stm32', flags: stm32Flags('NUCLEO_F411RE') },
  // The host program that runs AVR firmware in simavr for test/firmware.test.ts.
  { name: 'pinclaw-simavr', family: 'sim', flags: ['-std=gnu11', '-O2', '-Wall', '-Wextra'], libs: ['-lsimavr'], host: true },
];

for (const name of only) {
  if (!targets.some((t) => t.name === name)) {
    console.error(`firmware: no target ${name} (targets: ${targets.map((t) => t.name).join(', ')})`);
    process.exit(2);
  }
}

function runs(cmd, cmdArgs, input) {
  const r = spawnSync(cmd, cmdArgs, { input, encoding: 'utf8' });
  return r.status === 0 ? r.stdout : null;
}

/** Why a family cannot be built here, or null; and its compiler's version line for the hash. */
function toolchain(family) {
  const f = families[family];
  const version = runs(f.cc, ['--version']);
  if (version === null) return { missing: `${f.cc} not found (${f.install})` };
  for (const tool of f.tools) if (runs(tool, ['--version']) === null) return { missing: `${tool} not found (${f.install})` };
  if (runs(f.cc, f.probe.args, f.probe.input) === null) return { missing: `${f.cc} cannot compile ${f.probe.input.trim()} (${f.install})` };
  return { version: version.split('\n')[0] };
}

function hashOf(target, version) {
  const h = createHash('sha256');
  h.update(readFileSync(fileURLToPath(import.meta.url)));
  h.update(JSON.stringify({ flags: target.flags, libs: target.libs ?? [], version }));
  for (const dir of families[target.family].dirs) {
    for (const f of readdirSync(join(src, dir)).sort()) {
      h.update(`${dir}/${f}\0`);
      h.update(readFileSync(join(src, dir, f)));
    }
  }
  return h.digest('hex');
}

function exec(cmd, cmdArgs) {
  return new Promise((res, rej) => {
    const child = spawn(cmd, cmdArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', rej);
    child.on('close', (code) => (code === 0 ? res({ stdout, stderr }) : rej(new Error(`${cmd} exited ${code}\n${stderr}`))));
  });
}

/** Flash and RAM use from `size` (Berkeley format: text data bss). */
async function sizes(tool, elf) {
  const { stdout } = await exec(tool, [elf]);
  const [text, data, bss] = stdout.trim().split('\n')[1].trim().split(/\s+/).map(Number);
  return { flash: text + data, ram: data + bss };
}

async function build(target, version) {
  const started = Date.now();
  const tmp = join(out, `.tmp-${target.name}-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const f = families[target.family];
  const files = [];
  try {
    if (target.host) {
      const bin = join(tmp, target.name);
      await exec(f.cc, [...target.flags, '-o', bin, ...cSources(target.family), ...target.libs]);
      files.push(target.name);
    } else {
      const elf = join(tmp, `${target.name}.elf`);
      const { stderr } = await exec(f.cc, [...target.flags, '-o', elf, ...cSources(target.family), '-lgcc']);
      if (stderr.trim()) process.stderr.write(stderr);
      const objcopy = f.tools[0];
      await exec(objcopy, ['-O', 'ihex', '-R', '.eeprom', elf, join(tmp, `${target.name}.hex`)]);
      files.push(`${target.name}.elf`, `${target.name}.hex`);
      if (target.family === 'stm32') {
        await exec(objcopy, ['-O', 'binary', elf, join(tmp, `${target.name}.bin`)]);
        files.push(`${target.name}.bin`);
      }
    }
    // Renamed into place only when complete: a test running meanwhile never sees half a file.
    for (const file of files) renameSync(join(tmp, file), join(out, file));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  let size = '';
  if (!target.host) {
    const s = await sizes(f.tools[1], join(out, `${target.name}.elf`));
    size = `, flash ${s.flash} B, RAM ${s.ram} B (static)`;
  }
  say(`${target.name}: built in ${((Date.now() - started) / 1000).toFixed(1)} s${size}`);
  return files;
}

mkdirSync(out, { recursive: true });
const stampDir = join(out, '.stamps');
mkdirSync(stampDir, { recursive: true });
const report = { targets: {} };
const chains = {};
const work = [];
for (const target of targets) {
  if (only.length && !only.includes(target.name)) continue;
  chains[target.family] ??= toolchain(target.family);
  const chain = chains[target.family];
  if (chain.missing) {
    report.targets[target.name] = { status: 'skipped', reason: chain.missing };
    continue;
  }
  const hash = hashOf(target, chain.version);
  const stamp = join(stampDir, `${target.name}.sha256`);
  const outputs = target.host ? [target.name] : [`${target.name}.elf`, `${target.name}.hex`];
  const fresh = !force && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash && outputs.every((o) => existsSync(join(out, o)));
  if (fresh) {
    report.targets[target.name] = { status: 'cached', files: outputs };
    say(`${target.name}: up to date`);
    continue;
  }
  work.push({ target, hash, stamp });
}

const skippedFamilies = Object.entries(chains).filter(([, c]) => c.missing);
for (const [family, chain] of skippedFamilies) say(`${family}: skipped, ${chain.missing}${strict ? '' : '; --strict makes this an error'}`);

// Two compilers at a time on a two-core machine; every target is one compiler run.
let failed = false;
const queue = [...work];
async function worker() {
  for (let job; (job = queue.shift()); ) {
    say(`${job.target.name}: building`);
    try {
      const files = await build(job.target, chains[job.target.family].version);
      writeFileSync(job.stamp, job.hash);
      report.targets[job.target.name] = { status: 'built', files };
    } catch (e) {
      failed = true;
      report.targets[job.target.name] = { status: 'failed', reason: e.message.split('\n')[0] };
      console.error(`firmware: ${job.target.name}: FAILED\n${e.message}`);
    }
  }
}
await Promise.all(Array.from({ length: Math.max(1, Math.min(availableParallelism(), 4)) }, worker));

writeFileSync(join(out, 'build.json'), `${JSON.stringify(report, null, 2)}\n`);
const counts = Object.values(report.targets).reduce((c, t) => ((c[t.status] = (c[t.status] ?? 0) + 1), c), {});
say(`${Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(', ')} → ${relative(root, out)}/`);
if (failed || (strict && skippedFamilies.length)) process.exit(1);
