// Model references ("provider/model"), their validation, and where each provider's credentials come
// from. Kept apart from the provider modules so start-up and doctor can check the config without
// loading the SDKs.
import { ConfigError } from '../../errors.js';
import type { PinclawConfig } from '../../config/schema.js';

export const PROVIDERS = ['anthropic', 'openai'] as const;
/** Where the Anthropic API is when providers.anthropic.baseUrl is not set (here, beside the other facts of a model, for doctor --probe too). */
export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
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

/** Every model reference of the config, primary first, so a typo stops start-up instead of the first turn. */
export function modelRefs(config: PinclawConfig): ModelRef[] {
  return [parseModelRef(config.agent.model, 'agent.model'), ...config.agent.fallbacks.map((r, i) => parseModelRef(r, `agent.fallbacks[${i}]`))];
}

export interface ResolvedModel extends ModelRef {
  /** credentials or a server were found for this model's provider */
  usable: boolean;
  apiKey?: string;
  /** undefined: the provider's default */
  baseUrl?: string;
}

/** An empty string in the config or the environment means unset. */
function first(...values: (string | undefined)[]): string | undefined {
  return values.find((v) => v !== undefined && v.trim() !== '');
}

/** The base URL from the config key, else the variable; a ConfigError naming whichever is not an http(s) URL. */
function baseUrlOf(configured: string | undefined, key: string, env: NodeJS.ProcessEnv, variable: string): string | undefined {
  const fromConfig = first(configured);
  const value = fromConfig ?? first(env[variable]);
  if (value === undefined) return undefined;
  let ok = false;
  try {
    ok = ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    // not a URL at all
  }
  if (!ok) throw new ConfigError(`${fromConfig ? key : variable}: expected an http(s) URL, found "${value}"`);
  return value;
}

/** Each model of the chain with the credentials it would use (config first, then the environment). */
export function resolveModels(config: PinclawConfig, env: NodeJS.ProcessEnv): ResolvedModel[] {
  const a = config.providers.anthropic;
  const o = config.providers.openai;
  return modelRefs(config).map((ref): ResolvedModel => {
    if (ref.provider === 'anthropic') {
      const apiKey = first(a.apiKey, env.ANTHROPIC_API_KEY);
      return { ...ref, usable: !!apiKey, apiKey, baseUrl: baseUrlOf(a.baseUrl, 'providers.anthropic.baseUrl', env, 'ANTHROPIC_BASE_URL') };
    }
    const apiKey = first(o.apiKey, env.OPENAI_API_KEY);
    const baseUrl = baseUrlOf(o.baseUrl, 'providers.openai.baseUrl', env, 'OPENAI_BASE_URL');
    // A local OpenAI-compatible server needs no key, only its address.
    return { ...ref, usable: !!(apiKey || baseUrl), apiKey, baseUrl };
  });
}

/** agent.fallback: the local OpenAI-compatible server that answers when no provider can be reached. */
export interface LocalFallback {
  model: string;
  baseUrl: string;
  apiKey?: string;
}

/**
 * agent.fallback when it is set, checked: both model and baseUrl, an http(s) URL. undefined when
 * neither is set; a ConfigError naming the missing or bad key otherwise, so that a half-set
 * fallback stops start-up instead of failing silently on the day the internet is gone.
 */
export function localFallback(config: PinclawConfig): LocalFallback | undefined {
  const f = config.agent.fallback;
  const model = first(f.model);
  const configured = first(f.baseUrl);
  if (model === undefined && configured === undefined) return undefined;
  if (model === undefined) throw new ConfigError(`agent.fallback.model: agent.fallback.baseUrl is set (${configured}) but no model; set the local model's name (e.g. \`pinclaw config set agent.fallback.model llama3\`), or unset agent.fallback.baseUrl`);
  if (configured === undefined) throw new ConfigError(`agent.fallback.baseUrl: agent.fallback.model is set (${model}) but no server; set the local server's URL including /v1 (e.g. http://192.168.1.20:11434/v1 for Ollama), or unset agent.fallback.model`);
  const baseUrl = baseUrlOf(configured, 'agent.fallback.baseUrl', {}, 'agent.fallback.baseUrl')!;
  return { model, baseUrl, apiKey: first(f.apiKey) };
}

export const MISSING_PROVIDER =
  'No model provider is configured. Set ANTHROPIC_API_KEY, or run `pinclaw config set providers.anthropic.apiKey …`; ' +
  'for a local OpenAI-compatible server set providers.openai.baseUrl and agent.model to openai/<model>.';

const MISSING_OPENAI =
  'No model provider is configured for agent.model %s. Set OPENAI_API_KEY, or run `pinclaw config set providers.openai.apiKey …`; ' +
  'for a local OpenAI-compatible server (Ollama, llama.cpp) set providers.openai.baseUrl, e.g. http://127.0.0.1:11434/v1.';

/** How to configure the primary model when it has no credentials; undefined when it has. */
export function missingProvider(models: readonly ResolvedModel[]): string | undefined {
  const [primary, ...fallbacks] = models;
  if (!primary || primary.usable) return undefined;
  const base = primary.provider === 'anthropic' ? MISSING_PROVIDER : MISSING_OPENAI.replace('%s', `${primary.provider}/${primary.model}`);
  const ready = fallbacks.filter((m) => m.usable).map((m) => `${m.provider}/${m.model}`);
  return ready.length ? `${base} (agent.fallbacks has credentials for ${ready.join(', ')}, but fallbacks are tried only after agent.model.)` : base;
}
