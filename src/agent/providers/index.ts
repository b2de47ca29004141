// From the config to a ready provider chain, or a message saying how to configure one.
import type { PinclawConfig } from '../../config/schema.js';
import { log } from '../../log.js';
import type { Provider } from '../types.js';
import { anthropicProvider } from './anthropic.js';
import { fallbackChain } from './chain.js';
import { withLocalFallback } from './local-fallback.js';
import { localFallback, missingProvider, resolveModels, type ResolvedModel } from './models.js';
import { openaiProvider } from './openai.js';
import type { RetryPolicy } from '../../net/retry.js';

export { MISSING_PROVIDER, localFallback, missingProvider, modelRefs, parseModelRef, resolveModels } from './models.js';

/** Test seams: the retry layer's sleep and jitter. */
export type BuildOptions = Pick<RetryPolicy, 'sleep' | 'random'>;

function create(m: ResolvedModel, timeoutMs: number, openaiImages: boolean): Provider {
  return m.provider === 'anthropic'
    ? anthropicProvider(m.model, { apiKey: m.apiKey!, baseUrl: m.baseUrl, timeoutMs })
    : openaiProvider(m.model, { apiKey: m.apiKey, baseUrl: m.baseUrl, timeoutMs, images: openaiImages });
}

/**
 * The chain agent.model > agent.fallbacks, each with agent.retries retries, then agent.fallback's
 * local model when none of them can be reached. `missing` when the primary model has no
 * credentials; a fallback without them is left out with a warning. Throws a ConfigError naming the
 * key for a malformed model reference, an unknown provider or a half-set agent.fallback.
 */
export function buildProvider(config: PinclawConfig, env: NodeJS.ProcessEnv, opts: BuildOptions = {}): { provider: Provider } | { missing: string } {
  const models = resolveModels(config, env);
  const missing = missingProvider(models);
  if (missing) return { missing };
  const usable = models.filter((m, i) => {
    if (!m.usable) log.once(`provider-missing:${m.provider}/${m.model}`, 'warn', `agent.fallbacks[${i - 1}] ${m.provider}/${m.model} has no credentials and is skipped`);
    return m.usable;
  });
  const a = config.agent;
  const policy: RetryPolicy = { retries: a.retries, baseMs: a.retryBaseMs, maxMs: a.retryMaxMs, ...opts };
  const chain = fallbackChain(usable.map((m) => create(m, a.requestTimeoutMs, config.providers.openai.images)), policy);
  const local = localFallback(config);
  if (!local) return { provider: chain };
  const localProvider = openaiProvider(local.model, { apiKey: local.apiKey, baseUrl: local.baseUrl, timeoutMs: a.requestTimeoutMs, id: `local/${local.model}`,
    // A small model on the LAN is rarely a vision model: pictures reach it as their text note.
    images: false });
  return { provider: withLocalFallback(chain, localProvider, local.model, policy) };
}
