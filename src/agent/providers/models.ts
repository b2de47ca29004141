// Model references ("provider/model") and their validation. Kept apart from the provider modules so
// start-up can check the config without loading the SDKs.
import { ConfigError } from '../../errors.js';
import type { PinclawConfig } from '../../config/schema.js';

export const PROVIDERS = ['anthropic', 'openai'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

export interface ModelRef {
  provider: ProviderName;
  model: string;
}

/** "anthropic/claude-sonnet-5-5" → { provider, model }; `key` names the config key in errors. */
export function parseModelRef(ref: string, key: string): ModelRef {
  const slash = ref.indexOf('/');
  const provider = ref.slice(0, slash);
  const model = ref.slice(slash + 1);
  if (slash <= 0 || !model) throw new ConfigError(`${key}: expected provider/model (e.g. anthropic/claude-sonnet-5-5), found "${ref}"`);
  if (!(PROVIDERS as readonly string[]).includes(provider)) throw new ConfigError(`${key}: unknown provider '${provider}' in "${ref}"; known: ${PROVIDERS.join(', ')}`);
  return { provider: provider as ProviderName, model };
}

/** Checks every model reference of the config, so a typo stops start-up instead of the first turn. */
export function modelRefs(config: PinclawConfig): ModelRef[] {
  return [parseModelRef(config.agent.model, 'agent.model'), ...config.agent.fallbacks.map((r, i) => parseModelRef(r, `agent.fallbacks[${i}]`))];
}

export interface ResolvedModel extends ModelRef {
  /** credentials or a server were found for this model's provider */
  usable: boolean;
  apiKey?: string;
  baseUrl?: string;
}

/** Each model of the chain with the credentials it would use (config first, then the environment). */
export function resolveModels(config: PinclawConfig, env: NodeJS.ProcessEnv): ResolvedModel[] {
  const a = config.providers.anthropic;
  const o = config.providers.openai;
  return modelRefs(config).map((ref) => {
    if (ref.provider === 'anthropic') {
      const apiKey = a.apiKey ?? env.ANTHROPIC_API_KEY;
      return { ...ref, usable: !!apiKey, apiKey, baseUrl: a.baseUrl ?? env.ANTHROPIC_BASE_URL };
    }
    const apiKey = o.apiKey ?? env.OPENAI_API_KEY;
    const baseUrl = o.baseUrl ?? env.OPENAI_BASE_URL;
    // A local OpenAI-compatible server needs no key, only its address.
    return { ...ref, usable: !!(apiKey || baseUrl), apiKey, baseUrl: baseUrl ?? 'https://api.openai.com/v1' };
  });
}

export const MISSING_PROVIDER =
  'No model provider is configured. Set ANTHROPIC_API_KEY (or `pinclaw config set providers.anthropic.apiKey …`); ' +
  'for a local OpenAI-compatible server (Ollama, llama.cpp) set providers.openai.baseUrl and agent.model to openai/<model>.';
