// The fallback chain: each provider/model with its retries, then the next. When every one fails, one
// error lists what happened to each, short enough to show the user.
import { ProviderError, type Provider } from '../types.js';
import { withRetries, type RetryPolicy } from './retry.js';

export function fallbackChain(providers: readonly Provider[], policy: RetryPolicy): Provider {
  if (providers.length === 1) {
    const only = providers[0]!;
    return { id: only.id, complete: (req, onEvent) => withRetries(only, req, policy, onEvent) };
  }
  return {
    id: providers.map((p) => p.id).join(' > '),
    async complete(req, onEvent) {
      const failures: ProviderError[] = [];
      for (const p of providers) {
        try {
          return await withRetries(p, req, policy, onEvent);
        } catch (err) {
          const e = err as ProviderError;
          failures.push(e);
          if (req.signal?.aborted) throw e;
        }
      }
      const summary = failures.map((f) => `${f.providerId}: ${f.message}`).join('; ');
      throw new ProviderError(this.id, `all providers failed (${summary})`, { retryable: failures.some((f) => f.retryable) });
    },
  };
}
