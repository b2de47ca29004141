// The real clients (the Anthropic SDK, undici) against stand-in servers that speak each API's wire
// format: streaming, tool round trips, caching markers, retries, fallback, broken streams, timeouts.
import t from 'tap';
import { anthropicProvider } from '../src/agent/providers/anthropic.js';
import { fallbackChain } from '../src/agent/providers/chain.js';
import { buildProvider, parseModelRef } from '../src/agent/providers/index.js';
import { openaiProvider } from '../src/agent/providers/openai.js';
import { withRetries, type RetryPolicy } from '../src/agent/providers/retry.js';
import { ProviderError, type Message, type ProviderEvent, type ProviderRequest } from '../src/agent/types.js';
import { defaults } from '../src/config/schema.js';
import { errorReply, malformed, stall, startAnthropicServer, textReply, toolUseReply } from './support/anthropic-server.js';
import { oaError, oaText, oaTools, startOpenAIServer } from './support/openai-server.js';

const tools = [{ name: 'gpio_write', description: 'set a GPIO line', inputSchema: { type: 'object', properties: { line: { type: 'integer' }, value: { type: 'integer' } }, required: ['line', 'value'] } }];
const hello: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'switch the relay on' }] }];
const request = (messages: Message[] = hello): ProviderRequest => ({ model: 'm', system: 'You are pinclaw.', messages, tools, maxTokens: 256 });
const waits: number[] = [];
const policy: RetryPolicy = { retries: 2, baseMs: 100, maxMs: 5000, sleep: async (ms) => void waits.push(ms), random: () => 1 };

t.beforeEach(() => void (waits.length = 0));

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

t.test('anthropic: streamed text, usage, caching markers, api key', async (t) => {
  const srv = await startAnthropicServer();
  t.teardown(() => srv.close());
  srv.enqueue({ kind: 'reply', content: [{ type: 'text', text: 'Relay is on.' }], inputTokens: 1234, cacheRead: 1000 });
  const p = anthropicProvider('claude-test', { apiKey: 'sk-ant-test', baseUrl: srv.url, timeoutMs: 5000 });
  const events: ProviderEvent[] = [];
  const r = await p.complete(request(), (e) => events.push(e));
  t.same(r.content, [{ type: 'text', text: 'Relay is on.' }]);
  t.equal(r.stopReason, 'end_turn');
  t.match(r.usage, { inputTokens: 1234, cacheReadTokens: 1000 });
  t.equal(events.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text).join(''), 'Relay is on.');
  t.ok(events.length > 1, 'the text arrived in several deltas');
  const sent = srv.requests[0]!;
  t.equal(sent.headers.authorization, 'Bearer sk-ant-test', 'the key, as this SDK sends it');
  t.equal(sent.body.stream, true);
  t.equal(sent.body.model, 'claude-test');
  t.same(sent.body.system, [{ type: 'text', text: 'You are pinclaw.', cache_control: { type: 'ephemeral' } }]);
  t.same(sent.body.tools.at(-1).cache_control, { type: 'ephemeral' }, 'the last tool carries the cache marker');
});

t.test('anthropic: a tool_use round trip survives both mappings', async (t) => {
  const srv = await startAnthropicServer();
  t.teardown(() => srv.close());
  srv.enqueue(toolUseReply([{ name: 'gpio_write', input: { line: 17, value: 1 }, id: 'toolu_a' }], 'Switching.'), textReply('Done.'));
  const p = anthropicProvider('claude-test', { apiKey: 'k', baseUrl: srv.url, timeoutMs: 5000 });
  const first = await p.complete(request());
  t.equal(first.stopReason, 'tool_use');
  t.same(first.content, [{ type: 'text', text: 'Switching.' }, { type: 'tool_use', id: 'toolu_a', name: 'gpio_write', input: { line: 17, value: 1 } }]);
  const next: Message[] = [...hello, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', toolUseId: 'toolu_a', content: 'line 17 = 1', isError: false }] }];
  await p.complete(request(next));
  const wire = srv.requests[1]!.body.messages;
  t.same(wire[1].content[1], { type: 'tool_use', id: 'toolu_a', name: 'gpio_write', input: { line: 17, value: 1 } });
  t.same(wire[2].content[0], { type: 'tool_result', tool_use_id: 'toolu_a', content: 'line 17 = 1' });
});

t.test('openai: streamed text and tool calls assembled from fragments; the round trip', async (t) => {
  const srv = await startOpenAIServer();
  t.teardown(() => srv.close());
  srv.enqueue(oaTools([{ name: 'gpio_write', arguments: { line: 17, value: 1 }, id: 'call_1' }, { name: 'gpio_write', arguments: { line: 18, value: 0 }, id: 'call_2' }], 'Two lines.'), oaText('Both set.'));
  const p = openaiProvider('llama', { baseUrl: `${srv.url}/v1`, timeoutMs: 5000 });
  const first = await p.complete(request());
  t.equal(first.stopReason, 'tool_use');
  t.same(first.content, [
    { type: 'text', text: 'Two lines.' },
    { type: 'tool_use', id: 'call_1', name: 'gpio_write', input: { line: 17, value: 1 } },
    { type: 'tool_use', id: 'call_2', name: 'gpio_write', input: { line: 18, value: 0 } },
  ]);
  t.equal(first.usage.inputTokens, 40);
  t.notOk(srv.requests[0]!.headers.authorization, 'no key, no authorization header (local servers)');
  const next: Message[] = [...hello, { role: 'assistant', content: first.content }, {
    role: 'user', content: [{ type: 'tool_result', toolUseId: 'call_1', content: 'ok' }, { type: 'tool_result', toolUseId: 'call_2', content: 'busy', isError: true }],
  }];
  const second = await p.complete(request(next));
  t.same(second.content, [{ type: 'text', text: 'Both set.' }]);
  const wire = srv.requests[1]!.body.messages;
  t.same(wire[0], { role: 'system', content: 'You are pinclaw.' });
  t.same(wire[2].tool_calls[1], { id: 'call_2', type: 'function', function: { name: 'gpio_write', arguments: '{"line":18,"value":0}' } });
  t.same(wire.slice(3), [{ role: 'tool', tool_call_id: 'call_1', content: 'ok' }, { role: 'tool', tool_call_id: 'call_2', content: 'ERROR: busy' }]);
  t.same(srv.requests[0]!.body.tools[0].function.name, 'gpio_write');
});

t.test('429 with retry-after, then success: the delay is the server\'s', async (t) => {
  const srv = await startAnthropicServer();
  t.teardown(() => srv.close());
  srv.enqueue(errorReply(429, 'rate_limit_error', 'slow down', '2'), textReply('fine'));
  const p = anthropicProvider('c', { apiKey: 'k', baseUrl: srv.url, timeoutMs: 5000 });
  const events: ProviderEvent[] = [];
  const r = await withRetries(p, request(), policy, (e) => events.push(e));
  t.same(r.content, [{ type: 'text', text: 'fine' }]);
  t.same(waits, [2000]);
  t.match(events.find((e) => e.type === 'retry'), { attempt: 1, delayMs: 2000, reason: /429 slow down/ });
});

t.test('5xx is retried with backoff; a 400 is not retried', async (t) => {
  const srv = await startOpenAIServer();
  t.teardown(() => srv.close());
  srv.enqueue(oaError(500, 'boom'), oaError(502, 'bad gateway'), oaText('up again'));
  const p = openaiProvider('m', { baseUrl: `${srv.url}/v1`, apiKey: 'k', timeoutMs: 5000 });
  t.same((await withRetries(p, request(), policy)).content, [{ type: 'text', text: 'up again' }]);
  t.same(waits, [100, 200], 'exponential: base, then twice the base');
  srv.enqueue(oaError(400, 'bad request: messages missing'));
  const e = await caught(withRetries(p, request(), policy));
  t.ok(e instanceof ProviderError && e.status === 400 && !e.retryable, 'a 400 is final');
  t.equal(srv.requests.length, 4, 'the 400 was tried once');
});

t.test('529 on the first provider falls back to the second', async (t) => {
  const a = await startAnthropicServer(errorReply(529, 'overloaded_error', 'Overloaded'));
  const o = await startOpenAIServer(oaText('from the fallback'));
  t.teardown(() => Promise.all([a.close(), o.close()]));
  const chain = fallbackChain([anthropicProvider('c', { apiKey: 'k', baseUrl: a.url, timeoutMs: 5000 }), openaiProvider('m', { baseUrl: `${o.url}/v1`, timeoutMs: 5000 })], policy);
  const r = await chain.complete(request());
  t.same(r.content, [{ type: 'text', text: 'from the fallback' }]);
  t.equal(r.answeredBy, 'openai/m');
  t.equal(a.requests.length, 3, 'the first provider got its retries');
});

t.test('everything failing gives one readable error', async (t) => {
  const a = await startAnthropicServer(errorReply(529, 'overloaded_error', 'Overloaded'));
  const o = await startOpenAIServer(oaError(503, 'unavailable'));
  t.teardown(() => Promise.all([a.close(), o.close()]));
  const chain = fallbackChain([anthropicProvider('c', { apiKey: 'k', baseUrl: a.url, timeoutMs: 5000 }), openaiProvider('m', { baseUrl: `${o.url}/v1`, timeoutMs: 5000 })], { ...policy, retries: 0 });
  await t.rejects(chain.complete(request()), { message: 'all providers failed (anthropic/c: 529 Overloaded; openai/m: 503 unavailable)' });
});

t.test('a malformed stream is a retryable provider error, never a crash', async (t) => {
  const a = await startAnthropicServer();
  const o = await startOpenAIServer();
  t.teardown(() => Promise.all([a.close(), o.close()]));
  a.enqueue(malformed, textReply('recovered'));
  const pa = anthropicProvider('c', { apiKey: 'k', baseUrl: a.url, timeoutMs: 5000 });
  const e = await caught(pa.complete(request()));
  t.ok(e instanceof ProviderError && e.retryable, `retryable: ${String(e)}`);
  t.same((await pa.complete(request())).content, [{ type: 'text', text: 'recovered' }]);
  o.enqueue({ kind: 'malformed' });
  const po = openaiProvider('m', { baseUrl: `${o.url}/v1`, timeoutMs: 5000 });
  await t.rejects(po.complete(request()), { message: /bad stream: an event is not JSON/ });
});

t.test('a stalled server hits the request timeout', async (t) => {
  const a = await startAnthropicServer(stall);
  const o = await startOpenAIServer({ kind: 'stall' });
  t.teardown(() => Promise.all([a.close(), o.close()]));
  await t.rejects(anthropicProvider('c', { apiKey: 'k', baseUrl: a.url, timeoutMs: 300 }).complete(request()), { message: /timed out after 300 ms/, retryable: true });
  await t.rejects(openaiProvider('m', { baseUrl: `${o.url}/v1`, timeoutMs: 300 }).complete(request()), { message: /timed out after 300 ms/, retryable: true });
});

t.test('a stream that stalls after its headers still hits the request timeout', async (t) => {
  const a = await startAnthropicServer({ kind: 'stallMidStream' });
  t.teardown(() => a.close());
  await t.rejects(anthropicProvider('c', { apiKey: 'k', baseUrl: a.url, timeoutMs: 300 }).complete(request()), { message: /timed out after 300 ms/, retryable: true });
});

t.test('max_tokens in the middle of a tool call: no crash, the stop reason says so', async (t) => {
  const a = await startAnthropicServer();
  const o = await startOpenAIServer();
  t.teardown(() => Promise.all([a.close(), o.close()]));
  a.enqueue({ kind: 'reply', content: [{ type: 'text', text: 'I will' }, { type: 'tool_use', name: 'gpio_write', input: { line: 17, value: 1 } }], stopReason: 'max_tokens', cutToolJsonAt: 9 });
  const ra = await anthropicProvider('c', { apiKey: 'k', baseUrl: a.url, timeoutMs: 5000 }).complete(request());
  t.equal(ra.stopReason, 'max_tokens');
  t.equal(ra.content[0]!.type, 'text');
  o.enqueue({ kind: 'reply', toolCalls: [{ name: 'gpio_write', arguments: { line: 17, value: 1 } }], finishReason: 'length', cutArgsAt: 6 });
  const ro = await openaiProvider('m', { baseUrl: `${o.url}/v1`, timeoutMs: 5000 }).complete(request());
  t.equal(ro.stopReason, 'max_tokens');
  t.match(ro.content[0], { type: 'tool_use', input: { _incomplete: '{"line' } });
});

t.test('buildProvider: missing configuration is explained; bad model refs name the key', async (t) => {
  const config = defaults();
  const missing = buildProvider(config, {});
  t.ok('missing' in missing);
  t.match((missing as { missing: string }).missing, /No model provider is configured\. Set ANTHROPIC_API_KEY/);
  t.ok('provider' in buildProvider(config, { ANTHROPIC_API_KEY: 'k' }));
  config.agent.model = 'openai/llama3';
  t.ok('provider' in buildProvider(config, { OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' }), 'a local server needs no key');
  config.agent.fallbacks = ['anthropic/c', 'gemini/x'];
  t.throws(() => buildProvider(config, {}), { message: /agent\.fallbacks\[1\]: unknown provider 'gemini' in "gemini\/x"; known: anthropic, openai/ });
  t.throws(() => parseModelRef('claude', 'agent.model'), { message: /agent\.model: expected provider\/model/ });
});
