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
});
