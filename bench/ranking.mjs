// npm run bench:ranking [-- --sizes 10000,100000 --queries 1000]
// Hybrid (BM25 + 384-dimension vector) query latency of the addon's ranking index against two
// baselines measured in the same run: the TypeScript reference (src/native/ranking-reference.ts),
// and SQLite FTS5 bm25() plus a JavaScript cosine over every vector, which is what OpenClaw and
// ZeroClaw do. Also the build time, the addon's snapshot load time, and the memory of each index
// per 10k chunks (each measured in a child process of its own, as the RSS growth from building it;
// the addon also at 100 dimensions, the local embedder's). Targets: addon p50 <= 2 ms at 100k
// chunks, >= 10x faster than the reference, <= 8 MiB per 10k chunks with i8 vectors (384
// dimensions), snapshot load <= 100 ms per 10k chunks.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { build } from 'esbuild';
import { prng } from './support/lib.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    queries: { type: 'string', default: '1000' },
    'baseline-queries': { type: 'string', default: '60' },
    child: { type: 'string' },
    size: { type: 'string' },
    dims: { type: 'string', default: '384' },
  },
});
const DIMS = 384;
// The local embedder's dimension (memory.embedder 'local'): the addon's memory is measured at both.
const SMALL_DIMS = 100;
const K = 10;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

// ---- the code under test: the dev addon, and the reference bundled from source ------------------

function loadAddon() {
  const mod = { exports: {} };
  process.dlopen(mod, join(root, 'build', 'Release', 'pinclaw.node'));
  if (typeof mod.exports.RankingIndex !== 'function') throw new Error('build/Release/pinclaw.node has no RankingIndex; run npm run install');
  return mod.exports;
}

async function loadLibrary() {
  const out = join(root, 'dist', '.bench');
  mkdirSync(out, { recursive: true });
  const outfile = join(out, 'ranking-lib.mjs');
  await build({
    stdin: {
      contents: `export { ReferenceRankingIndex } from './src/native/ranking-reference.ts';
export { NativeRankingIndex } from './src/native/ranking-native.ts';
export { foldText, splitTerms } from './src/native/ranking-text.ts';`,
      resolveDir: root,
      loader: 'ts',
    },
    outfile, bundle: true, platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning',
  });
  return import(pathToFileURL(outfile).href);
}

// ---- synthetic chunks -------------------------------------------------------------------------


/**
 * Chunks of 80 to 200 words: 60% from their topic's own 300 words, the rest Zipf-distributed over a
 * 20k-word vocabulary. Vectors: a topic centroid, a subtopic, and noise, so nearest neighbours are
 * structured as with real embeddings rather than uniformly random (which no ANN index handles well).
 */
function corpus(seed, dims) {
  const rnd = prng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'der', 'ban', 'tes', 'gor', 'lin', 'pra', 'sho', 'wen'];
  const vocab = Array.from({ length: 20_000 }, (_, i) => {
    let w = '';
    for (let n = i + 1; n > 0; n = Math.floor(n / 16)) w += syllables[n % 16];
    return w;
  });
  const TOPICS = 200;
  const topicWords = Array.from({ length: TOPICS }, () => Array.from({ length: 300 }, () => vocab[Math.floor(rnd() * vocab.length)]));
  const centroid = () => Float32Array.from({ length: dims }, gauss);
  const topics = Array.from({ length: TOPICS }, centroid);
  const subtopics = Array.from({ length: TOPICS * 5 }, centroid);
  const zipf = () => vocab[Math.min(vocab.length - 1, Math.floor(Math.exp(rnd() * Math.log(vocab.length))) - 1)];
  const vector = (topic) => {
    const c = topics[topic];
    const s = subtopics[topic * 5 + Math.floor(rnd() * 5)];
    const v = new Float32Array(dims);
    for (let i = 0; i < dims; i++) v[i] = c[i] + 0.5 * s[i] + 0.6 * gauss();
    return v;
  };
  const words = (topic, n) => {
    const out = [];
    for (let i = 0; i < n; i++) out.push(rnd() < 0.6 ? topicWords[topic][Math.floor(rnd() * 300)] : zipf());
    return out;
  };
  return {
    chunk(i) {
      const topic = Math.floor(rnd() * TOPICS);
      const text = words(topic, 80 + Math.floor(rnd() * 121)).join(' ');
      return { id: `chunk-${i}`, text, vector: vector(topic), kind: rnd() < 0.8 ? 'memory' : 'file', session: `s${Math.floor(rnd() * 50)}`, time: i };
    },
    query() {
      const topic = Math.floor(rnd() * TOPICS);
      return { text: words(topic, 2 + Math.floor(rnd() * 3)).join(' '), vector: vector(topic), k: K };
    },
  };
}

function makeData(size, dims = DIMS) {
  const c = corpus(size, dims);
  const docs = Array.from({ length: size }, (_, i) => c.chunk(i));
  return { docs, queries: Array.from({ length: 2000 }, () => c.query()) };
}

// ---- the candidates -----------------------------------------------------------------------------

/** SQLite FTS5 for the keyword side, every vector compared in JavaScript, the same weighted fusion. */
function ftsBaseline(lib) {
  const Database = require('better-sqlite3');
  const db = new Database(':memory:');
  db.exec('CREATE VIRTUAL TABLE chunks USING fts5(text)');
  const insert = db.prepare('INSERT INTO chunks(rowid, text) VALUES (?, ?)');
  const match = db.prepare('SELECT rowid, -bm25(chunks) AS score FROM chunks WHERE chunks MATCH ? ORDER BY bm25(chunks) LIMIT ?');
  const ids = [];
  const vectors = [];
  return {
    name: 'FTS5 bm25 + JS cosine',
    addMany(docs) {
      db.transaction(() => {
        for (const d of docs) {
          insert.run(ids.length, d.text);
          let n = 0;
          for (const x of d.vector) n += x * x;
          n = Math.sqrt(n);
          vectors.push(Float32Array.from(d.vector, (x) => x / n));
          ids.push(d.id);
        }
      })();
    },
    search(q) {
      const cap = Math.max(4 * q.k, 50);
      const terms = [...new Set(lib.splitTerms(lib.foldText(q.text)))];
      const keyword = terms.length ? match.all(terms.map((t) => `"${t}"`).join(' OR '), cap) : [];
      let qn = 0;
      for (const x of q.vector) qn += x * x;
      qn = Math.sqrt(qn);
      const top = [];
      for (let i = 0; i < vectors.length; i++) {
        const v = vectors[i];
        let dot = 0;
        for (let j = 0; j < v.length; j++) dot += v[j] * q.vector[j];
        const s = dot / qn;
        if (top.length < cap || s > top[top.length - 1][0]) {
          top.push([s, i]);
          top.sort((a, b) => b[0] - a[0]);
          if (top.length > cap) top.pop();
        }
      }
      const rows = new Map();
      const maxK = keyword.length ? keyword[0].score : 0;
      for (const r of keyword) rows.set(r.rowid, { k: r.score / maxK, v: 0 });
      const maxV = top[0][0];
      const minV = top[top.length - 1][0];
      for (const [s, i] of top) {
        const row = rows.get(i) ?? { k: 0, v: 0 };
        row.v = maxV > minV ? (s - minV) / (maxV - minV) : 1;
        rows.set(i, row);
      }
      return [...rows].map(([i, r]) => ({ id: ids[i], score: 0.7 * r.v + 0.3 * r.k })).sort((a, b) => b.score - a.score).slice(0, q.k);
    },
    close: () => db.close(),
  };
}

function candidate(name, lib, addon, dims = DIMS) {
  switch (name) {
    case 'addon':
      return Object.assign(new lib.NativeRankingIndex(addon, { dimensions: dims }), { name: 'addon (f32)' });
    case 'addon-i8':
      return Object.assign(new lib.NativeRankingIndex(addon, { dimensions: dims, quantization: 'i8' }), { name: 'addon (i8)' });
    case 'reference':
      return Object.assign(new lib.ReferenceRankingIndex({ dimensions: dims }), { name: 'TS reference' });
    case 'fts':
      return ftsBaseline(lib);
  }
  throw new Error(`unknown candidate ${name}`);
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Latency percentiles, and the ids found for the first `keep` queries (to compare candidates). */
function measureQueries(index, queries, n, keep) {
  for (let i = 0; i < Math.min(20, n); i++) index.search(queries[queries.length - 1 - i]);
  const times = [];
  const found = [];
  for (let i = 0; i < n; i++) {
    const q = queries[i % queries.length];
    const t0 = process.hrtime.bigint();
    const hits = index.search(q);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (i < keep) found.push(hits.map((h) => h.id));
  }
  if (found.every((ids) => ids.length === 0)) throw new Error(`${index.name} found nothing`);
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), n, found };
}

/** The share of the exact reference's top k that a candidate also returns. */
function agreement(found, exact) {
  let hit = 0;
  let all = 0;
  exact.forEach((ids, i) => {
    const mine = new Set(found[i]);
    all += ids.length;
    hit += ids.filter((id) => mine.has(id)).length;
  });
  return hit / all;
}

/**
 * serialize → load into a fresh index: the median of 5 loads, and a check that the loaded index
 * serializes to the same bytes (the round trip is exact).
 */
function measureSnapshot(lib, addon, index) {
  let t0 = performance.now();
  const bytes = index.serialize();
  const serializeMs = performance.now() - t0;
  const times = [];
  let copy;
  for (let i = 0; i < 5; i++) {
    copy = new lib.NativeRankingIndex(addon);
    t0 = performance.now();
    copy.load(bytes);
    times.push(performance.now() - t0);
  }
  if (!copy.serialize().equals(bytes)) throw new Error(`${index.name}: serialize → load → serialize changed the bytes`);
  times.sort((a, b) => a - b);
  return { bytes: bytes.length, serializeMs, loadMs: times[2] };
}

// ---- child: the memory of one index ------------------------------------------------------------

async function memoryChild(name, size, dims) {
  const lib = await loadLibrary();
  const addon = loadAddon();
  let data = makeData(size, dims);
  const settle = () => {
    for (let i = 0; i < 3; i++) gc();
    addon.trimMemory();
    return process.memoryUsage().rss;
  };
  const before = settle();
  let index = candidate(name, lib, addon, dims);
  index.addMany(data.docs);
  data = null;
  const after = settle();
  const own = typeof index.stats === 'function' ? index.stats().memoryBytes : null;
  const keep = index.name.length;
  // The growth above is net of the input documents, freed after the build (about 3 MiB here), and
  // V8 may still hold some of their pages. What is given back when the index itself is freed, after
  // turns of the event loop (so that N-API finalizers run too), is the index alone.
  const settled = async () => {
    for (let i = 0; i < 4; i++) {
      settle();
      await new Promise((resolve) => setImmediate(resolve));
    }
    return settle();
  };
  const held = await settled();
  index.close?.();
  index = null;
  const freed = held - (await settled());
  process.stdout.write(JSON.stringify({ rss: after - before, freed, own, keep }));
}

/** The child with the median RSS growth of three: V8's heap makes a single one noisy by a MiB or two. */
function memoryOf(name, size, dims = DIMS) {
  const runs = [];
  for (let i = 0; i < 3; i++) {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', name, '--size', String(size), '--dims', String(dims)], { encoding: 'utf8', maxBuffer: 1 << 20 });
    if (r.status !== 0) throw new Error(`memory child ${name} failed: ${r.stderr}`);
    runs.push(JSON.parse(r.stdout));
  }
  runs.sort((a, b) => a.rss - b.rss);
  return runs[1];
}

// ---- main -----------------------------------------------------------------------------------------

const mib = (b) => b / 1048576;
const fmt = (x, d = 2) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(d));

async function main() {
  const sizes = values.sizes.split(',').map(Number);
  const nQueries = Number(values.queries);
  const nBaseline = Number(values['baseline-queries']);
  const lib = await loadLibrary();
  const addon = loadAddon();
  console.error(`bench:ranking: ${DIMS}-dimension vectors, weighted hybrid queries (k=${K}); node ${process.version}, ${cpus().length} CPUs`);
  const results = [];
  for (const size of sizes) {
    console.error(`bench:ranking: generating ${size} chunks`);
    const { docs, queries } = makeData(size);
    for (const name of ['addon', 'addon-i8', 'reference', 'fts']) {
      const index = candidate(name, lib, addon);
      const t0 = performance.now();
      index.addMany(docs);
      const buildS = (performance.now() - t0) / 1000;
      const stats = typeof index.stats === 'function' ? index.stats() : null;
      const mode = stats ? (stats.graphNodes ? 'HNSW' : 'exact') : 'exact';
      console.error(`bench:ranking: ${size} ${index.name}: built in ${buildS.toFixed(1)} s (${mode}), querying`);
      const q = measureQueries(index, queries, name.startsWith('addon') ? nQueries : nBaseline, nBaseline);
      const snapshot = name.startsWith('addon') ? measureSnapshot(lib, addon, index) : null;
      results.push({ size, name, label: index.name, mode, buildS, own: stats?.memoryBytes ?? null, snapshot, ...q });
      index.close?.();
      gc();
    }
  }
  console.error('bench:ranking: memory per 10k chunks (child processes)');
  const memory = [];
  for (const [name, dims] of [['addon', DIMS], ['addon-i8', DIMS], ['addon', SMALL_DIMS], ['addon-i8', SMALL_DIMS], ['reference', DIMS], ['fts', DIMS]]) {
    memory.push({ name, dims, ...memoryOf(name, 10_000, dims) });
  }

  const lines = [];
  lines.push(`Hybrid ranking, ${DIMS}-dimension vectors, k=${K}; node ${process.version}, ${cpus().length} CPUs`);
  lines.push('');
  lines.push('| chunks | candidate | vector side | build s | p50 ms | p99 ms | queries | top-10 agreement with the reference |');
  lines.push('| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |');
  for (const r of results) {
    const exact = results.find((x) => x.size === r.size && x.name === 'reference').found;
    lines.push(`| ${r.size} | ${r.label} | ${r.mode} | ${fmt(r.buildS, 1)} | ${fmt(r.p50, 3)} | ${fmt(r.p99, 3)} | ${r.n} | ${agreement(r.found, exact).toFixed(3)} |`);
  }
  lines.push('');
  lines.push('| index memory per 10k chunks | dimensions | RSS growth MiB | RSS given back when freed MiB | own accounting MiB |');
  lines.push('| --- | ---: | ---: | ---: | ---: |');
  for (const m of memory) {
    const label = results.find((r) => r.name === m.name)?.label ?? m.name;
    lines.push(`| ${label} | ${m.dims} | ${fmt(mib(m.rss), 1)} | ${fmt(mib(m.freed), 1)} | ${m.own === null ? 'n/a' : fmt(mib(m.own), 1)} |`);
  }
  lines.push('');
  lines.push('| addon snapshot | chunks | vector side | own accounting MiB per 10k | snapshot MiB | serialize ms | load ms | load ms per 10k |');
  lines.push('| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |');
  for (const r of results.filter((x) => x.snapshot)) {
    const per10k = 10_000 / r.size;
    const sn = r.snapshot;
    lines.push(`| ${r.label} | ${r.size} | ${r.mode} | ${fmt(mib(r.own) * per10k, 1)} | ${fmt(mib(sn.bytes), 1)} | ${fmt(sn.serializeMs, 1)} | ${fmt(sn.loadMs, 1)} | ${fmt(sn.loadMs * per10k, 1)} |`);
  }
  lines.push('');
  const at = (size, name) => results.find((r) => r.size === size && r.name === name);
  const verdict = (ok) => (ok ? 'meets' : 'MISSES');
  for (const size of sizes) {
    const a = at(size, 'addon');
    const ref = at(size, 'reference');
    const fts = at(size, 'fts');
    const speedup = ref.p50 / a.p50;
    lines.push(`${size} chunks: addon p50 ${fmt(a.p50, 3)} ms = ${fmt(speedup, 1)}x faster than the TS reference (target >= 10x): ${verdict(speedup >= 10)}; ${fmt(fts.p50 / a.p50, 1)}x faster than FTS5 + JS cosine`);
  }
  const big = at(Math.max(...sizes), 'addon');
  if (big.size >= 100_000) {
    lines.push(`${big.size} chunks: addon p50 ${fmt(big.p50, 3)} ms (target <= 2 ms): ${verdict(big.p50 <= 2)}`);
  }
  const i8 = memory.find((m) => m.name === 'addon-i8' && m.dims === DIMS);
  const i8Worst = Math.max(i8.rss, i8.freed, i8.own);
  lines.push(`memory: addon (i8, ${DIMS} dimensions) per 10k chunks: RSS growth ${fmt(mib(i8.rss), 1)} MiB, given back when freed ${fmt(mib(i8.freed), 1)} MiB, own accounting ${fmt(mib(i8.own), 1)} MiB (target <= 8 MiB for each): ${verdict(mib(i8Worst) <= 8)}`);
  const slowest = Math.max(...results.filter((r) => r.snapshot).map((r) => (r.snapshot.loadMs * 10_000) / r.size));
  lines.push(`snapshot load: at most ${fmt(slowest, 1)} ms per 10k chunks (target <= 100 ms): ${verdict(slowest <= 100)}`);
  console.log(lines.join('\n'));
}

if (values.child) await memoryChild(values.child, Number(values.size), Number(values.dims));
else await main();
