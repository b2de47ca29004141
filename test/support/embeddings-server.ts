// A stand-in for an OpenAI-compatible embeddings API on 127.0.0.1: POST /v1/embeddings with
// {model, input, encoding_format, dimensions?} answered as {object: "list", data: [{object:
// "embedding", index, embedding}], model, usage}. Vectors are deterministic (seeded by the text's
// SHA-256) and deliberately not of unit length, so a client that forgets to normalise is caught.
// Faults are scripted per request like the chat stand-ins: errors with retry-after, a wrong
// dimension, a body that is not JSON, a hang, a dropped connection; `refusedUrl()` gives a port
// nothing listens on. Every request is recorded.
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { prng } from './prng.js';
import { startStandIn, type Recorded, type StandIn, type Step } from './stand-in.js';

export type { Recorded, StandIn, Step } from './stand-in.js';

export type EmbeddingsStep =
  | {
      kind: 'vectors';
      /** the length of every vector; default: the request's `dimensions`, else the server's */
      dims?: number;
      /** this one vector (by input position) gets another length: an answer that disagrees with itself */
      oddOne?: { at: number; dims: number };
      /** `data` in a scrambled order (the index still says which text each belongs to) */
      shuffle?: boolean;
    }
  | { kind: 'error'; status: number; message: string; retryAfter?: string; retryAfterMs?: string; bare?: boolean }
  /** a 200 whose body is not JSON (a proxy's page) */
  | { kind: 'garbage' }
  /** the request is read and never answered */
  | { kind: 'hang' }
  /** the connection is destroyed without an answer */
  | { kind: 'drop' };

export const vectors = (o: Omit<Extract<EmbeddingsStep, { kind: 'vectors' }>, 'kind'> = {}): EmbeddingsStep => ({ kind: 'vectors', ...o });
export const wrongDimension = (dims: number): EmbeddingsStep => ({ kind: 'vectors', dims });
export const errorReply = (status: number, o: { message?: string; retryAfter?: number | string; retryAfterMs?: number; bare?: boolean } = {}): EmbeddingsStep => ({
  kind: 'error',
  status,
  message: o.message ?? `stand-in error ${status}`,
  retryAfter: o.retryAfter === undefined ? undefined : String(o.retryAfter),
  retryAfterMs: o.retryAfterMs === undefined ? undefined : String(o.retryAfterMs),
  bare: o.bare,
});
export const garbage: EmbeddingsStep = { kind: 'garbage' };
export const hang: EmbeddingsStep = { kind: 'hang' };
export const drop: EmbeddingsStep = { kind: 'drop' };

/** The stand-in's raw vector for a text: values in [-1, 1), the same on every run and platform. */
export function vectorFor(text: string, dims: number): number[] {
  const next = prng(createHash('sha256').update(text).digest().readUInt32LE(0));
  return Array.from({ length: dims }, () => next() * 2 - 1);
}

/** What a correct client hands back for a text: vectorFor scaled to unit length, as float32. */
export function unitVectorFor(text: string, dims: number): Float32Array {
  const v = vectorFor(text, dims);
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return Float32Array.from(v, (x) => x / norm);
}

export interface EmbeddingsServerOptions {
  /** the vector length when neither the step nor the request's `dimensions` says; default 8 */
  dims?: number;
  /** when set, requests without `Authorization: Bearer <apiKey>` get a 401 that repeats the key sent (as some proxies do) */
  apiKey?: string;
}

export interface EmbeddingsServer extends StandIn<EmbeddingsStep> {
  /** the texts of each embeddings request, in the order received */
  inputs(): string[][];
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** `input` as OpenAI accepts it: one string or a list of strings (token arrays are not stood in for). */
function inputOf(req: Recorded): string[] | undefined {
  const input: unknown = req.body?.input;
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.every((x): x is string => typeof x === 'string')) return input;
  return undefined;
}

/** A fixed permutation that moves every element when there are two or more (reversed, then rotated). */
function scrambled<T>(xs: T[]): T[] {
  const r = [...xs].reverse();
  return r.length > 2 ? [...r.slice(1), r[0]!] : r;
}

function respond(res: ServerResponse, step: EmbeddingsStep, req: Recorded, serverDims: number): void {
  if (step.kind === 'hang') return;
  if (step.kind === 'drop') {
    res.socket?.destroy();
    return;
  }
  if (step.kind === 'garbage') {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html><body>Please sign in to the hotel Wi-Fi</body></html>');
    return;
  }
  if (step.kind === 'error') {
    const headers: Record<string, string> = { ...(step.retryAfter ? { 'retry-after': step.retryAfter } : {}), ...(step.retryAfterMs ? { 'retry-after-ms': step.retryAfterMs } : {}) };
    json(res, step.status, step.bare ? { error: step.message } : { error: { message: step.message, type: step.status === 429 ? 'rate_limit_exceeded' : 'server_error', param: null, code: null } }, headers);
    return;
  }
  const input = inputOf(req);
  if (!input || input.length === 0) {
    json(res, 400, { error: { message: "'$.input' is invalid", type: 'invalid_request_error', param: null, code: null } });
    return;
  }
  const requested: unknown = req.body?.dimensions;
  const dims = step.dims ?? (typeof requested === 'number' ? requested : serverDims);
  const data = input.map((text, index) => ({
    object: 'embedding',
    index,
    embedding: vectorFor(text, step.oddOne?.at === index ? step.oddOne.dims : dims),
  }));
  const tokens = input.reduce((n, t) => n + Math.max(1, Math.ceil(t.length / 4)), 0);
  json(res, 200, { object: 'list', data: step.shuffle ? scrambled(data) : data, model: req.body?.model ?? 'unknown', usage: { prompt_tokens: tokens, total_tokens: tokens } });
}

export async function startEmbeddingsServer(defaultStep: Step<EmbeddingsStep> = vectors(), opts: EmbeddingsServerOptions = {}): Promise<EmbeddingsServer> {
  const serverDims = opts.dims ?? 8;
  const s = await startStandIn<EmbeddingsStep>((res, step, req) => {
    if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      const sent = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      json(res, 401, { error: { message: `Incorrect API key provided: ${sent}.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
      return;
    }
    if (req.method !== 'POST' || req.path.split('?')[0] !== '/v1/embeddings') {
      json(res, 404, { error: { message: `no route ${req.method} ${req.path}`, type: 'invalid_request_error', param: null, code: null } });
      return;
    }
    respond(res, step, req, serverDims);
  }, defaultStep);
  return { ...s, inputs: () => s.requests.map((r) => inputOf(r) ?? []) };
}

/** A URL on 127.0.0.1 whose port was just bound and released: connecting to it is refused. */
export async function refusedUrl(): Promise<string> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return `http://127.0.0.1:${port}`;
}
