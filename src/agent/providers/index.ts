// From the config to a ready provider chain, or a message saying how to configure one.
import type { PinclawConfig } from '../../config/schema.js';
import type { Provider } from '../types.js';
import { anthropicProvider } from './anthropic.js';
import { fallbackChain } from './chain.js';
import { modelRefs } from './models.js';
import { openaiProvider } from './openai.js';

export { modelRefs, parseModelRef } from './models.js';

export const MISSING_PROVIDER =
  'No model provider is configured. Set ANTHROPIC_API_KEY (or `pinclaw config set providers.anthropic.apiKey …`); ' +
  'for a local OpenAI-compatible server (Ollama, llama.cpp) set providers.openai.baseUrl and agent.model to openai/<model>.';

export function buildProvider(config: PinclawConfig, env: NodeJS.ProcessEnv): { provider: Provider } | { missing: string } {
  const a = config.providers.anthropic;
  const o = config.providers.openai;
  const anthropicKey = a.apiKey ?? env.ANTHROPIC_API_KEY;
  const openaiKey = o.apiKey ?? env.OPENAI_API_KEY;
  const openaiUrl = o.baseUrl ?? env.OPENAI_BASE_URL;
  const timeoutMs = config.agent.requestTimeoutMs;
  const providers: Provider[] = [];
  for (const ref of modelRefs(config)) {
    if (ref.provider === 'anthropic' && anthropicKey) {
      providers.push(anthropicProvider(ref.model, { apiKey: anthropicKey, baseUrl: a.baseUrl ?? env.ANTHROPIC_BASE_URL, timeoutMs }));
    } else if (ref.provider === 'openai' && (openaiKey || openaiUrl)) {
      providers.push(openaiProvider(ref.model, { apiKey: openaiKey, baseUrl: openaiUrl ?? 'https://api.openai.com/v1', timeoutMs }));
    }
  }
  if (providers.length === 0) return { missing: MISSING_PROVIDER };
  return { provider: fallbackChain(providers, { retries: config.agent.retries, baseMs: config.agent.retryBaseMs, maxMs: config.agent.retryMaxMs }) };
}
