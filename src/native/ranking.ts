// The hybrid ranking index (BM25 + vectors): the addon when it loads, the TypeScript reference
// otherwise. Callers see one interface either way; docs/ranking.md describes the semantics.
import { log } from '../log.js';
import { addonStatus, tryAddon } from './loader.js';
import { isRankingAddon, NativeRankingIndex, type RankingAddon } from './ranking-native.js';
import { ReferenceRankingIndex } from './ranking-reference.js';
import type { RankingIndex, RankingOptions } from './ranking-types.js';

export type * from './ranking-types.js';

/** The addon's ranking exports, or null when the addon is missing or was built without them. */
export function rankingAddon(): RankingAddon | null {
  const a = tryAddon<unknown>('pinclaw');
  if (isRankingAddon(a)) return a;
  const why = a ? 'the addon was built without ranking' : addonStatus('pinclaw').error;
  log.once('ranking-reference', 'warn', `ranking: ${why}; using the TypeScript reference`);
  return null;
}

export function createRankingIndex(options?: RankingOptions, backend: 'auto' | 'native' | 'reference' = 'auto'): RankingIndex {
  if (backend === 'reference') return new ReferenceRankingIndex(options);
  const addon = rankingAddon();
  if (addon) return new NativeRankingIndex(addon, options);
  if (backend === 'native') throw new Error('ranking: the native addon is not available');
  return new ReferenceRankingIndex(options);
}
