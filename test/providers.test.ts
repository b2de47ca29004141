// The real clients (the Anthropic SDK, undici) against stand-in servers that speak each API's wire
// format: streaming with deltas, tool round trips through both mappings, caching markers, keys and
// usage. Failures, retries and fallback are in providers-failures.test.ts.
import Anthropic from '@anthropic-ai/sdk';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { anthropicProvider } from '../src/agent/providers/anthropic.js';
import { EMPTY_CONTENT, toAnthropicMessages } from '../src/agent/providers/anthropic-wire.js';
import { openaiProvider } from '../src/agent/providers/openai.js';
import type { Message, ProviderEvent, ProviderRequest } from '../src/agent/types.js';
import * as A from './support/anthropic-server.js';
import * as O from './support/openai-server.js';

const tools = [
  { name: 'read_sensor', description: 'read a sensor', inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
  { name: 'gpio_write', description: 'set a GPIO line', inputSchema: { type: 'object', properties: { line: { type: 'integer' }, value: { type: 'integer' } }, required: ['line', 'value'] } },
];
const hello: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'switch the relay on' }] }];
const request = (messages: Message[] = hello): ProviderRequest => ({ model: 'ignored', system: 'You are pinclaw.', messages, tools, maxTokens: 256 });
const deltas = (events: ProviderEvent[]) => events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : []));
// An input whose JSON needs escapes and nesting, so fragment boundaries fall in awkward places.
const relayInput = { line: 17, value: 1, label: 'relay "A" \u00e9\n', tags: ['x', 'y'], nested: { deep: [1, { two: 2 }] } };

t.test('anthropic: streamed text in several deltas, usage with cache counts, the request as sent', async (t) => {
  const srv = await A.startAnthropicServer();
  t.teardown(() => srv.close());
  srv.enqueue({ kind: 'reply', content: [{ type: 'text', text: 'Relay is on, as you asked.' }], inputTokens: 1234, outputTokens: 7, cacheRead: 1000, cacheWrite: 200 });
  const p = anthropicProvider('claude-test', { apiKey: 'sk-ant-test-key', baseUrl: srv.url, timeoutMs: 5000 });
  const events: ProviderEvent[] = [];
  const r = await p.complete(request(), (e) => events.push(e));

  t.same(r.content, [{ type: 'text', text: 'Relay is on, as you asked.' }]);
  t.equal(r.stopReason, 'end_turn');
  t.same(r.usage, { inputTokens: 1234, outputTokens: 7, cacheReadTokens: 1000, cacheWriteTokens: 200 });
  t.equal(r.model, 'claude-test');
  t.equal(r.answeredBy, 'anthropic/claude-test');
  t.ok(deltas(events).length >= 3, 'the text arrived in several deltas');
  t.equal(deltas(events).join(''), 'Relay is on, as you asked.');

  t.equal(srv.requests.length, 1);
  const sent = srv.requests[0]!;
  t.equal(sent.path, '/v1/messages');
  // SDK 1.12 sends an API key as a bearer token, not as x-api-key.
  t.equal(sent.headers.authorization, 'Bearer sk-ant-test-key');
  t.equal(sent.body.stream, true);
  t.equal(sent.body.model, 'claude-test');
  t.equal(sent.body.max_tokens, 256);
  t.same(sent.body.system, [{ type: 'text', text: 'You are pinclaw.', cache_control: { type: 'ephemeral' } }], 'the system prompt carries the cache marker');
  t.same(sent.body.tools.map((x: { name: string }) => x.name), ['read_sensor', 'gpio_write']);
  t.same(sent.body.tools[1].cache_control, { type: 'ephemeral' }, 'the last tool carries the cache marker');
  t.notOk('cache_control' in sent.body.tools[0], 'no other tool does');
  t.same(sent.body.tools[1].input_schema, tools[1]!.inputSchema);
  t.same(sent.body.messages, [{ role: 'user', content: [{ type: 'text', text: 'switch the relay on' }] }]);
});

t.test('anthropic: a tool_use round trip survives both mappings', async (t) => {
  const srv = await A.startAnthropicServer();
  t.teardown(() => srv.close());
  srv.enqueue(
    A.toolUseReply([{ name: 'gpio_write', input: relayInput, id: 'toolu_a' }, { name: 'read_sensor', input: { id: 'temp' }, id: 'toolu_b' }], 'Switching.'),
    A.textReply('Done.'),
  );
  const p = anthropicProvider('claude-test', { apiKey: 'k', baseUrl: srv.url, timeoutMs: 5000 });
  const first = await p.complete(request());
  t.equal(first.stopReason, 'tool_use');
  t.same(first.content, [
    { type: 'text', text: 'Switching.' },
    { type: 'tool_use', id: 'toolu_a', name: 'gpio_write', input: relayInput },
    { type: 'tool_use', id: 'toolu_b', name: 'read_sensor', input: { id: 'temp' } },
  ], 'the input JSON assembled from its fragments');

  const next: Message[] = [
    ...hello,
    { role: 'assistant', content: first.content },
    { role: 'user', content: [{ type: 'tool_result', toolUseId: 'toolu_a', content: 'line 17 = 1' }, { type: 'tool_result', toolUseId: 'toolu_b', content: 'sensor offline', isError: true }] },
  ];
  const second = await p.complete(request(next));
  t.same(second.content, [{ type: 'text', text: 'Done.' }]);
  t.same(srv.requests[1]!.body.messages, [
    { role: 'user', content: [{ type: 'text', text: 'switch the relay on' }] },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Switching.' },
        { type: 'tool_use', id: 'toolu_a', name: 'gpio_write', input: relayInput },
        { type: 'tool_use', id: 'toolu_b', name: 'read_sensor', input: { id: 'temp' } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_a', content: 'line 17 = 1' },
        { type: 'tool_result', tool_use_id: 'toolu_b', content: 'sensor offline', is_error: true },
      ],
    },
  ]);
});

t.test('anthropic: images, empty text and an empty earlier reply map to what the API accepts', async (t) => {
  const srv = await A.startAnthropicServer();
  t.teardown(() => srv.close());
  const p = anthropicProvider('c', { apiKey: 'k', baseUrl: srv.url, timeoutMs: 5000 });
  await p.complete({
    ...request([
      { role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' }] },
      { role: 'assistant', content: [] },
      { role: 'user', content: [{ type: 'text', text: '' }, { type: 'text', text: 'hello?' }] },
    ]),
    system: '',
    tools: [],
  });
  const body = srv.requests[0]!.body;
  t.same(body.messages[0].content[1], { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } });
  t.same(body.messages[1].content, [{ type: 'text', text: EMPTY_CONTENT }], 'an empty earlier reply gets a placeholder');
  t.same(body.messages[2].content, [{ type: 'text', text: 'hello?' }], 'empty text blocks are dropped');
  t.notOk('system' in body, 'no empty system block');
  t.notOk('tools' in body, 'no empty tool list');
});

t.test('anthropic stand-in: the JSON (non-streaming) shape parses in the SDK', async (t) => {
  const srv = await A.startAnthropicServer(A.toolUseReply([{ name: 'read_sensor', input: { id: 'a' }, id: 'toolu_j' }], 'Reading.'), { apiKey: 'right' });
  t.teardown(() => srv.close());
  const client = new Anthropic({ apiKey: 'right', baseURL: srv.url, maxRetries: 0 });
  const msg = await client.messages.create({ model: 'c', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(msg.stop_reason, 'tool_use');
  t.match(msg.content, [{ type: 'text', text: 'Reading.' }, { type: 'tool_use', id: 'toolu_j', name: 'read_sensor', input: { id: 'a' } }]);
  const wrong = new Anthropic({ apiKey: 'wrong', baseURL: srv.url, maxRetries: 0 });
  const err = await wrong.messages.create({ model: 'c', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
  t.ok(err instanceof Anthropic.AuthenticationError, 'a wrong key is refused with the API\'s 401');
});

t.test('both providers keep their connection for the next call (an answer ended at [DONE] is read to its end, not cut)', async (t) => {
  const oa = await O.startOpenAIServer();
  t.teardown(() => oa.close());
  oa.enqueue(O.textReply('one'), O.textReply('two'), O.textReply('three'));
  const p = openaiProvider('llama', { baseUrl: `${oa.url}/v1`, timeoutMs: 5000 });
  // A moment between calls, as a turn's tools give: the end of an answer (its last chunk's
  // terminator) may arrive just after [DONE], and only then is the connection free again.
  const pause = () => new Promise((r) => setTimeout(r, 50));
  for (const text of ['one', 'two', 'three']) {
    t.same((await p.complete(request())).content, [{ type: 'text', text }]);
    await pause();
  }
  t.equal(oa.connections(), 1, 'openai: three calls, one connection');
  const an = await A.startAnthropicServer();
  t.teardown(() => an.close());
  an.enqueue(A.textReply('one'), A.textReply('two'));
  const q = anthropicProvider('claude-test', { apiKey: 'sk-ant-test-key', baseUrl: an.url, timeoutMs: 5000 });
  for (const text of ['one', 'two']) {
    t.same((await q.complete(request())).content, [{ type: 'text', text }]);
    await pause();
  }
  t.equal(an.connections(), 1, 'anthropic: two calls, one connection');
});

t.test('openai: a connection that breaks after [DONE], before the answer ends, leaves the reply whole', async (t) => {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      // The whole answer but its end (the chunked body's last, empty chunk), then the connection cut.
      res.write(chunk({ role: 'assistant', content: 'whole' }) + chunk({}, 'stop') + 'data: [DONE]\n\n', () => setTimeout(() => res.socket?.destroy(), 30));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const p = openaiProvider('m', { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, timeoutMs: 5000 });
  t.same((await p.complete(request())).content, [{ type: 'text', text: 'whole' }], 'the reply, whole, although its answer never ended');
  // The cut comes after the reply; the wait lets it happen inside this test, where anything it threw would fail the file.
  await new Promise((r) => setTimeout(r, 150));
});

t.test('openai: streamed text, tool calls assembled from fragments, the round trip', async (t) => {
  const srv = await O.startOpenAIServer();
  t.teardown(() => srv.close());
  srv.enqueue(
    O.toolCallsReply([{ name: 'gpio_write', arguments: relayInput, id: 'call_1' }, { name: 'read_sensor', arguments: { id: 'temp' }, id: 'call_2' }], 'Two calls.'),
    O.textReply('Both done.'),
  );
  const p = openaiProvider('llama', { baseUrl: `${srv.url}/v1`, timeoutMs: 5000 });
  const events: ProviderEvent[] = [];
  const first = await p.complete(request(), (e) => events.push(e));
  t.equal(first.stopReason, 'tool_use');
  t.same(first.content, [
    { type: 'text', text: 'Two calls.' },
    { type: 'tool_use', id: 'call_1', name: 'gpio_write', input: relayInput },
    { type: 'tool_use', id: 'call_2', name: 'read_sensor', input: { id: 'temp' } },
  ]);
  t.equal(deltas(events).join(''), 'Two calls.');
  t.ok(deltas(events).length >= 2, 'streamed in deltas');
  t.equal(first.answeredBy, 'openai/llama');

  const next: Message[] = [
    ...hello,
    { role: 'assistant', content: first.content },
    { role: 'user', content: [{ type: 'tool_result', toolUseId: 'call_1', content: 'ok' }, { type: 'tool_result', toolUseId: 'call_2', content: 'sensor offline', isError: true }, { type: 'text', text: 'and hurry' }] },
  ];
  const second = await p.complete(request(next));
  t.same(second.content, [{ type: 'text', text: 'Both done.' }]);
  t.equal(second.stopReason, 'end_turn');
  t.same(srv.requests[1]!.body.messages, [
    { role: 'system', content: 'You are pinclaw.' },
    { role: 'user', content: 'switch the relay on' },
    {
      role: 'assistant',
      content: 'Two calls.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'gpio_write', arguments: JSON.stringify(relayInput) } },
        { id: 'call_2', type: 'function', function: { name: 'read_sensor', arguments: '{"id":"temp"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
    { role: 'tool', tool_call_id: 'call_2', content: 'ERROR: sensor offline' },
    { role: 'user', content: 'and hurry' },
  ], 'tool results become tool messages right after the calls, before the user text');
});

t.test('openai: the request as sent, the key, usage with cached tokens', async (t) => {
  const srv = await O.startOpenAIServer(O.textReply('hi'), { apiKey: 'sk-proj-local-test-key' });
  t.teardown(() => srv.close());
  srv.enqueue({ kind: 'reply', text: 'hi', promptTokens: 100, cachedTokens: 60, completionTokens: 5 });
  const p = openaiProvider('gpt-test', { baseUrl: `${srv.url}/v1/`, apiKey: 'sk-proj-local-test-key', timeoutMs: 5000 });
  const r = await p.complete(request());
  t.same(r.usage, { inputTokens: 40, outputTokens: 5, cacheReadTokens: 60 }, 'cached tokens are counted apart, not twice');
  const sent = srv.requests[0]!;
  t.equal(sent.path, '/v1/chat/completions', 'a trailing slash on the base URL is fine');
  t.equal(sent.headers.authorization, 'Bearer sk-proj-local-test-key');
  t.match(sent.body, { model: 'gpt-test', stream: true, stream_options: { include_usage: true }, max_tokens: 256 });
  t.same(sent.body.tools[1], { type: 'function', function: { name: 'gpio_write', description: 'set a GPIO line', parameters: tools[1]!.inputSchema } });
});

t.test('openai: no key, no authorization header (local servers); images as data URLs; an empty reply', async (t) => {
  const srv = await O.startOpenAIServer();
  t.teardown(() => srv.close());
  const p = openaiProvider('llava', { baseUrl: `${srv.url}/v1`, timeoutMs: 5000 });
  await p.complete({
    ...request([
      { role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image', mediaType: 'image/jpeg', data: '/9j/4AAQ' }] },
      { role: 'assistant', content: [] },
      { role: 'user', content: [{ type: 'text', text: 'hello?' }] },
    ]),
    system: '',
  });
  const sent = srv.requests[0]!;
  t.notOk(sent.headers.authorization);
  t.same(sent.body.messages, [
    { role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } }] },
    { role: 'assistant', content: '' },
    { role: 'user', content: 'hello?' },
  ], 'no empty system message');
});

t.test('openai: a stream without [DONE] is accepted once finish_reason came', async (t) => {
  const srv = await O.startOpenAIServer({ kind: 'reply', text: 'fine', omitDone: true });
  t.teardown(() => srv.close());
  const r = await openaiProvider('m', { baseUrl: `${srv.url}/v1`, timeoutMs: 5000 }).complete(request());
  t.same(r.content, [{ type: 'text', text: 'fine' }]);
  t.equal(r.stopReason, 'end_turn');
});

t.test('openai stand-in: JSON completions and the models list', async (t) => {
  const srv = await O.startOpenAIServer(O.toolCallsReply([{ name: 'read_sensor', arguments: { id: 'a' }, id: 'call_j' }]));
  t.teardown(() => srv.close());
  const models = (await (await fetch(`${srv.url}/v1/models`)).json()) as { data: { id: string }[] };
  t.equal(models.data[0]!.id, 'stand-in');
  const res = await fetch(`${srv.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [] }) });
  const body = (await res.json()) as { choices: { finish_reason: string; message: { tool_calls: unknown[] } }[] };
  t.equal(body.choices[0]!.finish_reason, 'tool_calls');
  t.same(body.choices[0]!.message.tool_calls, [{ id: 'call_j', type: 'function', function: { name: 'read_sensor', arguments: '{"id":"a"}' } }]);
});

t.test('anthropic: a message converts to the same blocks on every call, and an empty reply gets its placeholder once it is no longer last', async (t) => {
  const asked: Message = { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'text', text: '' }] };
  const empty: Message = { role: 'assistant', content: [] };
  const first = toAnthropicMessages([asked, empty]);
  t.same(first, [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }, { role: 'assistant', content: [] }], 'a final empty reply is sent as it is');
  const next: Message = { role: 'user', content: [{ type: 'tool_result', toolUseId: 'x', content: 'ok', isError: true }] };
  const second = toAnthropicMessages([asked, empty, next]);
  t.same(second, [
    { role: 'user', content: [{ type: 'text', text: 'hi' }] },
    { role: 'assistant', content: [{ type: 'text', text: EMPTY_CONTENT }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: 'ok', is_error: true }] },
  ]);
  t.same(toAnthropicMessages([asked, empty]), first, 'the earlier request is unchanged by the later one');
  t.same(toAnthropicMessages([asked, empty, next]), second);
  t.equal(toAnthropicMessages([asked])[0], first[0], 'a message already converted is sent as the same object');
});

t.test('anthropic: a conversation that grows in place, is cut short, or alternates with another converts as a fresh one would', async (t) => {
  const text = (role: Message['role'], x: string): Message => ({ role, content: [{ type: 'text', text: x }] });
  const fresh = (ms: readonly Message[]) => ms.map((m) => ({ role: m.role, content: m.content.length ? [{ type: 'text', text: (m.content[0] as { text: string }).text }] : [] }));
  const conv: Message[] = [text('user', 'one'), text('assistant', 'two')];
  t.same(toAnthropicMessages(conv), fresh(conv));
  conv.push(text('user', 'three'), { role: 'assistant', content: [] });
  t.same(toAnthropicMessages(conv), fresh(conv), 'the same array, grown in place');
  conv.push(text('user', 'four'));
  t.same(toAnthropicMessages(conv)[3], { role: 'assistant', content: [{ type: 'text', text: EMPTY_CONTENT }] }, 'the empty reply, last before, gets its placeholder');
  const other = [text('user', 'elsewhere')];
  t.same(toAnthropicMessages(other), fresh(other), 'another conversation');
  t.same(toAnthropicMessages(conv.slice(0, 2)), fresh(conv.slice(0, 2)), 'back to the first, cut short');
  conv[1] = text('assistant', 'TWO');
  t.same(toAnthropicMessages(conv).map((m) => m.content), [
    [{ type: 'text', text: 'one' }], [{ type: 'text', text: 'TWO' }], [{ type: 'text', text: 'three' }], [{ type: 'text', text: EMPTY_CONTENT }], [{ type: 'text', text: 'four' }],
  ], 'a message replaced in the middle');
});
