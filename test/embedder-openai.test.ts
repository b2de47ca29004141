// The OpenAI-compatible embedder against the embeddings stand-in: the wire format, batching, order by
// index, the content-hash cache (in memory and in SQLite), retries and their delays (recorded by an
// injected sleep, never measured), the dimension rule, and failures told in words with the URL and
// without the key: a server that is down, a timeout, an abort, an answer that is not JSON.
import t, { type Test } from 'tap';
import { contentHash, sqliteEmbeddingCache, type EmbeddingCache } from '../src/memory/embedders/cache.js';
import { KEYWORD_ONLY } from '../src/memory/embedders/none.js';
import { openaiEmbedder, type OpenAIEmbedderOptions } from '../src/memory/embedders/openai.js';
import { EmbedderError } from '../src/memory/types.js';
import { openDatabase } from '../src/store/db.js';
import * as E from './support/embeddings-server.js';

const KEY = 'sk-proj-embeddingsTestKey0123456789abcdef';

const waits: number[] = [];
t.beforeEach(() => void (waits.length = 0));
/** random() = 1: every backoff is its full step, so the delays are exact. */
const backoff = { baseMs: 100, maxMs: 5000, sleep: async (ms: number) => void waits.push(ms), random: () => 1 };

async function server(t: Test, step?: E.Step<E.EmbeddingsStep>, opts?: E.EmbeddingsServerOptions): Promise<E.EmbeddingsServer> {
  const s = await E.startEmbeddingsServer(step, opts);
  t.teardown(() => s.close());
  return s;
}

const embedder = (url: string, o: Partial<OpenAIEmbedderOptions> = {}) => openaiEmbedder({ baseUrl: `${url}/v1`, model: 'nomic-embed-text', backoff, timeoutMs: 5000, ...o });

async function failure(p: Promise<unknown>): Promise<EmbedderError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof EmbedderError)) throw new Error(`expected an EmbedderError, got ${String(e)}`);
  return e;
}

const texts = (n: number, prefix = 'note') => Array.from({ length: n }, (_, i) => `${prefix} ${i}: the relay on GPIO ${i % 27} drives the pump`);
const plain = (v: Float32Array | undefined) => Array.from(v ?? []);
const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

function mapCache(): EmbeddingCache & { m: Map<string, Float32Array> } {
  const m = new Map<string, Float32Array>();
  return { m, get: (e, h) => m.get(`${e} ${h}`), set: (e, h, v) => void m.set(`${e} ${h}`, v) };
}

t.test('the wire format, unit vectors in order, and the dimension learned from the first answer', async (t) => {
  const s = await server(t);
  const emb = embedder(s.url, { apiKey: KEY });
  t.equal(emb.id, `openai:nomic-embed-text@${new URL(s.url).host}`);
  t.equal(emb.dimensions, 0, 'not configured: 0 before the first answer');
  const input = ['the pump runs at dawn', 'Ada prefers Celsius', 'the sensor is on bus 1'];
  const out = await emb.embed(input);
  t.equal(emb.dimensions, 8, 'learned from the answer');
  t.equal(out.length, 3);
  input.forEach((text, i) => {
    t.same(plain(out[i]), plain(E.unitVectorFor(text, 8)), `vector ${i} is the text's, normalised`);
    t.ok(Math.abs(norm(out[i]!) - 1) < 1e-6, `vector ${i} has unit length`);
  });
  const [req] = s.requests;
  t.equal(req?.path, '/v1/embeddings');
  t.equal(req?.headers.authorization, `Bearer ${KEY}`);
  t.same(req?.body, { model: 'nomic-embed-text', input, encoding_format: 'float' }, 'no dimensions field when none is configured');
  t.same(await emb.embed([]), [], 'nothing to embed: no request');
  t.equal(s.requests.length, 1);
});

t.test('configured dimensions: sent, part of the id, known before any call', async (t) => {
  const s = await server(t);
  const emb = embedder(s.url, { dimensions: 16 });
  t.equal(emb.id, `openai:nomic-embed-text@${new URL(s.url).host}:16`);
  t.equal(emb.dimensions, 16);
  const [v] = await emb.embed(['hello']);
  t.equal(v?.length, 16, 'the stand-in shortens to the requested dimensions, as text-embedding-3 does');
  t.equal(s.requests[0]?.body.dimensions, 16);
  t.notOk('authorization' in (s.requests[0]?.headers ?? {}), 'no key, no Authorization header (local servers)');
});

t.test('150 texts go in 3 requests of at most 64, and come back in order', async (t) => {
  const s = await server(t);
  const input = texts(150);
  const out = await embedder(s.url).embed(input);
  t.same(s.inputs().map((i) => i.length), [64, 64, 22]);
  t.same(s.inputs().flat(), input, 'every text sent once, in order');
  t.ok(input.every((text, i) => plain(out[i]).join() === plain(E.unitVectorFor(text, 8)).join()), 'each vector is its own text\'s');

  const s2 = await server(t);
  await embedder(s2.url, { batchSize: 10 }).embed(texts(25));
  t.same(s2.inputs().map((i) => i.length), [10, 10, 5], 'batchSize is honoured');
});

t.test('data is put in order by index, whatever order the server sends it in', async (t) => {
  const s = await server(t, E.vectors({ shuffle: true }));
  const input = texts(5);
  const out = await embedder(s.url).embed(input);
  t.same(out.map(plain), input.map((text) => plain(E.unitVectorFor(text, 8))));
});

t.test('cached texts are not sent; a batch all cached makes no request; duplicates go once', async (t) => {
  const s = await server(t);
  const cache = mapCache();
  const emb = embedder(s.url, { cache, batchSize: 4 });
  const first = await emb.embed(['a', 'b', 'c']);
  t.equal(s.requests.length, 1);
  t.equal(cache.m.size, 3);
  t.ok(cache.m.has(`${emb.id} ${contentHash('a')}`), 'keyed by the embedder id and the SHA-256 of the text');

  const again = await emb.embed(['c', 'a', 'b']);
  t.equal(s.requests.length, 1, 'all cached: no request');
  t.same(again.map(plain), [first[2], first[0], first[1]].map(plain));

  await emb.embed(['a', 'new one', 'b', 'new one', 'another']);
  t.same(s.inputs()[1], ['new one', 'another'], 'only the uncached texts, each once');

  const out = await emb.embed(['x', 'x']);
  t.same(plain(out[0]), plain(out[1]));
  t.not(out[0], out[1], 'each position gets its own array');

  const fresh = embedder(s.url, { cache });
  t.equal(fresh.dimensions, 0);
  await fresh.embed(['a']);
  t.equal(fresh.dimensions, 8, 'a cache hit tells the dimension too');
});

t.test('the SQLite cache: vectors survive a new embedder, per embedder id', async (t) => {
  const db = openDatabase(':memory:', { migrations: [] });
  t.teardown(() => db.close());
  // The table of migration 6, as the memory owner specified it.
  db.exec(`create table embedding_cache (embedder text, hash text, vector blob, dims integer, created_at integer, primary key (embedder, hash))`);
  const s = await server(t);
  const input = texts(70);
  const out = await embedder(s.url, { cache: sqliteEmbeddingCache(db) }).embed(input);
  t.equal(s.requests.length, 2);
  const rows = db.prepare('select embedder, hash, dims, length(vector) as bytes from embedding_cache order by rowid').all() as { embedder: string; hash: string; dims: number; bytes: number }[];
  t.equal(rows.length, 70);
  t.match(rows[0], { hash: contentHash(input[0]!), dims: 8, bytes: 32 });

  const later = embedder(s.url, { cache: sqliteEmbeddingCache(db) });
  const back = await later.embed(input);
  t.equal(s.requests.length, 2, 'a new process with the same cache asks nothing');
  t.same(back.map(plain), out.map(plain), 'the cached vectors are the ones embedded');

  await embedder(s.url, { cache: sqliteEmbeddingCache(db), dimensions: 4 }).embed(input.slice(0, 3));
  t.equal(s.requests.length, 3, 'another embedder id (with :4) does not use these vectors');

  // A cached vector of another dimension (the model changed under the same name) is a miss, not an answer.
  db.prepare('update embedding_cache set vector = ?, dims = 2 where hash = ?').run(Buffer.alloc(8), contentHash(input[0]!));
  const mixed = await later.embed(input.slice(0, 2));
  t.same(s.inputs().at(-1), [input[0]], 'only the odd one is embedded again');
  t.equal(mixed[0]?.length, 8);
  t.equal((db.prepare('select dims from embedding_cache where hash = ? and embedder = ?').get(contentHash(input[0]!), later.id) as { dims: number }).dims, 8, 'and overwritten');
});

t.test('429 and 5xx are retried: retry-after is honoured, otherwise backoff doubles', async (t) => {
  const s = await server(t);
  s.enqueue(E.errorReply(429, { message: 'slow down', retryAfter: 2 }), E.errorReply(500, { message: 'boom' }));
  const [v] = await embedder(s.url).embed(['pump']);
  t.same(plain(v), plain(E.unitVectorFor('pump', 8)));
  t.same(waits, [2000, 200], 'retry-after: 2 → 2000 ms; then the second step of the backoff (base 100 doubled)');
  t.equal(s.requests.length, 3);

  waits.length = 0;
  s.enqueue(E.errorReply(503), E.errorReply(502, { retryAfterMs: 1500 }));
  await embedder(s.url).embed(['valve']);
  t.same(waits, [100, 1500], 'first step is the base; retry-after-ms is honoured too');

  waits.length = 0;
  s.enqueue(E.drop);
  await embedder(s.url).embed(['fan']);
  t.same(waits, [100], 'a dropped connection is retried');

  waits.length = 0;
  s.enqueue(E.errorReply(500, { message: 'model runner crashed', bare: true }), E.errorReply(500), E.errorReply(500));
  const e = await failure(embedder(s.url, { retries: 2 }).embed(['x']));
  t.match(e.message, `the embedding server at ${s.url}/v1/embeddings answered 500: stand-in error 500 (gave up after 3 attempts)`);
  t.equal(e.retryable, true);
  t.equal(s.requests.length, 3 + 3 + 2 + 3);

  s.enqueue(E.errorReply(400, { message: "'$.input' is invalid" }));
  const bad = await failure(embedder(s.url).embed(['y']));
  t.equal(bad.message, `the embedding server at ${s.url}/v1/embeddings answered 400: '$.input' is invalid`);
  t.equal(bad.retryable, false);
  t.equal(s.requests.length, 12, 'a 400 is not retried');
});

t.test('a retry-after longer than the backoff limit is not waited for', async (t) => {
  const s = await server(t);
  s.enqueue(E.errorReply(429, { retryAfter: 3600 }));
  const e = await failure(embedder(s.url).embed(['x']));
  t.match(e.message, /answered 429: .* \(asked to wait 3600 s\)$/);
  t.equal(e.retryable, true);
  t.same(waits, []);
  t.equal(s.requests.length, 1);
});

t.test('every answer must have the one dimension', async (t) => {
  const s = await server(t);
  const emb = embedder(s.url);
  await emb.embed(['first']);
  s.enqueue(E.wrongDimension(16));
  const e = await failure(emb.embed(['second']));
  t.equal(e.message, 'the embedding server returned 16-dimension vectors, expected 8 (memory.openai.dimensions / the model changed?)');
  t.equal(e.retryable, false);
  t.equal(emb.dimensions, 8, 'the wrong answer does not change the dimension');

  const configured = embedder(s.url, { dimensions: 16 });
  s.enqueue(E.wrongDimension(8));
  t.equal((await failure(configured.embed(['a']))).message, 'the embedding server returned 8-dimension vectors, expected 16 (memory.openai.dimensions / the model changed?)', 'a configured dimension is checked on the first answer');

  const fresh = embedder(s.url);
  s.enqueue(E.vectors({ oddOne: { at: 1, dims: 5 } }));
  t.match((await failure(fresh.embed(['a', 'b', 'c']))).message, 'returned 5-dimension vectors, expected 8', 'an answer that disagrees with itself');
  t.equal(fresh.dimensions, 0, 'and learns nothing from it');
});

t.test('a server that is down: the URL and the reason, never the key', async (t) => {
  const url = await E.refusedUrl();
  const e = await failure(embedder(url, { apiKey: KEY }).embed(['x']));
  t.match(e.message, `the embedding server at ${url}/v1/embeddings is down or unreachable (ECONNREFUSED)`);
  t.match(e.message, /gave up after 3 attempts/);
  t.notMatch(e.message, KEY);
  t.equal(e.retryable, true);
  t.same(waits, [100, 200], 'retried with backoff first');
});

t.test('a key echoed back by the server is redacted', async (t) => {
  const s = await server(t, E.vectors(), { apiKey: 'the-right-key' });
  const wrong = 'local-key-that-is-wrong';
  const e = await failure(embedder(s.url, { apiKey: wrong }).embed(['x']));
  t.match(e.message, /answered 401: Incorrect API key provided: \[redacted\]\. \(memory\.openai\.apiKey\?\)/);
  t.notMatch(e.message, wrong);
  t.equal(e.retryable, false);
  t.equal(s.requests.length, 1, 'a 401 is not retried');
});

t.test('an answer that is not JSON', async (t) => {
  const s = await server(t, E.garbage);
  const e = await failure(embedder(s.url).embed(['x']));
  t.match(e.message, `the embedding server at ${s.url}/v1/embeddings answered with something that is not JSON: <html>`);
  t.equal(e.retryable, true, 'retryable later');
  t.equal(s.requests.length, 1, 'but not retried at once');
});

t.test('a wrong base URL says so', async (t) => {
  const s = await server(t);
  const e = await failure(openaiEmbedder({ baseUrl: s.url, model: 'm', backoff }).embed(['x']));
  t.match(e.message, /answered 404: .*memory\.openai\.baseUrl should end in \/v1/);
});

t.test('a request that hangs times out, in words, and is not retried', async (t) => {
  const s = await server(t, E.hang);
  const started = Date.now();
  const e = await failure(embedder(s.url, { timeoutMs: 200 }).embed(['x']));
  t.equal(e.message, `the embedding server at ${s.url}/v1/embeddings did not answer within 200 ms (memory.openai.timeoutMs)`);
  t.equal(e.retryable, true);
  t.ok(Date.now() - started < 3000, 'the time limit is kept');
  t.equal(s.requests.length, 1);
});

t.test('the caller\'s abort: during a request, during the backoff, and before anything', async (t) => {
  const s = await server(t, E.hang);
  const ac = new AbortController();
  const p = failure(embedder(s.url).embed(['x'], ac.signal));
  await s.received(1);
  ac.abort();
  const e = await p;
  t.equal(e.message, `the request to the embedding server at ${s.url}/v1/embeddings was aborted`);
  t.equal(e.retryable, false);

  // The real sleep this time: the abort has to cut the wait short.
  s.enqueue(E.errorReply(429, { retryAfter: 4 }));
  const ac2 = new AbortController();
  const started = Date.now();
  const p2 = failure(embedder(s.url, { backoff: { maxMs: 10_000 } }).embed(['y'], ac2.signal));
  await s.received(2);
  setTimeout(() => ac2.abort(), 50);
  t.match((await p2).message, 'was aborted');
  t.ok(Date.now() - started < 3000, 'the backoff wait is cut short');
  t.equal(s.requests.length, 2, 'no retry after the abort');

  const e3 = await failure(embedder(s.url).embed(['z'], AbortSignal.abort()));
  t.match(e3.message, 'was aborted');
  t.equal(s.requests.length, 2, 'an aborted signal sends nothing');
});

t.test('options are checked when the embedder is made', async (t) => {
  t.throws(() => openaiEmbedder({ baseUrl: 'not a url', model: 'm' }), new EmbedderError('memory.openai.baseUrl is not a URL: "not a url"'));
  t.throws(() => openaiEmbedder({ baseUrl: 'http://u:secret@127.0.0.1/v1', model: 'm' }), /must not hold a user name or password/);
  t.throws(() => openaiEmbedder({ baseUrl: 'http://127.0.0.1/v1', model: 'm', batchSize: 0 }), /batchSize must be an integer of at least 1/);
  t.throws(() => openaiEmbedder({ baseUrl: 'http://127.0.0.1/v1', model: 'm', dimensions: 1.5 }), /dimensions must be an integer/);
  t.equal(openaiEmbedder({ baseUrl: 'https://api.openai.com/v1/', model: 'text-embedding-3-small' }).id, 'openai:text-embedding-3-small@api.openai.com', 'a trailing slash does not matter');
  t.equal(KEYWORD_ONLY, 'none');
});
