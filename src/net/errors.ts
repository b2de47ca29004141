// Classifying failures the same way for every network client (the providers, the OpenAI embedder):
// what is worth a retry, how long the server asked us to wait, and a message short enough for a chat
// notice with no credential in it (servers and proxies do echo keys back in 401 bodies).
import { createRedactor, type Redactor } from '../config/redact.js';
import { ProviderError } from '../agent/types.js';

/** 408, 409 (Anthropic's lock timeout), 429, 5xx and 529 (overloaded) are transient; other 4xx are not. */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

type HeaderGet = (name: string) => string | null | undefined;

/** retry-after-ms, or retry-after as seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(get: HeaderGet, now = Date.now()): number | undefined {
  const ms = get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Math.round(Number(ms));
  const v = get('retry-after');
  if (!v) return undefined;
  const secs = Number(v);
  if (Number.isFinite(secs) && secs >= 0) return Math.round(secs * 1000);
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

const MAX_MESSAGE = 200;

/** One line, at most MAX_MESSAGE characters, credentials replaced. */
export function shortMessage(text: string, scrub: Redactor): string {
  const line = scrub(text).replace(/\s+/g, ' ').trim();
  return line.length > MAX_MESSAGE ? `${line.slice(0, MAX_MESSAGE - 1)}…` : line;
}

/** Builds ProviderErrors of one provider; every message goes through its scrubber. */
export class ErrorFactory {
  private readonly scrub: Redactor;
  constructor(readonly providerId: string, secrets: readonly (string | undefined)[]) {
    this.scrub = createRedactor(secrets.filter((s): s is string => !!s));
  }

  message(text: string): string {
    return shortMessage(text, this.scrub);
  }

  http(status: number, message: string, headers: HeaderGet): ProviderError {
    return new ProviderError(this.providerId, `${status} ${this.message(message)}`.trim(), {
      status,
      retryable: retryableStatus(status),
      retryAfterMs: retryAfterMs(headers),
    });
  }

  /** A stream that broke off or did not parse: the answer was lost in transit, so asking again is sound. */
  badStream(what: string, cause?: unknown): ProviderError {
    return new ProviderError(this.providerId, `bad stream: ${this.message(what)}`, { retryable: true, cause });
  }

  /** A stream that broke a limit (an event over the size cap): the same request would break it again. */
  oversizedStream(what: string, cause?: unknown): ProviderError {
    return new ProviderError(this.providerId, `bad stream: ${this.message(what)}`, { retryable: false, cause });
  }

  /** An error the server reported inside a 200 stream; only server-side trouble is worth a retry. */
  inStream(type: string, message: string, retryable: boolean): ProviderError {
    return new ProviderError(this.providerId, `stream error: ${this.message(`${type}: ${message}`)}`, { retryable });
  }

  /** A request timeout counts as unreachable: a provider that does not answer in time is, for this turn, not there. */
  timeout(ms: number, cause?: unknown): ProviderError {
    return new ProviderError(this.providerId, `timed out after ${ms} ms`, { retryable: true, cause, unreachable: true });
  }

  /** The caller (turn cancelled, shutdown) aborted: never retried, never handed to a fallback. */
  aborted(cause?: unknown): ProviderError {
    return new ProviderError(this.providerId, 'request aborted', { retryable: false, cause });
  }

  network(err: unknown, what = 'connection failed'): ProviderError {
    const code = errorCode(err);
    const detail = rootMessage(err);
    return new ProviderError(this.providerId, this.message(`${what}${code ? ` (${code})` : ''}: ${detail}`), { retryable: true, cause: err, unreachable: unreachableCode(code) });
  }
}

/**
 * System error codes that say the server was not reached at all: the name did not resolve, nobody
 * listens, no route, the connection attempt timed out. A reset or a broken stream is not here: the
 * server was reached, and another request to it may well work.
 */
const UNREACHABLE_CODES = new Set([
  'ENOTFOUND', // no such name (NXDOMAIN)
  'EAI_AGAIN', // the resolver could not be asked (no network): the usual DNS failure offline
  'EAI_FAIL',
  'EAI_NODATA',
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT', // undici's connect timeout
]);

export function unreachableCode(code: string | undefined): boolean {
  return code !== undefined && UNREACHABLE_CODES.has(code);
}

/** The system error code (ECONNREFUSED, ECONNRESET, UND_ERR_SOCKET…) of an error or its causes. */
export function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** The innermost cause's message: "connect ECONNREFUSED 127.0.0.1:11434" rather than "fetch failed". */
export function rootMessage(err: unknown): string {
  let msg = err instanceof Error ? err.message : String(err);
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) if (e.message) msg = e.message;
  return msg;
}

/** The message of an error body: {"error":{"message"}} (OpenAI), {"error":"…"} (Ollama, llama.cpp), {"message"} (vLLM), else the text. */
export function errorBodyMessage(raw: string): string {
  try {
    const body = JSON.parse(raw) as { error?: string | { message?: unknown }; message?: unknown; detail?: unknown };
    const e = body.error;
    const msg = typeof e === 'string' ? e : typeof e?.message === 'string' ? e.message : body.message ?? body.detail;
    if (typeof msg === 'string' && msg) return msg;
  } catch {
    // not JSON: the text itself
  }
  return raw;
}
