// Retries of one provider: exponential backoff with jitter, honouring retry-after. A server that
// asks for a longer wait than maxMs is not waited for: the error goes to the chain, which moves on.
import { ProviderError, type Provider, type ProviderEvent, type ProviderRequest, type ProviderResponse } from '../agent/types.js';

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface RetryPolicy {
  /** retries after the first attempt */
  retries: number;
  /** the first backoff step; each retry doubles it */
  baseMs: number;
  /** the largest backoff step, and the longest retry-after that is waited for */
  maxMs: number;
  /** injectable for tests, which record delays instead of waiting */
  sleep?: Sleep;
  /** [0, 1); injectable to make the jitter predictable */
  random?: () => number;
}

export const sleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Retry `attempt` (1-based): a step of baseMs·2^(attempt-1), capped at maxMs, jittered into [step/2, step]. */
export function backoffMs(attempt: number, p: Pick<RetryPolicy, 'baseMs' | 'maxMs' | 'random'>): number {
  const step = Math.min(p.maxMs, p.baseMs * 2 ** (attempt - 1));
  // Half fixed, half random: clients that failed together spread out, and none retries at once.
  return Math.round(step / 2 + (p.random ?? Math.random)() * (step / 2));
}

function asProviderError(providerId: string, err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  // A provider is meant to throw only ProviderErrors; anything else is a bug, and retrying hides bugs.
  return new ProviderError(providerId, err instanceof Error ? err.message : String(err), { retryable: false, cause: err });
}

function tooLong(e: ProviderError): ProviderError {
  const secs = Math.ceil((e.retryAfterMs ?? 0) / 1000);
  return new ProviderError(e.providerId, `${e.message} (asked to wait ${secs} s, more than agent.retryMaxMs)`, { status: e.status, retryable: e.retryable, retryAfterMs: e.retryAfterMs, cause: e });
}

export async function withRetries(provider: Provider, req: ProviderRequest, p: RetryPolicy, onEvent?: (e: ProviderEvent) => void): Promise<ProviderResponse> {
  const wait = p.sleep ?? sleep;
  for (let attempt = 1; ; attempt++) {
    let e: ProviderError;
    try {
      return await provider.complete(req, onEvent);
    } catch (err) {
      e = asProviderError(provider.id, err);
    }
    if (!e.retryable || attempt > p.retries || req.signal?.aborted) throw e;
    if (e.retryAfterMs !== undefined && e.retryAfterMs > p.maxMs) throw tooLong(e);
    const delayMs = e.retryAfterMs ?? backoffMs(attempt, p);
    // Text deltas already sent belong to the failed attempt; this event tells listeners to drop them.
    onEvent?.({ type: 'retry', attempt, delayMs, reason: e.message });
    try {
      await wait(delayMs, req.signal);
    } catch (err) {
      throw new ProviderError(provider.id, 'request aborted', { retryable: false, cause: err });
    }
  }
}
