// The fallback chain: each provider/model with its retries, then the next, whatever the failure
// (another provider may well take a request this one refused); only the caller's abort stops it.
// When every one fails, one error says what happened to each, short enough for a chat notice.
import { log } from '../../log.js';
import { ProviderError, type Provider, type ProviderEvent } from '../types.js';
import { withRetries, type RetryPolicy } from '../../net/retry.js';

interface Failure {
  providerId: string;
  error: ProviderError;
  attempts: number;
}

function describe(f: Failure): string {
  return `${f.providerId}: ${f.error.message}${f.attempts > 1 ? `, after ${f.attempts} attempts` : ''}`;
}

function summarize(chainId: string, failures: readonly Failure[]): ProviderError {
  const only = failures.length === 1 ? failures[0]! : undefined;
  const message = only ? describe(only) : `all providers failed: ${failures.map(describe).join('; ')}`;
  return new ProviderError(chainId, message, {
    status: only?.error.status,
    retryable: failures.some((f) => f.error.retryable),
    retryAfterMs: only?.error.retryAfterMs,
    cause: failures.map((f) => f.error),
    // Unreachable only when no provider was reached: one that answered (a 401, a 500) means the
    // network is there and the local model is not what is missing.
    unreachable: failures.every((f) => f.error.unreachable),
  });
}

export function fallbackChain(providers: readonly Provider[], policy: RetryPolicy): Provider {
  if (providers.length === 0) throw new Error('fallbackChain needs at least one provider');
  const id = providers.map((p) => p.id).join(' > ');
  return {
    id,
    async complete(req, onEvent) {
      const failures: Failure[] = [];
      let total = 0;
      for (const [i, p] of providers.entries()) {
        let attempts = 1;
        const counting = (e: ProviderEvent) => {
          if (e.type === 'retry') attempts++;
          onEvent?.(e);
        };
        try {
          const res = await withRetries(p, req, policy, counting);
          return { ...res, answeredBy: res.answeredBy ?? p.id };
        } catch (err) {
          // withRetries throws ProviderErrors only.
          const error = err as ProviderError;
          if (req.signal?.aborted) throw error;
          failures.push({ providerId: p.id, error, attempts });
          total += attempts;
          const next = providers[i + 1];
          if (next) {
            const reason = `${describe(failures.at(-1)!)}; trying ${next.id}`;
            log.warn(reason);
            // Like a retry, the move voids any text the failed provider streamed.
            onEvent?.({ type: 'retry', attempt: total, delayMs: 0, reason });
          }
        }
      }
      throw summarize(id, failures);
    },
  };
}
