// Runs the ranking scenario on an addon given by path (the arm64 build, under qemu) and prints the
// result as JSON. Bundled by test/ranking.test.ts; plain Node, no project tree needed.
import { NativeRankingIndex, type RankingAddon } from '../../src/native/ranking-native.js';
import { rankingScenario } from './ranking-scenario.js';

const mod = { exports: {} as RankingAddon };
process.dlopen(mod, process.argv[2]!);
process.stdout.write(JSON.stringify({ arch: process.arch, ...rankingScenario((o) => new NativeRankingIndex(mod.exports, o)) }));
