// `npm test`: builds what the tests need (the bundle, the x64 and arm64 single executables; the dev
// addon is built by npm install), runs every tap test, and ends with the plain line `N passed, N failed` counted over the
// individual assertions.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, createWriteStream } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Parser } from 'tap-parser';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const say = (msg) => console.log(`test: ${msg}`);

function step(what, cmd, args) {
  say(what);
  const started = Date.now();
  const r = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) {
    console.log(`test: ${what} failed (exit ${r.status ?? r.signal})`);
    console.log('0 passed, 1 failed');
    process.exit(1);
  }
  say(`${what}: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

const files = process.argv.slice(2);
if (!process.env.PINCLAW_TEST_SKIP_BUILD) {
  step('bundling', process.execPath, ['scripts/build.mjs']);
  step('building the x64 single executable', process.execPath, ['scripts/build-sea.mjs', '--arch', 'x64']);
  step('building the arm64 single executable', process.execPath, ['scripts/build-sea.mjs', '--arch', 'arm64']);
}

mkdirSync(join(root, '.tap'), { recursive: true });
const rawLog = createWriteStream(join(root, '.tap', 'last-run.tap'));
const parser = new Parser({ flat: true });
const failures = [];
parser.on('assert', (a) => {
  if (!a.ok && !a.todo && !a.skip) failures.push(a);
});

say(`running tap${files.length ? ` on ${files.join(' ')}` : ''}`);
const child = spawn(process.execPath, [join(root, 'node_modules', 'tap', 'dist', 'esm', 'run', 'index.js'), '--reporter=tap', ...files], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'inherit'],
});
// Top-level lines are one per test file: show them as progress, keep everything in .tap/last-run.tap.
let buffered = '';
child.stdout.on('data', (chunk) => {
  rawLog.write(chunk);
  parser.write(chunk);
  buffered += chunk.toString();
  let nl;
  while ((nl = buffered.indexOf('\n')) >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    if (/^(not )?ok \d+ /.test(line)) console.log(line);
  }
});
child.on('close', (code) => {
  parser.end();
  rawLog.end();
  const results = parser.results ?? {};
  let pass = results.pass ?? 0;
  let fail = results.fail ?? 0;
  for (const f of failures) {
    const diag = f.diag ? JSON.stringify(f.diag).slice(0, 800) : '';
    console.log(`FAILED: ${f.fullname || f.name} ${diag}`);
  }
  // A runner crash with no failing assertion still fails the run.
  if (code !== 0 && fail === 0) {
    console.log(`test: tap exited with ${code} (see .tap/last-run.tap)`);
    fail = 1;
  }
  console.log(`${pass} passed, ${fail} failed`);
  process.exit(fail === 0 && code === 0 ? 0 : 1);
});
