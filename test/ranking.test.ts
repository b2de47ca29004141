// The addon's hybrid ranking index against the TypeScript reference: same terms, same rankings and
// scores (1e-6) on seeded random documents and queries, same serialized bytes, same errors; HNSW
// recall above the threshold; and fuzzing with random bytes and vectors (no crash, bounded RSS).
import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { loadAddon } from '../src/native/loader.js';
import { createRankingIndex } from '../src/native/ranking.js';
import { NativeRankingIndex, type RankingAddon } from '../src/native/ranking-native.js';
import { ReferenceRankingIndex } from '../src/native/ranking-reference.js';
import { foldText, splitTerms } from '../src/native/ranking-text.js';
import { cosine, prepare } from '../src/native/ranking-vectors.js';
import type { RankingDoc, RankingHit, RankingIndex, RankingOptions, RankingQuery } from '../src/native/ranking-types.js';
import { arm64Addon, arm64Missing, arm64Node, arm64Sysroot, run, tempDir } from './support/proc.js';
import { rankingScenario, type ScenarioResult } from './support/ranking-scenario.js';
import { prng } from './support/prng.js';

const addon = loadAddon<RankingAddon>('pinclaw');

// Words chosen to exercise folding (width, case, ligatures, final sigma, sharp s), CJK bigrams,
// Hangul, digits and underscores, emoji and punctuation as separators.
const WORDS = [
  'memory', 'agent', 'raspberry', 'pi', 'sensor', 'temperature', 'Kitchen', 'LIGHT', 'light', 'garden', 'water', 'pump',
  'café', 'Ｃａｆé', 'naïve', 'Straße', 'STRASSE', 'ΟΔΟΣ', 'οδός', 'ﬁle', 'file', 'İstanbul', 'ǅemal', 'Ⅻ',
  '東京', '東京タワー', '会議', '議事録', '今日は晴れ', 'ｶﾀｶﾅ', '서울', '한국어', '人々',
  'snake_case', 'x86_64', '2024', 'v1.2.3', '😀', '—', '«quoted»', 'e-mail', "don't", '#tag', '@user',
];
const SEPARATORS = [' ', ' ', ' ', ', ', '. ', '\n', '', '、', '\t', ' – '];

function randomText(rnd: () => number, min: number, max: number): string {
  const n = min + Math.floor(rnd() * (max - min + 1));
  let s = '';
  for (let i = 0; i < n; i++) {
    if (rnd() < 0.03) {
      // A long run: words are cut at 64 code points.
      s += 'a'.repeat(60 + Math.floor(rnd() * 20)) + 'z';
    } else {
      s += WORDS[Math.floor(rnd() * rnd() * WORDS.length)];
    }
    s += SEPARATORS[Math.floor(rnd() * SEPARATORS.length)];
  }
  return s;
}

function gaussian(rnd: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
}

function randomVector(rnd: () => number, dims: number, topics: Float32Array[]): Float32Array {
  const topic = topics[Math.floor(rnd() * topics.length)]!;
  const v = new Float32Array(dims);
  for (let i = 0; i < dims; i++) v[i] = topic[i]! + 0.6 * gaussian(rnd);
  return v;
}

const KINDS = ['note', 'chat', 'file', 'tool'];
const SESSIONS = ['s1', 's2', 's3', 'ß-session'];

interface World {
  rnd: () => number;
  dims: number;
  topics: Float32Array[];
  serial: number;
}

function world(seed: number, dims: number): World {
  const rnd = prng(seed);
  const topics = Array.from({ length: 8 }, () => Float32Array.from({ length: dims }, () => gaussian(rnd)));
  return { rnd, dims, topics, serial: 0 };
}

// Ids in several scripts, so ties are broken by code point order across BMP, CJK and astral ids.
function randomId(w: World): string {
  const n = w.serial++;
  const r = w.rnd();
  if (r < 0.6) return `doc-${n}`;
  if (r < 0.75) return `ドキュメント${n}`;
  if (r < 0.9) return `\u{1F600}${n}`;
  return `\uFF21${n}`;
}

function randomDoc(w: World, id = randomId(w)): RankingDoc {
  const { rnd } = w;
  const doc: RankingDoc = { id, text: randomText(rnd, 0, 40) };
  if (rnd() < 0.85) doc.vector = randomVector(rnd, w.dims, w.topics);
  if (rnd() < 0.9) doc.kind = KINDS[Math.floor(rnd() * KINDS.length)]!;
  if (rnd() < 0.9) doc.session = SESSIONS[Math.floor(rnd() * SESSIONS.length)]!;
  if (rnd() < 0.9) doc.time = Math.floor(rnd() * 1000);
  return doc;
}

function randomQuery(w: World): RankingQuery {
  const { rnd } = w;
  const q: RankingQuery = {};
  const shape = rnd();
  const wantText = shape < 0.75;
  const wantVector = shape > 0.35;
  if (wantText) q.text = rnd() < 0.05 ? '!!! ...' : randomText(rnd, 1, 5);
  if (wantVector) q.vector = randomVector(rnd, w.dims, w.topics);
  q.k = [1, 3, 10, 25, 100][Math.floor(rnd() * 5)]!;
  if (rnd() < 0.3) q.fusion = 'rrf';
  if (rnd() < 0.3) q.weights = { vector: rnd(), keyword: rnd() + 0.01 };
  if (rnd() < 0.2) q.candidates = 1 + Math.floor(rnd() * 80);
  if (rnd() < 0.15) q.rrfK = Math.floor(rnd() * 100);
  if (rnd() < 0.4) {
    q.filter = {};
    if (rnd() < 0.5) q.filter.kind = rnd() < 0.5 ? KINDS[Math.floor(rnd() * 4)]! : KINDS.slice(0, 1 + Math.floor(rnd() * 3));
    if (rnd() < 0.4) q.filter.session = SESSIONS[Math.floor(rnd() * 4)]!;
    if (rnd() < 0.5) q.filter.since = Math.floor(rnd() * 600);
    if (rnd() < 0.5) q.filter.until = 300 + Math.floor(rnd() * 800);
  }
  return q;
}

const close = (a: number | null, b: number | null): boolean => (a === null || b === null ? a === b : Math.abs(a - b) <= 1e-6);

/**
 * null when the two rankings agree: the same ids in the same order, scores within 1e-6. Two hits
 * may trade places only when their scores are within 1e-9 (Math.log and glibc's log can differ in
 * the last bit, which can reorder what is a tie to fifteen digits).
 */
function rankingDiff(native: RankingHit[], ref: RankingHit[]): string | null {
  if (native.length !== ref.length) return `${native.length} hits vs ${ref.length}`;
  for (let i = 0; i < ref.length; i++) {
    const a = native[i]!;
    const b = ref[i]!;
    if (!close(a.score, b.score)) return `score #${i}: ${a.score} vs ${b.score}`;
    if (a.id === b.id) {
      if (!close(a.keyword, b.keyword) || !close(a.vector, b.vector)) return `raw scores of ${b.id}: ${a.keyword}/${a.vector} vs ${b.keyword}/${b.vector}`;
      continue;
    }
    const j = ref.findIndex((h) => h.id === a.id);
    const nearTie = Math.abs(a.score - b.score) <= 1e-9 && (j < 0 || Math.abs(ref[j]!.score - a.score) <= 1e-9);
    if (!nearTie) return `order #${i}: ${a.id} (${a.score}) vs ${b.id} (${b.score})`;
  }
  return null;
}

let maxScoreDelta = 0;
function compareSearch(t: Test, native: RankingIndex, ref: RankingIndex, q: RankingQuery, label: string): boolean {
  const a = native.search(q);
  const b = ref.search(q);
  for (let i = 0; i < Math.min(a.length, b.length); i++) maxScoreDelta = Math.max(maxScoreDelta, Math.abs(a[i]!.score - b[i]!.score));
  const diff = rankingDiff(a, b);
  if (diff) t.fail(`${label}: ${diff}`, { query: JSON.stringify({ ...q, vector: q.vector ? '[…]' : undefined }) });
  return diff === null;
}

function pair(options: RankingOptions): { native: RankingIndex; ref: RankingIndex } {
  return { native: new NativeRankingIndex(addon, options), ref: new ReferenceRankingIndex(options) };
}

t.test('term splitting: every code point is classified alike', async (t) => {
  const cps: number[] = [];
  for (let cp = 0; cp <= 0x10ffff; cp++) cps.push(cp);
  // Each code point alone between spaces: a word or CJK character is a one-character term.
  const text = cps.map((cp) => String.fromCodePoint(cp)).join(' ');
  const native = addon.rankingTerms(text);
  const ref = splitTerms(text);
  t.equal(native.length, ref.length, `${ref.length} single-character terms`);
  t.same(native, ref);
  t.ok(ref.length > 1_000_000 && ref.length < 0x110000, 'separators drop out, the rest are terms');
});

t.test('term splitting: random mixed text, and the rules themselves', async (t) => {
  const rnd = prng(7);
  let mismatches = 0;
  for (let i = 0; i < 3000; i++) {
    let s = '';
    const n = Math.floor(rnd() * 30);
    for (let j = 0; j < n; j++) {
      const r = rnd();
      // Random code points from every range the table distinguishes, plus long word runs.
      const cp = r < 0.3 ? 0x20 + Math.floor(rnd() * 0x60) : r < 0.5 ? 0x3000 + Math.floor(rnd() * 0x7000) : r < 0.6 ? 0xac00 + Math.floor(rnd() * 100) : r < 0.7 ? 0x1f300 + Math.floor(rnd() * 200) : Math.floor(rnd() * 0x30000);
      s += r > 0.97 ? 'w'.repeat(50 + Math.floor(rnd() * 40)) : String.fromCodePoint(cp);
    }
    const folded = foldText(s);
    if (JSON.stringify(addon.rankingTerms(folded)) !== JSON.stringify(splitTerms(folded))) mismatches++;
  }
  t.equal(mismatches, 0, '3000 random strings split identically');
  t.same(splitTerms(foldText('Hello, WORLD! snake_case x86_64')), ['hello', 'world', 'snake_case', 'x86_64']);
  t.same(splitTerms('東京タワー'), ['東', '東京', '京', '京タ', 'タ', 'タワ', 'ワ', 'ワー', 'ー']);
  t.same(splitTerms('abc東京def'), ['abc', '東', '東京', '京', 'def']);
  t.same(splitTerms('x'.repeat(100) + ' y'), ['x'.repeat(64), 'y']);
  t.equal(foldText('Ｃａｆé'), 'café', 'NFKC: full-width letters');
  t.equal(foldText('Straße'), foldText('STRASSE'), 'case folding: ß = ss');
  t.equal(foldText('ΟΔΟΣ'), foldText('οδοσ'), 'case folding: final sigma');
  t.equal(foldText('ﬁle'), 'file', 'NFKC: ligatures');
  t.equal(foldText('ｶﾀｶﾅ'), 'カタカナ', 'NFKC: half-width katakana');
});

t.test('term splitting: invalid UTF-8 decodes as TextDecoder does, to separators', async (t) => {
  const rnd = prng(11);
  const decoder = new TextDecoder();
  let mismatches = 0;
  for (let i = 0; i < 5000; i++) {
    const bytes = Buffer.alloc(Math.floor(rnd() * 64));
    // Mostly letters, with lead bytes, continuation bytes and invalid bytes mixed in.
    for (let j = 0; j < bytes.length; j++) {
      const r = rnd();
      bytes[j] = r < 0.5 ? 0x61 + Math.floor(rnd() * 26) : r < 0.6 ? 0x20 : Math.floor(rnd() * 256);
    }
    if (JSON.stringify(addon.rankingTerms(bytes)) !== JSON.stringify(splitTerms(decoder.decode(bytes)))) mismatches++;
  }
  t.equal(mismatches, 0, '5000 random byte strings');
  t.same(addon.rankingTerms(Buffer.from([0x61, 0xc3, 0x62, 0xed, 0xa0, 0x80, 0x63, 0xf4, 0x90, 0x80, 0x80, 0x64])), ['a', 'b', 'c', 'd'], 'truncated, surrogate and out-of-range sequences separate terms');
});

for (const [label, options, seed, dims] of [
  ['f32, 24 dimensions', {}, 1, 24],
  ['f32, 384 dimensions', {}, 2, 384],
  ['i8, 40 dimensions', { quantization: 'i8' }, 3, 40],
  ['k1=2, b=0.3, given dimensions', { k1: 2, b: 0.3, dimensions: 20 }, 4, 20],
] as const) {
  t.test(`equality with the reference: ${label}`, async (t) => {
    const w = world(seed, dims);
    const { native, ref } = pair(options);
    const docs = Array.from({ length: dims === 384 ? 600 : 1200 }, () => randomDoc(w));
    // Identical texts give identical BM25 scores: ties broken by id.
    for (let i = 0; i < 30; i++) docs.push({ ...docs[i]!, id: randomId(w) });
    native.addMany(docs);
    ref.addMany(docs);
    t.equal(native.size(), ref.size());
    t.same(native.options(), ref.options(), 'options, with the dimensions fixed by the first vector');

    const run = (phase: string, n: number): void => {
      let ok = 0;
      for (let i = 0; i < n; i++) if (compareSearch(t, native, ref, randomQuery(w), `${phase} #${i}`)) ok++;
      t.equal(ok, n, `${phase}: ${n} random queries agree`);
    };
    const shapes = (phase: string): void => {
      // Every mode at least once, whatever the random mix.
      const probe = randomDoc(w);
      const probeVector = randomVector(w.rnd, dims, w.topics);
      for (const q of [
        { text: probe.text, k: 20 },
        { vector: probeVector, k: 20 },
        { text: probe.text, vector: probeVector, k: 20 },
        { text: probe.text, vector: probeVector, k: 20, fusion: 'rrf' as const },
        { text: probe.text, vector: probeVector, k: 20, filter: { kind: ['note', 'chat'], since: 100, until: 800 } },
        { text: 'memory agent', vector: probeVector, k: 30, filter: { session: 's2' } },
      ]) {
        t.ok(compareSearch(t, native, ref, q, `${phase} fixed`), `${phase}: ${Object.keys(q).join('+')}`);
        t.ok(native.search(q).length > 0, `${phase}: ${Object.keys(q).join('+')} finds something`);
      }
    };
    shapes('fresh');
    run('fresh', 300);

    // Incremental changes: updates (new text, vector added or dropped), removes, re-adds.
    const ids = docs.map((d) => d.id);
    for (let i = 0; i < 400; i++) {
      const id = ids[Math.floor(w.rnd() * ids.length)]!;
      const r = w.rnd();
      if (r < 0.4) {
        t.equal(native.remove(id), ref.remove(id));
      } else if (native.has(id)) {
        const next = randomDoc(w, id);
        native.update(next);
        ref.update(next);
      } else {
        const next = randomDoc(w, id);
        native.upsert(next);
        ref.upsert(next);
      }
    }
    t.equal(native.size(), ref.size(), 'same size after updates and removes');
    t.same(native.stats().terms, ref.stats().terms, 'same vocabulary after updates and removes');
    shapes('updated');
    run('updated', 200);

    const bytes = native.serialize();
    t.ok(bytes.equals(ref.serialize()), `serialized forms are byte-identical (${bytes.length} bytes)`);
    const reloadedNative = new NativeRankingIndex(addon);
    reloadedNative.load(ref.serialize());
    const reloadedRef = new ReferenceRankingIndex();
    reloadedRef.load(bytes);
    t.ok(reloadedNative.serialize().equals(bytes), 'serialize → load → serialize is the identity');
    let ok = 0;
    for (let i = 0; i < 150; i++) {
      const q = randomQuery(w);
      if (compareSearch(t, reloadedNative, ref, q, `loaded native #${i}`) && compareSearch(t, native, reloadedRef, q, `loaded reference #${i}`)) ok++;
    }
    t.equal(ok, 150, 'after serialize → load (across backends) 150 random queries agree');
    t.comment(`largest score difference seen: ${maxScoreDelta}`);
  });
}

t.test('one change at a time: chained postings, removed documents, compaction', async (t) => {
  // The addon appends new postings to per-term chains and leaves a removed document's postings in
  // place (skipped when read) until a compaction rewrites the index; single adds, removes and
  // upserts cross those thresholds many times here. Above 4096 vectors the exact scan runs on
  // several threads.
  const dims = 8;
  const w = world(41, dims);
  const { native, ref } = pair({ dimensions: dims });
  const ids: string[] = [];
  let ok = 0;
  let queries = 0;
  const check = (label: string): void => {
    queries++;
    if (compareSearch(t, native, ref, randomQuery(w), label)) ok++;
    if (native.stats().terms !== ref.stats().terms) t.fail(`${label}: ${native.stats().terms} terms vs ${ref.stats().terms}`);
  };
  for (let i = 0; i < 5000; i++) {
    const d = randomDoc(w);
    ids.push(d.id);
    native.add(d);
    ref.add(d);
    if (i % 50 === 0) check(`add #${i}`);
  }
  let removed = 0;
  for (let i = 0; i < 3000; i++) {
    const id = ids[Math.floor(w.rnd() * ids.length)]!;
    if (w.rnd() < 0.5) {
      const gone = native.remove(id);
      if (gone !== ref.remove(id)) t.fail(`remove ${id}`);
      removed += gone ? 1 : 0;
    } else {
      const next = randomDoc(w, id);
      native.upsert(next);
      ref.upsert(next);
    }
    if (i % 50 === 0) check(`change #${i}`);
    if (i % 500 === 0 && !native.serialize().equals(ref.serialize())) t.fail(`change #${i}: serialized forms differ`);
  }
  t.equal(ok, queries, `${queries} queries agree between single changes`);
  t.equal(native.size(), ref.size(), `${native.size()} documents after ${removed} removes`);
  t.ok(native.serialize().equals(ref.serialize()), 'serialized forms are byte-identical');

  // Removing most documents gives their memory back (postings, ids, vector rows).
  const before = native.stats().memoryBytes;
  for (const id of ids.slice(0, 4500)) {
    native.remove(id);
    ref.remove(id);
  }
  const after = native.stats().memoryBytes;
  t.ok(after < before / 3, `memory ${(before / 1024).toFixed(0)} KiB → ${(after / 1024).toFixed(0)} KiB after removing most documents`);
  for (let i = 0; i < 30; i++) check(`after removing most #${i}`);
  t.equal(ok, queries, 'and the rest still agree');
  t.ok(native.serialize().equals(ref.serialize()), 'and serialize alike');
});

t.test('damaged buffers behind a valid checksum: both backends reject them alike', async (t) => {
  // Without a graph section the reference reads everything the addon reads, with the same checks
  // in the same order: a damaged buffer gives both the same error, or both load the same index.
  const w = world(51, 4);
  const { native, ref } = pair({});
  const docs = Array.from({ length: 80 }, () => randomDoc(w));
  native.addMany(docs);
  ref.addMany(docs);
  const good = ref.serialize();
  const { crc32 } = await import('../src/native/ranking-codec.js');
  const rnd = prng(77);
  const outcome = (x: RankingIndex, buf: Buffer): string => {
    try {
      x.load(buf);
      return `loaded ${x.serialize().toString('base64')}`;
    } catch (err) {
      return (err as Error).message;
    }
  };
  let same = 0;
  let rejected = 0;
  const seen = new Set<string>();
  for (let i = 0; i < 600; i++) {
    const bad = Buffer.from(good);
    // Mostly the postings at the end (the terms section), sometimes anywhere in the body.
    const from = rnd() < 0.7 ? Math.floor(bad.length * 0.6) : 24;
    const at = from + Math.floor(rnd() * (bad.length - from));
    const r = rnd();
    if (r < 0.6) bad[at] = Math.floor(rnd() * 256);
    else if (r < 0.8) bad[at] = bad[at]! ^ 0x80;
    else if (at + 2 <= bad.length) bad.writeUInt16LE(0x0080, at);
    bad.writeUInt32LE(crc32(bad.subarray(24)), 16);
    const a = outcome(native, bad);
    const b = outcome(ref, bad);
    if (a === b) same++;
    else t.fail(`damage at byte ${at}: addon "${a.slice(0, 120)}" vs reference "${b.slice(0, 120)}"`);
    if (!a.startsWith('loaded')) {
      rejected++;
      seen.add(a.replace(/byte \d+/, 'byte N'));
    }
  }
  t.equal(same, 600, `600 damaged buffers: the same outcome on both (${rejected} rejected)`);
  t.comment([...seen].join('\n'));
  t.ok([...seen].some((m) => m.includes('(term postings)')), 'damaged postings are caught');
});

t.test('hybrid semantics on a small example', async (t) => {
  for (const backend of ['native', 'reference'] as const) {
    const index = createRankingIndex({}, backend);
    t.equal(index.backend, backend);
    index.addMany([
      { id: 'a', text: 'Raspberry Pi temperature sensor', vector: [1, 0, 0], kind: 'note', time: 10 },
      { id: 'b', text: 'the garden pump', vector: [0, 1, 0], kind: 'chat', time: 20 },
      { id: 'c', text: 'Straße nach 東京タワー', vector: [0, 0, 1], kind: 'note', time: 30 },
      { id: 'd', text: 'temperature of the garden', kind: 'note', time: 40 },
    ]);
    t.same(index.search({ text: 'TEMPERATURE' }).map((h) => h.id), ['a', 'd'], `${backend}: case folded, keyword only`);
    t.same(index.search({ text: 'strasse' }).map((h) => h.id), ['c'], `${backend}: ß matches ss`);
    t.same(index.search({ text: 'タワー' }).map((h) => h.id), ['c'], `${backend}: CJK bigrams`);
    const v = index.search({ vector: [0.1, 0.9, 0] });
    t.same(v.map((h) => h.id), ['b', 'a', 'c'], `${backend}: vector only, documents without vectors are not candidates`);
    t.equal(v[0]!.score, 1, `${backend}: min-max normalized vector side`);
    t.equal(v[2]!.score, 0, `${backend}: the weakest vector candidate normalizes to 0`);
    const h = index.search({ text: 'garden', vector: [0.1, 0.9, 0] });
    t.equal(h[0]!.id, 'b', `${backend}: hybrid`);
    t.ok(Math.abs(h[0]!.score - 1) < 1e-12, `${backend}: best on both sides scores 0.7 + 0.3`);
    const d = h.find((x) => x.id === 'd')!;
    t.equal(d.vector, null, `${backend}: no vector, null raw vector score`);
    t.ok(Math.abs(d.score - 0.3 * (d.keyword! / h[0]!.keyword!)) < 1e-12, `${backend}: keyword side is score / max`);
    t.same(index.search({ text: 'temperature', filter: { kind: 'note', since: 15, until: 41 } }).map((x) => x.id), ['d'], `${backend}: filters`);
    const rrf = index.search({ text: 'garden', vector: [0.1, 0.9, 0], fusion: 'rrf' });
    t.ok(Math.abs(rrf[0]!.score - 2 / 61) < 1e-15, `${backend}: rrf, first on both sides`);
    t.same(index.search({ text: '' }), [], `${backend}: empty query`);
    t.same(index.search({ text: '?!', k: 3 }), [], `${backend}: query without terms`);
    t.same(index.search({}), [], `${backend}: no text, no vector`);
  }
});

t.test('HNSW above the threshold: exact scores for what it finds, high recall', async (t) => {
  const dims = 64;
  const w = world(21, dims);
  const options = { hnswThreshold: 1000, dimensions: dims };
  const { native, ref } = pair(options);
  const docs = Array.from({ length: 4000 }, () => randomDoc(w));
  native.addMany(docs);
  ref.addMany(docs);
  t.ok(native.stats().graphNodes >= 3000, `graph built (${native.stats().graphNodes} nodes)`);

  const measure = (label: string, index: RankingIndex, reference: RankingIndex): void => {
    let found = 0;
    let wanted = 0;
    let exactScores = true;
    for (let i = 0; i < 100; i++) {
      const vector = randomVector(w.rnd, dims, w.topics);
      const filter = i % 4 === 0 ? { kind: ['note', 'chat', 'file'] } : undefined;
      const approx = index.search({ vector, k: 10, filter });
      const exact = reference.search({ vector, k: 10, filter });
      const exactIds = new Set(exact.map((h) => h.id));
      wanted += exact.length;
      found += approx.filter((h) => exactIds.has(h.id)).length;
      // Whatever HNSW returns carries the exact cosine, as the reference computes it.
      const q = prepare(vector, dims, 'f32');
      for (const h of approx) {
        const d = docs.find((x) => x.id === h.id)!;
        const expected = cosine(q, prepare(d.vector as Float32Array, dims, 'f32'), dims);
        if (Math.abs(h.vector! - expected) > 1e-6) exactScores = false;
      }
    }
    t.ok(exactScores, `${label}: returned vector scores are exact cosines`);
    t.ok(found / wanted >= 0.9, `${label}: recall@10 ${(found / wanted).toFixed(3)} >= 0.9`);
  };
  measure('fresh graph', native, ref);

  // Removes leave tombstones in the graph; they never come back as results.
  const removed = new Set<string>();
  for (const d of docs.slice(0, 600)) {
    native.remove(d.id);
    ref.remove(d.id);
    removed.add(d.id);
  }
  t.ok(native.stats().graphTombstones > 0, `${native.stats().graphTombstones} tombstones`);
  for (let i = 0; i < 50; i++) {
    const hits = native.search({ vector: randomVector(w.rnd, dims, w.topics), k: 50 });
    if (hits.some((h) => removed.has(h.id))) t.fail('a removed document came back');
  }
  measure('with tombstones', native, ref);

  // The graph is serialized: loading it gives the same answers without rebuilding.
  const bytes = native.serialize();
  const loaded = new NativeRankingIndex(addon);
  loaded.load(bytes);
  t.equal(loaded.stats().graphNodes, native.stats().graphNodes, 'graph loaded, not rebuilt');
  let same = 0;
  for (let i = 0; i < 50; i++) {
    const q = { vector: randomVector(w.rnd, dims, w.topics), text: randomText(w.rnd, 1, 3), k: 20 };
    if (JSON.stringify(loaded.search(q)) === JSON.stringify(native.search(q))) same++;
  }
  t.equal(same, 50, 'the loaded graph answers exactly as the saved one');
  const refLoaded = new ReferenceRankingIndex();
  refLoaded.load(bytes);
  t.equal(refLoaded.size(), native.size(), 'the reference reads a buffer with a graph section (and stays exact)');
  let agree = 0;
  for (let i = 0; i < 50; i++) if (compareSearch(t, refLoaded, ref, randomQuery(w), `reference from graph buffer #${i}`)) agree++;
  t.equal(agree, 50, 'the reference loaded from the addon buffer equals the reference');

  // Many removes make the graph stale: it is rebuilt, and the index still agrees with the reference when below the threshold.
  for (const d of docs.slice(600, 3400)) {
    native.remove(d.id);
    ref.remove(d.id);
  }
  t.equal(native.stats().graphNodes, 0, 'below half the threshold the graph is dropped');
  let ok = 0;
  for (let i = 0; i < 50; i++) if (compareSearch(t, native, ref, randomQuery(w), `after shrink #${i}`)) ok++;
  t.equal(ok, 50, 'exact again below the threshold');
});

const badInputs: [string, (index: RankingIndex) => unknown][] = [
  ['NaN component', (x) => x.add({ id: 'n', text: '', vector: [1, NaN, 0] })],
  ['infinite component', (x) => x.add({ id: 'n', text: '', vector: [1, 0, Infinity] })],
  ['-Infinity component', (x) => x.add({ id: 'n', text: '', vector: new Float32Array([-Infinity, 0, 1]) })],
  ['component too large for float32', (x) => x.add({ id: 'n', text: '', vector: [1e39, 0, 1] })],
  ['dimension mismatch', (x) => x.add({ id: 'n', text: '', vector: [1, 0] })],
  ['zero vector', (x) => x.add({ id: 'n', text: '', vector: [0, 0, 0] })],
  ['query dimension mismatch', (x) => x.search({ vector: [1, 2, 3, 4] })],
  ['query NaN', (x) => x.search({ text: 'a', vector: [NaN, 0, 0] })],
  ['query zero vector', (x) => x.search({ vector: [0, 0, 0] })],
  ['duplicate id', (x) => x.add({ id: 'a', text: 'again' })],
  ['update of a missing id', (x) => x.update({ id: 'missing', text: '' })],
  ['duplicate in batch', (x) => x.addMany([{ id: 'p', text: '' }, { id: 'p', text: '' }])],
  ['empty id', (x) => x.add({ id: '', text: '' })],
  ['id not a string', (x) => x.add({ id: 7 as unknown as string, text: '' })],
  ['text not a string', (x) => x.add({ id: 'q', text: null as unknown as string })],
  ['vector of the wrong type', (x) => x.add({ id: 'q', text: '', vector: new Float64Array(3) as unknown as Float32Array })],
  ['kind not a string', (x) => x.add({ id: 'q', text: '', kind: 3 as unknown as string })],
  ['time not finite', (x) => x.add({ id: 'q', text: '', time: NaN })],
  ['document not an object', (x) => x.addMany([null as unknown as RankingDoc])],
  ['k = 0', (x) => x.search({ text: 'a', k: 0 })],
  ['k fractional', (x) => x.search({ text: 'a', k: 2.5 })],
  ['unknown fusion', (x) => x.search({ text: 'a', fusion: 'max' as 'rrf' })],
  ['negative weight', (x) => x.search({ text: 'a', weights: { vector: -1 } })],
  ['zero weights', (x) => x.search({ text: 'a', weights: { vector: 0, keyword: 0 } })],
  ['filter.kind not strings', (x) => x.search({ text: 'a', filter: { kind: [1 as unknown as string] } })],
  ['filter.since not finite', (x) => x.search({ text: 'a', filter: { since: Infinity } })],
  ['query not an object', (x) => x.search(5 as unknown as RankingQuery)],
  ['load of a string', (x) => x.load('PCRI' as unknown as Uint8Array)],
  ['load of garbage', (x) => x.load(Buffer.from('not an index at all'))],
];

t.test('bad input: the same clear error from both backends, and the index survives', async (t) => {
  for (const backend of ['native', 'reference'] as const) {
    t.throws(() => createRankingIndex({ dimensions: -1 }, backend), /ranking: dimensions must be an integer from 0 to 65536/);
    t.throws(() => createRankingIndex({ quantization: 'f16' as 'i8' }, backend), /ranking: quantization must be 'f32' or 'i8'/);
    t.throws(() => createRankingIndex({ b: 2 }, backend), /ranking: b must be a number from 0 to 1/);
  }
  const make = (backend: 'native' | 'reference'): RankingIndex => {
    const x = createRankingIndex({}, backend);
    x.add({ id: 'a', text: 'alpha', vector: [1, 2, 3] });
    return x;
  };
  const native = make('native');
  const ref = make('reference');
  for (const [label, call] of badInputs) {
    let a: unknown;
    let b: unknown;
    try {
      call(native);
    } catch (err) {
      a = err;
    }
    try {
      call(ref);
    } catch (err) {
      b = err;
    }
    t.ok(a instanceof Error && b instanceof Error, `${label}: both throw`);
    if (a instanceof Error && b instanceof Error) {
      t.equal(a.message, b.message, `${label}: "${b.message}"`);
      t.equal(a.constructor.name, b.constructor.name, `${label}: both ${b.constructor.name}`);
      t.match(a.message, /^ranking: /);
    }
  }
  for (const x of [native, ref]) {
    t.equal(x.size(), 1, `${x.backend}: nothing half-applied`);
    t.equal(x.search({ text: 'alpha' })[0]?.id, 'a', `${x.backend}: still answers`);
  }
  t.same(native.search({ text: 'alpha\uD800beta' }), ref.search({ text: 'alpha\uD800beta' }), 'a lone surrogate is a separator on both');
});

t.test('corrupt serialized buffers: an error naming the problem, never a crash', async (t) => {
  const w = world(31, 16);
  const { native, ref } = pair({ hnswThreshold: 50 });
  const docs = Array.from({ length: 300 }, () => randomDoc(w));
  native.addMany(docs);
  ref.addMany(docs);
  const good = native.serialize();
  t.ok(native.stats().graphNodes > 0, 'the buffer carries a graph section');
  const before = JSON.stringify(native.search({ text: 'memory', k: 5 }));
  const rnd = prng(5);
  const messages = new Map<string, number>();
  for (let i = 0; i < 400; i++) {
    const bad = Buffer.from(good);
    const r = rnd();
    let buf: Buffer = bad;
    if (r < 0.5) {
      const at = Math.floor(rnd() * bad.length);
      bad[at] = bad[at]! ^ (1 << Math.floor(rnd() * 8));
    }
    else if (r < 0.8) buf = bad.subarray(0, Math.floor(rnd() * bad.length));
    else buf = Buffer.concat([bad, Buffer.from([0])]);
    for (const x of [native, ref]) {
      try {
        x.load(buf);
        t.fail(`${x.backend}: a damaged buffer loaded`);
      } catch (err) {
        const m = (err as Error).message;
        messages.set(m, (messages.get(m) ?? 0) + 1);
        if (!/^ranking: cannot load: /.test(m)) t.fail(`unexpected error: ${m}`);
      }
    }
  }
  t.comment([...messages].map(([m, n]) => `${n} × ${m}`).join('\n'));
  t.ok(messages.has('ranking: cannot load: checksum mismatch (the buffer is corrupt)'));
  t.ok(messages.has('ranking: cannot load: length mismatch (truncated or padded buffer)'));
  t.equal(JSON.stringify(native.search({ text: 'memory', k: 5 })), before, 'a failed load leaves the index as it was');

  // Damage behind a recomputed checksum: the structure checks catch it (the addon also checks the graph).
  const { crc32 } = await import('../src/native/ranking-codec.js');
  let rejected = 0;
  for (let i = 0; i < 300; i++) {
    const bad = Buffer.from(good);
    const at = 24 + Math.floor(rnd() * (bad.length - 24));
    bad[at] = Math.floor(rnd() * 256);
    if (rnd() < 0.5 && at + 4 <= bad.length) bad.writeUInt32LE(0xffffffff, at);
    bad.writeUInt32LE(crc32(bad.subarray(24)), 16);
    try {
      native.load(bad);
      native.search({ text: 'memory agent', vector: randomVector(w.rnd, 16, w.topics), k: 20 });
      native.serialize();
    } catch (err) {
      if (!/^ranking: /.test((err as Error).message)) t.fail(`unexpected error: ${(err as Error).message}`);
      rejected++;
    }
    native.load(good);
  }
  t.ok(rejected > 0, `${rejected} of 300 re-checksummed damaged buffers rejected, the rest loaded and answered without a crash`);
});

function rssMiB(): number {
  return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;
}

t.test('fuzz: random bytes and random vectors into the addon', async (t) => {
  const rnd = prng(99);
  const raw = new addon.RankingIndex({ dimensions: 8, hnswThreshold: 64 });
  const randomBytes = (n: number): Buffer => {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = Math.floor(rnd() * 256);
    return b;
  };
  const weirdNumber = (): number => {
    const r = rnd();
    if (r < 0.02) return NaN;
    if (r < 0.04) return Infinity;
    if (r < 0.05) return -Infinity;
    if (r < 0.07) return 1e-45;
    if (r < 0.09) return 3e38;
    if (r < 0.1) return 0;
    return gaussian(rnd);
  };
  const randomVec = (): Float32Array => Float32Array.from({ length: rnd() < 0.95 ? 8 : Math.floor(rnd() * 12) }, weirdNumber);
  let errors = 0;
  let calls = 0;
  const round = (n: number): void => {
    for (let i = 0; i < n; i++) {
      const id = `f${Math.floor(rnd() * 300)}`;
      calls++;
      try {
        const r = rnd();
        if (r < 0.45) raw.put(2, [{ id, text: randomBytes(Math.floor(rnd() * 200)), vector: rnd() < 0.8 ? randomVec() : undefined, kind: String(Math.floor(rnd() * 5)), time: rnd() * 100 }]);
        else if (r < 0.6) raw.remove(id);
        else if (r < 0.9) raw.search({ text: randomBytes(Math.floor(rnd() * 30)), vector: rnd() < 0.6 ? randomVec() : undefined, k: 1 + Math.floor(rnd() * 40), fusion: rnd() < 0.5 ? 'rrf' : 'weighted', filter: rnd() < 0.3 ? { kind: String(Math.floor(rnd() * 5)) } : undefined });
        else if (r < 0.95) raw.load(randomBytes(Math.floor(rnd() * 100)));
        else raw.load(raw.serialize());
      } catch (err) {
        if (!(err instanceof Error) || !/^ranking: /.test(err.message)) throw err;
        errors++;
      }
    }
  };
  round(20_000);
  const warm = rssMiB();
  round(60_000);
  const after = rssMiB();
  t.ok(raw.size() > 0, `${raw.size()} documents survive ${calls} random calls (${errors} rejected with a ranking error)`);
  t.ok(after - warm < 64, `RSS ${warm.toFixed(0)} MiB after warm-up, ${after.toFixed(0)} MiB after 60000 more calls`);
  // The whole serialized form round-trips after all that.
  const copy = new addon.RankingIndex();
  copy.load(raw.serialize());
  t.ok(copy.serialize().equals(raw.serialize()), 'and still serializes canonically');
});

const projectDir = join(import.meta.dirname, '..');

t.test('the arm64 addon of the single executable ranks exactly as the reference (under qemu)', { skip: arm64Missing }, async (t) => {
  const main = join(tempDir('pinclaw-ranking-arm64-'), 'cross.mjs');
  await build({ entryPoints: [join(projectDir, 'test', 'support', 'ranking-cross-main.ts')], outfile: main, bundle: true, platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning' });
  const r = run('qemu-aarch64-static', ['-L', arm64Sysroot, arm64Node, main, arm64Addon], { timeoutMs: 300_000 });
  t.equal(r.code, 0, r.stderr);
  const arm = JSON.parse(r.stdout) as ScenarioResult & { arch: string };
  t.equal(arm.arch, 'arm64');
  const ref = rankingScenario((o) => new ReferenceRankingIndex(o));
  t.same(arm.sha256, ref.sha256, 'serialized forms (f32 and i8) are byte-identical');
  const diffs = ref.hits.map((hits, i) => rankingDiff(arm.hits[i]!, hits)).filter((d) => d !== null);
  t.same(diffs, [], `${ref.hits.length} queries (f32 and i8, 37 dimensions) agree`);
});

t.test('the façade picks the addon and reports its feature', async (t) => {
  t.equal(createRankingIndex().backend, 'native');
  t.equal(createRankingIndex({}, 'reference').backend, 'reference');
  const { nativeInfo } = await import('../src/native/index.js');
  t.ok(nativeInfo()?.features.includes('ranking'), 'the addon lists the ranking feature');
});
