// Retrofitting word vectors to WordNet (Faruqui et al. 2015, "Retrofitting Word Vectors to Semantic
// Lexicons"), done at build time by scripts/embedder-assets.mjs on the vectors it is about to
// quantize: the shipped file keeps its size, and the local embedder computes exactly as before. The
// GloVe vectors place words by the contexts they share, so "boiler" and "heating" are close but
// "pressure" and "psi", or "vet" and "veterinarian", less so than a paraphrase needs; WordNet's
// synsets (and the links between them) pull such words together.
//
// The lexicon is Debian's wordnet-base (Princeton WordNet 3.0, its own BSD-style licence; installed
// by scripts/setup.mjs), read from /usr/share/wordnet/data.{noun,verb,adj,adv}. Plain Node, no
// dependencies.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const WORDNET_DIR = '/usr/share/wordnet';
const POS = ['noun', 'verb', 'adj', 'adv'];

/**
 * Which WordNet links make two words neighbours: '=' the same synset (synonyms); the others are
 * WordNet's pointer symbols between synsets ('@' hypernym, '~' hyponym, '&' similar adjective,
 * '+' derivationally related, '\\' pertainym, '^' see also).
 */
export const DEFAULT_RELATIONS = ['=', '@', '~', '&'];

/**
 * The synsets of WordNet: Map offset+pos → { words: string[], links: [symbol, key][] }. Words are
 * lower-cased, adjective markers like "(a)" dropped, '-' and ' ' as '_' (the vocabulary's spelling).
 */
export function readWordNet(dir = WORDNET_DIR) {
  const synsets = new Map();
  for (const pos of POS) {
    const file = join(dir, `data.${pos}`);
    if (!existsSync(file)) throw new Error(`${file} is missing: install Debian's wordnet-base (npm run setup does)`);
    for (const line of readFileSync(file, 'latin1').split('\n')) {
      if (line === '' || line.startsWith(' ')) continue; // the licence header
      const f = line.split(' ');
      const key = `${f[0]}${f[2] === 's' ? 'a' : f[2]}`;
      const n = parseInt(f[3], 16);
      const words = [];
      for (let i = 0; i < n; i++) words.push(f[4 + 2 * i].toLowerCase().replace(/\(.*\)$/, '').replace(/-/g, '_'));
      let at = 4 + 2 * n;
      const p = Number(f[at++]);
      const links = [];
      for (let i = 0; i < p; i++, at += 4) links.push([f[at], `${f[at + 1]}${f[at + 2] === 's' ? 'a' : f[at + 2]}`]);
      synsets.set(key, { words, links });
    }
  }
  return synsets;
}

/**
 * Neighbour lists over the vocabulary: for each word index, the indices of the words WordNet links
 * it to by `relations` (a word is never its own neighbour). Words outside the vocabulary are skipped.
 */
export function wordNetNeighbours(words, synsets, relations = DEFAULT_RELATIONS) {
  const index = new Map(words.map((w, i) => [w, i]));
  const sets = Array.from({ length: words.length }, () => null);
  const add = (a, b) => {
    if (a === b) return;
    (sets[a] ??= new Set()).add(b);
  };
  const same = relations.includes('=');
  const symbols = new Set(relations.filter((r) => r !== '='));
  for (const { words: ws, links } of synsets.values()) {
    const ids = ws.map((w) => index.get(w)).filter((i) => i !== undefined);
    if (ids.length === 0) continue;
    if (same) for (const a of ids) for (const b of ids) add(a, b);
    for (const [symbol, target] of links) {
      if (!symbols.has(symbol)) continue;
      const t = synsets.get(target);
      if (!t) continue;
      for (const w of t.words) {
        const b = index.get(w);
        if (b !== undefined) for (const a of ids) add(a, b);
      }
    }
  }
  return sets.map((s) => (s ? Int32Array.from(s) : null));
}

/**
 * Faruqui et al.'s update, in place on vecs (n × dims): each word with neighbours becomes
 * (alpha · its original vector + Σ its neighbours' current vectors / degree) / (alpha + 1), for
 * `iterations` rounds (β_ij = 1/degree as in the paper). Words without neighbours keep their vector.
 * Deterministic (Jacobi order: a round reads only the previous round's vectors).
 */
export function retrofit(vecs, dims, neighbours, { alpha = 1, iterations = 10 } = {}) {
  const original = Float64Array.from(vecs);
  let cur = Float64Array.from(vecs);
  for (let it = 0; it < iterations; it++) {
    const next = Float64Array.from(original);
    for (let i = 0; i < neighbours.length; i++) {
      const nb = neighbours[i];
      if (!nb || nb.length === 0) continue;
      const o = i * dims;
      for (let k = 0; k < dims; k++) next[o + k] *= alpha;
      const w = 1 / nb.length;
      for (const j of nb) for (let k = 0; k < dims; k++) next[o + k] += w * cur[j * dims + k];
      for (let k = 0; k < dims; k++) next[o + k] /= alpha + 1;
    }
    cur = next;
  }
  vecs.set(cur);
  let moved = 0;
  for (const nb of neighbours) if (nb && nb.length) moved++;
  return moved;
}
