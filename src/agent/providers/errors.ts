// Classifying failures the same way for every provider: what is worth a retry, and how long the
// server asked us to wait.
import { ProviderError } from '../types.js';

/** 408, 409 (Anthropic's lock timeout), 429, 5xx and 529 (overloaded) are transient; other 4xx are not. */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** retry-after-ms, or retry-after as seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(get: (name: string) => string | null | undefined, now = Date.now()): number | undefined {
  const ms = Number(get('retry-after-ms'));
  if (get('retry-after-ms') && Number.isFinite(ms) && ms >= 0) return ms;
  const v = get('retry-after');
  if (!v) return undefined;
  const secs = Number(v);
  if (Number.isFinite(secs) && secs >= 0) return secs * 1000;
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

export function httpError(providerId: string, status: number, message: string, headers: (name: string) => string | null | undefined): ProviderError {
  return new ProviderError(providerId, `${status} ${message}`.trim(), { status, retryable: retryableStatus(status), retryAfterMs: retryAfterMs(headers) });
}

export function networkError(providerId: string, err: unknown, what = 'network error'): ProviderError {
  const code = (err as { code?: string; cause?: { code?: string } })?.cause?.code ?? (err as { code?: string })?.code;
  const msg = err instanceof Error ? err.message : String(err);
  return new ProviderError(providerId, `${what}${code ? ` (${code})` : ''}: ${msg}`, { retryable: true, cause: err });
}

/** An abort that came from the caller (shutdown), not from our own timeout: never retried. */
export function isCallerAbort(signal: AbortSignal | undefined): boolean {
  return !!signal?.aborted;
}
