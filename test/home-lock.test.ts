// The home lock where /proc is not this process's. In a container that sees another pid namespace's
// /proc, /proc/locks lists our own lock under another pid (or not at all); the lock used to be taken
// as "not on the file at the path" then, and every start was refused. SQLite's answer decides now;
// /proc/locks only names a holder.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeHolder, tryLockHome } from '../src/store/home-lock.js';
import { lockFromChild } from './support/lock-child.js';
import { tempDir } from './support/proc.js';

// A new user and pid namespace that keeps this /proc: the child is pid 1 to itself, and /proc/self
// and /proc/locks name it by its pid out here, as in a container given the host's /proc.
const FOREIGN_PID_NS = ['unshare', '--user', '--map-root-user', '--pid', '--fork'];
const unshareWorks = spawnSync(FOREIGN_PID_NS[0]!, [...FOREIGN_PID_NS.slice(1), 'true']).status === 0;

t.test('in another pid namespace than its /proc, a free home is locked and a held one is refused', { skip: unshareWorks ? false : 'unshare cannot create user and pid namespaces here' }, async (t) => {
  const dir = tempDir('pinclaw-lock-ns-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'gateway.lock');
  const fresh = lockFromChild(file, FOREIGN_PID_NS);
  t.same(fresh.outcome, 'held', `a free home is locked (${fresh.holder ?? ''}${fresh.stderr})`);
  const again = lockFromChild(file, FOREIGN_PID_NS);
  t.same(again.outcome, 'held', 'and again, the lock file existing now');

  const mine = tryLockHome(file);
  if (!('held' in mine)) throw new Error('the lock is free');
  t.teardown(() => mine.held.release());
  const busy = lockFromChild(file, FOREIGN_PID_NS);
  t.equal(busy.outcome, 'busy', 'a held home is refused all the same');
  t.match(busy.holder, `another process (pid ${process.pid}: `, 'named by the pid /proc shows');
});

t.test('a /proc that is not ours (injected): the lock is taken by what SQLite says, the holder named when it can be', async (t) => {
  const dir = tempDir('pinclaw-lock-proc-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const proc = join(dir, 'proc');
  mkdirSync(proc);
  symlinkSync('4194304', join(proc, 'self')); // above pid_max: never this process
  writeFileSync(join(proc, 'locks'), '');
  const file = join(dir, 'gateway.lock');
  const first = tryLockHome(file, { procRoot: proc });
  t.ok('held' in first, 'a free home is locked');
  if (!('held' in first)) return;
  t.teardown(() => first.held.release());
  const second = tryLockHome(file, { procRoot: proc });
  t.same(second, { busy: {} }, 'a second locker is refused by the lock itself');
  if ('busy' in second) t.equal(describeHolder(second.busy), 'another process (its pid is not visible from here)');
  t.equal(lockFromChild(file).outcome, 'busy', 'and another process is refused too');
  const noProc = tryLockHome(join(dir, 'other.lock'), { procRoot: '' });
  t.ok('held' in noProc, 'without /proc at all, the lock is taken too');
  if ('held' in noProc) noProc.held.release();
});

// The check after the lock (lockedAtPath): the inode the path names now must be the one this
// process has open. A lock file replaced between the open and the lock (a failed restore removes
// the one it made) is a file nobody else will open: the lock on it is no lock of the home.
t.test('a lock is on the home only while the path still names the file this process opened', async (t) => {
  const { closeSync, openSync, renameSync, statSync: stat } = await import('node:fs');
  const { lockedAtPath } = await import('../src/store/home-lock.js');
  const dir = tempDir();
  const file = join(dir, 'gateway.lock');
  writeFileSync(file, '');
  const before = { dev: stat(file).dev, ino: stat(file).ino };
  const fd = openSync(file, 'r');
  t.teardown(() => closeSync(fd));
  t.equal(lockedAtPath(file, before, '/proc'), true, 'the path names the open file');
  renameSync(file, join(dir, 'gateway.lock.old'));
  writeFileSync(file, '');
  t.equal(lockedAtPath(file, before, '/proc'), false, 'the path names another file now');
  t.equal(lockedAtPath(file, before, ''), false, 'and without /proc, by the name');
});
