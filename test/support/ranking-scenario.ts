// A fixed ranking workload (seeded documents and queries, f32 and i8), run by test/ranking.test.ts
// in-process on the reference and under qemu on the arm64 addon, to compare the two.
import { createHash } from 'node:crypto';
import type { RankingHit, RankingIndex, RankingOptions } from '../../src/native/ranking-types.js';
import { prng } from './prng.js';

const WORDS = ['alpha', 'Beta', 'gamma', '東京タワー', 'Straße', 'delta', 'eps', 'x86_64', 'zeta', 'eta'];

export interface ScenarioResult {
  hits: RankingHit[][];
  sha256: string[];
}

export function rankingScenario(make: (options: RankingOptions) => RankingIndex): ScenarioResult {
  const rnd = prng(42);
  const gauss = (): number => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
  const dims = 37; // not a multiple of 16: the padded lanes count too
  const out: ScenarioResult = { hits: [], sha256: [] };
  for (const quantization of ['f32', 'i8'] as const) {
    const index = make({ quantization });
    const words = (n: number): string => Array.from({ length: n }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ');
    index.addMany(Array.from({ length: 600 }, (_, i) => ({ id: `d${i}`, text: words(1 + Math.floor(rnd() * 20)), vector: Float32Array.from({ length: dims }, gauss), kind: i % 3 ? 'a' : 'b', time: i })));
    for (let i = 0; i < 150; i++) {
      const text = rnd() < 0.7 ? words(1 + Math.floor(rnd() * 3)) : undefined;
      const vector = rnd() < 0.7 || !text ? Float32Array.from({ length: dims }, gauss) : undefined;
      out.hits.push(index.search({ text, vector, k: 15, fusion: rnd() < 0.3 ? 'rrf' : 'weighted', filter: rnd() < 0.3 ? { kind: 'a' } : undefined }));
    }
    out.sha256.push(createHash('sha256').update(index.serialize()).digest('hex'));
  }
  return out;
}
