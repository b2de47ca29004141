// Retries of one provider: exponential backoff with full jitter, honouring retry-after. A server that
// asks for a longer wait than retryMaxMs is left for the next provider of the chain.
import { ProviderError, type Provider, type ProviderEvent, type ProviderRequest, type ProviderResponse } from '../types.js';

export interface RetryPolicy {
  retries: number;
  baseMs: number;
  maxMs: number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
}

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason as Error);
    }, { once: true });
  });

export function backoffMs(attempt: number, p: RetryPolicy): number {
  const ceiling = Math.min(p.maxMs, p.baseMs * 2 ** (attempt - 1));
  // Full jitter, but never below half the step, so retries still spread out.
  return Math.round(ceiling / 2 + (p.random ?? Math.random)() * (ceiling / 2));
}

export async function withRetries(provider: Provider, req: ProviderRequest, p: RetryPolicy, onEvent?: (e: ProviderEvent) => void): Promise<ProviderResponse> {
  const wait = p.sleep ?? sleep;
  for (let attempt = 1; ; attempt++) {
    try {
      return await provider.complete(req, onEvent);
    } catch (err) {
      const e = err instanceof ProviderError ? err : new ProviderError(provider.id, err instanceof Error ? err.message : String(err), { retryable: false, cause: err });
      if (!e.retryable || attempt > p.retries || req.signal?.aborted) throw e;
      if (e.retryAfterMs !== undefined && e.retryAfterMs > p.maxMs) throw e;
      const delay = e.retryAfterMs ?? backoffMs(attempt, p);
      onEvent?.({ type: 'retry', attempt, delayMs: delay, reason: e.message });
      await wait(delay, req.signal);
    }
  }
}
