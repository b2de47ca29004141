// Where an encoding's rank data comes from: tiktoken's own encoder file (node_modules/tiktoken in a
// dev tree, an asset of the single executable, embedded by scripts/build-sea.mjs). Nothing is read
// until a tokenizer is first used, so `pinclaw --version` never touches it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { errorMessage } from '../errors.js';
import { packageDir } from './loader.js';
import { projectRoot } from './root.js';
import { isSea, seaTextAsset } from './sea.js';
import { encodingAsset, PATTERNS, type EncodingName } from './tokenizer-encodings.js';

export interface EncodingData {
  name: EncodingName;
  /** tiktoken's rank text: lines of "<label> <first rank> <base64 token>…" */
  ranks: string;
  /** Special tokens (e.g. <|endoftext|>): pinclaw never emits them; plain text is all it counts. */
  specialTokens: Record<string, number>;
}

interface EncoderFile {
  pat_str?: unknown;
  special_tokens?: unknown;
  bpe_ranks?: unknown;
}

function readEncoderFile(name: EncodingName): { text: string; source: string } {
  if (isSea()) return { text: seaTextAsset(encodingAsset(name)), source: `asset ${encodingAsset(name)}` };
  const root = projectRoot();
  if (!root) throw new Error(`tokenizer data for ${name}: no project tree found next to this script`);
  let file: string;
  try {
    file = join(packageDir('tiktoken', createRequire(join(root, 'package.json'))), 'encoders', `${name}.json`);
  } catch (err) {
    throw new Error(`tokenizer data for ${name}: the tiktoken package is not installed (${errorMessage(err)})`);
  }
  return { text: readFileSync(file, 'utf8'), source: file };
}

/** Parses and checks one encoding's data. Throws an Error naming the file and the problem. */
export function parseEncodingData(name: EncodingName, text: string, source: string): EncodingData {
  let json: EncoderFile;
  try {
    json = JSON.parse(text) as EncoderFile;
  } catch (err) {
    throw new Error(`tokenizer data ${source}: not JSON (${errorMessage(err)})`);
  }
  if (typeof json.bpe_ranks !== 'string' || typeof json.pat_str !== 'string' || typeof json.special_tokens !== 'object' || !json.special_tokens) {
    throw new Error(`tokenizer data ${source}: expected pat_str, special_tokens and bpe_ranks`);
  }
  if (json.pat_str !== PATTERNS[name]) {
    throw new Error(`tokenizer data ${source}: its pre-tokenizer pattern is not the one pinclaw implements for ${name}:\n  ${json.pat_str}`);
  }
  return { name, ranks: json.bpe_ranks, specialTokens: json.special_tokens as Record<string, number> };
}

export function loadEncodingData(name: EncodingName): EncodingData {
  const { text, source } = readEncoderFile(name);
  return parseEncodingData(name, text, source);
}
