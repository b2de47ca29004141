// Damage from outside gets a one-line message naming the file and the way out, never a stack
// trace: a config.json nested absurdly deep (exit 78), a database with damaged pages (exit 1), and
// `config set` on a full disk (exit 1, the file as it was, no temp file left).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { openSync, readFileSync, readdirSync, rmSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { bundle, cleanEnv, runPinclaw, start, tempDir } from './support/proc.js';
import { receiveDatagrams } from './support/dgram-receiver.js';

const noStack = /\n\s+at |unexpected error|RangeError|SqliteError:/;

t.test('a config.json nested 100,000 levels deep', async (t) => {
  const home = tempDir('pinclaw-deep-');
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const env = cleanEnv({ PINCLAW_HOME: home });
  const file = join(home, 'config.json');
  const n = 100_000;
  // Under a key the schema knows (a list: validation recurses into it) and under one it does not.
  for (const text of [`{"agent":{"fallbacks":${'['.repeat(n)}${']'.repeat(n)}}}`, `{"x":${'['.repeat(n)}${']'.repeat(n)}}`, `{"tools":{"overrides":${'[{"a":'.repeat(n / 10)}1${'}]'.repeat(n / 10)}}}`]) {
    writeFileSync(file, text);
    for (const args of [['config', 'validate'], ['config', 'set', 'log.level', 'debug'], ['config', 'get', 'log.level'], ['gateway', '--port', '0'], ['doctor']]) {
      const r = runPinclaw(args, { env });
      const said = r.stdout + r.stderr;
      t.equal(r.code, args[0] === 'doctor' ? 1 : 78, `${args.join(' ')} exits ${args[0] === 'doctor' ? 1 : 78}`);
      t.match(said, new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: nested more than \\d+ levels deep at `), `${args.join(' ')} names the file and where`);
      t.match(said, /fix it, or move it aside/, 'and the way out');
      t.notMatch(said, noStack, 'no stack trace');
    }
    t.equal(readFileSync(file, 'utf8'), text, 'the file is left as it was');
  }
  // A real config is far from the limit: every section with a list of objects still loads.
  writeFileSync(file, JSON.stringify({ tools: { overrides: [{ channel: 'telegram', allow: ['exec'] }] }, mqtt: { fleet: { callers: [{ node: 'a', key: 'k' }] } } }));
  t.equal(runPinclaw(['config', 'validate'], { env }).code, 0);
});

t.test('a database with damaged pages', async (t) => {
  const home = tempDir('pinclaw-corrupt-');
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const sockDir = tempDir('pinclaw-corrupt-notify-');
  const socket = join(sockDir, 'notify.sock');
  const notify = await receiveDatagrams(socket);
  t.teardown(() => {
    notify.close();
    rmSync(sockDir, { recursive: true, force: true });
  });
  const env = cleanEnv({ PINCLAW_HOME: home });
  // A real database, made and closed by a gateway.
  const g = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: { ...env, NOTIFY_SOCKET: socket } });
  while (!notify.datagrams.some((d) => d.includes('READY=1'))) await notify.next(30_000);
  g.child.kill('SIGTERM');
  t.equal((await g.exited).code, 0);
  const db = join(home, 'pinclaw.db');
  // Garbage over pages 3-5 (the header and the first pages stay: the file still opens).
  const fd = openSync(db, 'r+');
  writeSync(fd, Buffer.alloc(3 * 4096, 0xa5), 0, 3 * 4096, 2 * 4096);
  closeSync(fd);
  const damaged = readFileSync(db);
  const r = runPinclaw(['gateway', '--port', '0'], { env });
  t.equal(r.code, 1, 'exit 1');
  t.match(r.stderr, `the database ${db} is damaged (database disk image is malformed)`, 'names the file and the damage');
  t.match(r.stderr, /restore it from a backup \(pinclaw restore FILE\), or move it aside/, 'and the way out');
  t.notMatch(r.stderr, noStack, 'no stack trace');
  t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  const doctor = runPinclaw(['doctor'], { env });
  t.equal(doctor.code, 1, 'doctor fails');
  t.match(doctor.stdout, `FAIL  database: the database ${db} is damaged (database disk image is malformed); stop pinclaw, then restore it from a backup`, 'doctor gives the same way out');
  t.same(readFileSync(db), damaged, 'the damaged file is not changed further (the owner may want to recover it)');
});

// A real full disk: a 64 KiB tmpfs (mounting one needs root, as the test machines run).
t.test('config set on a full disk', { skip: process.getuid?.() === 0 ? false : 'mounting a small tmpfs needs root' }, async (t) => {
  const home = tempDir('pinclaw-full-');
  const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0700', 'tmpfs', home], { encoding: 'utf8' });
  t.equal(m.status, 0, `a 64 KiB tmpfs on ${home} ${m.stderr}`);
  t.teardown(() => {
    spawnSync('umount', [home]);
    rmSync(home, { recursive: true, force: true });
  });
  const env = cleanEnv({ PINCLAW_HOME: home });
  t.equal(runPinclaw(['config', 'set', 'log.level', 'warn'], { env }).code, 0, 'a set while there is room works');
  const file = join(home, 'config.json');
  const before = readFileSync(file, 'utf8');
  // Fill what is left, so the temp file of the next write cannot get a block.
  const fill = openSync(join(home, 'filler'), 'w');
  try {
    for (;;) writeSync(fill, Buffer.alloc(4096));
  } catch (err) {
    t.equal((err as NodeJS.ErrnoException).code, 'ENOSPC', 'the tmpfs is full');
  }
  closeSync(fill);
  const hosts = JSON.stringify(Array.from({ length: 400 }, (_, i) => `host${i}.lan`));
  const r = runPinclaw(['config', 'set', 'web.allowedHosts', hosts], { env });
  t.equal(r.code, 1, 'exit 1: not a configuration error');
  t.match(r.stderr, `cannot write ${file}: no space left on the device of ${home} (ENOSPC); free some space there`, 'names the file, the cause and the way out');
  t.match(r.stderr, `${file} was not changed`);
  t.notMatch(r.stderr, noStack, 'no stack trace');
  t.equal(readFileSync(file, 'utf8'), before, 'the config is as it was');
  t.same(readdirSync(home).sort(), ['config.json', 'filler'], 'no temp file left');
  rmSync(join(home, 'filler'));
  t.equal(runPinclaw(['config', 'set', 'web.allowedHosts', hosts], { env }).code, 0, 'with room again the same set works');
});
