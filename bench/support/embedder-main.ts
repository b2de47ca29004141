// The embedder benchmark proper (bundled and run by bench/embedder.mjs). The parent measures speed
// and quality in one process; RSS is measured in a child per vocabulary size and backend
// (`--child <words> <native|reference>`), so one model's memory never counts toward another's.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { get_encoding } from 'tiktoken';
import { DEFAULT_WORDS, parseEmbedderData, wordList } from '../../src/memory/embedders/local-asset.js';
import { prepareText, ReferenceEmbedder } from '../../src/memory/embedders/local-reference.js';
import type { EmbedAddon } from '../../src/memory/embedders/local.js';
import { splitTerms } from '../../src/native/ranking-text.js';
import { PARAPHRASE_TRIPLES, RETRIEVAL_PAIRS } from '../../test/support/embedder-texts.js';
import { prng } from '../../test/support/prng.js';

const { values } = parseArgs({
  options: {
    root: { type: 'string' },
    words: { type: 'string', default: `${DEFAULT_WORDS},100000` },
    rounds: { type: 'string', default: '5' },
    json: { type: 'boolean', default: false },
    child: { type: 'string' },
    impl: { type: 'string' },
    texts: { type: 'string' },
  },
  allowPositionals: true,
});
const root = values.root ?? process.cwd();
const DIMS = 100;
/** The data's share of the executable's size budget (docs/memory-embedder.md). */
const BUDGET_BYTES = 3 * 1024 * 1024;
const say = (m: string) => process.stderr.write(`bench:embedder: ${m}\n`);

const mod = { exports: {} as EmbedAddon };
process.dlopen(mod, join(root, 'build', 'Release', 'pinclaw.node'));
const addon = mod.exports;

function dataFile(words: number): string {
  return execFileSync(process.execPath, [join(root, 'scripts', 'embedder-assets.mjs'), '--quiet', '--words', String(words)], { cwd: root, encoding: 'utf8' }).trim();
}

/** 400-token windows (o200k_base) of English prose with some code: docs/*.md. */
function chunks(): string[] {
  const docs = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => readFileSync(join(root, 'docs', f), 'utf8')).join('\n\n');
  const enc = get_encoding('o200k_base');
  const ids = enc.encode_ordinary(docs);
  const out: string[] = [];
  const utf8 = new TextDecoder();
  for (let i = 0; i + 400 <= ids.length; i += 400) out.push(utf8.decode(enc.decode(ids.subarray(i, i + 400))));
  enc.free();
  return out;
}

const rssMiB = () => process.memoryUsage().rss / 1048576;

// Child: load one model, embed every chunk (so the vectors it needs are paged in), report RSS.
// The prepared chunks come from a small file, so little else is allocated around the measurement.
if (values.child) {
  const words = Number(values.child);
  const texts = JSON.parse(readFileSync(values.texts!, 'utf8')) as string[];
  const file = dataFile(words);
  const { gc } = globalThis as { gc?: () => void };
  gc?.();
  const before = rssMiB();
  const bytes = readFileSync(file);
  const data = parseEmbedderData(bytes, file);
  if (values.impl === 'native') {
    const model = addon.embedderLoad(bytes);
    addon.embedTexts(model, texts);
  } else {
    const ref = new ReferenceEmbedder(data);
    for (const t of texts) ref.embed(t);
  }
  gc?.();
  process.stdout.write(JSON.stringify({ before, after: rssMiB() }));
  process.exit(0);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const texts = chunks();
const prepared = texts.map(prepareText);
const rounds = Number(values.rounds);

function typoSet(vocab: string[]): [string, string][] {
  const r = prng(42);
  const out: [string, string][] = [];
  const known = new Set(vocab);
  while (out.length < 300) {
    const w = vocab[300 + Math.floor(r() * 20000)]!;
    if (!/^[a-z]{6,}$/.test(w)) continue;
    const i = Math.floor(r() * w.length);
    const c = 'abcdefghijklmnopqrstuvwxyz'[Math.floor(r() * 26)]!;
    const op = Math.floor(r() * 4);
    const typo = op === 0 ? w.slice(0, i) + w.slice(i + 1) : op === 1 && i + 1 < w.length ? w.slice(0, i) + w[i + 1] + w[i] + w.slice(i + 2) : op === 2 ? w.slice(0, i) + c + w.slice(i + 1) : w.slice(0, i) + c + w.slice(i);
    if (typo !== w && !known.has(typo)) out.push([w, typo]);
  }
  return out;
}

interface Row {
  words: number; bytes: number; loadMs: { native: number; reference: number }; msPerChunk: { native: number; reference: number; ratio: number };
  batchMsPerChunk: number; rss: { native: number; reference: number }; mrr: number; triples: string; typo: number; coverage: number;
}
const rows: Row[] = [];
for (const words of values.words.split(',').map(Number)) {
  say(`${words} words: data`);
  const file = dataFile(words);
  const bytes = readFileSync(file);
  const data = parseEmbedderData(bytes, file);
  let t0 = performance.now();
  const model = addon.embedderLoad(bytes);
  const nativeLoad = performance.now() - t0;
  t0 = performance.now();
  const ref = new ReferenceEmbedder(data);
  const refLoad = performance.now() - t0;

  // One chunk per call, as the memory embeds a changed note; rounds alternate which goes first.
  const per = { native: [] as number[], reference: [] as number[] };
  const runNative = () => {
    const s = performance.now();
    for (const p of prepared) addon.embedTexts(model, [p]);
    per.native.push((performance.now() - s) / prepared.length);
  };
  const runRef = () => {
    const s = performance.now();
    for (const p of prepared) ref.embed(p);
    per.reference.push((performance.now() - s) / prepared.length);
  };
  runNative();
  runRef();
  for (let r = 0; r < rounds; r++) {
    if (r % 2) {
      runRef();
      runNative();
    } else {
      runNative();
      runRef();
    }
  }
  const batch: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const s = performance.now();
    await addon.embedTextsAsync(model, prepared);
    batch.push((performance.now() - s) / prepared.length);
  }

  const rss = { native: 0, reference: 0 };
  const textsFile = join(root, 'dist', '.bench', 'embedder-chunks.json');
  writeFileSync(textsFile, JSON.stringify(prepared));
  for (const impl of ['native', 'reference'] as const) {
    const self = fileURLToPath(import.meta.url);
    const out = execFileSync(process.execPath, ['--expose-gc', self, '--root', root, '--child', String(words), '--impl', impl, '--texts', textsFile], { encoding: 'utf8' });
    const m = JSON.parse(out) as { before: number; after: number };
    rss[impl] = m.after - m.before;
  }

  // Quality, on the addon (the reference gives the same vectors).
  const emb = (list: string[]) => {
    const flat = addon.embedTexts(model, list.map(prepareText));
    return list.map((_, i) => flat.subarray(i * DIMS, (i + 1) * DIMS));
  };
  const mem = emb(RETRIEVAL_PAIRS.map((p) => p[0]));
  const qs = emb(RETRIEVAL_PAIRS.map((p) => p[1]));
  let mrr = 0;
  qs.forEach((q, i) => {
    const s = mem.map((m) => cos(m, q));
    mrr += 1 / (s.filter((x) => x > s[i]!).length + 1);
  });
  mrr /= qs.length;
  let won = 0;
  for (const [a, n, f] of PARAPHRASE_TRIPLES) {
    const [ea, en, ef] = emb([a, n, f]);
    if (cos(ea!, en!) > cos(ea!, ef!)) won++;
  }
  // The list is sorted; its frequency classes give the frequency order the typo set draws from.
  const vocab = wordList(data);
  const classes = bytes.subarray(data.classesOffset, data.classesOffset + data.words);
  const typos = typoSet(vocab.map((w, i) => ({ w, i })).sort((a, b) => classes[a.i]! - classes[b.i]! || a.i - b.i).map((x) => x.w));
  const tv = emb(typos.flatMap(([w, t]) => [w, t]));
  let typo = 0;
  for (let i = 0; i < typos.length; i++) typo += cos(tv[2 * i]!, tv[2 * i + 1]!);
  const known = new Set(vocab);
  let terms = 0;
  let hit = 0;
  for (const p of prepared) {
    for (const term of splitTerms(p)) {
      if (!/\p{L}/u.test(term)) continue;
      terms++;
      if (known.has(term) || (term.includes('_') && term.split('_').every((x) => !x || known.has(x)))) hit++;
    }
  }
  const row: Row = {
    words, bytes: statSync(file).size,
    loadMs: { native: nativeLoad, reference: refLoad },
    msPerChunk: { native: median(per.native), reference: median(per.reference), ratio: median(per.reference) / median(per.native) },
    batchMsPerChunk: median(batch), rss, mrr, triples: `${won}/${PARAPHRASE_TRIPLES.length}`, typo: typo / typos.length, coverage: hit / terms,
  };
  rows.push(row);
}

if (values.json) {
  process.stdout.write(JSON.stringify({ chunks: texts.length, avgChars: Math.round(texts.reduce((s, x) => s + x.length, 0) / texts.length), rows }, null, 2) + '\n');
} else {
  const f = (x: number, d = 2) => x.toFixed(d);
  console.log(`${texts.length} windows of 400 tokens (o200k_base; ${Math.round(texts.reduce((s, x) => s + x.length, 0) / texts.length)} characters on average) of docs/*.md; median of ${rounds} rounds`);
  console.log('| words | data MB | load ms addon / ref | ms per chunk: addon | reference | ref / addon | batch (pool) | RSS MiB addon / ref | retrieval MRR | paraphrases | typo cos | coverage |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows) {
    console.log(`| ${r.words / 1000}k | ${f(r.bytes / 1e6)}${r.bytes > BUDGET_BYTES ? ' (over 3 MiB)' : ''} | ${f(r.loadMs.native, 0)} / ${f(r.loadMs.reference, 0)} | ${f(r.msPerChunk.native, 3)} | ${f(r.msPerChunk.reference, 3)} | ${f(r.msPerChunk.ratio, 1)}× | ${f(r.batchMsPerChunk, 3)} | ${f(r.rss.native, 1)} / ${f(r.rss.reference, 1)} | ${f(r.mrr, 3)} | ${r.triples} | ${f(r.typo, 3)} | ${f(r.coverage * 100, 1)} % |`);
  }
  const ok = (r: Row) => r.bytes <= BUDGET_BYTES && r.msPerChunk.native <= 2 && r.rss.native <= 30;
  for (const r of rows) console.log(`${r.words / 1000}k: budget (data ≤ 3 MiB, addon ≤ 2 ms per chunk, ≤ 30 MiB RSS) ${ok(r) ? 'meets' : 'MISSES'}`);
}
