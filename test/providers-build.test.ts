// buildProvider: from the config and an environment to a provider chain, or a message saying how
// to configure one; model references checked with the config key named.
import t from 'tap';
import { buildProvider, MISSING_PROVIDER, type BuildOptions } from '../src/agent/providers/index.js';
import type { Provider, ProviderRequest } from '../src/agent/types.js';
import { defaults, type PinclawConfig } from '../src/config/schema.js';
import { ConfigError } from '../src/errors.js';
import { setLogSink } from '../src/log.js';
import * as A from './support/anthropic-server.js';
import * as O from './support/openai-server.js';

const request: ProviderRequest = { model: 'ignored', system: 's', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], tools: [], maxTokens: 64 };
const logLines: string[] = [];
setLogSink((line) => logLines.push(line));

function config(agent: Partial<PinclawConfig['agent']> = {}, providers: { anthropic?: PinclawConfig['providers']['anthropic']; openai?: Partial<PinclawConfig['providers']['openai']> } = {}): PinclawConfig {
  const c = defaults();
  Object.assign(c.agent, agent);
  Object.assign(c.providers.anthropic, providers.anthropic);
  Object.assign(c.providers.openai, providers.openai);
  return c;
}

function built(r: ReturnType<typeof buildProvider>): Provider {
  if ('missing' in r) throw new Error(`expected a provider, got: ${r.missing}`);
  return r.provider;
}

function missing(r: ReturnType<typeof buildProvider>): string {
  if (!('missing' in r)) throw new Error(`expected missing, got ${r.provider.id}`);
  return r.missing;
}

t.test('no credentials for the primary model: a message saying how to configure one', async (t) => {
  const m = missing(buildProvider(defaults(), {}));
  t.equal(m, MISSING_PROVIDER);
  t.match(m, /^No model provider is configured\. Set ANTHROPIC_API_KEY, or run `pinclaw config set providers\.anthropic\.apiKey …`; for a local OpenAI-compatible server set providers\.openai\.baseUrl and agent\.model to openai\/<model>\.$/);
  t.match(missing(buildProvider(defaults(), { ANTHROPIC_API_KEY: '' })), /^No model provider/, 'an empty variable is no key');

  const o = missing(buildProvider(config({ model: 'openai/gpt-test' }), { ANTHROPIC_API_KEY: 'k' }));
  t.match(o, /^No model provider is configured for agent\.model openai\/gpt-test\. Set OPENAI_API_KEY.*providers\.openai\.baseUrl/);

  const hint = missing(buildProvider(config({ fallbacks: ['openai/llama3'] }), { OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' }));
  t.match(hint, /agent\.fallbacks has credentials for openai\/llama3, but fallbacks are tried only after agent\.model/);
});

t.test('configured: anthropic by key, openai by key or by a base URL alone', async (t) => {
  t.equal(built(buildProvider(defaults(), { ANTHROPIC_API_KEY: 'k' })).id, 'anthropic/claude-sonnet-5-5');
  t.equal(built(buildProvider(config({}, { anthropic: { apiKey: 'from-config' } }), {})).id, 'anthropic/claude-sonnet-5-5');
  t.equal(built(buildProvider(config({ model: 'openai/llama3' }), { OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' })).id, 'openai/llama3', 'a local server needs no key');
  t.equal(built(buildProvider(config({ model: 'openai/llama3' }, { openai: { baseUrl: 'http://127.0.0.1:8080/v1' } }), {})).id, 'openai/llama3');
  t.equal(built(buildProvider(config({ model: 'openai/gpt-test' }), { OPENAI_API_KEY: 'sk-x' })).id, 'openai/gpt-test');
});

t.test('a fallback without credentials is left out, with one warning', async (t) => {
  logLines.length = 0;
  const p = built(buildProvider(config({ fallbacks: ['openai/llama3', 'anthropic/claude-haiku-5-5'] }), { ANTHROPIC_API_KEY: 'k' }));
  t.equal(p.id, 'anthropic/claude-sonnet-5-5 > anthropic/claude-haiku-5-5');
  t.same(logLines, ['warn: agent.fallbacks[0] openai/llama3 has no credentials and is skipped']);
});

t.test('model references: an unknown provider or a malformed one names the key', async (t) => {
  t.throws(() => buildProvider(config({ fallbacks: ['anthropic/c', 'gemini/x'] }), { ANTHROPIC_API_KEY: 'k' }), new ConfigError(`agent.fallbacks[1]: unknown provider 'gemini' in "gemini/x"; known: anthropic, openai`));
  t.throws(() => buildProvider(config({ model: 'antropic/claude' }), { ANTHROPIC_API_KEY: 'k' }), { name: 'ConfigError', exitCode: 78, message: /^agent\.model: unknown provider 'antropic'/ });
  t.throws(() => buildProvider(config({ model: 'claude' }), {}), { name: 'ConfigError', message: /^agent\.model: expected provider\/model/ });
  t.throws(() => buildProvider(config({ fallbacks: ['openai/'] }), {}), { name: 'ConfigError', message: /^agent\.fallbacks\[0\]: expected provider\/model/ });
});

t.test('a base URL that is not an http(s) URL is a ConfigError naming where it came from', async (t) => {
  const llama = config({ model: 'openai/llama3' });
  t.throws(() => buildProvider(llama, { OPENAI_BASE_URL: '127.0.0.1:11434/v1' }), { name: 'ConfigError', message: 'OPENAI_BASE_URL: expected an http(s) URL, found "127.0.0.1:11434/v1"' });
  t.throws(() => buildProvider(config({}, { anthropic: { apiKey: 'k', baseUrl: 'ftp://example' } }), {}), { name: 'ConfigError', message: /^providers\.anthropic\.baseUrl: expected an http\(s\) URL/ });
});

t.test('credentials and base URLs: the config first, then the env argument, never process.env', async (t) => {
  const srv = await A.startAnthropicServer(A.textReply('from the stand-in'));
  t.teardown(() => srv.close());
  const saved = { url: process.env.ANTHROPIC_BASE_URL, key: process.env.ANTHROPIC_API_KEY };
  // The SDK would read these if it were left to; a dead port and a wrong key show it is not.
  process.env.ANTHROPIC_BASE_URL = 'http://127.0.0.1:9';
  process.env.ANTHROPIC_API_KEY = 'process-env-key';
  t.teardown(() => {
    for (const [k, v] of [['ANTHROPIC_BASE_URL', saved.url], ['ANTHROPIC_API_KEY', saved.key]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  const fromEnv = built(buildProvider(defaults(), { ANTHROPIC_API_KEY: 'env-key', ANTHROPIC_BASE_URL: srv.url }));
  t.same((await fromEnv.complete(request)).content, [{ type: 'text', text: 'from the stand-in' }]);
  t.equal(srv.requests[0]!.headers.authorization, 'Bearer env-key');

  const fromConfig = built(buildProvider(config({}, { anthropic: { apiKey: 'config-key', baseUrl: srv.url } }), { ANTHROPIC_API_KEY: 'env-key', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' }));
  await fromConfig.complete(request);
  t.equal(srv.requests[1]!.headers.authorization, 'Bearer config-key', 'the config wins over the environment');
});

t.test('the chain follows agent.*: retries, backoff, fallback order, request timeout', async (t) => {
  const sa = await A.startAnthropicServer(A.errorReply(529));
  const so = await O.startOpenAIServer(O.textReply('from the fallback'));
  t.teardown(() => Promise.all([sa.close(), so.close()]));
  const waits: number[] = [];
  const opts: BuildOptions = { sleep: async (ms) => void waits.push(ms), random: () => 0.5 };
  const c = config({ model: 'anthropic/c', fallbacks: ['openai/m'], retries: 2, retryBaseMs: 400, retryMaxMs: 1000 }, { openai: { baseUrl: `${so.url}/v1` } });
  const p = built(buildProvider(c, { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: sa.url }, opts));
  const r = await p.complete(request);
  t.equal(r.answeredBy, 'openai/m');
  t.equal(sa.requests.length, 3, 'agent.retries = 2');
  t.same(waits, [300, 600], 'steps 400 and 800, each at 3/4 with random() = 0.5');

  sa.enqueue(A.stall);
  const slow = built(buildProvider({ ...c, agent: { ...c.agent, fallbacks: [], retries: 0, requestTimeoutMs: 150 } }, { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: sa.url }, opts));
  await t.rejects(slow.complete(request), { message: 'anthropic/c: timed out after 150 ms', retryable: true });
});
