// The memory's local embedder: the addon gives exactly the TypeScript reference's vectors (on x64
// here, on arm64 under qemu), they are deterministic and of unit length, they capture meaning
// (paraphrases beat unrelated texts) and survive typos, the data fit the Pi budget, nothing is
// read before the first embed, and the single executable finds its embedded copy.
import t, { type Test } from 'tap';
import { build } from 'esbuild';
import { createHook } from 'node:async_hooks';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EMBEDDER_DIMS, EMBEDDER_FORMAT, assetKey, assetName, DEFAULT_WORDS, embedderId, loadEmbedderBytes, parseEmbedderData, subspaceSizes, wordList } from '../src/memory/embedders/local-asset.js';
import { prepareText, ReferenceEmbedder } from '../src/memory/embedders/local-reference.js';
import { embedAddon, localEmbedder, SYNC_UNITS, type EmbedAddon } from '../src/memory/embedders/local.js';
import { EmbedderError } from '../src/memory/types.js';
import { arm64Addon, arm64Missing, arm64Node, arm64Sysroot, cleanEnv, root, run, seaArm64, seaX64, tempDir } from './support/proc.js';
import { EDGE_TEXTS, embedderTexts, PARAPHRASE_TRIPLES, RETRIEVAL_PAIRS } from './support/embedder-texts.js';

const addonOrNull = embedAddon();
if (!addonOrNull) throw new Error('the dev addon has no embedder: run npx node-gyp rebuild');
const addon: EmbedAddon = addonOrNull;
const { bytes, source } = await loadEmbedderBytes(DEFAULT_WORDS);
const data = parseEmbedderData(bytes, source);
const reference = new ReferenceEmbedder(data);
const model = addon.embedderLoad(bytes);
const loose = addon as unknown as Record<string, (...args: unknown[]) => unknown>;

const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const nativeOf = (texts: string[]) => {
  const flat = addon.embedTexts(model, texts.map(prepareText));
  return texts.map((_, i) => flat.subarray(i * EMBEDDER_DIMS, (i + 1) * EMBEDDER_DIMS));
};
const embedOne = (text: string) => nativeOf([text])[0]!;

/** Largest component difference over all vectors. */
function maxDiff(a: Float32Array[], b: Float32Array[]): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) for (let k = 0; k < EMBEDDER_DIMS; k++) m = Math.max(m, Math.abs(a[i]![k]! - b[i]![k]!));
  return m;
}

t.test('the build script and the reader agree on the format, the names and the id', async (t) => {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e',
    "const m = await import('./scripts/embedder-assets.mjs'); console.log(JSON.stringify({ format: m.FORMAT, dims: m.DIMS, words: m.DEFAULT_WORDS, key: m.assetKey(), name: m.assetName() }))"],
  { cwd: root, encoding: 'utf8' });
  t.same(JSON.parse(out), { format: EMBEDDER_FORMAT, dims: EMBEDDER_DIMS, words: DEFAULT_WORDS, key: assetKey(DEFAULT_WORDS), name: assetName(DEFAULT_WORDS) });
  t.equal(embedderId(DEFAULT_WORDS), 'local-wink100-60k-v2');
  const e = localEmbedder();
  t.equal(e.id, 'local-wink100-60k-v2');
  t.equal(e.dimensions, 100);
  t.equal(localEmbedder({ words: 100000 }).id, 'local-wink100-100k-v2', 'another vocabulary, another id');
  const sizes = execFileSync(process.execPath, ['--input-type=module', '-e',
    "const m = await import('./scripts/embedder-assets.mjs'); console.log(JSON.stringify([m.FREQUENT_SUBSPACES, m.RARE_SUBSPACES, m.BUCKET_SUBSPACES, 34, 7].map((n) => m.subspaceSizes(n))))"],
  { cwd: root, encoding: 'utf8' });
  const books = [data.frequentCodebook, data.rareCodebook, data.bucketCodebook];
  t.same(JSON.parse(sizes), [...books.map((b) => b.sizes), subspaceSizes(34, 100), subspaceSizes(7, 100)], 'both cut the dimensions into the same subspaces');
});

t.test('the data fit the budget and their header is what the addon reads', async (t) => {
  t.ok(bytes.byteLength <= 3 * 1024 * 1024, `${bytes.byteLength} bytes ≤ 3 MiB`);
  t.equal(data.words, 60000);
  t.equal(data.dims, 100);
  t.equal(data.buckets, 32768);
  t.same([data.frequentCodebook, data.rareCodebook, data.bucketCodebook].map((b) => b.subspaces), [50, 25, 12]);
  const classes = bytes.subarray(data.classesOffset, data.classesOffset + data.words);
  const frequent = classes.filter((c) => c < data.firstRareClass).length;
  t.ok(frequent > 19000 && frequent <= 20000, `${frequent} frequent words (2 dimensions per code byte), the rest 4`);
  t.same(addon.embedderInfo(model), { format: EMBEDDER_FORMAT, dims: 100, words: 60000, buckets: 32768, minGram: 3, maxGram: 5 });
  const words = wordList(data);
  t.ok(words.every((w, i) => i === 0 || words[i - 1]! < w), 'the word list is sorted, without duplicates');
  t.ok(['the', 'temperature', 'thermostat', 'wi_fi'].every((w) => words.includes(w)), 'and holds the common words');
  let pcNorm = 0;
  for (const x of data.pc) pcNorm += x * x;
  t.ok(Math.abs(Math.sqrt(pcNorm) - 1) < 1e-6, 'the common component is a unit vector');
});

t.test('the addon embeds exactly as the reference', async (t) => {
  const texts = embedderTexts(7, 400);
  const prepared = texts.map(prepareText);
  const want = prepared.map((p) => reference.embed(p));
  const flat = addon.embedTexts(model, prepared);
  t.equal(flat.length, texts.length * EMBEDDER_DIMS);
  const got = texts.map((_, i) => flat.subarray(i * EMBEDDER_DIMS, (i + 1) * EMBEDDER_DIMS));
  const diff = maxDiff(got, want);
  t.ok(diff <= 1e-6, `${texts.length} texts (${EDGE_TEXTS.length} edge cases): largest difference ${diff}`);
  const asyncFlat = await addon.embedTextsAsync(model, prepared);
  t.ok(asyncFlat.every((x, i) => x === flat[i]), 'the thread-pool path gives the same bits');
  const viaFacade = await localEmbedder().embed(texts);
  t.equal(maxDiff(viaFacade, want), 0, 'the façade (slices, sync and async) gives the same');
  const viaReference = await localEmbedder({ implementation: 'reference' }).embed(texts.slice(0, 60));
  t.equal(maxDiff(viaReference, want.slice(0, 60)), 0, 'and so does the façade on the reference');
});

t.test('vectors are deterministic and of unit length, whatever the batch', async (t) => {
  const texts = embedderTexts(11, 150);
  const a = nativeOf(texts);
  const b = nativeOf([...texts].reverse()).reverse();
  t.equal(maxDiff(a, b), 0, 'order in the batch does not matter');
  const again = addon.embedderLoad(bytes);
  const c = addon.embedTexts(again, texts.map(prepareText));
  t.ok(c.every((x, i) => x === a[Math.floor(i / EMBEDDER_DIMS)]![i % EMBEDDER_DIMS]), 'a second model gives the same bits');
  let worst = 0;
  for (const v of a) worst = Math.max(worst, Math.abs(Math.sqrt(cos(v, v)) - 1));
  t.ok(worst < 1e-6, `every vector has unit length (worst deviation ${worst})`);
  const empty = embedOne('');
  t.same(Array.from(empty), Array.from(data.pc), 'a text without words is the common component');
  t.same(Array.from(embedOne('!!! ...')), Array.from(empty), 'punctuation alone too');
  t.ok(Math.abs(cos(empty, embedOne('the heating is too warm'))) < 1e-6, 'which is orthogonal to every other embedding');
  t.ok(a.every((v) => v.every(Number.isFinite)), 'no NaN or infinity');
});

t.test('paraphrases score higher than unrelated texts', async (t) => {
  const heat = embedOne('the heating is too warm');
  const thermostat = cos(heat, embedOne('turn the thermostat down'));
  const milk = cos(heat, embedOne('buy milk tomorrow'));
  t.ok(thermostat > milk, `"turn the thermostat down" ${thermostat.toFixed(3)} > "buy milk tomorrow" ${milk.toFixed(3)}`);
  for (const [anchor, near, far] of PARAPHRASE_TRIPLES) {
    const a = embedOne(anchor);
    const n = cos(a, embedOne(near));
    const f = cos(a, embedOne(far));
    t.ok(n > f, `"${anchor}": "${near}" ${n.toFixed(3)} > "${far}" ${f.toFixed(3)}`);
  }
  // Each query against all memories: the one it asks for should come first or near it.
  const memories = nativeOf(RETRIEVAL_PAIRS.map((p) => p[0]));
  const queries = nativeOf(RETRIEVAL_PAIRS.map((p) => p[1]));
  let mrr = 0;
  let first = 0;
  queries.forEach((q, i) => {
    const scores = memories.map((m) => cos(m, q));
    const rank = scores.filter((s) => s > scores[i]!).length;
    mrr += 1 / (rank + 1);
    if (rank === 0) first++;
  });
  mrr /= queries.length;
  t.ok(mrr >= 0.75, `retrieval over ${queries.length} notes: MRR ${mrr.toFixed(3)} (measured 0.80; 0.84 with format 1), ${first} found first`);
});

t.test('typos land near the word they misspell', async (t) => {
  const pairs: [string, string][] = [['temprature', 'temperature'], ['thermostst', 'thermostat'], ['recieve', 'receive'], ['becuase', 'because'], ['untill', 'until']];
  for (const [typo, word] of pairs) t.ok(cos(embedOne(typo), embedOne(word)) > 0.99, `${typo} ≈ ${word} (one edit: corrected against the vocabulary)`);
  const sentence = cos(embedOne('what is the temprature in the livng room'), embedOne('what is the temperature in the living room'));
  t.ok(sentence > 0.99, `a sentence with two typos: ${sentence.toFixed(3)}`);
  // Two edits, or a misspelt word the vocabulary lacks: the character n-grams still connect them.
  const unknown = cos(embedOne('homebrige'), embedOne('homebridge'));
  t.ok(unknown > 0.5, `homebrige ~ homebridge through n-grams: ${unknown.toFixed(3)}`);
  const unrelated = cos(embedOne('homebrige'), embedOne('kubernetes'));
  t.ok(unknown > unrelated + 0.2, `more than an unrelated unknown word (${unrelated.toFixed(3)})`);
  t.ok(cos(embedOne('zigbee2mqtt'), embedOne('Zigbee2MQTT')) > 0.999999, 'an unknown word matches itself, whatever its case');
});

t.test('bad arguments and bad data are refused with the reason', async (t) => {
  t.throws(() => loose.embedderLoad!('x'), { name: 'TypeError', message: /embedderLoad\(data: Uint8Array \| ArrayBuffer\)/ });
  t.throws(() => addon.embedderLoad(bytes.subarray(0, 100)), /embedder data: 100 bytes, the header says/);
  t.throws(() => addon.embedderLoad(new Uint8Array(10)), /embedder data: too short for the header/);
  const wrongMagic = Uint8Array.from(bytes.subarray(0, 600));
  wrongMagic[0] = 0x41;
  t.throws(() => addon.embedderLoad(wrongMagic), /not a pinclaw embedder file/);
  t.throws(() => parseEmbedderData(wrongMagic, 'test.bin'), /embedder data test\.bin: not a pinclaw embedder file/);
  t.throws(() => parseEmbedderData(bytes.subarray(0, 1000), 'test.bin'), /test\.bin: 1000 bytes, the header says/);
  // A file of the previous format (the same magic) is named as such, by both readers.
  const oldFormat = Uint8Array.from(bytes);
  new DataView(oldFormat.buffer).setUint32(8, 1, true);
  t.throws(() => addon.embedderLoad(oldFormat), /embedder data: format 1, this build reads format 2/);
  t.throws(() => parseEmbedderData(oldFormat, 'old.bin'), /old\.bin: format 1, this build reads format 2/);
  // A word list that does not decode: its first marker claims a prefix shared with no word.
  const badList = Uint8Array.from(bytes);
  badList[data.wordsOffset] = 0x85;
  t.throws(() => addon.embedderLoad(badList), /embedder data: bad word list at byte 0/);
  t.throws(() => new ReferenceEmbedder(parseEmbedderData(badList, 'bad.bin')), /bad\.bin: bad word list at byte 0/);
  t.throws(() => loose.embedTexts!(model, 'text'), { name: 'TypeError', message: /texts must be an array of strings/ });
  t.throws(() => loose.embedTexts!(model, ['ok', 5]), { name: 'TypeError', message: /texts\[1\] is not a string/ });
  t.throws(() => loose.embedTexts!({}, ['x']), { name: 'TypeError', message: /model must be what embedderLoad returned/ });
  t.throws(() => loose.embedTexts!(model), { name: 'TypeError', message: /embedTexts\(model, texts: string\[\]\)/ });
  t.throws(() => loose.embedderInfo!(null), { name: 'TypeError' });
  t.throws(() => loose.embedTextsAsync!(model, [null]), { name: 'TypeError', message: /texts\[0\] is not a string/ });
  t.equal(addon.embedTexts(model, []).length, 0, 'no texts, no vectors');
  const missing = localEmbedder({ file: join(tempDir('pinclaw-embed-'), 'missing.bin') });
  await t.rejects(missing.embed(['x']), { name: 'EmbedderError', message: /the local embedder cannot load its data: .*missing\.bin/ });
  // Damaged data: the addon's own checks (the native backend does not parse the data in JavaScript
  // first) and the reference's name the file and what is wrong alike.
  const damaged = join(tempDir('pinclaw-embed-'), 'damaged.bin');
  writeFileSync(damaged, bytes.subarray(0, 1000));
  for (const implementation of ['native', 'reference'] as const) {
    await t.rejects(localEmbedder({ file: damaged, implementation }).embed(['x']), { name: 'EmbedderError', message: /the local embedder cannot load its data: embedder data \S*damaged\.bin: 1000 bytes, the header says at least \d+$/ }, implementation);
  }
  const fewer = join(tempDir('pinclaw-embed-'), 'fewer.bin');
  writeFileSync(fewer, bytes);
  await t.rejects(localEmbedder({ file: fewer, words: 100000 }).embed(['x']), { name: 'EmbedderError', message: /fewer\.bin: 60000 words, 100000 expected/ }, 'data of another vocabulary than asked for');
  const ac = new AbortController();
  ac.abort();
  await t.rejects(localEmbedder().embed(['x'], ac.signal), new EmbedderError('local embedding was aborted'));
});

t.test('large batches are embedded on the thread pool, small ones in place', async (t) => {
  const works: string[] = [];
  const hook = createHook({
    init(_id, type) {
      if (type === 'pinclaw:embedTexts') works.push(type);
    },
  }).enable();
  t.teardown(() => hook.disable());
  const e = localEmbedder();
  await e.embed(['warm up']);
  t.equal(e.implementation, 'native');
  works.length = 0;
  await e.embed(['one small text', 'and another']);
  t.equal(works.length, 0, 'a small batch is embedded synchronously');
  const chunk = 'the quick brown fox jumps over the lazy dog near the warm radiator '.repeat(30);
  const batch = Array.from({ length: 12 }, (_, i) => `${i} ${chunk}`);
  const vectors = await e.embed(batch);
  t.ok(works.length >= Math.floor((batch.length * chunk.length) / SYNC_UNITS), `${works.length} thread-pool jobs for ${batch.length} chunks`);
  t.equal(maxDiff(vectors, nativeOf(batch)), 0, 'same vectors as the synchronous path');
  t.ok(vectors.every((v) => v.buffer.byteLength === EMBEDDER_DIMS * 4), 'each vector owns its buffer');
});

t.test('a process that never embeds never reads the data', async (t) => {
  const dir = join(root, 'dist', '.test-embedder');
  mkdirSync(dir, { recursive: true });
  const main = join(dir, `lazy-${process.pid}.mjs`);
  t.teardown(() => rmSync(main, { force: true }));
  await build({ entryPoints: [join(root, 'test', 'support', 'embedder-lazy-main.ts')], outfile: main, bundle: true, platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning' });
  const r = run(process.execPath, [main], { env: cleanEnv(), cwd: dir });
  t.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { before: { id: string; dims: number; implementation: string | null; read: string[] }; after: { implementation: string; read: string[]; length: number } };
  t.same(out.before, { id: 'local-wink100-60k-v2', dims: 100, implementation: null, read: [] }, 'creating the embedder and reading its id read nothing');
  t.ok(out.after.read.some((p) => p.endsWith(assetName(DEFAULT_WORDS))), `the first embed read ${out.after.read.join(', ')}`);
  t.equal(out.after.implementation, 'native');
  t.equal(out.after.length, 100);
});

t.test('the arm64 addon of the single executable embeds exactly as the reference (under qemu)', { skip: arm64Missing }, async (t) => {
  const dir = tempDir('pinclaw-embed-arm64-');
  const main = join(dir, 'cross.mjs');
  await build({ entryPoints: [join(root, 'test', 'support', 'embedder-cross-main.ts')], outfile: main, bundle: true, platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning' });
  const prepared = embedderTexts(13, 120).map(prepareText);
  writeFileSync(join(dir, 'texts.json'), JSON.stringify(prepared));
  const r = run('qemu-aarch64-static', ['-L', arm64Sysroot, arm64Node, main, arm64Addon, source, join(dir, 'texts.json')], { timeoutMs: 300_000 });
  t.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { arch: string; vectors: string };
  t.equal(out.arch, 'arm64');
  const raw = Buffer.from(out.vectors, 'base64');
  const flat = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
  const got = prepared.map((_, i) => flat.subarray(i * EMBEDDER_DIMS, (i + 1) * EMBEDDER_DIMS));
  t.equal(maxDiff(got, prepared.map((p) => reference.embed(p))), 0, `${prepared.length} texts: bit-identical on arm64`);
});

// npm test builds the executables first (and with them the data, which come out bit-identical on
// every build), so an executable here embeds the same data as .cache/embedder/.
const seaSkip = (exe: string, arch: string) => (existsSync(exe) ? false : `no ${arch} executable: run npm run build:sea -- --arch ${arch} (npm test does)`);

/**
 * A preload (NODE_OPTIONS=--require, which single executables honour) runs pinclaw's own loader
 * code inside the executable, where isSea() is true: the data come from the asset (node:sea), the
 * addon from the executable's embedded copy. pinclaw's main runs too (it prints its version); the
 * process lives until the preload has printed the vectors and exits.
 */
async function checkSea(t: Test, exe: string, arch: string, prefix: string[]): Promise<void> {
  const dir = tempDir('pinclaw-embed-sea-');
  const preload = join(dir, 'preload.cjs');
  await build({
    stdin: {
      contents: `import { localEmbedder } from ${JSON.stringify(join(root, 'src', 'memory', 'embedders', 'local.ts'))};
import { configureNative } from ${JSON.stringify(join(root, 'src', 'native', 'loader.ts'))};
import { isSea } from ${JSON.stringify(join(root, 'src', 'native', 'sea.ts'))};
configureNative({ cacheDir: process.env.PINCLAW_TEST_CACHE });
const texts = JSON.parse(process.env.PINCLAW_TEST_TEXTS);
Promise.all([localEmbedder(), localEmbedder({ implementation: 'reference' })].map((e) => e.embed(texts).then((v) => [e.implementation, v.map((x) => Array.from(x))])))
  .then(async (results) => {
    const links = await localEmbedder().wordLinks();
    process.stdout.write(JSON.stringify({ sea: isSea(), arch: process.arch, results, links: [links.has('poultry', 'chicken'), links.has('poultry', 'piano')] }));
    process.exit(0);
  },
        (err) => { process.stderr.write(String((err && err.stack) || err)); process.exit(3); });`,
      resolveDir: root, loader: 'ts', sourcefile: 'sea-preload.ts',
    },
    outfile: preload, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning',
    banner: { js: 'var __pinclaw_import_meta_url = require("url").pathToFileURL(__filename).href;' },
    define: { 'import.meta.url': '__pinclaw_import_meta_url' },
  });
  const texts = ['the heating is too warm', 'temprature', '', 'zigbee2mqtt wi-fi Café'];
  const [cmd, ...args] = [...prefix, exe, '--version'];
  const r = run(cmd!, args, {
    env: cleanEnv({ NODE_OPTIONS: `--require ${preload}`, PINCLAW_TEST_TEXTS: JSON.stringify(texts), PINCLAW_TEST_CACHE: join(dir, 'cache'), PINCLAW_HOME: join(dir, 'home') }),
    cwd: dir,
    timeoutMs: 300_000,
  });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^pinclaw \d+\.\d+\.\d+\n\{/, 'the version, then the preload\'s report');
  const out = JSON.parse(r.stdout.slice(r.stdout.indexOf('{'))) as { sea: boolean; arch: string; results: [string, number[][]][]; links: boolean[] };
  t.equal(out.sea, true, 'ran inside the single executable');
  t.equal(out.arch, arch);
  t.same(out.results.map((x) => x[0]), ['native', 'reference'], 'the embedded addon and the reference');
  const want = texts.map((x) => Array.from(reference.embed(prepareText(x))));
  t.same(out.results[0]![1], want, 'the addon, on the embedded data, gives the dev tree\'s vectors');
  t.same(out.results[1]![1], want, 'so does the reference');
  t.same(out.links, [true, false], "the rerank's word links come from the executable's (compressed) asset");
}

t.test('the x64 single executable embeds with its embedded data', { skip: seaSkip(seaX64, 'x64') }, (t) => checkSea(t, seaX64, 'x64', []));
t.test('the arm64 single executable embeds with its embedded data (under qemu)', { skip: seaSkip(seaArm64, 'arm64') }, (t) =>
  checkSea(t, seaArm64, 'arm64', ['qemu-aarch64-static', '-L', arm64Sysroot]));
