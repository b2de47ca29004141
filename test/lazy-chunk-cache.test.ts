// The lazy chunks' code caches (src/lazy-chunk-cache.ts): written after a chunk's use, taken by the next
// compile of the same source, checked by their CRC before V8 sees them (a damaged file is removed),
// one file per chunk (another build's is removed, a chunk whose name starts the same is not). And
// through the real bundle: a gateway writes the cache of the chunk it loaded when it exits, and the
// next start compiles that chunk from it.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { chunkCompiled, readChunkCache, setChunkCacheDir, writeChunkCaches } from '../src/lazy-chunk-cache.js';
import { setLogSink } from '../src/log.js';
import { bundle, cleanEnv, start, tempDir } from './support/proc.js';
import { freePort } from './support/free-port.js';

const source = (n: number) => `(function () { function twice(x) { return x * 2 + ${n}; } return { run: (v) => twice(v) + [1, 2, 3].map(twice).length }; })`;

t.test('written after use, read back by the same source, refused when damaged, one per chunk', async (t) => {
  t.equal(readChunkCache('demo', source(1)), undefined, 'no folder set: nothing read');
  const home = tempDir();
  setChunkCacheDir(home);
  const lines: string[] = [];
  setLogSink((l) => lines.push(l));
  t.teardown(() => setLogSink((l) => process.stderr.write(`${l}\n`)));

  const first = readChunkCache('demo', source(1))!;
  t.match(first, { file: /demo-[0-9a-f]{8}\.v8c$/ });
  t.equal(first.data, undefined, 'none yet');
  const script = new Script(source(1));
  t.equal((script.runInThisContext() as () => { run(v: number): number })().run(5), 14);
  chunkCompiled('demo', first.file, script);
  // A chunk whose name starts like this one: its cache must survive this one's writes.
  const other = readChunkCache('demo-cli', source(9))!;
  chunkCompiled('demo-cli', other.file, new Script(source(9)));
  writeChunkCaches();
  t.ok(existsSync(first.file) && existsSync(other.file), 'both written');
  t.equal(readFileSync(first.file).subarray(0, 8).toString('latin1'), 'PCLV8C01');

  const again = readChunkCache('demo', source(1))!;
  t.ok(again.data && again.data.length > 0, 'read back');
  const cached = new Script(source(1), { cachedData: again.data });
  t.equal(cached.cachedDataRejected, false, 'V8 takes it');
  t.equal((cached.runInThisContext() as () => { run(v: number): number })().run(5), 14, 'and the code runs the same');
  writeChunkCaches();
  t.ok(existsSync(first.file), 'nothing pending: nothing written or removed');

  // Another build of the chunk: its own file; writing it removes the old one, not demo-cli's, and a
  // temporary file a dead process left, not one a live process (a gateway beside a one-shot turn)
  // is still writing.
  const next = readChunkCache('demo', source(2))!;
  t.not(next.file, first.file);
  const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
  writeFileSync(`${first.file}.${dead}.tmp`, 'torn');
  writeFileSync(`${next.file}.${process.ppid}.tmp`, 'being written');
  chunkCompiled('demo', next.file, new Script(source(2)));
  writeChunkCaches();
  t.same(readdirSync(join(home, 'lazy')).sort(), [next.file, `${next.file}.${process.ppid}.tmp`, other.file].map((f) => f.slice(join(home, 'lazy').length + 1)).sort());
  rmSync(`${next.file}.${process.ppid}.tmp`);

  // One flipped byte of the payload: refused before V8 sees it, removed, said.
  const raw = readFileSync(next.file);
  raw[raw.length - 5]! ^= 0x40;
  writeFileSync(next.file, raw);
  t.equal(readChunkCache('demo', source(2))!.data, undefined, 'a damaged cache is not used');
  t.notOk(existsSync(next.file), 'and removed');
  t.match(lines.join('\n'), /lazy chunk demo: its code cache .* is damaged; removed, compiled from source/);
  writeFileSync(next.file, Buffer.from('PCLV8C01'));
  t.equal(readChunkCache('demo', source(2))!.data, undefined, 'a header alone is not a cache either');
});

t.test('the bundle: a gateway writes the caches of the chunks it loaded; the next start compiles from them', { skip: existsSync(bundle) ? false : 'no bundle: run node scripts/build.mjs' }, async (t) => {
  const home = tempDir();
  // mqtt: a broker that is nowhere. Its chunk is loaded first by the config checks, before the
  // config's log level (debug from the environment shows it) and once had no cache folder yet.
  writeFileSync(join(home, 'config.json'), JSON.stringify({ log: { level: 'debug' }, mqtt: { url: 'mqtt://127.0.0.1:9' } }));
  const run = async () => {
    const port = await freePort();
    // The Telegram channel is a lazy chunk the gateway loads at start (its Bot API is nowhere).
    const gw = start(process.execPath, [bundle, 'gateway', '--port', String(port)], {
      env: cleanEnv({ PINCLAW_HOME: home, PINCLAW_LOG_LEVEL: 'debug', PINCLAW_CHANNELS_TELEGRAM_TOKEN: '1:x', PINCLAW_CHANNELS_TELEGRAM_API_BASE_URL: 'http://127.0.0.1:9' }),
    });
    t.teardown(() => gw.child.kill('SIGKILL'));
    await gw.waitFor(/gateway listening/);
    gw.child.kill('SIGTERM');
    t.equal((await gw.exited).code, 0, 'stops cleanly');
    return gw.stderr();
  };
  const first = await run();
  t.notMatch(first, /lazy chunk telegram: compiled from its code cache/);
  const files = readdirSync(join(home, 'cache', 'lazy'));
  for (const name of ['telegram', 'mqtt']) t.ok(files.some((f) => new RegExp(`^${name}-[0-9a-f]{8}\\.v8c$`).test(f)), `${name}'s written at exit: ${files.join(', ')}`);
  const second = await run();
  t.match(second, /lazy chunk telegram: compiled from its code cache/, 'taken by the next start');
  t.match(second, /lazy chunk mqtt: compiled from its code cache/, 'also by the config checks, the first to load the mqtt chunk');
});
