// fetch() over node:http and node:https, for the requests a gateway makes for as long as it runs (the
// model's API, the chat channels). Node's own fetch is undici's, whose HTTP parser is llhttp compiled
// to WebAssembly: its first call compiles and instantiates that module and loads undici's 760 KB of
// source, and none of it is ever released. Measured on Node 24.21 with the executable's V8 flags, after
// 20 calls, V8's low-memory collection and malloc_trim: +1.9 to +2.1 MiB RssAnon that a node:http
// request does not cost, since node:http parses with the llhttp built into Node's binary; a gateway's
// VmRSS after its turns and the idle release fell by about 3 MiB (docs/performance.md, "Memory after
// many turns").
//
// The transport is ours, and so are the Headers and the Response (src/net/fetch-headers.ts,
// src/net/node-response.ts): undici's classes would load undici's whole bundle at the first turn. They
// are the standard's, so callers and libraries (the Anthropic SDK takes this as its `fetch`) see the
// objects they expect. A body other than a string or bytes is encoded by the platform's Request, which
// does load undici (Telegram's voice replies and the speech-to-text upload send a form). What differs
// from undici's fetch:
// no cookies, cache modes or CORS, which a server-side client does not use, and a request body is read
// whole before it is sent (so that a redirect can send it again): the bodies here are JSON and files of
// a few MB.
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { FetchHeaders } from './fetch-headers.js';
import { NodeResponse } from './node-response.js';

/** Statuses whose response has no body (Fetch standard, "null body status"); Response refuses one. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** The Fetch standard's limit, as undici's. */
const MAX_REDIRECTS = 20;

/**
 * undici's limits, so that a caller without a deadline of its own is not stuck for ever: 10 s to
 * connect, then 300 s at most without a byte from the server (its head, or its body later on).
 * Tests pass shorter ones.
 */
export interface FetchLimits {
  connectMs: number;
  idleMs: number;
}
const LIMITS: FetchLimits = { connectMs: 10_000, idleMs: 300_000 };

/**
 * How a request is made: its limits and, for a caller that has checked where a name leads (the web
 * tools' SSRF guard), the lookup that answers with that address, so the connection makes no second
 * lookup that a rebinding DNS server could answer differently.
 */
export interface FetchTransport extends FetchLimits {
  lookup?: LookupFunction;
}

/** An error with a code as Node's own carry, which src/net/errors.ts reads (ETIMEDOUT: the server was not reached). */
function coded(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** What undici's fetch rejects with when the request could not be made or its answer not read. */
function fetchFailed(cause: unknown): TypeError {
  return new TypeError('fetch failed', { cause });
}

/**
 * Reads the rest of an answer nobody will look at, so that its connection serves the next request. A
 * connection that fails meanwhile is nothing to anyone; without a listener its error would be thrown
 * as uncaught.
 */
function drain(body: Readable): void {
  body.on('error', () => undefined);
  body.resume();
}

function decoded(res: IncomingMessage): Readable {
  // Only a single coding is undone, as undici does for anything but a list of them.
  const coding = (res.headers['content-encoding'] ?? '').trim().toLowerCase();
  const decoder = coding === 'gzip' || coding === 'x-gzip' ? createGunzip() : coding === 'deflate' ? createInflate() : coding === 'br' ? createBrotliDecompress() : null;
  if (!decoder) return res;
  res.on('error', (err) => decoder.destroy(err));
  return res.pipe(decoder);
}

/** An answer whose body is a Node stream (requestOverNodeHttp). */
export interface NodeAnswer {
  status: number;
  statusText: string;
  /** made on first use: the Headers class checks each field, which a caller reading one does not need */
  readonly headers: Headers;
  /** one field as Node parsed it (repeated ones joined with ", ") */
  header(name: string): string | undefined;
  /** decoded; null for a null-body status and for HEAD */
  body: Readable | null;
  /** reads the rest of the body unseen, so that the connection serves the next request (drain) */
  drain(): void;
  /** stops reading where it is: the connection is closed, not reused (a body cut at a size cap) */
  destroy(): void;
  /** where the request ended, after redirects */
  url: string;
  redirected: boolean;
}

function answerOf(res: IncomingMessage, url: string, redirected: boolean, method: string): NodeAnswer {
  const status = res.statusCode ?? 0;
  let headers: Headers | undefined;
  let body: Readable | null = null;
  if (NULL_BODY.has(status) || method === 'HEAD') drain(res);
  else body = decoded(res);
  return {
    status,
    statusText: res.statusMessage ?? '',
    get headers() {
      if (!headers) {
        headers = new FetchHeaders();
        // rawHeaders keeps repeated fields (set-cookie, link) as separate values.
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
      }
      return headers;
    },
    header(name) {
      const v = res.headers[name.toLowerCase()];
      return Array.isArray(v) ? v.join(', ') : v;
    },
    body,
    drain: () => drain(body ?? res),
    destroy() {
      res.destroy();
      if (body !== res) body?.destroy();
    },
    url,
    redirected,
  };
}

interface Attempt {
  url: URL;
  method: string;
  /** names in lower case */
  headers: Record<string, string>;
  body: Buffer | null;
}

/** One exchange: resolves with the response head, the body still streaming; rejects as fetch does. */
function exchange(a: Attempt, signal: AbortSignal | undefined, limits: FetchTransport): Promise<{ res: IncomingMessage; req: ClientRequest }> {
  return new Promise((resolve, reject) => {
    const send = a.url.protocol === 'https:' ? httpsRequest : a.url.protocol === 'http:' ? httpRequest : null;
    if (!send) {
      reject(fetchFailed(new Error(`${a.url.protocol} URLs are not supported (only http: and https:)`)));
      return;
    }
    const headers = { ...a.headers };
    headers['accept'] ??= '*/*';
    headers['accept-encoding'] ??= 'gzip, deflate, br';
    headers['user-agent'] ??= 'node';
    if (a.body) headers['content-length'] = String(a.body.length);
    // Fetch standard: a bodiless POST or PUT says Content-Length: 0, other methods say nothing.
    else if (a.method === 'POST' || a.method === 'PUT') headers['content-length'] = '0';
    let req: ClientRequest;
    try {
      req = send(a.url, { method: a.method, headers, lookup: limits.lookup });
    } catch (err) {
      // A header name or value Node refuses (a control character): the caller's mistake, as Headers says it.
      reject(new TypeError(errorText(err), { cause: err }));
      return;
    }
    req.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(() => req.destroy(coded(`connect ETIMEDOUT ${a.url.host}: no answer in ${limits.connectMs} ms`, 'ETIMEDOUT')), limits.connectMs);
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    let response: IncomingMessage | undefined;
    req.setTimeout(limits.idleMs, () => {
      const err = coded(`the server sent nothing for ${limits.idleMs} ms`, 'UND_ERR_BODY_TIMEOUT');
      // Once the head is in, the body's reader is who must learn why.
      response?.destroy(err);
      req.destroy(err);
    });
    const onAbort = () => req.destroy(signal?.reason as Error);
    signal?.addEventListener('abort', onAbort, { once: true });
    req.once('response', (res) => {
      response = res;
      signal?.removeEventListener('abort', onAbort);
      resolve({ res, req });
    });
    req.once('error', (err) => {
      signal?.removeEventListener('abort', onAbort);
      reject(signal?.aborted ? signal.reason : fetchFailed(err));
    });
    req.end(a.body ?? undefined);
  });
}

/** Where a redirect sends the request next, and how (Fetch standard, "HTTP-redirect fetch"). */
function redirectedAttempt(a: Attempt, res: IncomingMessage): Attempt {
  const location = res.headers.location;
  if (!location) throw fetchFailed(new Error(`a ${res.statusCode} redirect without a Location header`));
  let url: URL;
  try {
    url = new URL(location, a.url);
  } catch (err) {
    throw fetchFailed(err);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw fetchFailed(new Error(`a redirect to ${url.protocol} URL`));
  const status = res.statusCode!;
  const headers = { ...a.headers };
  // Credentials are not sent to another origin.
  if (url.origin !== a.url.origin) {
    delete headers['authorization'];
    delete headers['cookie'];
    delete headers['proxy-authorization'];
  }
  if (status === 303 ? a.method !== 'HEAD' : (status === 301 || status === 302) && a.method === 'POST') {
    for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location']) delete headers[name];
    return { url, method: status === 303 ? 'GET' : a.method === 'POST' ? 'GET' : a.method, headers, body: null };
  }
  return { url, method: a.method, headers, body: a.body };
}

/**
 * The caller's headers with names in lower case, a name given twice joined with ", " as Headers does.
 * A plain object (what every caller here passes) is read as is, without a Headers instance and its
 * checks of each field; Node refuses a malformed name or value when the request is made (exchange),
 * which the caller sees as the TypeError Headers would throw.
 */
function headerRecord(init: HeadersInit | undefined): Record<string, string> {
  // No prototype: a field named __proto__ stays a field.
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  const add = (name: string, value: string) => {
    const key = name.toLowerCase();
    const v = String(value).trim();
    out[key] = key in out ? `${out[key]}, ${v}` : v;
  };
  if (!init) return out;
  // A Headers (ours, or undici's from a caller that made one) and an array of pairs are both
  // iterables of pairs. Not `instanceof Headers`: reading the global loads undici.
  if (typeof (init as Partial<Iterable<unknown>>)[Symbol.iterator] === 'function') for (const [name, value] of init as Iterable<[string, string]>) add(name, value);
  else for (const [name, value] of Object.entries(init)) add(name, value);
  return out;
}

interface Prepared {
  attempt: Attempt;
  redirect: RequestRedirect;
  signal: AbortSignal | undefined;
}

/** Methods the Fetch standard normalizes to upper case; others are sent as written. */
const NORMALIZED_METHODS = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT']);
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

/**
 * What the caller passed, as the Fetch standard normalizes it. A URL with a body of a string or bytes
 * (every caller of pinclaw's, the Anthropic SDK included) is taken as is: the platform's Request holds
 * any body as a web stream that would be read back whole, work a string or bytes do not need. Any
 * other body (FormData, Blob, URLSearchParams, a stream) or a Request goes through
 * Request, which encodes it and gives it its content type.
 */
async function prepare(input: string | URL | Request, init: RequestInit | undefined): Promise<Prepared> {
  const body = init?.body;
  if ((typeof input === 'string' || input instanceof URL) && (body == null || typeof body === 'string' || body instanceof Uint8Array)) {
    let url: URL;
    try {
      url = new URL(input);
    } catch (err) {
      throw new TypeError(`Failed to parse URL from ${String(input)}`, { cause: err });
    }
    if (url.username || url.password) throw new TypeError(`Request cannot be constructed from a URL that includes credentials: ${url.href}`);
    const written = init?.method ?? 'GET';
    const method = NORMALIZED_METHODS.has(written.toUpperCase()) ? written.toUpperCase() : written;
    if (FORBIDDEN_METHODS.has(method.toUpperCase())) throw new TypeError(`'${written}' HTTP method is unsupported.`);
    if (body != null && (method === 'GET' || method === 'HEAD')) throw new TypeError('Request with GET/HEAD method cannot have body.');
    const headers = headerRecord(init?.headers);
    if (typeof body === 'string') headers['content-type'] ??= 'text/plain;charset=UTF-8';
    const bytes = body == null ? null : typeof body === 'string' ? Buffer.from(body) : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    return { attempt: { url, method, headers, body: bytes }, redirect: init?.redirect ?? 'follow', signal: init?.signal ?? undefined };
  }
  const request = new Request(input, init);
  request.signal.throwIfAborted();
  const bytes = request.body ? Buffer.from(await request.arrayBuffer()) : null;
  return { attempt: { url: new URL(request.url), method: request.method, headers: headerRecord(request.headers), body: bytes }, redirect: request.redirect, signal: request.signal };
}

/**
 * The request, with its answer's body as a Node stream: for a caller that reads the stream itself (the
 * OpenAI-compatible provider's server-sent events), with no web stream between it and the socket
 * (docs/performance.md, "Memory after many turns", has bench:gateway's figures for each step).
 */
export async function requestOverNodeHttp(input: string | URL | Request, init?: RequestInit, limits: FetchTransport = LIMITS): Promise<NodeAnswer> {
  const { redirect, signal, ...first } = await prepare(input, init);
  let attempt = first.attempt;
  for (let redirects = 0; ; redirects++) {
    signal?.throwIfAborted();
    const { res, req } = await exchange(attempt, signal, limits);
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 599) {
      req.destroy();
      throw fetchFailed(new Error(`the server answered with status ${status}`));
    }
    if (REDIRECTS.has(status) && redirect !== 'manual') {
      drain(res);
      if (redirect === 'error') throw fetchFailed(new Error(`redirected (${status}) with redirect: 'error'`));
      if (redirects >= MAX_REDIRECTS) throw fetchFailed(new Error(`more than ${MAX_REDIRECTS} redirects`));
      attempt = redirectedAttempt(attempt, res);
      continue;
    }
    // From here the signal ends the body's stream instead: reading it fails with the signal's reason.
    if (signal && !signal.aborted) {
      const onAbort = () => {
        res.destroy(signal.reason as Error);
        req.destroy();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      res.once('close', () => signal.removeEventListener('abort', onAbort));
    }
    return answerOf(res, attempt.url.href, redirects > 0, attempt.method);
  }
}

export async function fetchOverNodeHttp(input: string | URL | Request, init?: RequestInit, limits: FetchLimits = LIMITS): Promise<Response> {
  const a = await requestOverNodeHttp(input, init, limits);
  return new NodeResponse(a, a.body);
}
