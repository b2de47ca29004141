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
  t.equal((await runPinclawAsync(['memory', 'add', 'The bins go out on Tuesday evening'], { env: e })).stdout, `stored #${id + 1} (note): The bins go out on Tuesday evening\n`, 'plain output: the id and what was stored');
  const again = await runPinclawAsync(['memory', 'add', 'The spare key is under the blue flower pot'], { env: e });
  t.equal(again.stdout, `already stored as #${id} (fact): The spare key is under the blue flower pot\n`);
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

t.test('list shows id, date and first line, newest first; forget removes by id; bad ids are named', async (t) => {
  const { home, env: e } = env();
  const empty = await runPinclawAsync(['memory', 'list'], { env: e });
  t.equal(empty.code, 0, empty.stderr);
  t.equal(empty.stdout, 'no memories yet (pinclaw memory add TEXT stores one)\n');
  const a = await runPinclawAsync(['memory', 'add', 'The router password is on the fridge\nnext to the takeaway menu'], { env: e });
  t.match(a.stdout, /^stored #(\d+) \(note\): The router password is on the fridge \(\+1 line\)\n$/);
  const first = Number(/#(\d+)/.exec(a.stdout)![1]);
  const b = JSON.parse((await runPinclawAsync(['memory', 'add', 'Grandma visits on Sundays', '--kind', 'fact', '--json'], { env: e })).stdout) as { id: number; kind: string; text: string };
  t.same(b, { id: first + 1, kind: 'fact', text: 'Grandma visits on Sundays' }, 'the JSON says what was stored too');
  mkdirSync(join(home, 'workspace'), { recursive: true });
  writeFileSync(join(home, 'workspace', 'MEMORY.md'), '# House\n\nThe fuse box is behind the coat rack.\n');
  t.equal((await runPinclawAsync(['memory', 'reindex'], { env: e })).code, 0);
  const list = await runPinclawAsync(['memory', 'list'], { env: e });
  t.equal(list.code, 0, list.stderr);
  const lines = list.stdout.trimEnd().split('\n');
  t.equal(lines.length, 3);
  t.match(lines[0], /^\d+\t\d{4}-\d\d-\d\d\tMEMORY\.md:1\t# House \(\+1 line\)$/, 'a file chunk names its file and line');
  t.match(lines[1], new RegExp(`^${first + 1}\\t\\d{4}-\\d\\d-\\d\\d\\tGrandma visits on Sundays$`));
  t.match(lines[2], new RegExp(`^${first}\\t\\d{4}-\\d\\d-\\d\\d\\tThe router password is on the fridge \\(\\+1 line\\)$`));
  const json = JSON.parse((await runPinclawAsync(['memory', 'list', '--limit', '1', '--json'], { env: e })).stdout) as { id: number; text: string; createdAt: string }[];
  t.equal(json.length, 1, '--limit');
  t.ok(Number.isFinite(Date.parse(json[0]!.createdAt)));

  const f = await runPinclawAsync(['memory', 'forget', String(first)], { env: e });
  t.equal(f.code, 0, f.stderr);
  t.equal(f.stdout, `forgot #${first}: The router password is on the fridge (+1 line)\n`);
  t.notMatch((await runPinclawAsync(['memory', 'list'], { env: e })).stdout, /router password/, 'gone from the list');
  t.notMatch((await runPinclawAsync(['memory', 'search', 'router password'], { env: e })).stdout, /router/, 'and from search');
  const again = await runPinclawAsync(['memory', 'forget', String(first)], { env: e });
  t.equal(again.code, 1, 'a well-formed id that is not there: a failure, not a usage error');
  t.equal(again.stderr, `pinclaw: no memory #${first}; pinclaw memory list shows the ids\n`);
  const fileId = Number(lines[0]!.split('\t')[0]);
  const fromFile = await runPinclawAsync(['memory', 'forget', String(fileId)], { env: e });
  t.equal(fromFile.code, 1);
  t.match(fromFile.stderr, /comes from MEMORY\.md \(lines 1-3\); edit that file to remove it/);
  for (const bad of [['memory', 'forget', 'abc'], ['memory', 'forget', '0'], ['memory', 'forget'], ['memory', 'list', 'extra']]) {
    const r = await runPinclawAsync(bad, { env: e });
    t.equal(r.code, 2, `${bad.join(' ')} → exit 2`);
    t.match(r.stderr, /usage: pinclaw memory (forget ID|list)/);
  }
  t.match((await runPinclawAsync(['memory', 'forget', 'abc'], { env: e })).stderr, /forget: expected a memory id \(a number pinclaw memory list shows\), got 'abc'/);
  t.match((await runPinclawAsync(['memory', 'lsit'], { env: e })).stderr, /unknown subcommand 'lsit' \(did you mean 'list'\?\)/);
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
