// `pinclaw memory` as a real process (the bundle) on a real home: add, search (text and JSON),
// usage errors, stats, reindex with progress, export/import; and the memory tools through
// `pinclaw tool run`, policy and audit included.
import t from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanEnv, runPinclawAsync, tempDir } from './support/proc.js';

function env(extra: Record<string, string> = {}) {
  const home = tempDir();
  return { home, env: cleanEnv({ PINCLAW_HOME: home, PINCLAW_MEMORY_EMBEDDER: 'none', ...extra }) };
}

t.test('add, search, stats; an empty query is a usage error', async (t) => {
  const { env: e } = env();
  const add = await runPinclawAsync(['memory', 'add', 'The spare key is under the blue flower pot', '--kind', 'fact', '--json'], { env: e });
  t.equal(add.code, 0, add.stderr);
  const { id } = JSON.parse(add.stdout) as { id: number };
  t.ok(Number.isInteger(id));
  t.equal((await runPinclawAsync(['memory', 'add', 'The bins go out on Tuesday evening'], { env: e })).stdout, `${id + 1}\n`, 'plain output is the id');
  const again = await runPinclawAsync(['memory', 'add', 'The spare key is under the blue flower pot'], { env: e });
  t.equal(again.stdout, `${id} (already stored)\n`);
  const s = await runPinclawAsync(['memory', 'search', 'spare key', '--json'], { env: e });
  t.equal(s.code, 0, s.stderr);
  const hits = JSON.parse(s.stdout) as { id: number; text: string; score: number; source: string }[];
  t.match(hits, [{ id, text: 'The spare key is under the blue flower pot', source: `memory #${id}` }]);
  t.ok(hits[0]!.score > 0);
  const plain = await runPinclawAsync(['memory', 'search', 'bins Tuesday', '--limit', '1'], { env: e });
  t.match(plain.stdout, new RegExp(`^${id + 1}\\t[\\d.]+\\tmemory #${id + 1}\\tThe bins go out on Tuesday evening\\n$`));
  for (const bad of [['memory', 'search', ''], ['memory', 'search', '  '], ['memory', 'add', ''], ['memory', 'search', 'x', '--limit', '0'], ['memory', 'search', 'x', '--mode', 'fuzzy']]) {
    const r = await runPinclawAsync(bad, { env: e });
    t.equal(r.code, 2, `${bad.join(' ')} → exit 2`);
    t.match(r.stderr, /usage: pinclaw memory/);
  }
  const vec = await runPinclawAsync(['memory', 'search', 'key', '--mode', 'vector'], { env: e });
  t.equal(vec.code, 2);
  t.match(vec.stderr, /vector search needs an embedder; memory\.embedder is none/);
  const stats = await runPinclawAsync(['memory', 'stats', '--json'], { env: e });
  t.match(JSON.parse(stats.stdout), { chunks: 2, entries: 2, embedder: 'none (keyword only)' });
});

t.test('reindex picks up MEMORY.md with progress; export then import round-trips', async (t) => {
  const { home, env: e } = env();
  await runPinclawAsync(['memory', 'add', 'first entry'], { env: e });
  mkdirSync(join(home, 'workspace'), { recursive: true });
  writeFileSync(join(home, 'workspace', 'MEMORY.md'), '# House\n\nThe fuse box is behind the coat rack.\n');
  const r = await runPinclawAsync(['memory', 'reindex'], { env: e });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stderr, /indexing \d+\/\d+/);
  t.match(r.stdout, /reindexed: 1 memory files/);
  const hit = JSON.parse((await runPinclawAsync(['memory', 'search', 'fuse box', '--json'], { env: e })).stdout) as { source: string }[];
  t.equal(hit[0]!.source, 'MEMORY.md:1-3');
  const file = join(home, 'out.jsonl');
  t.match((await runPinclawAsync(['memory', 'export', file], { env: e })).stdout, /exported 2 memories/);
  const other = env();
  t.match((await runPinclawAsync(['memory', 'import', file], { env: other.env })).stdout, /imported 2 memories/);
  const file2 = join(other.home, 'out.jsonl');
  await runPinclawAsync(['memory', 'export', file2], { env: other.env });
  t.equal(readFileSync(file2, 'utf8'), readFileSync(file, 'utf8'));
  writeFileSync(file2, 'not json\n');
  const bad = await runPinclawAsync(['memory', 'import', file2], { env: env().env });
  t.equal(bad.code, 1);
  t.match(bad.stderr, /import of .* refused, nothing imported: line 1: not JSON/);
});

t.test('the memory tools through policy and audit', async (t) => {
  const { home, env: e } = env();
  const store = await runPinclawAsync(['tool', 'run', 'memory_store', JSON.stringify({ text: 'The garage door code is 4711', kind: 'fact' })], { env: e });
  t.equal(store.code, 0, store.stderr);
  const id = Number(/memory #(\d+)/.exec(store.stdout)?.[1]);
  t.ok(id > 0, store.stdout);
  const search = await runPinclawAsync(['tool', 'run', 'memory_search', JSON.stringify({ query: 'garage code' })], { env: e });
  t.match(search.stdout, new RegExp(`\\[memory #${id}\\] \\(id ${id}, fact, score [\\d.]+\\)\\nThe garage door code is 4711`));
  t.match((await runPinclawAsync(['tool', 'run', 'memory_get', JSON.stringify({ id })], { env: e })).stdout, /The garage door code is 4711/);
  t.match((await runPinclawAsync(['tool', 'run', 'memory_forget', JSON.stringify({ id })], { env: e })).stdout, new RegExp(`Forgot memory #${id}`));
  const gone = await runPinclawAsync(['tool', 'run', 'memory_get', JSON.stringify({ id })], { env: e });
  t.match(gone.stdout + gone.stderr, new RegExp(`no memory #${id}`));
  const audit = JSON.parse((await runPinclawAsync(['audit', '--json'], { env: e })).stdout) as { tool: string; outcome: string }[];
  t.same(audit.map((a) => `${a.tool}:${a.outcome}`), ['memory_store:ok', 'memory_search:ok', 'memory_get:ok', 'memory_forget:ok', 'memory_get:error']);
  t.ok(home);
});
