// `npm test`: installs the Debian packages the tests need (scripts/setup.mjs), builds what the tests need (the bundle, the x64 and arm64 single executables; the dev
// addon is built by npm install), runs every tap test on the Node pinclaw ships (scripts/dev-node.mjs), and ends with the plain line `N passed, N failed` counted over the
// individual assertions.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, createWriteStream } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

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
// The Debian packages the tests need (scripts/setup.mjs; `npm run setup`): installed when missing,
// so `npm install && npm test` works on a fresh machine. A check only when nothing is missing.
{
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'setup.mjs'), '--quiet'], { cwd: root, stdio: ['inherit', 'inherit', 'inherit'] });
  if (r.status !== 0) {
    console.log('test: the Debian packages the tests need are missing (see above)');
    console.log('0 passed, 1 failed');
    process.exit(1);
  }
}
if (!process.env.PINCLAW_TEST_SKIP_BUILD) {
  step('bundling', process.execPath, ['scripts/build.mjs']);
  step('building the x64 single executable', process.execPath, ['scripts/build-sea.mjs', '--arch', 'x64']);
  step('building the arm64 single executable', process.execPath, ['scripts/build-sea.mjs', '--arch', 'arm64']);
}

mkdirSync(join(root, '.tap'), { recursive: true });
const rawLog = createWriteStream(join(root, '.tap', 'last-run.tap'));
// Counts leaf assertions. A test point that closes a "# Subtest:" opened at the same indent is that
// subtest's summary, not an assertion; it counts as a failure only when nothing inside it failed
// (a subtest that threw or timed out).
const counts = { pass: 0, fail: 0, skip: 0 };
const failures = [];
const open = []; // { indent, name, failsAtOpen }
function countLine(line) {
  const indent = line.length - line.trimStart().length;
  const sub = /^\s*# Subtest: (.*)$/.exec(line);
  if (sub) {
    open.push({ indent, name: sub[1], failsAtOpen: counts.fail });
    return;
  }
  const point = /^\s*(not )?ok \d+(?: - (.*?))?(?: # (SKIP|TODO)\b.*)?$/i.exec(line);
  if (!point) return;
  const ok = !point[1];
  const top = open.at(-1);
  if (top && top.indent === indent) {
    open.pop();
    if (!ok && counts.fail === top.failsAtOpen) {
      counts.fail++;
      failures.push(`${open.map((o) => o.name).concat(top.name).join(' > ')} (failed without a failing assertion)`);
    }
    return;
  }
  if (point[3]) counts.skip++;
  else if (ok) counts.pass++;
  else {
    counts.fail++;
    failures.push(`${open.map((o) => o.name).join(' > ')} > ${point[2] ?? '(unnamed)'}`);
  }
}

// tap, and so every test and every child a test starts with process.execPath, runs on the Node
// pinclaw ships (scripts/dev-node.mjs), not on the one that runs npm.
let node;
try {
  // Imported here, not on top: it loads the build scripts, which need node_modules.
  const { devNode } = await import('./dev-node.mjs');
  node = devNode({ log: say });
} catch (err) {
  console.log(`test: cannot get the Node the tests run on: ${err.message ?? err}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}
say(`running tap on Node ${node.version} (${node.node})${files.length ? ` on ${files.join(' ')}` : ''}`);
const child = spawn(node.node, [join(root, 'node_modules', 'tap', 'dist', 'esm', 'run.mjs'), '--reporter=tap', ...files], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'inherit'],
});
// Top-level lines are one per test file: show them as progress, keep everything in .tap/last-run.tap.
let buffered = '';
child.stdout.on('data', (chunk) => {
  rawLog.write(chunk);
  buffered += chunk.toString();
  let nl;
  while ((nl = buffered.indexOf('\n')) >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    countLine(line);
    if (/^(not )?ok \d+ /.test(line)) console.log(line);
  }
});
child.on('close', (code) => {
  if (buffered) countLine(buffered);
  rawLog.end();
  const pass = counts.pass;
  let fail = counts.fail;
  for (const f of failures) console.log(`FAILED: ${f}`);
  if (failures.length) console.log('test: details in .tap/last-run.tap');
  // A runner crash with no failing assertion still fails the run.
  if (code !== 0 && fail === 0) {
    console.log(`test: tap exited with ${code} (see .tap/last-run.tap)`);
    fail = 1;
  }
  console.log(`${pass} passed, ${fail} failed${counts.skip ? `, ${counts.skip} skipped` : ''}`);
  process.exit(fail === 0 && code === 0 ? 0 : 1);
});
