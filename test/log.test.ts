// The log lines: level first, secrets scrubbed, one line per event, and the syslog priority prefix
// exactly when stderr is the journal (JOURNAL_STREAM names its device and inode).
import t from 'tap';
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { log, setLogRedactor, setLogSink, stderrIsJournal } from '../src/log.js';
import { bundle, cleanEnv, tempDir } from './support/proc.js';

t.test('stderrIsJournal compares JOURNAL_STREAM with the descriptor', async (t) => {
  const file = join(tempDir(), 'stream');
  const fd = openSync(file, 'w');
  t.teardown(() => closeSync(fd));
  const st = fstatSync(fd);
  t.equal(stderrIsJournal({ JOURNAL_STREAM: `${st.dev}:${st.ino}` }, fd), true);
  t.equal(stderrIsJournal({ JOURNAL_STREAM: `${st.dev}:${st.ino + 1}` }, fd), false, 'another stream (inherited by a child whose stderr was redirected)');
  t.equal(stderrIsJournal({}, fd), false);
  t.equal(stderrIsJournal({ JOURNAL_STREAM: 'garbage' }, fd), false);
});

t.test('one line per event, secrets scrubbed', async (t) => {
  const lines: string[] = [];
  setLogSink((l) => lines.push(l));
  setLogRedactor((s) => s.replaceAll('sk-secret', '[redacted]'));
  t.teardown(() => {
    setLogSink((l) => process.stderr.write(l + '\n'));
    setLogRedactor((s) => s);
  });
  log.warn('telegram: the server said:\n<html>sk-secret</html>');
  t.same(lines, ['warn: telegram: the server said: ⏎ <html>[redacted]</html>']);
});

t.test('a gateway whose stderr is the journal prefixes each line with its priority', async (t) => {
  const home = tempDir();
  const file = join(home, 'journal-stand-in');
  const fd = openSync(file, 'w');
  const st = fstatSync(fd);
  const child = spawn(process.execPath, [bundle, 'gateway', '--port', '0'], {
    env: cleanEnv({ PINCLAW_HOME: home, JOURNAL_STREAM: `${st.dev}:${st.ino}` }),
    stdio: ['ignore', 'ignore', fd],
  });
  closeSync(fd);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // Wait for the line, not a time.
  while (!readFileSync(file, 'utf8').includes('listening on')) await new Promise((r) => setTimeout(r, 50));
  child.kill('SIGTERM');
  t.equal(await exited, 0);
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  t.ok(lines.length >= 3, lines.join('\n'));
  for (const l of lines) t.match(l, /^<[3467]>(debug|info|warn|error): /, l);
  t.ok(lines.some((l) => /^<6>info: gateway listening on http:\/\/127\.0\.0\.1:\d+$/.test(l)));
});
