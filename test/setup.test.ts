// scripts/setup.mjs (npm run setup, the first step of npm test): what it decides, with dpkg stand-ins
// on PATH so that nothing is installed here. That it really installs is what CI shows on a fresh
// machine (.ci/run runs it first).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tempDir } from './support/proc.js';

const script = resolve('scripts/setup.mjs');

/** A PATH whose dpkg-query reports every package installed except `missing`, and dpkg knowing `arches`. */
function fakeDpkg(missing: string[], arches = 'arm64'): string {
  const dir = tempDir();
  const query = join(dir, 'dpkg-query');
  writeFileSync(query, `#!/bin/sh
shift 2
for p in "$@"; do
  case " ${missing.join(' ')} " in *" $p "*) echo "$p not-installed";; *) echo "$p installed";; esac
done
`);
  const dpkg = join(dir, 'dpkg');
  writeFileSync(dpkg, `#!/bin/sh\n[ "$1" = --print-foreign-architectures ] && printf '%s\\n' ${arches || "''"}\n`);
  chmodSync(query, 0o755);
  chmodSync(dpkg, 0o755);
  return dir;
}

const run = (path: string, ...args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8', env: { PATH: `${path}:/usr/bin:/bin` } });

t.test('nothing missing: nothing to do', async (t) => {
  const r = run(fakeDpkg([]));
  t.equal(r.status, 0);
  t.match(r.stdout, /^setup: all \d+ Debian packages are installed\n$/);
  t.equal(run(fakeDpkg([]), '--quiet').stdout, '', '--quiet (npm test) says nothing then');
});

t.test('missing packages: named with why, and the exact commands', async (t) => {
  const r = run(fakeDpkg(['g++-aarch64-linux-gnu', 'mosquitto']), '--check');
  t.equal(r.status, 1);
  t.match(r.stdout, /setup: missing g\+\+-aarch64-linux-gnu: the arm64 executable/);
  t.match(r.stdout, /setup: missing mosquitto: the MQTT tests/);
  t.match(r.stdout, /setup: {3}apt-get update -qq\nsetup: {3}apt-get install -y -qq --no-install-recommends g\+\+-aarch64-linux-gnu mosquitto\n/);
  t.notMatch(r.stdout, /--add-architecture/, 'arm64 is already known');
});

t.test('dpkg without arm64: the architecture is added first', async (t) => {
  const r = run(fakeDpkg([], ''), '--check');
  t.equal(r.status, 1);
  t.match(r.stdout, /dpkg does not know the arm64 architecture/);
  t.match(r.stdout, /setup: {3}dpkg --add-architecture arm64\nsetup: {3}apt-get update -qq\n/);
});

t.test('not Debian: a clear error', async (t) => {
  const r = spawnSync(process.execPath, [script], { encoding: 'utf8', env: { PATH: tempDir() } });
  t.equal(r.status, 1);
  t.match(r.stdout, /setup: dpkg-query: .*ENOENT.*\(is this Debian\?\)/);
});
