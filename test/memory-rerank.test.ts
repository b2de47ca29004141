// The word-level rerank of hybrid search (src/memory/rerank.ts) with the real local embedder.
import t from 'tap';
import { localEmbedder } from '../src/memory/embedders/local.js';
import { contentWords, coverage, rerank, WordVectors } from '../src/memory/rerank.js';

const emb = localEmbedder();
const words = () => new WordVectors((w) => emb.embed(w));

t.test('content words: folded, once each, function words out', async (t) => {
  t.same(contentWords("Where's the Dog's leash? The dog's LEASH!"), ['dog', 'leash']);
  t.same(contentWords('the and of'), []);
});

t.test('coverage: each query word counts by its closest chunk word', async (t) => {
  const v = await words().of(['dog', 'puppy', 'invoice']);
  const [dog, puppy, invoice] = ['dog', 'puppy', 'invoice'].map((w) => v.get(w)!);
  t.ok(coverage([dog!], [puppy!]) > coverage([dog!], [invoice!]), 'a related word covers better than an unrelated one');
  t.equal(coverage([dog!], [invoice!, dog!]), coverage([dog!], [dog!]), 'the best match counts, not the mean');
  t.equal(coverage([], [dog!]), 0);
});

t.test('a paraphrase rises above a distractor the fused score put first', async (t) => {
  const candidates = [
    { text: 'The car is due for its yearly inspection in March', score: 0.6 },
    { text: 'The beagle is fed twice a day, at seven and at six', score: 0.5 },
  ];
  const scores = await rerank('when does the puppy eat?', candidates, words(), 0.5);
  t.ok(scores[1]! > scores[0]!, `reranked ${scores.join(' / ')}`);
  // The same as coverage() chunk by chunk, min-max normalised and mixed.
  const wv = words();
  const q = contentWords('when does the puppy eat?');
  const vec = await wv.of([...q, ...candidates.flatMap((c) => contentWords(c.text))]);
  const cov = candidates.map((c) => coverage(q.map((w) => vec.get(w)!), contentWords(c.text).map((w) => vec.get(w)!)));
  const lo = Math.min(...cov);
  const hi = Math.max(...cov);
  candidates.forEach((c, i) => t.ok(Math.abs(scores[i]! - (0.5 * c.score + (0.5 * (cov[i]! - lo)) / (hi - lo))) < 1e-12, `candidate ${i} as the formula says`));
  const kept = await rerank('when does the puppy eat?', candidates, words(), 0);
  t.same(kept, [0.6, 0.5], 'weight 0 keeps the fused scores');
});

t.test('word vectors are cached and the cache stays bounded', async (t) => {
  let calls = 0;
  const wv = new WordVectors((w) => {
    calls += w.length;
    return emb.embed(w);
  }, 3);
  await wv.of(['dog', 'cat', 'dog']);
  t.equal(calls, 2, 'a word is embedded once per call');
  await wv.of(['dog', 'cat']);
  t.equal(calls, 2, 'and not again while cached');
  await wv.of(['hen', 'goat']);
  t.equal(calls, 4);
  const again = await wv.of(['dog']);
  t.equal(again.get('dog')!.length, 100);
  const before = calls;
  await wv.of(['dog']);
  t.equal(calls, before, 'cached');
  const { releaseCaches } = await import('../src/release.js');
  t.ok(releaseCaches().includes('memory-word-vectors'));
  await wv.of(['dog']);
  t.equal(calls, before + 1, 'a release drops the cache');
});

// Through openMemory on a real SQLite file: which embedders are reranked, and a failure mid-rerank.
t.test('memory.search reranks with a word-level embedder only, and keeps the fused order if words fail', async (t) => {
  const { openDatabase } = await import('../src/store/db.js');
  const { openMemory } = await import('../src/memory/memory.js');
  const { defaults } = await import('../src/config/schema.js');
  const { setLogSink } = await import('../src/log.js');
  const { tempDir } = await import('./support/proc.js');
  const { join } = await import('node:path');
  const { mkdirSync } = await import('node:fs');
  const lines: string[] = [];
  setLogSink((line) => void lines.push(line));
  t.teardown(() => setLogSink((line) => process.stderr.write(line + '\n')));
  const open = (embedder: import('../src/memory/types.js').Embedder) => {
    const dir = tempDir();
    const db = openDatabase(join(dir, 'pinclaw.db'));
    mkdirSync(join(dir, 'workspace', 'memory'), { recursive: true });
    t.teardown(() => db.close());
    return openMemory({ db, workspace: join(dir, 'workspace'), cacheDir: join(dir, 'cache'), config: defaults().memory, count: (s: string) => s.length, embedder });
  };
  // The real embedder's vectors for sentences; single words (the rerank's batches) counted, and
  // refused when `failWords` is set. A stand-in behind the Embedder interface only to count and fail.
  const counted = (wordLevel: boolean, failWords: boolean) => {
    const seen = { words: 0 };
    const e = {
      id: emb.id,
      dimensions: emb.dimensions,
      wordLevel,
      async embed(texts: readonly string[]) {
        if (texts.length > 1 && texts.every((x) => !/\s/.test(x))) {
          seen.words += texts.length;
          if (failWords) throw new Error('word batch refused');
        }
        return emb.embed(texts);
      },
    };
    return { e, seen };
  };
  const texts = ['The car is due for its yearly inspection in March', 'The beagle is fed twice a day, at seven and at six', 'Buy milk and bread on the way home'];

  const remote = counted(false, false);
  const m1 = open(remote.e);
  for (const x of texts) await m1.store(x);
  const plain = await m1.search('when does the puppy eat?', { mode: 'hybrid' });
  t.equal(remote.seen.words, 0, 'an embedder without wordLevel is not asked for words');

  const local = counted(true, false);
  const m2 = open(local.e);
  for (const x of texts) await m2.store(x);
  const reranked = await m2.search('when does the puppy eat?', { mode: 'hybrid' });
  t.ok(local.seen.words > 0, 'a word-level embedder embeds the words');
  t.notSame(reranked.map((h) => h.score), plain.map((h) => h.score), 'the scores changed');

  const failing = counted(true, true);
  const m3 = open(failing.e);
  for (const x of texts) await m3.store(x);
  const kept = await m3.search('when does the puppy eat?', { mode: 'hybrid' });
  t.same(kept.map((h) => [h.text, h.score]), plain.map((h) => [h.text, h.score]), 'the fused order and scores are kept');
  t.match(lines.join('\n'), /not reranked: word batch refused/);
});
