// The long-term memory on a real SQLite file and the addon's ranking index: entries, the workspace's
// memory files with line citations, keyword-only and hybrid search (the OpenAI-compatible embedder
// against its stand-in server), fallbacks when the embedder fails, a change of embedder, the index
// snapshot, hygiene (duplicates, decay, the size cap) and export/import.
import t, { type Test } from 'tap';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaults } from '../src/config/schema.js';
import { openDatabase, type Db } from '../src/store/db.js';
import { saveSession } from '../src/store/sessions.js';
import { openMemory, type Memory } from '../src/memory/memory.js';
import { memoryHolder } from '../src/memory/holder.js';
import { loadSnapshot } from '../src/memory/memory-index.js';
import { generation } from '../src/memory/store.js';
import { promptMemories } from '../src/memory/prompt-memories.js';
import { exportMemory, importMemory } from '../src/memory/transfer.js';
import { openaiEmbedder } from '../src/memory/embedders/openai.js';
import type { Embedder } from '../src/memory/types.js';
import { errorReply, startEmbeddingsServer, vectors } from './support/embeddings-server.js';
import { tempDir } from './support/proc.js';
import { onBackgroundWork } from '../src/release.js';

const count = (s: string) => Math.ceil(s.split(/\s+/).filter(Boolean).length * 1.3);

function home(t: Test) {
  const dir = tempDir();
  const db = openDatabase(join(dir, 'pinclaw.db'));
  const workspace = join(dir, 'workspace');
  mkdirSync(join(workspace, 'memory'), { recursive: true });
  t.teardown(() => db.close());
  return { dir, db, workspace, cacheDir: join(dir, 'cache') };
}

function open(h: { db: Db; workspace: string; cacheDir: string }, embedder: Embedder | null, over: Partial<ReturnType<typeof defaults>['memory']> = {}, now?: () => number): Memory {
  return openMemory({ ...h, config: { ...defaults().memory, ...over }, count, embedder, now });
}

t.test('keyword only: store, search with citations, get, forget; bad input named', async (t) => {
  const h = home(t);
  const m = open(h, null);
  const a = await m.store('The greenhouse pump is on GPIO17 and runs at 7 in the morning.', { kind: 'fact' });
  const b = await m.store('Anna prefers the living room at 21 degrees.', { kind: 'preference' });
  t.same([a.duplicate, b.duplicate], [undefined, undefined]);
  t.same(await m.store('Anna prefers the living room at 21 degrees.'), { id: b.id, duplicate: true }, 'the same text is stored once');
  const hits = await m.search('pump GPIO17');
  t.equal(hits[0]!.id, a.id);
  t.equal(hits[0]!.citation, `memory #${a.id}`);
  t.equal(hits[0]!.kind, 'fact');
  t.same((await m.search('degrees', { kind: 'fact' })).map((x) => x.id), [], 'the kind filter');
  t.equal(m.get(b.id)!.text, 'Anna prefers the living room at 21 degrees.');
  t.equal(m.forget(a.id).id, a.id);
  t.equal(m.get(a.id), undefined);
  t.same(await m.search('pump'), []);
  await t.rejects(m.search('   '), /the search query is empty/);
  await t.rejects(m.search('x'.repeat(2001)), /2001 characters; the limit is 2000/);
  await t.rejects(m.search('pump', { mode: 'vector' }), /vector search needs an embedder; memory.embedder is none/);
  await t.rejects(m.store(''), /nothing to store/);
  t.throws(() => m.forget(9999), /no memory #9999/);
});

t.test('MEMORY.md and daily notes: chunks cite file:lines, changes re-index, removal drops, non-UTF-8 is kept as it was', async (t) => {
  const h = home(t);
  const lines = ['# Home', '', 'The boiler is in the cellar.', '', '## Garden', '', ...Array.from({ length: 40 }, (_, i) => `Bed ${i}: tomatoes and basil need water every ${i % 3 + 1} days in summer.`)];
  writeFileSync(join(h.workspace, 'MEMORY.md'), lines.join('\n'));
  writeFileSync(join(h.workspace, 'memory', '2026-11-20.md'), 'Replaced the fuse of the garage door opener.\n');
  const m = open(h, null, { chunkTokens: 120, overlapTokens: 20 });
  const r = await m.syncFiles();
  t.same(r.changed, ['MEMORY.md', 'memory/2026-11-20.md']);
  const boiler = (await m.search('boiler cellar'))[0]!;
  t.match(boiler.citation, /^MEMORY\.md:1-\d+$/);
  const bed30 = (await m.search('Bed 30'))[0]!;
  const [from, to] = bed30.citation.replace('MEMORY.md:', '').split('-').map(Number);
  t.ok(from! <= 37 && to! >= 37, `the cited lines (${bed30.citation}) hold line 37, where Bed 30 is`);
  t.equal((await m.search('fuse garage'))[0]!.citation, 'memory/2026-11-20.md:1-1');
  t.equal((await m.search('fuse garage'))[0]!.kind, 'daily');
  t.same((await m.syncFiles()).changed, [], 'nothing changed, nothing re-indexed');
  writeFileSync(join(h.workspace, 'memory', '2026-11-20.md'), 'Replaced the fuse of the garage door opener.\nThe spare fuses are in the red box.\n');
  t.same((await m.syncFiles()).changed, ['memory/2026-11-20.md']);
  t.equal((await m.search('spare fuses red box'))[0]!.citation, 'memory/2026-11-20.md:1-2');
  writeFileSync(join(h.workspace, 'MEMORY.md'), Buffer.from([0x23, 0x20, 0xff, 0xfe, 0x0a]));
  const bad = await m.syncFiles();
  t.match(bad.skipped, [{ file: 'MEMORY.md', reason: /MEMORY\.md is not UTF-8 text; it is left as it was indexed before/ }]);
  t.equal((await m.search('boiler cellar'))[0]!.citation, boiler.citation, 'the old chunks are kept');
  rmSync(join(h.workspace, 'memory', '2026-11-20.md'));
  t.same((await m.syncFiles()).removed, ['memory/2026-11-20.md']);
  t.same(await m.search('spare fuses'), []);
});

t.test('an unchanged memory file is not chunked again, so nothing is counted; a change, other sizes, a lost chunk or `memory reindex` are', async (t) => {
  const h = home(t);
  const counted: string[] = [];
  const spy = (s: string) => {
    counted.push(s);
    return count(s);
  };
  const lines = Array.from({ length: 30 }, (_, i) => `Shelf ${i}: the fuses of circuit ${i} and a spare bulb.`);
  writeFileSync(join(h.workspace, 'MEMORY.md'), lines.join('\n'));
  const opened = (over: Partial<ReturnType<typeof defaults>['memory']> = {}) => openMemory({ ...h, config: { ...defaults().memory, chunkTokens: 60, overlapTokens: 10, ...over }, count: spy, embedder: null });
  t.same((await opened().syncFiles()).changed, ['MEMORY.md']);
  t.ok(counted.length >= 30, 'the first sync counts every line');
  const chunks = () => h.db.prepare(`select id, hash, line_start, line_end from memory_chunks where file = 'MEMORY.md' order by id`).all() as { id: number }[];
  const before = chunks();
  counted.length = 0;
  const again = opened();
  t.same((await again.syncFiles()).changed, [], 'another process: nothing changed');
  t.same(counted, [], 'and nothing counted');
  t.same(chunks(), before, 'the chunks kept as they were');
  t.equal((await again.search('circuit 17'))[0]!.citation.split(':')[0], 'MEMORY.md', 'and found');
  const rebuilt = await again.reindex();
  t.ok(counted.length >= 30, '`memory reindex` chunks every file again');
  t.same(rebuilt.sync.changed, [], 'and finds the same chunks');
  t.same(chunks(), before);
  counted.length = 0;
  // Other chunk sizes chunk the file again.
  t.same((await opened({ chunkTokens: 80 }).syncFiles()).changed, ['MEMORY.md'], 'other chunk sizes: chunked again');
  t.ok(counted.length > 0);
  // A chunk gone from the table (as the size cap archives daily notes) is made again, as before.
  const now = chunks();
  h.db.prepare('delete from memory_chunks where id = ?').run(now[0]!.id);
  counted.length = 0;
  t.same((await opened({ chunkTokens: 80 }).syncFiles()).changed, ['MEMORY.md'], 'a chunk missing: chunked again');
  t.equal(chunks().length, now.length);
  // An edit, and the file gone and back.
  writeFileSync(join(h.workspace, 'MEMORY.md'), [...lines, 'Shelf 30: the doorbell battery.'].join('\n'));
  t.same((await opened({ chunkTokens: 80 }).syncFiles()).changed, ['MEMORY.md'], 'an edit: chunked again');
  t.ok((await opened({ chunkTokens: 80 }).search('doorbell battery')).length > 0);
  rmSync(join(h.workspace, 'MEMORY.md'));
  t.same((await opened({ chunkTokens: 80 }).syncFiles()).removed, ['MEMORY.md']);
  t.same(h.db.prepare(`select key from memory_meta where key like 'file:%'`).all(), [], 'its mark goes with it');
  writeFileSync(join(h.workspace, 'MEMORY.md'), lines.join('\n'));
  t.same((await opened({ chunkTokens: 80 }).syncFiles()).changed, ['MEMORY.md'], 'back again: indexed again');
});

t.test('hybrid search with an OpenAI-compatible server; down or wrong dimension falls back to keywords', async (t) => {
  const srv = await startEmbeddingsServer(vectors({ dims: 16 }));
  t.teardown(() => srv.close());
  const h = home(t);
  const m = open(h, openaiEmbedder({ baseUrl: `${srv.url}/v1`, model: 'stand-in', retries: 0 }));
  const a = await m.store('water the tomatoes on Friday');
  await m.store('the car needs new tyres');
  const hits = await m.search('water the tomatoes on Friday', { mode: 'vector' });
  t.equal(hits[0]!.id, a.id, 'the same text is nearest by vector');
  t.ok(hits[0]!.score > 0.99);
  const rows = h.db.prepare('select embedder, dims from memory_chunks').all();
  t.match(rows, [{ embedder: /^openai:stand-in@127\.0\.0\.1:\d+$/, dims: 16 }, { dims: 16 }], 'every vector carries its embedder id');
  srv.enqueue(errorReply(500));
  const fallback = await m.search('tyres');
  t.match(fallback[0]!.text, /tyres/, 'keyword search answers while the server fails');
  srv.enqueue(errorReply(503));
  const stored = await m.store('the bins go out on Tuesday');
  t.match(stored.unembedded, /503/);
  t.match(h.db.prepare('select embedder from memory_chunks where id = ?').get(stored.id), { embedder: null }, 'stored without a vector, not lost');
  srv.enqueue(vectors({ dims: 8 }));
  const wrong = await m.search('bins');
  t.match(wrong[0]!.text, /bins/, 'a wrong dimension falls back to keywords too');
  const r = await m.reindex();
  t.equal(r.embedded, 1, 'reindex embeds what was stored without a vector');
});

t.test('a change of embedder never mixes vectors; reindex re-embeds with progress', async (t) => {
  const a = await startEmbeddingsServer(vectors({ dims: 12 }));
  const b = await startEmbeddingsServer(vectors({ dims: 20 }));
  t.teardown(() => Promise.all([a.close(), b.close()]));
  const h = home(t);
  const m1 = open(h, openaiEmbedder({ baseUrl: `${a.url}/v1`, model: 'one' }));
  for (const text of ['the heating schedule', 'the alarm code', 'the wifi password']) await m1.store(text);
  const eb = openaiEmbedder({ baseUrl: `${b.url}/v1`, model: 'two' });
  await eb.embed(['warm up']);
  const m2 = open(h, eb);
  t.same(await m2.search('the alarm code', { mode: 'vector' }), [], 'vectors of the old embedder are not searched');
  t.equal((await m2.search('alarm code'))[0]!.text, 'the alarm code', 'keyword search still finds it');
  const steps: string[] = [];
  const r = await m2.reindex((what, done, total) => steps.push(`${what} ${done}/${total}`));
  t.equal(r.embedded, 3);
  t.ok(steps.includes('embedding 3/3'), `progress reported: ${steps.join(', ')}`);
  t.equal((await m2.search('the alarm code', { mode: 'vector' }))[0]!.text, 'the alarm code');
  t.same(h.db.prepare('select distinct dims from memory_chunks').all(), [{ dims: 20 }]);
});

t.test('the index snapshot: loaded at the same generation and embedder, rebuilt otherwise or when corrupt', async (t) => {
  const h = home(t);
  const m = open(h, null);
  await m.store('one thing to remember');
  await m.reindex();
  t.ok(loadSnapshot(h.db, h.cacheDir, '', 0), 'a fresh snapshot loads');
  t.equal(loadSnapshot(h.db, h.cacheDir, 'other-embedder', 0), undefined, 'not for another embedder');
  const before = generation(h.db);
  await m.store('another thing');
  t.ok(generation(h.db) > before, 'every change moves the generation');
  t.equal(loadSnapshot(h.db, h.cacheDir, '', 0), undefined, 'stale after a change');
  m.flush();
  t.ok(loadSnapshot(h.db, h.cacheDir, '', 0), 'flush saves the current index');
  const file = join(h.cacheDir, 'memory', 'index.snapshot');
  const bytes = readFileSync(file);
  writeFileSync(file, Buffer.concat([bytes.subarray(0, bytes.indexOf(10) + 1), Buffer.from('garbage that is not an index')]));
  t.equal(loadSnapshot(h.db, h.cacheDir, '', 0), undefined, 'a corrupt snapshot is not trusted');
  const again = open(h, null);
  t.equal((await again.search('another thing'))[0]!.text, 'another thing', 'rebuilt from the database');
});

/** Behind the Embedder interface, for the merge rule only: vectors chosen by the test. */
function fixedEmbedder(table: Record<string, number[]>): Embedder {
  return { id: 'fixed-test', dimensions: 3, embed: async (texts) => texts.map((x) => Float32Array.from(table[x] ?? [0, 0, 1])) };
}

t.test('hygiene: a near-duplicate entry replaces the older one (archived), daily notes decay, the cap archives', async (t) => {
  const h = home(t);
  const m = open(h, fixedEmbedder({ 'the code of the gate is 1234': [1, 0, 0], 'the gate code is 1234': [0.999, 0.04, 0], 'gate': [1, 0, 0] }));
  const first = await m.store('the code of the gate is 1234', { kind: 'fact' });
  const second = await m.store('the gate code is 1234', { kind: 'fact' });
  t.equal(second.merged, true);
  t.equal(m.get(first.id), undefined);
  t.match(h.db.prepare('select chunk_id, reason from memory_archive').all(), [{ chunk_id: first.id, reason: /merged/ }], 'the older text is archived, not lost');

  const day = 86_400_000;
  const now = Date.UTC(2026, 10, 23);
  writeFileSync(join(h.workspace, 'MEMORY.md'), 'The water meter is read on the first of the month.\n');
  writeFileSync(join(h.workspace, 'memory', '2026-05-01.md'), 'The water meter is read on the first of the month.\n');
  writeFileSync(join(h.workspace, 'memory', '2026-11-22.md'), 'The water meter is read on the first of the month.\n');
  const d = open(h, null, { decayHalfLifeDays: 30 }, () => now);
  await d.syncFiles();
  const hits = await d.search('water meter');
  t.same(hits.map((x) => x.citation.split(':')[0]), ['MEMORY.md', 'memory/2026-11-22.md', 'memory/2026-05-01.md'], 'MEMORY.md first, then the recent note, the old one last');
  t.ok(hits[2]!.score < hits[0]!.score * 0.05, `a note ${Math.round((now - Date.UTC(2026, 4, 1)) / day)} days old counts little`);

  const c = open(h, null, { maxChunks: 100 });
  for (let i = 0; i < 104; i++) await c.store(`entry number ${i} about thing ${i}`);
  t.equal(c.stats().chunks, 100, 'held at the cap');
  const archived = h.db.prepare(`select reason from memory_archive where reason like 'size cap%'`).all();
  t.ok(archived.length >= 4, 'the oldest went to the archive');
  t.ok(c.get((await c.search('MEMORY water meter'))[0]!.id), 'MEMORY.md is never archived');
});

t.test('export and import round-trip exactly; a bad line imports nothing', async (t) => {
  const srv = await startEmbeddingsServer(vectors({ dims: 6 }));
  t.teardown(() => srv.close());
  const a = home(t);
  writeFileSync(join(a.workspace, 'MEMORY.md'), '# Notes\n\nThe router is in the hall.\n');
  const m = open(a, openaiEmbedder({ baseUrl: `${srv.url}/v1`, model: 'x' }));
  await m.syncFiles();
  await m.store('ünïcødé and "quotes"\nand lines', { kind: 'note', session: 'telegram:42' });
  const f1 = join(a.dir, 'one.jsonl');
  t.equal(await exportMemory(a.db, f1), 2);
  const b = home(t);
  t.match(importMemory(b.db, f1), { imported: 2, skipped: 0, renumbered: 0 });
  const f2 = join(b.dir, 'two.jsonl');
  await exportMemory(b.db, f2);
  t.equal(readFileSync(f2, 'utf8'), readFileSync(f1, 'utf8'), 'byte for byte');
  t.match(importMemory(b.db, f1), { imported: 0, skipped: 2 }, 'importing again adds nothing');
  const bad = join(a.dir, 'bad.jsonl');
  writeFileSync(bad, `${readFileSync(f1, 'utf8')}{"id": 9, "text": ""}\n`);
  const c = home(t);
  t.throws(() => importMemory(c.db, bad), /line 3: text: expected a non-empty string/);
  t.equal(open(c, null).stats().chunks, 0, 'nothing imported');
});

t.test('memory.transcripts: conversations indexed per session, replaced when the session changes', async (t) => {
  const h = home(t);
  const say = (user: string, assistant: string) => [
    { role: 'user' as const, content: [{ type: 'text' as const, text: user }] },
    { role: 'assistant' as const, content: [{ type: 'text' as const, text: assistant }] },
  ];
  saveSession(h.db, { key: 'telegram:42', messages: say('which bulb is in the porch lamp?', 'An E27 LED, 806 lumen.'), meta: {} }, Date.now() - 1000);
  const m = open(h, null, { transcripts: true });
  t.match((await m.syncFiles()).changed, ['session telegram:42']);
  const hit = (await m.search('porch lamp bulb'))[0]!;
  t.match(hit, { kind: 'transcript', source: { type: 'entry', session: 'telegram:42' } });
  t.match(hit.text, /user: which bulb is in the porch lamp\?\n\nassistant: An E27 LED/);
  t.same((await m.syncFiles()).changed, [], 'unchanged sessions are not indexed again');
  saveSession(h.db, { key: 'telegram:42', messages: say('and the garden lights?', 'Solar, on a timer.'), meta: {} }, Date.now() + 1000);
  await m.syncFiles();
  t.same(await m.search('porch lamp'), [], 'the old transcript is replaced');
  t.equal((await m.search('garden lights'))[0]!.kind, 'transcript');
  t.same(await open(h, null, { transcripts: false }).syncFiles().then((r) => r.changed), [], 'off by default');
});

t.test('the local embedder finds by meaning what keywords miss', async (t) => {
  const { localEmbedder } = await import('../src/memory/embedders/local.js');
  const h = home(t);
  const m = open(h, localEmbedder());
  const heat = await m.store('The living room radiator gets far too hot in the evening');
  await m.store('Buy milk and bread on the way home');
  await m.store('The car is due for its yearly inspection in March');
  t.same(await m.search('warm heating', { mode: 'keyword' }), [], 'no word in common');
  const hits = await m.search('warm heating', { mode: 'hybrid' });
  t.equal(hits[0]?.id, heat.id, 'the radiator memory comes first by meaning');
  t.match(h.db.prepare('select distinct embedder, dims from memory_chunks').all(), [{ embedder: /^local-/, dims: 100 }]);
});

t.test('a long-running process embeds in the background what has no vector of the current embedder', async (t) => {
  const srv = await startEmbeddingsServer(vectors({ dims: 8 }));
  t.teardown(() => srv.close());
  const h = home(t);
  const keywordOnly = open(h, null);
  for (const text of ['the dog walker comes at noon', 'the plants need water', 'the cat eats at six']) await keywordOnly.store(text);
  const config = defaults();
  config.memory.embedder = 'openai';
  config.memory.openai.baseUrl = `${srv.url}/v1`;
  const paths = { home: h.dir, workspace: h.workspace, cache: h.cacheDir } as Parameters<typeof memoryHolder>[0]['paths'];
  const cli = memoryHolder({ db: h.db, paths, config, env: {} });
  t.equal((await cli.get()).unembedded(), 3, 'a CLI process leaves them alone');
  const gateway = memoryHolder({ db: h.db, paths, config, env: {} });
  const stop = gateway.watchFiles();
  t.teardown(stop);
  const m = await gateway.get();
  for (let i = 0; i < 200 && m.unembedded() > 0; i++) await new Promise((r) => setTimeout(r, 10));
  t.equal(m.unembedded(), 0, 'all embedded');
  t.equal((await m.search('the cat eats at six', { mode: 'vector' }))[0]!.text, 'the cat eats at six', 'and searchable by vector');
});

t.test('a watching process says when its background work is done, so a quiet gateway releases the embedder again', async (t) => {
  const srv = await startEmbeddingsServer(vectors({ dims: 8 }));
  t.teardown(() => srv.close());
  const h = home(t);
  for (const text of ['the dog walker comes at noon', 'the plants need water']) await open(h, null).store(text);
  const config = defaults();
  config.memory.embedder = 'openai';
  config.memory.openai.baseUrl = `${srv.url}/v1`;
  const paths = { home: h.dir, workspace: h.workspace, cache: h.cacheDir } as Parameters<typeof memoryHolder>[0]['paths'];
  let done = 0;
  t.teardown(onBackgroundWork(() => done++));
  const gateway = memoryHolder({ db: h.db, paths, config, env: {} });
  const stop = gateway.watchFiles(50);
  t.teardown(stop);
  const m = await gateway.get();
  for (let i = 0; i < 200 && done === 0; i++) await new Promise((r) => setTimeout(r, 10));
  t.equal(m.unembedded(), 0, 'the background embedding ran');
  t.equal(done, 1, 'and said so once it ended');
  writeFileSync(join(h.workspace, 'MEMORY.md'), '# Memory\n\nThe boiler is serviced every October.\n');
  for (let i = 0; i < 300 && done === 1; i++) await new Promise((r) => setTimeout(r, 10));
  t.equal(done, 2, 'a re-index after a file changed says so too');
  t.equal((await m.search('boiler serviced'))[0]?.text.includes('boiler'), true, 'the changed file was indexed');
});

t.test('prompt memories: cited lines within the token budget; a line already counted is not counted again, another counter counts afresh', async (t) => {
  const h = home(t);
  const m = open(h, null);
  await m.store('The greenhouse pump is on GPIO17 and runs at 7 in the morning.', { kind: 'fact' });
  await m.store('The greenhouse fan is on GPIO27 and runs when it is warm.', { kind: 'fact' });
  const seen: string[] = [];
  const counting = (s: string) => (seen.push(s), count(s));
  const first = await promptMemories(m, 'greenhouse pump', 1000, counting);
  t.equal(first.length, 2);
  t.match(first[0]!, /^\[memory #\d+\] The greenhouse pump is on GPIO17/);
  t.same(seen, first, 'each line counted once');
  t.same(await promptMemories(m, 'greenhouse pump', 1000, counting), first);
  t.equal(seen.length, 2, 'the same lines again: not counted again');
  t.same(await promptMemories(m, 'greenhouse pump', count(first[0]!), counting), [first[0]], 'the budget keeps the lines that fit');
  const other: string[] = [];
  t.same(await promptMemories(m, 'greenhouse pump', 1000, (s) => (other.push(s), 2 * count(s))), first);
  t.same(other, first, 'another counter (another model) counts for itself');
  t.same(await promptMemories(m, 'greenhouse pump', count(first[0]!), (s) => 2 * count(s)), [], 'with its own counts');
  t.same(await promptMemories(m, '/status', 1000, counting), [], 'a command asks for no memories');
  // With a bound (the runtime's counters have one: the UTF-8 length) that fits the budget, nothing is
  // counted, and the lines are those the counts would have given.
  const bounded: string[] = [];
  const withBound = Object.assign((s: string) => (bounded.push(s), count(s) + 1), { atMost: (s: string) => Buffer.byteLength(s) + 1 });
  const bytes = first.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
  t.same(await promptMemories(m, 'greenhouse pump', bytes, withBound), first);
  t.same(bounded, [], 'the bound fits: not counted');
  t.same(await promptMemories(m, 'greenhouse pump', bytes - 1, withBound), first, 'one byte short of the bound: counted, and both fit by their counts');
  t.same(bounded, first, 'counted');
});
