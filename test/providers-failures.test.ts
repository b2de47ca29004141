// Failure handling of the real clients against the stand-ins: retries and their delays (recorded by
// an injected sleep, never measured), retry-after, fallback from one provider to the next, broken
// and stalled streams, the caller's abort, replies cut off inside a tool call, and the one error
// that sums up a chain that failed everywhere.
import { createServer } from 'node:net';
import t, { type Test } from 'tap';
import { anthropicProvider } from '../src/agent/providers/anthropic.js';
import { fallbackChain } from '../src/agent/providers/chain.js';
import { openaiProvider } from '../src/agent/providers/openai.js';
import { withRetries, type RetryPolicy } from '../src/net/retry.js';
import { ProviderError, type Message, type Provider, type ProviderEvent, type ProviderRequest } from '../src/agent/types.js';
import { setLogSink } from '../src/log.js';
import * as A from './support/anthropic-server.js';
import * as O from './support/openai-server.js';

const tools = [{ name: 'gpio_write', description: 'set a GPIO line', inputSchema: { type: 'object', properties: { line: { type: 'integer' }, value: { type: 'integer' } } } }];
const hello: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'switch the relay on' }] }];
const request = (signal?: AbortSignal): ProviderRequest => ({ model: 'ignored', system: 'You are pinclaw.', messages: hello, tools, maxTokens: 256, signal });

const waits: number[] = [];
/** random() = 1: every backoff is its full step, so the delays are exact. */
const policy: RetryPolicy = { retries: 2, baseMs: 100, maxMs: 5000, sleep: async (ms) => void waits.push(ms), random: () => 1 };
const logLines: string[] = [];
setLogSink((line) => logLines.push(line));
t.beforeEach(() => {
  waits.length = 0;
  logLines.length = 0;
});

const anth = (url: string, timeoutMs = 5000, apiKey = 'sk-ant-k') => anthropicProvider('c', { apiKey, baseUrl: url, timeoutMs });
const oai = (url: string, timeoutMs = 5000, apiKey?: string) => openaiProvider('m', { baseUrl: `${url}/v1`, apiKey, timeoutMs });

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof ProviderError)) throw new Error(`expected a ProviderError, got ${String(e)}`);
  return e;
}

async function twoServers(t: Test, a: A.Step<A.AnthropicStep> = A.textReply('ok'), o: O.Step<O.OpenAIStep> = O.textReply('ok')) {
  const sa = await A.startAnthropicServer(a);
  const so = await O.startOpenAIServer(o);
  t.teardown(() => Promise.all([sa.close(), so.close()]));
  return { sa, so };
}

t.test('429 with retry-after, then success: the delay is the server\'s, and a retry event says so', async (t) => {
  const { sa } = await twoServers(t);
  sa.enqueue(A.errorReply(429, { retryAfter: 2 }), A.textReply('fine'));
  const events: ProviderEvent[] = [];
  const r = await withRetries(anth(sa.url), request(), policy, (e) => events.push(e));
  t.same(r.content, [{ type: 'text', text: 'fine' }]);
  t.same(waits, [2000], 'retry-after: 2 → 2000 ms handed to sleep');
  t.same(events.filter((e) => e.type === 'retry'), [{ type: 'retry', attempt: 1, delayMs: 2000, reason: '429 stand-in rate_limit_error' }]);
  t.equal(sa.requests.length, 2);
});

t.test('retry-after-ms is honoured too (OpenAI-compatible)', async (t) => {
  const { so } = await twoServers(t);
  so.enqueue(O.errorReply(429, { message: 'slow down', retryAfterMs: 1500 }), O.textReply('fine'));
  await withRetries(oai(so.url), request(), policy);
  t.same(waits, [1500]);
});

t.test('5xx is retried with exponential backoff and jitter; the SDK itself does not retry', async (t) => {
  const { sa, so } = await twoServers(t);
  so.enqueue(O.errorReply(500, 'boom'), O.errorReply(502, 'bad gateway'), O.textReply('up again'));
  t.same((await withRetries(oai(so.url), request(), policy)).content, [{ type: 'text', text: 'up again' }]);
  t.same(waits, [100, 200], 'full steps: base, then twice the base');

  waits.length = 0;
  so.enqueue(O.errorReply(503, 'x'), O.errorReply(503, 'x'), O.textReply('ok'));
  await withRetries(oai(so.url), request(), { ...policy, random: () => 0 });
  t.same(waits, [50, 100], 'jitter never goes below half the step');

  sa.enqueue(A.errorReply(500));
  const e = await failure(anth(sa.url).complete(request()));
  t.match(e, { status: 500, retryable: true });
  t.equal(sa.requests.length, 1, 'maxRetries: 0 — one request, whatever the status');
});

t.test('a 400 or 401 is final: tried once', async (t) => {
  const { so } = await twoServers(t);
  so.enqueue(O.errorReply(400, { message: 'messages: missing' }));
  const e = await failure(withRetries(oai(so.url), request(), policy));
  t.match(e, { status: 400, retryable: false, message: '400 messages: missing' });
  t.equal(so.requests.length, 1);
  t.same(waits, []);
});

t.test('a retry-after longer than retryMaxMs is not waited for: the next provider answers', async (t) => {
  const { sa, so } = await twoServers(t, A.errorReply(429, { message: 'rate limited', retryAfter: 60 }), O.textReply('from the fallback'));
  const e = await failure(withRetries(anth(sa.url), request(), policy));
  t.match(e, { status: 429, retryAfterMs: 60000, message: '429 rate limited (asked to wait 60 s, more than agent.retryMaxMs)' });
  t.same(waits, []);

  const r = await fallbackChain([anth(sa.url), oai(so.url)], policy).complete(request());
  t.equal(r.answeredBy, 'openai/m');
  t.equal(sa.requests.length, 2, 'one request per call, no retries');
  t.same(waits, []);
});

t.test('529 on the first provider falls back to the second after its retries', async (t) => {
  const { sa, so } = await twoServers(t, A.errorReply(529), O.textReply('from the fallback'));
  const events: ProviderEvent[] = [];
  const chain = fallbackChain([anth(sa.url), oai(so.url)], policy);
  t.equal(chain.id, 'anthropic/c > openai/m');
  const r = await chain.complete(request(), (e) => events.push(e));
  t.same(r.content, [{ type: 'text', text: 'from the fallback' }]);
  t.equal(r.answeredBy, 'openai/m');
  t.equal(sa.requests.length, 3, 'the first provider got its two retries');
  t.equal(so.requests.length, 1);
  t.same(waits, [100, 200]);
  t.same(events.filter((e) => e.type === 'retry'), [
    { type: 'retry', attempt: 1, delayMs: 100, reason: '529 Overloaded' },
    { type: 'retry', attempt: 2, delayMs: 200, reason: '529 Overloaded' },
    { type: 'retry', attempt: 3, delayMs: 0, reason: 'anthropic/c: 529 Overloaded, after 3 attempts; trying openai/m' },
  ], 'two retries, then the move to the fallback, each voiding streamed text');
  t.same(logLines, ['warn: anthropic/c: 529 Overloaded, after 3 attempts; trying openai/m']);
});

t.test('everything failing gives one readable error, with no key in it', async (t) => {
  const key = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123';
  const sa = await A.startAnthropicServer(A.errorReply(529));
  const so = await O.startOpenAIServer(O.textReply('never'), { apiKey: 'the-right-key' });
  t.teardown(() => Promise.all([sa.close(), so.close()]));
  const chain = fallbackChain([anth(sa.url), oai(so.url, 5000, key)], { ...policy, retries: 1 });
  const e = await failure(chain.complete(request()));
  t.equal(e.message, 'all providers failed: anthropic/c: 529 Overloaded, after 2 attempts; openai/m: 401 Incorrect API key provided: [redacted].');
  t.notOk(e.message.includes(key));
  t.equal(e.providerId, 'anthropic/c > openai/m');
  t.equal(e.retryable, true, 'one of them might work later');

  const single = await failure(fallbackChain([anth(sa.url)], { ...policy, retries: 1 }).complete(request()));
  t.match(single, { message: 'anthropic/c: 529 Overloaded, after 2 attempts', status: 529 });
});

t.test('malformed streams are retryable provider errors, never a crash', async (t) => {
  const { sa, so } = await twoServers(t);
  const cases: [string, Provider, () => void, RegExp][] = [
    ['anthropic truncated', anth(sa.url), () => sa.enqueue(A.malformed), /^stream interrupted/],
    ['anthropic garbage', anth(sa.url), () => sa.enqueue(A.garbage), /^bad stream: an event is not JSON$/],
    ['anthropic ended early', anth(sa.url), () => sa.enqueue(A.endedEarly), /^bad stream: it ended before message_stop$/],
    ['openai truncated', oai(so.url), () => so.enqueue(O.malformed), /^stream interrupted/],
    ['openai garbage', oai(so.url), () => so.enqueue(O.garbage), /^bad stream: a chunk is not JSON$/],
    ['openai ended early', oai(so.url), () => so.enqueue(O.endedEarly), /^bad stream: it ended without a finish_reason or \[DONE\]$/],
  ];
  for (const [name, provider, arm, message] of cases) {
    arm();
    const e = await failure(provider.complete(request()));
    t.match(e, { retryable: true, message }, name);
  }
  // And the retry layer gets an answer on the next attempt.
  sa.enqueue(A.garbage, A.textReply('recovered'));
  so.enqueue(O.malformed, O.textReply('recovered'));
  t.same((await withRetries(anth(sa.url), request(), policy)).content, [{ type: 'text', text: 'recovered' }]);
  t.same((await withRetries(oai(so.url), request(), policy)).content, [{ type: 'text', text: 'recovered' }]);
  t.same(waits, [100, 100]);
});

t.test('an error event inside a 200 stream: overloaded is retried, a request error is not', async (t) => {
  const { sa, so } = await twoServers(t);
  sa.enqueue(A.streamError('overloaded_error', 'Overloaded', 'I was about to'), A.textReply('second try'));
  const events: ProviderEvent[] = [];
  const r = await withRetries(anth(sa.url), request(), policy, (e) => events.push(e));
  t.same(r.content, [{ type: 'text', text: 'second try' }]);
  t.same(events.map((e) => e.type).filter((type, i, all) => type !== all[i - 1]), ['text_delta', 'retry', 'text_delta'], 'the partial text, then the retry event that voids it, then the answer');
  t.match(events.find((e) => e.type === 'retry'), { reason: 'stream error: overloaded_error: Overloaded' });

  sa.enqueue(A.streamError('invalid_request_error', 'prompt is too long'));
  t.match(await failure(withRetries(anth(sa.url), request(), policy)), { retryable: false, message: 'stream error: invalid_request_error: prompt is too long' });

  so.enqueue(O.streamError('the model runner crashed'));
  t.match(await failure(oai(so.url).complete(request())), { retryable: true, message: 'stream error: server_error: the model runner crashed' });
});

t.test('a stalled server hits the request timeout, before the headers and in the middle of the stream', async (t) => {
  const { sa, so } = await twoServers(t);
  sa.enqueue(A.stall, A.stallMidStream('Let me'));
  so.enqueue(O.stall, O.stallMidStream('Let me'));
  // Mid-stream gets a longer limit only so a loaded machine still sees the first delta before it.
  const cases = [['anthropic', anth(sa.url, 200), anth(sa.url, 1000)], ['openai', oai(so.url, 200), oai(so.url, 1000)]] as const;
  for (const [name, quick, patient] of cases) {
    t.match(await failure(quick.complete(request())), { message: 'timed out after 200 ms', retryable: true }, `${name}: no headers`);
    const events: ProviderEvent[] = [];
    t.match(await failure(patient.complete(request(), (e) => events.push(e))), { message: 'timed out after 1000 ms', retryable: true }, `${name}: mid-stream`);
    t.equal(events.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text).join(''), 'Let me', `${name}: the text before the stall was streamed`);
  }
});

t.test("the caller's abort ends the request: no retry, no fallback", async (t) => {
  const { sa, so } = await twoServers(t, A.stall, O.textReply('must not be asked'));
  const ac = new AbortController();
  const chain = fallbackChain([anth(sa.url), oai(so.url)], policy);
  const pending = failure(chain.complete(request(ac.signal)));
  await sa.received(1);
  ac.abort();
  t.match(await pending, { message: 'request aborted', retryable: false });
  t.equal(sa.requests.length, 1);
  t.equal(so.requests.length, 0);
  t.same(waits, []);

  // Aborted while waiting for a retry (the real sleep, with a wait no test would sit through).
  sa.enqueue(A.errorReply(503));
  const ac2 = new AbortController();
  const retrying = failure(withRetries(anth(sa.url), request(ac2.signal), { retries: 3, baseMs: 600_000, maxMs: 600_000 }, (e) => e.type === 'retry' && ac2.abort()));
  t.match(await retrying, { message: 'request aborted', retryable: false });
});

t.test('a refused connection is a retryable network error', async (t) => {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
  const e = await failure(openaiProvider('m', { baseUrl: `http://127.0.0.1:${port}/v1`, timeoutMs: 5000 }).complete(request()));
  t.match(e, { retryable: true, message: /^connection failed \(ECONNREFUSED\)/ });
  const ea = await failure(anth(`http://127.0.0.1:${port}`).complete(request()));
  t.match(ea, { retryable: true, message: /^connection failed/ });
});

t.test('max_tokens inside a tool call: text and complete calls kept, the cut one marked', async (t) => {
  const { sa, so } = await twoServers(t);
  const done = { name: 'gpio_write', input: { line: 4, value: 0 }, id: 'toolu_done' };
  const cut = { name: 'gpio_write', input: { line: 17, value: 1 }, id: 'toolu_cut' };
  sa.enqueue(A.cutOffToolUseReply('I will switch both.', cut, 9, [done]));
  const ra = await anth(sa.url).complete(request());
  t.equal(ra.stopReason, 'max_tokens');
  t.same(ra.content, [
    { type: 'text', text: 'I will switch both.' },
    { type: 'tool_use', id: 'toolu_done', name: 'gpio_write', input: { line: 4, value: 0 } },
    { type: 'tool_use', id: 'toolu_cut', name: 'gpio_write', input: { _incomplete: '{"line":1' } },
  ]);

  so.enqueue(O.cutOffToolCallReply('Switching.', { name: 'gpio_write', arguments: { line: 17, value: 1 }, id: 'call_cut' }, 6, [{ name: 'gpio_write', arguments: { line: 4, value: 0 }, id: 'call_done' }]));
  const ro = await oai(so.url).complete(request());
  t.equal(ro.stopReason, 'max_tokens');
  t.same(ro.content, [
    { type: 'text', text: 'Switching.' },
    { type: 'tool_use', id: 'call_done', name: 'gpio_write', input: { line: 4, value: 0 } },
    { type: 'tool_use', id: 'call_cut', name: 'gpio_write', input: { _incomplete: '{"line' } },
  ]);

  // The marked call goes back to the API as it is, so the session stays valid.
  await anth(sa.url).complete({ ...request(), messages: [...hello, { role: 'assistant', content: ra.content }, { role: 'user', content: [{ type: 'tool_result', toolUseId: 'toolu_cut', content: 'cut off', isError: true }] }] });
  t.same(sa.requests[1]!.body.messages[1].content[2], { type: 'tool_use', id: 'toolu_cut', name: 'gpio_write', input: { _incomplete: '{"line":1' } });
});

t.test('a redirect or an HTML page instead of the API says what it is', async (t) => {
  const { createServer: createHttp } = await import('node:http');
  const srv = createHttp((req, res) => {
    if (req.url?.startsWith('/moved')) res.writeHead(301, { location: 'https://elsewhere/v1/chat/completions' }).end();
    else res.writeHead(200, { 'content-type': 'text/html' }).end('<html>Sign in to the Wi-Fi</html>');
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => srv.close(r)));
  const base = `http://127.0.0.1:${(srv.address() as { port: number }).port}`;
  t.match(await failure(openaiProvider('m', { baseUrl: `${base}/moved/v1`, timeoutMs: 5000 }).complete(request())), { status: 301, retryable: false });
  t.match(await failure(openaiProvider('m', { baseUrl: `${base}/v1`, timeoutMs: 5000 }).complete(request())), { retryable: true, message: 'bad stream: the server answered with text/html, not an event stream' });
});

t.test('broken tool JSON without a cut-off is a bad stream (retryable), not a tool call', async (t) => {
  const { so } = await twoServers(t);
  // finish_reason tool_calls with arguments that stop half way: the server lost data.
  so.enqueue({ kind: 'reply', toolCalls: [{ name: 'gpio_write', arguments: { line: 17 } }], finishReason: 'tool_calls', cutArgsAt: 5 });
  t.match(await failure(oai(so.url).complete(request())), { retryable: true, message: 'bad stream: the arguments of tool call gpio_write are not a JSON object' });
});
