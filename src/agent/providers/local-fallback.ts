// agent.fallback: the local model (an OpenAI-compatible server on the LAN) that answers when the
// internet is gone. Unlike agent.fallbacks, which take over on any failure, it is asked only when
// no provider of the chain could be reached at all: a provider that answered 401 or 500 is there,
// and a small local model should not silently replace it. Its answer says where it came from.
import { log } from '../../log.js';
import { ProviderError, type Provider } from '../types.js';
import { withRetries, type RetryPolicy } from '../../net/retry.js';

export function withLocalFallback(chain: Provider, local: Provider, localModel: string, policy: RetryPolicy): Provider {
  const id = `${chain.id} > ${local.id}`;
  return {
    id,
    async complete(req, onEvent) {
      let primary: ProviderError;
      try {
        return await chain.complete(req, onEvent);
      } catch (err) {
        if (!(err instanceof ProviderError) || !err.unreachable || req.signal?.aborted) throw err;
        primary = err;
      }
      const reason = `${primary.message}; no provider can be reached, asking the local model ${local.id}`;
      log.warn(reason);
      // Like a move along the chain, this voids any text streamed before the failure.
      onEvent?.({ type: 'retry', attempt: 0, delayMs: 0, reason });
      try {
        const res = await withRetries(local, req, policy, onEvent);
        return { ...res, answeredBy: local.id, localModel };
      } catch (err) {
        const e = err as ProviderError; // withRetries throws ProviderErrors only
        if (req.signal?.aborted) throw e;
        throw new ProviderError(id, `${primary.message}; the local model ${local.id} failed too: ${e.message}`, {
          status: e.status,
          retryable: primary.retryable || e.retryable,
          cause: [primary, e],
          unreachable: e.unreachable,
        });
      }
    },
  };
}
