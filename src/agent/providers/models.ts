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
