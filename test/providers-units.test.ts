// The small parts of the providers on their own: SSE framing, retry-after, backoff, tool input
// parsing, the lenient assembly of chat completion tool calls, and the error factory's scrubbing.
import t from 'tap';
import { ErrorFactory, retryAfterMs, retryableStatus } from '../src/net/errors.js';
import { OpenAICollector } from '../src/agent/providers/openai-stream.js';
import { errorBodyMessage } from '../src/net/errors.js';
import { backoffMs } from '../src/net/retry.js';
import { sseData } from '../src/agent/providers/sse.js';
import { isIncompleteInput, parseToolInput } from '../src/agent/providers/tool-input.js';

async function collect(chunks: string[]): Promise<string[]> {
  async function* body() {
    for (const c of chunks) yield new TextEncoder().encode(c);
  }
  const out: string[] = [];
  for await (const d of sseData(body())) out.push(d);
  return out;
}

t.test('sse: events split anywhere, CRLF, comments, multi-line data; a cut-off last event is dropped', async (t) => {
  t.same(await collect(['data: {"a"', ':1}\n', '\ndata: two\r\n\r', '\n: a comment\ndata:three\nevent: x\n\n']), ['{"a":1}', 'two', 'three']);
  t.same(await collect(['data: line one\ndata: line two\n\n']), ['line one\nline two']);
  t.same(await collect(['data: whole\n\ndata: {"half":']), ['whole'], 'the stream ended mid-event');
  t.same(await collect(['data: no blank line yet\n']), [], 'an event is dispatched only at its blank line');
  const euro = new TextEncoder().encode('data: 5 €\n\n');
  async function* split() {
    yield euro.slice(0, 9); // inside the three bytes of €
    yield euro.slice(9);
  }
  const out: string[] = [];
  for await (const d of sseData(split())) out.push(d);
  t.same(out, ['5 €'], 'a character split across chunks survives');
});

t.test('retry-after: seconds, milliseconds, an HTTP date, nonsense', async (t) => {
  const h = (headers: Record<string, string>) => (name: string) => headers[name];
  t.equal(retryAfterMs(h({ 'retry-after': '3' })), 3000);
  t.equal(retryAfterMs(h({ 'retry-after': '0.5' })), 500);
  t.equal(retryAfterMs(h({ 'retry-after-ms': '1234', 'retry-after': '9' })), 1234, 'the precise header wins');
  const now = Date.parse('2030-01-01T00:00:00Z');
  t.equal(retryAfterMs(h({ 'retry-after': 'Tue, 01 Jan 2030 00:00:07 GMT' }), now), 7000);
  t.equal(retryAfterMs(h({ 'retry-after': 'Mon, 31 Dec 2029 23:59:00 GMT' }), now), 0, 'a date in the past is no wait');
  t.equal(retryAfterMs(h({ 'retry-after': 'soon' })), undefined);
  t.equal(retryAfterMs(h({})), undefined);
});

t.test('retryable statuses', async (t) => {
  t.same([408, 409, 429, 500, 502, 503, 504, 529].map(retryableStatus), Array(8).fill(true));
  t.same([400, 401, 403, 404, 413, 422].map(retryableStatus), Array(6).fill(false));
});

t.test('backoff: doubles from the base, capped, jittered into [step/2, step]', async (t) => {
  const p = { baseMs: 1000, maxMs: 5000 };
  t.same([1, 2, 3, 4, 5].map((n) => backoffMs(n, { ...p, random: () => 1 })), [1000, 2000, 4000, 5000, 5000]);
  t.same([1, 2, 3].map((n) => backoffMs(n, { ...p, random: () => 0 })), [500, 1000, 2000]);
  for (let i = 0; i < 200; i++) {
    const d = backoffMs(2, p);
    if (d < 1000 || d > 2000) t.fail(`out of range: ${d}`);
  }
  t.pass('random jitter stayed within the step');
});

t.test('tool input: objects only; empty means {}; the incomplete marker', async (t) => {
  t.same(parseToolInput('{"a":1}'), { ok: true, input: { a: 1 } });
  t.same(parseToolInput('  '), { ok: true, input: {} });
  t.same(parseToolInput('{"a":'), { ok: false });
  t.same(parseToolInput('[1]'), { ok: false });
  t.same(parseToolInput('"x"'), { ok: false });
  t.ok(isIncompleteInput({ _incomplete: '{"a' }));
  t.notOk(isIncompleteInput({ _incomplete: '{"a', other: 1 }));
  t.notOk(isIncompleteInput({ a: 1 }));
});

t.test('openai assembly is lenient with servers that bend the format', async (t) => {
  const errors = new ErrorFactory('openai/m', []);
  // Ollama style: each call whole in one chunk, no index, arguments as an object, finish "stop".
  const c = new OpenAICollector();
  c.add({ model: 'llama3', choices: [{ index: 0, delta: { tool_calls: [{ id: 'a', function: { name: 'one', arguments: { x: 1 } } }] } }] });
  c.add({ choices: [{ index: 0, delta: { tool_calls: [{ id: 'b', function: { name: 'two', arguments: '{"y":2}' } }] } }] });
  c.add({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
  const r = c.result(errors, 'fallback');
  t.same(r.content, [{ type: 'tool_use', id: 'a', name: 'one', input: { x: 1 } }, { type: 'tool_use', id: 'b', name: 'two', input: { y: 2 } }]);
  t.equal(r.stopReason, 'tool_use', '"stop" with tool calls is a tool_use stop');
  t.equal(r.model, 'llama3');

  // No ids at all (older llama.cpp): made up, unique.
  const n = new OpenAICollector();
  n.add({ choices: [{ delta: { tool_calls: [{ index: 0, function: { name: 'f', arguments: '{}' } }, { index: 1, function: { name: 'g', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] });
  const ids = n.result(errors, 'm').content.map((b) => (b.type === 'tool_use' ? b.id : ''));
  t.equal(new Set(ids).size, 2);
  t.match(ids, [/^call_[0-9a-f]{12}$/, /^call_[0-9a-f]{12}$/]);

  // A whole non-streamed completion from a server that ignored stream: true.
  const w = new OpenAICollector();
  w.add({ choices: [{ index: 0, message: { content: 'whole' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 1 } });
  t.match(w.result(errors, 'm'), { content: [{ type: 'text', text: 'whole' }], stopReason: 'end_turn', usage: { inputTokens: 5, outputTokens: 1 } });
});

t.test('error bodies of the various servers', async (t) => {
  t.equal(errorBodyMessage('{"error":{"message":"Rate limit reached","type":"requests"}}'), 'Rate limit reached');
  t.equal(errorBodyMessage('{"error":"model \'llama9\' not found"}'), "model 'llama9' not found");
  t.equal(errorBodyMessage('{"object":"error","message":"max_tokens too large"}'), 'max_tokens too large');
  t.equal(errorBodyMessage('<html>502 Bad Gateway</html>'), '<html>502 Bad Gateway</html>');
});

t.test('error messages are one short line without credentials', async (t) => {
  const errors = new ErrorFactory('openai/m', ['my-local-secret-key']);
  const e = errors.http(401, `bad key my-local-secret-key\nand sk-proj-${'a'.repeat(30)} and ${'x'.repeat(400)}`, () => undefined);
  t.notMatch(e.message, /my-local-secret-key|sk-proj-a|\n/);
  t.match(e.message, /^401 bad key \[redacted\] and \[redacted\] and x+…$/);
  t.ok(e.message.length <= 204);
});
