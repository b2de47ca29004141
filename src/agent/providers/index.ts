// From the config to a ready provider chain, or a message saying how to configure one.
import type { PinclawConfig } from '../../config/schema.js';
import type { Provider } from '../types.js';
import { anthropicProvider } from './anthropic.js';
import { fallbackChain } from './chain.js';
import { MISSING_PROVIDER, resolveModels } from './models.js';
import { openaiProvider } from './openai.js';

export { MISSING_PROVIDER, modelRefs, parseModelRef, resolveModels } from './models.js';

export function buildProvider(config: PinclawConfig, env: NodeJS.ProcessEnv): { provider: Provider } | { missing: string } {
  const timeoutMs = config.agent.requestTimeoutMs;
  const providers = resolveModels(config, env)
    .filter((m) => m.usable)
    .map((m) =>
      m.provider === 'anthropic'
        ? anthropicProvider(m.model, { apiKey: m.apiKey!, baseUrl: m.baseUrl, timeoutMs })
        : openaiProvider(m.model, { apiKey: m.apiKey, baseUrl: m.baseUrl!, timeoutMs }),
    );
  if (providers.length === 0) return { missing: MISSING_PROVIDER };
  return { provider: fallbackChain(providers, { retries: config.agent.retries, baseMs: config.agent.retryBaseMs, maxMs: config.agent.retryMaxMs }) };
}
