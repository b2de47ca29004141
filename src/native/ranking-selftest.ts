// What `doctor` runs to show the addon's ranking index works where pinclaw runs (inside the single
// executable too): a small index above the HNSW threshold, one hybrid query, a serialize → load.
import { NativeRankingIndex } from './ranking-native.js';
import { rankingAddon } from './ranking.js';

const DOCS = 64;
const DIMS = 8;

function vectorOf(i: number): Float32Array {
  return Float32Array.from({ length: DIMS }, (_, j) => Math.sin((i + 1) * (j + 1)));
}

/** A one-line summary; throws with the reason when something does not work. */
export function rankingSelfTest(): string {
  const addon = rankingAddon();
  if (!addon) throw new Error('ranking: the addon has no ranking exports');
  const index = new NativeRankingIndex(addon, { dimensions: DIMS, hnswThreshold: DOCS / 4 });
  index.addMany(Array.from({ length: DOCS }, (_, i) => ({ id: `d${i}`, text: `Document ${i} ${i % 2 ? 'odd' : 'even'}`, vector: vectorOf(i) })));
  const { graphNodes } = index.stats();
  if (graphNodes !== DOCS) throw new Error(`ranking: HNSW graph has ${graphNodes} nodes, expected ${DOCS}`);
  const query = { text: 'DOCUMENT 7', vector: vectorOf(7), k: 3 };
  const hits = index.search(query);
  if (hits[0]?.id !== 'd7' || Math.abs(hits[0].score - 1) > 1e-9) throw new Error(`ranking: hybrid search ranked ${hits[0]?.id ?? 'nothing'} first, expected d7`);
  const copy = new NativeRankingIndex(addon);
  copy.load(index.serialize());
  if (JSON.stringify(copy.search(query)) !== JSON.stringify(hits)) throw new Error('ranking: the index answered differently after serialize → load');
  return `ranking: ${DOCS} documents, HNSW ${graphNodes} nodes, hybrid search and serialize/load ok`;
}
