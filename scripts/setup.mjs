// `npm run setup` (and the first step of `npm test`): installs the Debian packages the build and the
// tests need that this machine lacks, so that `npm install && npm test` works on a fresh Debian 12
// with only Node and npm. `.ci/run` calls it too, before `npm ci` (which compiles the addon with g++).
// Nothing is installed when everything is there; when something is missing and it cannot become root
// (not root, sudo missing or asking for a password without a terminal), it names the packages and the
// exact command, and fails.
//
// Plain Node, no dependencies: it runs before `npm install`.
import { spawnSync } from 'node:child_process';

/** Package → why the tests need it. The one list: `.ci/run` and `npm test` both install from here. */
const packages = {
  'ca-certificates': 'HTTPS to the Debian mirror',
  python3: 'node-gyp; receives sd_notify datagrams in tests',
  make: 'node-gyp builds',
  'g++': 'the native addon',
  'g++-aarch64-linux-gnu': 'the arm64 executable (cross-compiled addon) and its C library for qemu',
  'qemu-user-static': 'runs the arm64 executable in its tests',
  systemd: 'systemd-notify (the sd_notify fallback) and systemd-analyze verify (pinclaw service)',
  'xz-utils': 'the size report of the benchmark',
  zstd: "the single executable's compressed assets (scripts/compress-assets.mjs)",
  time: 'peak memory of test processes',
  bubblewrap: "the exec sandbox's second backend",
  'qemu-system-arm': 'the Raspberry Pi VM: a real GPIO driver (test/support/vm)',
  'qemu-system-x86': 'the PC VM: i2c-stub (test/support/vm)',
  libelf1: "the amd64 kernel headers' objtool, which builds the test GPIO module",
  socat: 'pty pairs that stand for USB serial ports',
  'gcc-avr': 'the AVR reference firmware',
  'avr-libc': 'the AVR reference firmware',
  'binutils-avr': 'the AVR reference firmware',
  'gcc-arm-none-eabi': 'the STM32 reference firmware',
  'libsimavr-dev': 'the AVR simulator the firmware tests link',
  chromium: "the dashboard's browser test (driven by playwright-core; no browser is downloaded)",
  mosquitto: 'the MQTT tests: a real broker',
  openssl: "the MQTT tests: the test broker's TLS certificates",
  ffmpeg: 'voice notes (OGG/Opus to 16 kHz WAV and back), the camera (snapshots; its test source in the tests) and images scaled to the providers\' limits',
  'espeak-ng': 'the voice tests: real speech for the voice notes, and the command TTS backend',
  minisign: 'the update tests: release signatures made and checked by the reference tool, both ways',
};
/** The VM tests download (not install) Debian's arm64 kernel and busybox: apt must know arm64. */
const foreignArch = 'arm64';

const say = (msg) => console.log(`setup: ${msg}`);
const quiet = process.argv.includes('--quiet');
const checkOnly = process.argv.includes('--check');

function run(cmd, args, opts = {}) {
  return spawnSync(cmd, args, { encoding: 'utf8', ...opts });
}

function missingPackages() {
  const names = Object.keys(packages);
  // One dpkg-query for all: unknown packages make it exit 1 but still print the known ones.
  const r = run('dpkg-query', ['-W', '-f=${Package} ${db:Status-Status}\n', ...names]);
  if (r.error) return { error: `dpkg-query: ${r.error.message} (is this Debian?)` };
  const installed = new Set(
    r.stdout
      .split('\n')
      .map((l) => l.split(' '))
      .filter(([, status]) => status === 'installed')
      .map(([name]) => name),
  );
  return { missing: names.filter((n) => !installed.has(n)) };
}

function hasForeignArch() {
  const r = run('dpkg', ['--print-foreign-architectures']);
  return !r.error && r.stdout.split('\n').includes(foreignArch);
}

/** How to become root: nothing, sudo (interactive when there is a terminal), or not at all. */
function rootPrefix() {
  if (process.getuid?.() === 0) return [];
  if (run('sudo', ['--version']).error) return undefined;
  if (process.stdin.isTTY) return ['sudo'];
  return run('sudo', ['-n', 'true']).status === 0 ? ['sudo', '-n'] : undefined;
}

const found = missingPackages();
if (found.error) {
  say(found.error);
  process.exit(1);
}
const { missing } = found;
const needArch = !hasForeignArch();
if (!missing.length && !needArch) {
  if (!quiet) say(`all ${Object.keys(packages).length} Debian packages are installed`);
  process.exit(0);
}

const commands = [
  ...(needArch ? [['dpkg', '--add-architecture', foreignArch]] : []),
  ['apt-get', 'update', '-qq'],
  ...(missing.length ? [['apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...missing]] : []),
];
for (const name of missing) say(`missing ${name}: ${packages[name]}`);
if (needArch) say(`dpkg does not know the ${foreignArch} architecture (the VM tests download arm64 kernels)`);
const prefix = checkOnly ? undefined : rootPrefix();
if (!prefix) {
  say(checkOnly ? 'to install them, run:' : 'cannot become root to install them (not root; sudo missing or needs a password); run as root:');
  for (const c of commands) say(`  ${c.join(' ')}`);
  process.exit(1);
}
for (const c of commands) {
  // Through env(1): sudo resets the environment, and apt must not ask questions.
  const cmd = [...prefix, 'env', 'DEBIAN_FRONTEND=noninteractive', ...c];
  say(`running ${cmd.join(' ')}`);
  // apt's progress is noise here; its errors are on stderr.
  const r = spawnSync(cmd[0], cmd.slice(1), { stdio: ['inherit', 'ignore', 'inherit'] });
  if (r.status !== 0) {
    say(`${cmd.join(' ')} failed (exit ${r.status ?? r.signal ?? r.error?.message})`);
    process.exit(1);
  }
}
const after = missingPackages();
if (after.error || after.missing.length) {
  say(`still missing after apt-get: ${after.error ?? after.missing.join(' ')}`);
  process.exit(1);
}
say(`installed ${missing.length} package${missing.length === 1 ? '' : 's'}`);
