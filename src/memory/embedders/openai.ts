// Embeddings from an OpenAI-compatible server: POST {baseUrl}/embeddings, which Ollama, llama.cpp's
// server, vLLM and OpenAI itself all speak. Node's built-in fetch is used, not undici: undici is a
// lazy chunk of its own (src/lazy-chunk.ts), and loading it with the memory chunk would cost more than
// it gives; embedding requests are plain JSON in and out, so nothing here needs more than fetch.
//
// Texts already in the cache (by SHA-256) are not sent; the rest go in batches, one batch at a time
// (a board's local server is busy enough with one), each request with its own time limit and with
// retries on 429, 5xx and network errors. Every vector handed back is of unit length and of the one
// dimension this embedder has (configured, or learned from the first answer).
import { startDeadline } from '../../net/deadline.js';
import { errorBodyMessage, errorCode, retryAfterMs, retryableStatus, rootMessage, shortMessage } from '../../net/errors.js';
import { backoffMs, sleep as realSleep, type Sleep } from '../../net/retry.js';
import { createRedactor, type Redactor } from '../../config/redact.js';
import { EmbedderError, type Embedder } from '../types.js';
import { contentHash, type EmbeddingCache } from './cache.js';
import { httpFetch } from '../../net/fetch.js';
import { isObject as isRecord } from '../../is-object.js';

export interface OpenAIEmbedderOptions {
  /** including /v1: http://127.0.0.1:11434/v1 (Ollama), http://127.0.0.1:8080/v1 (llama.cpp), https://api.openai.com/v1 */
  baseUrl: string;
  model: string;
  /** local servers usually need none */
  apiKey?: string;
  /**
   * Sent as `dimensions` (text-embedding-3-* shorten their vectors to it) and required of every
   * answer. Unset: learned from the first answer.
   */
  dimensions?: number;
  /** texts per request; default 64 */
  batchSize?: number;
  /** one request, answer body included; default 60 000 ms */
  timeoutMs?: number;
  /** retries of one request after its first attempt, on 429, 5xx and network errors; default 2 */
  retries?: number;
  cache?: EmbeddingCache;
  /**
   * The backoff between retries: baseMs (default 500) doubling up to maxMs (default 30 000, also the
   * longest retry-after waited for). Tests inject sleep and random to record delays, not wait them.
   */
  backoff?: { baseMs?: number; maxMs?: number; sleep?: Sleep; random?: () => number };
}

export const EMBEDDER_DEFAULTS = { batchSize: 64, timeoutMs: 60_000, retries: 2, backoffBaseMs: 500, backoffMaxMs: 30_000 } as const;

/** An error page may be anything (a proxy's HTML); only its start is read. */
const MAX_ERROR_BODY = 16 * 1024;
/**
 * 64 texts × 3072 dimensions as JSON is about 5 MB; ten times that is still an answer, more is a
 * server gone wrong, and reading it whole could take a 512 MB board down with it.
 */
const MAX_ANSWER_BODY = 64 * 1024 * 1024;

/** What a failed attempt leaves: a final error, or one that a retry may cure (after waitMs, when the server said). */
type Attempt = { vectors: Float32Array[] } | { transient: EmbedderError; waitMs?: number };

function withCause(e: EmbedderError, cause: unknown): EmbedderError {
  if (cause !== undefined) e.cause = cause;
  return e;
}

function positiveInt(name: string, v: number | undefined, dflt: number, min = 1): number {
  if (v === undefined) return dflt;
  if (!Number.isInteger(v) || v < min) throw new EmbedderError(`memory.openai.${name} must be an integer of at least ${min}, not ${v}`);
  return v;
}

/** The URL as shown in errors: no query (a proxy's key may ride in it). */
function shownUrl(u: URL): string {
  const c = new URL(u.href);
  c.search = '';
  c.hash = '';
  return c.href;
}

async function readCapped(res: Response, max: number): Promise<{ text: string; whole: boolean }> {
  if (!res.body) return { text: '', whole: true };
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    size += value.length;
    if (size > max) {
      // Cancelling ends the transfer; the rest of an oversized body is never read.
      await reader.cancel().catch(() => undefined);
      return { text: Buffer.concat(parts).toString('utf8').slice(0, max), whole: false };
    }
  }
  return { text: Buffer.concat(parts).toString('utf8'), whole: true };
}

/**
 * A vector from the wire: a list of numbers, or base64 of little-endian float32 (what a server
 * sends when it ignores encoding_format: "float"). Normalised to unit length in double precision;
 * undefined when it is not a vector or holds a non-finite value.
 */
function unitVector(wire: unknown): Float32Array | undefined {
  let values: ArrayLike<number>;
  if (Array.isArray(wire)) {
    if (!wire.every((x): x is number => typeof x === 'number')) return undefined;
    values = wire;
  } else if (typeof wire === 'string') {
    const bytes = Buffer.from(wire, 'base64');
    if (bytes.length === 0 || bytes.length % 4 !== 0) return undefined;
    const f = new Float32Array(bytes.length / 4);
    new Uint8Array(f.buffer).set(bytes);
    values = f;
  } else {
    return undefined;
  }
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    const x = values[i]!;
    if (!Number.isFinite(x)) return undefined;
    sum += x * x;
  }
  const out = new Float32Array(values.length);
  // A zero vector has no direction to scale to; it stays zero and scores 0 against everything,
  // which is the honest result for whatever the server meant by it.
  const k = sum > 0 ? 1 / Math.sqrt(sum) : 0;
  for (let i = 0; i < values.length; i++) out[i] = values[i]! * k;
  return out;
}

export function openaiEmbedder(o: OpenAIEmbedderOptions): Embedder {
  let base: URL;
  try {
    base = new URL(o.baseUrl.replace(/\/+$/, ''));
  } catch {
    throw new EmbedderError(`memory.openai.baseUrl is not a URL: ${JSON.stringify(o.baseUrl)}`);
  }
  // fetch refuses URLs with user:password, and the message would show them; keys go in apiKey.
  if (base.username || base.password) throw new EmbedderError('memory.openai.baseUrl must not hold a user name or password; put a key in memory.openai.apiKey');
  if (!o.model) throw new EmbedderError('memory.openai.model is empty');
  const configured = o.dimensions === undefined ? undefined : positiveInt('dimensions', o.dimensions, 0);
  const batchSize = positiveInt('batchSize', o.batchSize, EMBEDDER_DEFAULTS.batchSize);
  const timeoutMs = positiveInt('timeoutMs', o.timeoutMs, EMBEDDER_DEFAULTS.timeoutMs);
  const retries = positiveInt('retries', o.retries, EMBEDDER_DEFAULTS.retries, 0);
  const baseMs = o.backoff?.baseMs ?? EMBEDDER_DEFAULTS.backoffBaseMs;
  const maxMs = o.backoff?.maxMs ?? EMBEDDER_DEFAULTS.backoffMaxMs;
  const wait = o.backoff?.sleep ?? realSleep;
  const random = o.backoff?.random;

  const target = new URL(base.href);
  // On the path, so a query some proxies want (?api-version=…) stays where it was.
  target.pathname = `${target.pathname.replace(/\/+$/, '')}/embeddings`;
  const url = target.href;
  const shown = shownUrl(target);
  const id = `openai:${o.model}@${base.host}${configured ? `:${configured}` : ''}`;
  // Servers and proxies echo keys back in 401 bodies.
  const scrub: Redactor = createRedactor(o.apiKey ? [o.apiKey] : []);
  const say = (text: string) => shortMessage(text, scrub);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}),
  };
  /** the configured dimension, or the one learned from the first answer (or cache hit); 0 before */
  let dims = configured ?? 0;

  const aborted = (cause?: unknown) => withCause(new EmbedderError(`the request to the embedding server at ${shown} was aborted`), cause);
  const unreadable = (what: string) => new EmbedderError(`the embedding server at ${shown} gave an answer pinclaw cannot read: ${what}`);
  const wrongDims = (got: number, expected: number) =>
    new EmbedderError(`the embedding server returned ${got}-dimension vectors, expected ${expected} (memory.openai.dimensions / the model changed?)`);

  function cacheGet(hash: string): Float32Array | undefined {
    if (!o.cache) return undefined;
    try {
      return o.cache.get(id, hash);
    } catch (err) {
      throw withCause(new EmbedderError(`the embedding cache cannot be read: ${say(rootMessage(err))}`), err);
    }
  }

  function cacheSet(hash: string, v: Float32Array): void {
    if (!o.cache) return;
    try {
      o.cache.set(id, hash, v);
    } catch (err) {
      throw withCause(new EmbedderError(`the embedding cache cannot be written: ${say(rootMessage(err))}`), err);
    }
  }

  /** Vectors of one answer, by index, checked against each other and the known dimension. */
  function vectorsOf(body: unknown, n: number): Float32Array[] {
    const data = isRecord(body) ? body.data : undefined;
    if (!Array.isArray(data)) throw unreadable('no "data" list');
    if (data.length !== n) throw unreadable(`${data.length} vectors for ${n} texts`);
    const out: (Float32Array | undefined)[] = new Array<Float32Array | undefined>(n).fill(undefined);
    data.forEach((item: unknown, pos) => {
      if (!isRecord(item)) throw unreadable(`entry ${pos} is not an object`);
      // The order of `data` is not promised; `index` is. A server that leaves it out answers in order.
      const index = item.index === undefined ? pos : item.index;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= n || out[index]) {
        throw unreadable(`index ${JSON.stringify(index)} is out of range or repeated`);
      }
      const v = unitVector(item.embedding);
      if (!v || v.length === 0) throw unreadable(`the embedding at index ${index} is not a list of numbers`);
      out[index] = v;
    });
    const vectors = out.filter((v): v is Float32Array => v !== undefined);
    const expected = dims || vectors[0]!.length;
    const odd = vectors.find((v) => v.length !== expected);
    if (odd) throw wrongDims(odd.length, expected);
    // Learned only from a whole, consistent answer: one bad answer must not fix a wrong dimension.
    dims = expected;
    return vectors;
  }

  async function once(texts: string[], signal: AbortSignal | undefined): Promise<Attempt> {
    const body = JSON.stringify({ model: o.model, input: texts, encoding_format: 'float', ...(configured ? { dimensions: configured } : {}) });
    const deadline = startDeadline(timeoutMs, signal);
    // Fetch failures before and during the body: the caller's abort and the deadline are final
    // (another attempt would hang as long again), anything else is the network and worth a retry.
    const failed = (err: unknown): Attempt => {
      if (deadline.expired()) {
        throw withCause(new EmbedderError(`the embedding server at ${shown} did not answer within ${timeoutMs} ms (memory.openai.timeoutMs)`, true), err);
      }
      if (signal?.aborted) throw aborted(err);
      const code = errorCode(err);
      return { transient: withCause(new EmbedderError(`the embedding server at ${shown} is down or unreachable${code ? ` (${code})` : ''}: ${say(rootMessage(err))}`, true), err) };
    };
    try {
      let res: Response;
      try {
        // Redirects are not followed: fetch would turn the POST into a GET, and a 301 means the base URL is wrong.
        res = await httpFetch(url, { method: 'POST', headers, body, signal: deadline.signal, redirect: 'manual' });
      } catch (err) {
        return failed(err);
      }
      if (res.status < 200 || res.status >= 300) {
        let message: string;
        try {
          message = say(errorBodyMessage((await readCapped(res, MAX_ERROR_BODY)).text));
        } catch (err) {
          return failed(err);
        }
        const what = `the embedding server at ${shown} answered ${res.status}${message ? `: ${message}` : ''}`;
        if (retryableStatus(res.status)) return { transient: new EmbedderError(what, true), waitMs: retryAfterMs((n) => res.headers.get(n)) };
        if (res.status >= 300 && res.status < 400) throw new EmbedderError(`${what} (a redirect to ${say(res.headers.get('location') ?? 'nowhere')}: is memory.openai.baseUrl right?)`);
        if (res.status === 401 || res.status === 403) throw new EmbedderError(`${what} (memory.openai.apiKey?)`);
        if (res.status === 404) throw new EmbedderError(`${what} (memory.openai.baseUrl should end in /v1; is model "${o.model}" on the server?)`);
        throw new EmbedderError(what);
      }
      let answer: { text: string; whole: boolean };
      try {
        answer = await readCapped(res, MAX_ANSWER_BODY);
      } catch (err) {
        return failed(err);
      }
      if (!answer.whole) throw unreadable(`the answer is larger than ${MAX_ANSWER_BODY / 1024 / 1024} MiB`);
      let parsed: unknown;
      try {
        parsed = JSON.parse(answer.text);
      } catch (err) {
        // Not retried here (a proxy's or captive portal's page comes back the same at once), but
        // retryable for the caller: that kind of trouble passes.
        const start = say(answer.text.slice(0, 80)) || 'an empty body';
        throw withCause(new EmbedderError(`the embedding server at ${shown} answered with something that is not JSON: ${start}`, true), err);
      }
      return { vectors: vectorsOf(parsed, texts.length) };
    } finally {
      deadline.clear();
    }
  }

  async function request(texts: string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    for (let attempt = 1; ; attempt++) {
      const r = await once(texts, signal);
      if ('vectors' in r) return r.vectors;
      const e = r.transient;
      if (attempt > retries) throw attempt > 1 ? withCause(new EmbedderError(`${e.message} (gave up after ${attempt} attempts)`, true), e) : e;
      if (r.waitMs !== undefined && r.waitMs > maxMs) {
        // Waiting minutes inside one embed() would hold up whatever is waiting for it; the caller
        // (a background indexer, a search that falls back to keywords) can decide to come back later.
        throw withCause(new EmbedderError(`${e.message} (asked to wait ${Math.ceil(r.waitMs / 1000)} s)`, true), e);
      }
      try {
        await wait(r.waitMs ?? backoffMs(attempt, { baseMs, maxMs, random }), signal);
      } catch (err) {
        throw aborted(err);
      }
    }
  }

  return {
    id,
    /** The configured dimension; unset, 0 until the first answer (or cache hit) tells it, then that one. */
    get dimensions() {
      return dims;
    },
    async embed(texts, signal) {
      if (signal?.aborted) throw aborted(signal.reason);
      const out: (Float32Array | undefined)[] = new Array<Float32Array | undefined>(texts.length).fill(undefined);
      // The same text twice is sent (and cached) once; each position still gets its own array, so a
      // caller that scales one in place does not change another.
      const groups = new Map<string, { text: string; positions: number[] }>();
      texts.forEach((text, i) => {
        const hash = contentHash(text);
        const g = groups.get(hash);
        if (g) g.positions.push(i);
        else groups.set(hash, { text, positions: [i] });
      });
      const place = (positions: number[], v: Float32Array) => positions.forEach((p, k) => (out[p] = k === 0 ? v : v.slice()));

      const todo: { hash: string; text: string; positions: number[] }[] = [];
      for (const [hash, g] of groups) {
        const hit = cacheGet(hash);
        // A cached vector of another dimension is from before the model changed: embedded again, and overwritten.
        if (hit && hit.length > 0 && (dims === 0 || hit.length === dims)) {
          dims = hit.length;
          place(g.positions, hit);
        } else {
          todo.push({ hash, ...g });
        }
      }

      for (let i = 0; i < todo.length; i += batchSize) {
        if (signal?.aborted) throw aborted(signal.reason);
        const batch = todo.slice(i, i + batchSize);
        const vectors = await request(batch.map((b) => b.text), signal);
        batch.forEach((b, k) => {
          const v = vectors[k]!;
          // Cached batch by batch: when a later batch fails, the work of the earlier ones is kept.
          cacheSet(b.hash, v);
          place(b.positions, v);
        });
      }
      return out.map((v) => {
        if (!v) throw new Error('openaiEmbedder: a text was left without a vector'); // a bug here, not the server's
        return v;
      });
    },
  };
}
