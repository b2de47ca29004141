// What a quiet gateway gives back (src/release.ts, src/conductor/idle-memory.ts): cache releases
// run once the conductor has been quiet for conductor.releaseAfterIdleSeconds, code unloads after
// conductor.unloadCodeAfterIdleSeconds, a failing one does not stop the others, a turn in between
// postpones them, SQLite connections register their cache.
import t from 'tap';
import { join } from 'node:path';
import { idleMemory } from '../src/conductor/idle-memory.js';
import { setLogSink } from '../src/log.js';
import { backgroundWorkDone, onRelease, onUnload, releaseCaches, unloadCode } from '../src/release.js';
import { openDatabase } from '../src/store/db.js';
import { tempDir } from './support/proc.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('release functions: each runs, a failure is logged and contained, removal works', async (t) => {
  const lines: string[] = [];
  setLogSink((l) => lines.push(l));
  t.teardown(() => setLogSink((l) => process.stderr.write(`${l}\n`)));
  const ran: string[] = [];
  const offA = onRelease('test-a', () => ran.push('a'));
  const offBad = onRelease('test-bad', () => {
    throw new Error('cannot drop it');
  });
  const offB = onRelease('test-b', () => ran.push('b'));
  const done = releaseCaches();
  t.same(ran, ['a', 'b']);
  t.ok(done.includes('test-a') && done.includes('test-b') && !done.includes('test-bad'));
  t.match(lines.join('\n'), /memory: releasing test-bad failed: cannot drop it/);
  offA();
  offBad();
  offB();
  ran.length = 0;
  releaseCaches();
  t.same(ran, [], 'removed functions no longer run');
  // Removing a name that was registered again since removes nothing.
  const first = onRelease('test-c', () => ran.push('c1'));
  const second = onRelease('test-c', () => ran.push('c2'));
  first();
  releaseCaches();
  t.same(ran, ['c2']);
  second();
});

t.test('the release waits for the configured quiet time; a turn in between postpones it', async (t) => {
  let released = 0;
  const off = onRelease('test-count', () => released++);
  t.teardown(off);
  const idle = idleMemory(150);
  t.teardown(() => idle.stop());
  idle.quiet();
  await sleep(60);
  idle.quiet(); // a pump that found no work: does not restart the wait
  await sleep(60);
  t.equal(released, 0, 'not before the time');
  idle.busy();
  await sleep(120);
  t.equal(released, 0, 'a turn started: nothing is released under it');
  idle.quiet();
  await sleep(250);
  t.equal(released, 1, 'released once, 150 ms after going quiet');
  await sleep(200);
  t.equal(released, 1, 'and not again until the next turn');
  const never = idleMemory(0);
  never.quiet();
  await sleep(100);
  never.stop();
  t.equal(released, 1, '0: never released');
});

t.test('code unloads run on their own time: not with the caches, each kind only its own', async (t) => {
  const lines: string[] = [];
  setLogSink((l) => lines.push(l));
  t.teardown(() => setLogSink((l) => process.stderr.write(`${l}\n`)));
  const ran: string[] = [];
  const offCache = onRelease('test-cache', () => ran.push('cache'));
  const offCode = onUnload('test-code', () => ran.push('code'));
  const offBad = onUnload('test-bad-code', () => {
    throw new Error('still in use');
  });
  t.teardown(() => {
    offCache();
    offCode();
    offBad();
  });
  t.notOk(releaseCaches().includes('test-code'), 'a cache release leaves the code');
  t.same(ran, ['cache']);
  ran.length = 0;
  const unloaded = unloadCode();
  t.same(ran, ['code'], 'an unload leaves the caches');
  t.ok(unloaded.includes('test-code') && !unloaded.includes('test-bad-code'), unloaded.join(', '));
  t.match(lines.join('\n'), /memory: unloading test-bad-code failed: still in use/, 'a failing unload is logged and contained');

  ran.length = 0;
  const idle = idleMemory(200, 800);
  t.teardown(() => idle.stop());
  idle.quiet();
  await sleep(500);
  t.same(ran, ['cache'], 'the caches at 200 ms, the code not yet');
  backgroundWorkDone(); // loads caches again, no code: the unload keeps its time
  await sleep(600);
  t.same(ran, ['cache', 'cache', 'code'], 'the caches again 200 ms after the work, the code at 800 ms');
  await sleep(500);
  t.same(ran, ['cache', 'cache', 'code'], 'once each until the next turn');
  idle.busy();
  idle.quiet();
  await sleep(450);
  idle.busy(); // a turn before the unload's time: the code stays
  await sleep(600);
  t.same(ran, ['cache', 'cache', 'code', 'cache'], 'a turn at 450 ms postponed the unload');
  const never = idleMemory(200, 0);
  t.teardown(() => never.stop());
  never.quiet();
  await sleep(500);
  t.same(ran, ['cache', 'cache', 'code', 'cache', 'cache'], '0: the code is never unloaded');
});

t.test('a SQLite connection hands its page cache back, and stops being asked once closed', async (t) => {
  const dir = tempDir('pinclaw-idle-db-');
  const db = openDatabase(join(dir, 'x.db'));
  db.exec('CREATE TABLE t (v TEXT)');
  const insert = db.prepare('INSERT INTO t VALUES (?)');
  for (let i = 0; i < 2000; i++) insert.run('x'.repeat(500));
  const names = releaseCaches();
  t.ok(names.some((n) => n.startsWith('sqlite#') && n.endsWith(join(dir, 'x.db'))), names.join(', '));
  t.equal((db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n, 2000, 'the connection works on after shrink_memory');
  db.close();
  t.notOk(releaseCaches().some((n) => n.endsWith(join(dir, 'x.db'))), 'a closed connection is no longer registered');
});

t.test('the local embedder is dropped with the caches and loads again, giving the same vectors', async (t) => {
  const { localEmbedder } = await import('../src/memory/embedders/local.js');
  const e = localEmbedder();
  const [before] = await e.embed(['turn the thermostat down']);
  t.ok(releaseCaches().includes('embedder'));
  const [after] = await e.embed(['turn the thermostat down']);
  t.same(Array.from(after!), Array.from(before!), 'the reloaded backend embeds alike');
});

t.test('work done while quiet (the memory re-indexing a file) starts the quiet time again; not under a turn', async (t) => {
  let released = 0;
  const off = onRelease('test-work', () => released++);
  t.teardown(off);
  const idle = idleMemory(300);
  t.teardown(() => idle.stop());
  idle.quiet();
  await sleep(200);
  backgroundWorkDone(); // the embedder was loaded again 200 ms into the quiet time
  await sleep(200);
  t.equal(released, 0, 'not 300 ms after going quiet: the work restarted the wait');
  await sleep(200);
  t.equal(released, 1, 'released 300 ms after the work');
  idle.busy();
  backgroundWorkDone();
  await sleep(400);
  t.equal(released, 1, "during a turn the work changes nothing: the turn's end starts the quiet time");
  idle.stop();
  idle.quiet();
  await sleep(200);
  backgroundWorkDone();
  await sleep(200);
  t.equal(released, 2, 'a stopped one no longer listens: the work 200 ms in did not move the release at 300 ms');
});
