// `pinclaw doctor --probe`: one real request to each service the config names, so "the key is set"
// becomes "the key works": the model provider (Anthropic: a message of at most one output token, the
// cheapest call that proves the key and the model; OpenAI-compatible: GET /models, which costs
// nothing, and whether it lists the model) and Telegram (getMe: which bot the token is). Plain doctor
// makes no request (it must work offline); this is asked for. In the bundle: the lazy chunk 'cli-info'.
import { OPENAI_DEFAULT_BASE_URL } from '../agent/providers/openai.js';
import { ANTHROPIC_DEFAULT_BASE_URL, resolveModels, type ResolvedModel } from '../agent/providers/models.js';
import type { PinclawConfig } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import type { Check } from './doctor.js';
import { httpFetch } from '../net/fetch.js';

const PROBE_TIMEOUT_MS = 20_000;
const ANTHROPIC_VERSION = '2023-06-01';

interface Answer {
  status: number;
  body: unknown;
  ms: number;
}

async function request(url: string, init: RequestInit): Promise<Answer> {
  const started = Date.now();
  const res = await httpFetch(url, { ...init, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // an error page, kept as text
  }
  return { status: res.status, body, ms: Date.now() - started };
}

/** What a failed request says: the API's own error message when it gave one. */
function apiError(a: Answer): string {
  const b = a.body as { error?: { message?: unknown } | string; description?: unknown } | string;
  const msg = typeof b === 'string' ? b.slice(0, 200) : typeof b?.error === 'string' ? b.error : typeof b?.error?.message === 'string' ? b.error.message : typeof b?.description === 'string' ? b.description : '';
  return `HTTP ${a.status}${msg ? `: ${msg}` : ''}`;
}

/** Why a request did not get an answer at all, in words. */
function unreachable(err: unknown, url: string): string {
  const e = err as { name?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return `no answer from ${url} within ${PROBE_TIMEOUT_MS / 1000} s`;
  return `cannot reach ${url}: ${e.cause?.code ?? e.cause?.message ?? errorMessage(err)}`;
}

async function probeModel(m: ResolvedModel): Promise<Check> {
  const name = `probe ${m.provider}/${m.model}`;
  if (m.provider === 'anthropic') {
    const url = `${(m.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL).replace(/\/+$/, '')}/v1/messages`;
    try {
      const a = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': m.apiKey ?? '', 'anthropic-version': ANTHROPIC_VERSION },
        body: JSON.stringify({ model: m.model, max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] }),
      });
      return a.status === 200
        ? { name, state: 'ok', detail: `answered a one-token request in ${a.ms} ms` }
        : { name, state: 'fail', detail: `${apiError(a)} (${url})` };
    } catch (err) {
      return { name, state: 'fail', detail: unreachable(err, url) };
    }
  }
  const url = `${(m.baseUrl ?? OPENAI_DEFAULT_BASE_URL).replace(/\/+$/, '')}/models`;
  try {
    const a = await request(url, { headers: m.apiKey ? { authorization: `Bearer ${m.apiKey}` } : {} });
    if (a.status !== 200) return { name, state: 'fail', detail: `${apiError(a)} (${url})` };
    const ids = ((a.body as { data?: { id?: unknown }[] }).data ?? []).map((d) => d.id).filter((id): id is string => typeof id === 'string');
    if (!ids.includes(m.model)) return { name, state: 'warn', detail: `the server answered in ${a.ms} ms but does not list ${m.model} (it lists ${ids.slice(0, 8).join(', ') || 'no models'}${ids.length > 8 ? ', …' : ''})` };
    return { name, state: 'ok', detail: `the server answered in ${a.ms} ms and lists ${m.model}` };
  } catch (err) {
    return { name, state: 'fail', detail: unreachable(err, url) };
  }
}

async function probeTelegram(token: string, apiBaseUrl: string): Promise<Check> {
  const name = 'probe telegram';
  const base = apiBaseUrl.replace(/\/+$/, '');
  // The token is part of the path: never put the URL itself into a message.
  const shown = `${base}/bot…/getMe`;
  try {
    const a = await request(`${base}/bot${token}/getMe`, {});
    const b = a.body as { ok?: boolean; result?: { username?: string; id?: number } };
    if (a.status === 200 && b.ok) return { name, state: 'ok', detail: `the token is the bot @${b.result?.username ?? '?'} (id ${b.result?.id ?? '?'}), ${a.ms} ms` };
    const why = a.status === 401 ? 'Telegram refused the token (401 Unauthorized): get the right one from @BotFather, then pinclaw config set channels.telegram.token TOKEN' : apiError(a);
    return { name, state: 'fail', detail: `${why} (${shown})` };
  } catch (err) {
    return { name, state: 'fail', detail: unreachable(err, shown) };
  }
}

/** One request per service: the first model with credentials (the one a turn tries first), and Telegram when it has a token. */
export async function probeChecks(config: PinclawConfig, env: NodeJS.ProcessEnv): Promise<Check[]> {
  const checks: Promise<Check>[] = [];
  let models: ResolvedModel[] = [];
  try {
    models = resolveModels(config, env);
  } catch (err) {
    checks.push(Promise.resolve({ name: 'probe provider', state: 'fail', detail: errorMessage(err) }));
  }
  const first = models.find((m) => m.usable);
  if (first) checks.push(probeModel(first));
  else if (models.length) checks.push(Promise.resolve({ name: 'probe provider', state: 'warn', detail: 'not probed: no model has credentials (see the provider check)' }));
  const tg = config.channels.telegram;
  if (tg.token) checks.push(probeTelegram(tg.token, tg.apiBaseUrl));
  return Promise.all(checks);
}
