// openclaw.json (+ auth profiles) → pinclaw config keys: the model and its provider, the Telegram,
// Discord and Signal settings and allow-lists, the time zone. A key is only proposed here; plan.ts
// compares it with what pinclaw's config already holds. Secrets (tokens, API keys) are proposed only
// with --include-secrets, else listed as not brought with the command that sets them.
import { isObject, str, type SourceHome } from './source.js';

export interface ConfigChange {
  key: string;
  value: string | string[];
  secret: boolean;
  /** lists (allow-lists) are merged with what pinclaw has, not replaced */
  merge: boolean;
  from: string;
}

export interface NotMapped {
  what: string;
  why: string;
}

export interface ConfigMapping {
  changes: ConfigChange[];
  notMapped: NotMapped[];
}

/** Providers OpenClaw knows without a models.providers entry that speak the OpenAI chat API. */
const OPENAI_COMPATIBLE: Readonly<Record<string, string>> = {
  openrouter: 'https://openrouter.ai/api/v1',
  ollama: 'http://127.0.0.1:11434/v1',
  groq: 'https://api.groq.com/openai/v1',
  deepseek: 'https://api.deepseek.com/v1',
  mistral: 'https://api.mistral.ai/v1',
};
/** The variable OpenClaw (and its env section) reads a provider's key from. */
const keyVar = (provider: string) => `${provider.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_API_KEY`;
/** Channels pinclaw has; the others of OpenClaw's are listed as not mapped. */
const CHANNELS = ['telegram', 'discord', 'signal'];

const get = (o: unknown, ...path: string[]): unknown => path.reduce<unknown>((cur, k) => (isObject(cur) ? cur[k] : undefined), o);

/** allowFrom entries as pinclaw takes them; the rest is named with why. */
function allowList(channel: string, values: unknown, where: string, out: ConfigMapping): string[] {
  if (values === undefined) return [];
  if (!Array.isArray(values)) {
    out.notMapped.push({ what: where, why: 'not a list' });
    return [];
  }
  const ok: string[] = [];
  for (const v of values) {
    let s = typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : '';
    s = s.replace(new RegExp(`^(${channel}|tg|user):`, 'i'), '');
    const fits = channel === 'telegram' ? /^-?\d+$|^@?[A-Za-z][A-Za-z0-9_]{3,31}$/.test(s)
      : channel === 'discord' ? /^\d{5,25}$/.test(s.replace(/^<@!?(\d+)>$/, '$1'))
      : /^\+\d{6,15}$|^uuid:[0-9a-fA-F-]{36}$/.test(s);
    if (channel === 'discord') s = s.replace(/^<@!?(\d+)>$/, '$1');
    if (s === '*') out.notMapped.push({ what: `${where}: "*"`, why: 'pinclaw has no open policy: strangers get a pairing code the owner approves (pinclaw pairing approve CODE)' });
    else if (!fits) out.notMapped.push({ what: `${where}: ${JSON.stringify(v)}`, why: `not a ${channel === 'telegram' ? 'Telegram user id or username' : channel === 'discord' ? 'Discord user id' : 'E.164 number or uuid:<ACI>'}` });
    else ok.push(s);
  }
  return [...new Set(ok)];
}

function secret(out: ConfigMapping, includeSecrets: boolean, key: string, value: unknown, from: string): void {
  if (value === undefined) return;
  if (typeof value !== 'string' || value.trim() === '') {
    out.notMapped.push({ what: `${from}`, why: `a secret reference or an empty value, not a value; set it in pinclaw: pinclaw config set ${key} VALUE` });
    return;
  }
  // OpenClaw substitutes ${VAR} from its environment when it loads the config: the text is not the secret.
  const ref = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(value);
  if (ref) {
    out.notMapped.push({ what: from, why: `a reference to the environment variable ${ref[1]}, not a value; set it in pinclaw: pinclaw config set ${key} VALUE` });
    return;
  }
  if (!includeSecrets) {
    out.notMapped.push({ what: from, why: `a secret: brought only with --include-secrets (or: pinclaw config set ${key} VALUE)` });
    return;
  }
  out.changes.push({ key, value: value.trim(), secret: true, merge: false, from });
}

function mapChannels(home: SourceHome, includeSecrets: boolean, out: ConfigMapping): void {
  const channels = get(home.config, 'channels');
  if (!isObject(channels)) return;
  for (const [name, c] of Object.entries(channels)) {
    if (name === 'defaults' || name === 'modelByChannel') continue;
    if (!CHANNELS.includes(name)) {
      out.notMapped.push({ what: `channels.${name}`, why: `pinclaw has no ${name} channel (it has ${CHANNELS.join(', ')})` });
      continue;
    }
    if (!isObject(c)) continue;
    if (c.enabled === false) {
      out.notMapped.push({ what: `channels.${name}`, why: 'disabled in OpenClaw (enabled: false); left out' });
      continue;
    }
    // Several accounts (bots) of one channel: pinclaw runs one; the default (or only) account is brought.
    let section: Record<string, unknown> = c;
    let at = `channels.${name}`;
    const accounts = isObject(c.accounts) ? c.accounts : undefined;
    if (accounts && Object.keys(accounts).length) {
      const ids = Object.keys(accounts);
      const pick = ids.includes('default') ? 'default' : ids[0]!;
      const acc = accounts[pick];
      if (isObject(acc)) {
        section = { ...c, ...acc };
        at = `channels.${name}.accounts.${pick}`;
      }
      for (const other of ids.filter((i) => i !== pick)) out.notMapped.push({ what: `channels.${name}.accounts.${other}`, why: `pinclaw runs one ${name} account; ${pick} was brought` });
    }
    const allow = [...allowList(name, section.allowFrom, `${at}.allowFrom`, out), ...allowList(name, get(section, 'dm', 'allowFrom'), `${at}.dm.allowFrom`, out)];
    if (name === 'telegram') {
      secret(out, includeSecrets, 'channels.telegram.token', section.botToken ?? section.token, `${at}.botToken`);
      if (section.tokenFile !== undefined) out.notMapped.push({ what: `${at}.tokenFile`, why: 'a token kept in another file: pinclaw config set channels.telegram.token "$(cat FILE)"' });
    } else if (name === 'discord') {
      secret(out, includeSecrets, 'channels.discord.token', section.token ?? section.botToken, `${at}.token`);
    } else {
      const url = str(section.httpUrl) ?? (str(section.httpHost) || section.httpPort !== undefined ? `http://${str(section.httpHost) ?? '127.0.0.1'}:${Number(section.httpPort) || 8080}` : undefined);
      const account = str(section.account);
      if (account) out.changes.push({ key: 'channels.signal.account', value: account, secret: false, merge: false, from: `${at}.account` });
      if (url) out.changes.push({ key: 'channels.signal.url', value: url, secret: false, merge: false, from: `${at}.httpUrl` });
      else if (account) out.notMapped.push({ what: `${at}`, why: 'OpenClaw starts signal-cli itself; pinclaw talks to a daemon you run (signal-cli -a ACCOUNT daemon --http 127.0.0.1:8080), then: pinclaw config set channels.signal.url http://127.0.0.1:8080' });
    }
    if (allow.length) out.changes.push({ key: `channels.${name}.allowFrom`, value: [...new Set(allow)], secret: false, merge: true, from: `${at}.allowFrom` });
  }
}

interface Slot {
  provider: 'anthropic' | 'openai';
  baseUrl?: string;
  /** OpenClaw's provider id the key is looked up under */
  source: string;
}

function slotOf(home: SourceHome, provider: string): Slot | { why: string } {
  const custom = get(home.config, 'models', 'providers', provider);
  const baseUrl = str(get(custom, 'baseUrl'));
  const api = str(get(custom, 'api'));
  if (provider === 'anthropic' && !baseUrl) return { provider: 'anthropic', source: provider };
  if (provider === 'openai' && !baseUrl) return { provider: 'openai', source: provider };
  if (baseUrl && api === 'anthropic-messages') return { provider: 'anthropic', baseUrl, source: provider };
  if (baseUrl && (api === undefined || api.startsWith('openai'))) return { provider: 'openai', baseUrl, source: provider };
  if (!baseUrl && OPENAI_COMPATIBLE[provider]) return { provider: 'openai', baseUrl: OPENAI_COMPATIBLE[provider], source: provider };
  return { why: api ? `its API (${api}) is not one pinclaw speaks (Anthropic Messages, OpenAI chat completions)` : `pinclaw speaks the Anthropic and OpenAI-compatible APIs; ${provider} has no baseUrl in models.providers` };
}

function keyFor(home: SourceHome, provider: string): { key: unknown; from: string } | undefined {
  const inConfig = get(home.config, 'models', 'providers', provider, 'apiKey');
  if (inConfig !== undefined) return { key: inConfig, from: `models.providers.${provider}.apiKey` };
  const profile = home.keys.find((k) => k.provider === provider);
  if (profile) return { key: profile.key, from: profile.where };
  const v = keyVar(provider);
  for (const path of [['env', v], ['env', 'vars', v]]) {
    const value = get(home.config, ...path);
    if (value !== undefined) return { key: value, from: path.join('.') };
  }
  return undefined;
}

function mapModel(home: SourceHome, includeSecrets: boolean, out: ConfigMapping): void {
  const model = get(home.config, 'agents', 'defaults', 'model');
  const primary = typeof model === 'string' ? model : str(get(model, 'primary'));
  const fallbacks = Array.isArray(get(model, 'fallbacks')) ? (get(model, 'fallbacks') as unknown[]).filter((f): f is string => typeof f === 'string') : [];
  if (!primary) return;
  const slots = new Map<'anthropic' | 'openai', Slot>();
  const refs: string[] = [];
  for (const [i, ref] of [primary, ...fallbacks].entries()) {
    const what = i === 0 ? `agents.defaults.model: ${ref}` : `agents.defaults.model.fallbacks: ${ref}`;
    const slash = ref.indexOf('/');
    if (slash <= 0) {
      out.notMapped.push({ what, why: 'not provider/model (an alias is not resolved)' });
      if (i === 0) return;
      continue;
    }
    const slot = slotOf(home, ref.slice(0, slash));
    if ('why' in slot) {
      out.notMapped.push({ what, why: slot.why });
      if (i === 0) return;
      continue;
    }
    const taken = slots.get(slot.provider);
    if (taken && (taken.baseUrl !== slot.baseUrl || taken.source !== slot.source)) {
      out.notMapped.push({ what, why: `pinclaw has one ${slot.provider} endpoint, already given to ${taken.source}` });
      continue;
    }
    slots.set(slot.provider, slot);
    refs.push(`${slot.provider}/${ref.slice(slash + 1)}`);
  }
  out.changes.push({ key: 'agent.model', value: refs[0]!, secret: false, merge: false, from: 'agents.defaults.model' });
  if (refs.length > 1) out.changes.push({ key: 'agent.fallbacks', value: refs.slice(1), secret: false, merge: false, from: 'agents.defaults.model.fallbacks' });
  for (const slot of slots.values()) {
    if (slot.baseUrl) out.changes.push({ key: `providers.${slot.provider}.baseUrl`, value: slot.baseUrl, secret: false, merge: false, from: `models.providers.${slot.source}.baseUrl` });
    const k = keyFor(home, slot.source);
    if (k) secret(out, includeSecrets, `providers.${slot.provider}.apiKey`, k.key, k.from);
  }
}

export function mapConfig(home: SourceHome, includeSecrets: boolean): ConfigMapping {
  const out: ConfigMapping = { changes: [], notMapped: [] };
  if (!home.config) return out;
  mapModel(home, includeSecrets, out);
  mapChannels(home, includeSecrets, out);
  const tz = str(get(home.config, 'agents', 'defaults', 'userTimezone'));
  if (tz) out.changes.push({ key: 'agent.timezone', value: tz, secret: false, merge: false, from: 'agents.defaults.userTimezone' });
  return out;
}
