// `pinclaw logs` as a real process: a gateway outside systemd writes HOME/logs/gateway.log (each line
// with its time), `logs` prints its last lines (across a rotation), `logs -f` follows appends and a
// rotation until stopped; the file stays bounded; with the service unit of this home installed the
// journal is where the lines are (found from the unit `service install` writes); bad input exits 2.
import t, { type Test } from 'tap';
import { appendFileSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lastLines } from '../src/cli/logs-command.js';
import { logFileSink } from '../src/log-file.js';
import { bundle, cleanEnv, runPinclawAsync, start, tempDir } from './support/proc.js';

/** `pinclaw logs -f -n 1` on `home`; `until` waits (up to 10 s) for its whole output to match. */
function followLogs(t: Test, home: string) {
  const f = start(process.execPath, [bundle, 'logs', '-f', '-n', '1'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.teardown(() => f.child.kill('SIGKILL'));
  let out = '';
  f.child.stdout!.removeAllListeners('data');
  f.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const until = async (re: RegExp) => {
    for (let i = 0; i < 200 && !re.test(out); i++) await new Promise((r) => setTimeout(r, 50));
    t.match(out, re);
  };
  return { f, until };
}

t.test('the gateway writes its log file; logs prints the last lines; no file is a clear error', async (t) => {
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home });
  const none = await runPinclawAsync(['logs'], { env });
  t.equal(none.code, 1);
  t.equal(none.stderr, `pinclaw: no gateway log at ${join(home, 'logs', 'gateway.log')}: no gateway has run in this home outside systemd yet (pinclaw gateway writes it; under pinclaw service install the journal has the lines)\n`);

  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env });
  t.teardown(() => gw.child.kill('SIGKILL'));
  const url = (await gw.waitFor(/gateway listening on (http:\/\/\S+)/))[1]!;
  const r = await runPinclawAsync(['logs', '-n', '1'], { env });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z info: gateway listening on ${url.replace(/\./g, '\\.')}\\n$`), 'the line, with its time');
  t.equal(statSync(join(home, 'logs', 'gateway.log')).mode & 0o777, 0o600, 'readable by the owner only');

  for (const bad of [['logs', '-n', '0'], ['logs', '-n', 'many'], ['logs', 'extra']]) {
    const b = await runPinclawAsync(bad, { env });
    t.equal(b.code, 2, `${bad.join(' ')} → exit 2`);
    t.match(b.stderr, /usage: pinclaw logs \[-f\] \[-n LINES\]/);
  }
});

t.test('the file rotates at its bound; logs reads across the rotation', async (t) => {
  const home = tempDir();
  const file = join(home, 'logs', 'gateway.log');
  const sink = logFileSink(file, 400);
  for (let i = 1; i <= 30; i++) sink(`info: line ${i}`);
  t.ok(statSync(file).size <= 400, 'the current file stays within the bound');
  t.ok(statSync(`${file}.1`).size <= 400, 'so does the one before it');
  t.match(readFileSync(file, 'utf8'), /info: line 30\n$/);
  const r = await runPinclawAsync(['logs', '-n', '12'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  t.same(lines.map((l) => l.replace(/^\S+ /, '')), Array.from({ length: 12 }, (_, i) => `info: line ${19 + i}`), 'the last 12 in order, the older ones from gateway.log.1');
});

t.test('logs -f prints appended lines and follows a rotation until stopped', async (t) => {
  const home = tempDir();
  const file = join(home, 'logs', 'gateway.log');
  mkdirSync(join(home, 'logs'));
  writeFileSync(file, 'old line\n');
  const { f, until } = followLogs(t, home);
  await until(/^old line\n$/);
  appendFileSync(file, 'new line one\nnew line ');
  await until(/new line one\n$/);
  appendFileSync(file, 'two\n');
  await until(/new line one\nnew line two\n$/);
  renameSync(file, `${file}.1`);
  writeFileSync(file, 'after the rotation\n');
  await until(/new line two\nafter the rotation\n$/);
  f.child.kill('SIGINT');
  t.same(await f.exited, { code: 0, signal: null }, 'Ctrl-C ends it cleanly');
});

t.test('the follow goes on from the byte after what was printed, from one read of the file', (t) => {
  const file = join(tempDir(), 'gateway.log');
  writeFileSync(file, 'one\ntwo\nhal');
  const following = lastLines(file, 5, true);
  t.same(following.lines, ['one', 'two'], 'a line still being written is left to the follow');
  t.equal(following.from.pos, Buffer.byteLength('one\ntwo\n'));
  t.equal(following.from.ino, statSync(file).ino);
  t.same(lastLines(file, 2).lines, ['two', 'hal'], 'a plain read shows it as it is');
  // What the gateway appends after that read is what the follow reads from its position: nothing
  // printed twice, nothing skipped (a second look at the size, after the lines, skipped it).
  appendFileSync(file, 'f done\nthree\n');
  t.equal(readFileSync(file).subarray(following.from.pos).toString(), 'half done\nthree\n');
  t.same(lastLines(join(tempDir(), 'none.log'), 3, true), { lines: [], from: { ino: -1, pos: 0 } }, 'no file: the follow waits for one');
  t.end();
});

t.test('logs -f prints a line that was half written when it started once it ends', async (t) => {
  const home = tempDir();
  const file = join(home, 'logs', 'gateway.log');
  mkdirSync(join(home, 'logs'));
  writeFileSync(file, 'old line\nhal');
  const { f, until } = followLogs(t, home);
  await until(/^old line\n$/);
  appendFileSync(file, 'f a line\n');
  await until(/^old line\nhalf a line\n$/);
  f.child.kill('SIGINT');
  t.same(await f.exited, { code: 0, signal: null });
});

t.test('with the service unit of this home installed, the journal has the lines', async (t) => {
  const home = tempDir();
  const xdg = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home, XDG_CONFIG_HOME: xdg });
  const unit = await runPinclawAsync(['service', 'install', '--user', '--dry-run'], { env });
  t.equal(unit.code, 0, unit.stderr);
  mkdirSync(join(xdg, 'systemd', 'user'), { recursive: true });
  writeFileSync(join(xdg, 'systemd', 'user', 'pinclaw.service'), unit.stdout);
  // No journalctl on this PATH: the answer shows the journal was chosen, without reading the host's.
  const r = await runPinclawAsync(['logs'], { env: { ...env, PATH: tempDir() } });
  t.equal(r.code, 1);
  t.equal(r.stderr, 'pinclaw: the gateway runs as the systemd user service pinclaw.service, whose log is in the journal, but journalctl is not on PATH\n');
  // The unit of another home is not this one's: the file is read.
  const other = cleanEnv({ PINCLAW_HOME: tempDir(), XDG_CONFIG_HOME: xdg, PATH: tempDir() });
  t.match((await runPinclawAsync(['logs'], { env: other })).stderr, /no gateway log at /);
});
