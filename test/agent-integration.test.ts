// The loop and compaction with the real Anthropic SDK and the OpenAI-compatible client against the
// stand-in servers: the same behaviour the unit tests check with a scripted provider.
import t from 'tap';
import { compact } from '../src/agent/compaction.js';
import { runAgentLoop } from '../src/agent/loop.js';
import { anthropicProvider } from '../src/agent/providers/anthropic.js';
import { fallbackChain } from '../src/agent/providers/chain.js';
import { openaiProvider } from '../src/agent/providers/openai.js';
import type { Message } from '../src/agent/types.js';
import { toolSet, type Tool } from '../src/tools/types.js';
import { errorReply, startAnthropicServer, textReply, toolUseReply } from './support/anthropic-server.js';
import { oaText, oaTools, startOpenAIServer } from './support/openai-server.js';

const ctx = { sessionKey: 's', channel: 'test', chatId: 'c' };
const user: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'read both sensors' }] }];

function sensor(log: string[]): Tool {
  return {
    name: 'read_sensor', description: 'reads a sensor', inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    async execute(input) {
      const { id } = input as { id: string };
      log.push(`start ${id}`);
      await new Promise((r) => setTimeout(r, 30));
      log.push(`end ${id}`);
      return { content: `${id}: 21.5 C` };
    },
  };
}

t.test('anthropic: parallel tool calls, results back in one message, final answer', async (t) => {
  const srv = await startAnthropicServer();
  t.teardown(() => srv.close());
  srv.enqueue(toolUseReply([{ name: 'read_sensor', input: { id: 'a' } }, { name: 'read_sensor', input: { id: 'b' } }]), textReply('Both read 21.5 C.'));
  const log: string[] = [];
  const r = await runAgentLoop({
    provider: anthropicProvider('c', { apiKey: 'k', baseUrl: srv.url, timeoutMs: 5000 }), model: 'c', system: 's', messages: user,
    tools: toolSet([sensor(log)]), toolContext: ctx, maxIterations: 20, maxTokens: 512,
  });
  t.equal(r.reply, 'Both read 21.5 C.');
  t.ok(log.indexOf('start b') < log.indexOf('end a'), 'the two calls overlapped');
  const results = srv.requests[1]!.body.messages.at(-1).content;
  t.same(results.map((b: { type: string; content: string }) => [b.type, b.content]), [['tool_result', 'a: 21.5 C'], ['tool_result', 'b: 21.5 C']]);
});

t.test('openai-compatible: the iteration cap through the real client', async (t) => {
  const srv = await startOpenAIServer((req) => {
    const last = req.body.messages.at(-1);
    return last.role === 'user' && /answer now/.test(last.content) ? oaText('final') : oaTools([{ name: 'read_sensor', arguments: { id: 'x' } }]);
  });
  t.teardown(() => srv.close());
  const log: string[] = [];
  const r = await runAgentLoop({
    provider: openaiProvider('m', { baseUrl: `${srv.url}/v1`, timeoutMs: 5000 }), model: 'm', system: 's', messages: user,
    tools: toolSet([sensor(log)]), toolContext: ctx, maxIterations: 2, maxTokens: 512,
  });
  t.equal(r.reply, 'final');
  t.equal(srv.requests.length, 3);
  t.equal(log.filter((l) => l.startsWith('end')).length, 2);
});

t.test('a turn survives 429 then 529 with fallback, through the loop', async (t) => {
  const a = await startAnthropicServer(errorReply(529, 'overloaded_error', 'Overloaded'));
  const o = await startOpenAIServer(oaText('from fallback'));
  t.teardown(() => Promise.all([a.close(), o.close()]));
  a.enqueue(errorReply(429, 'rate_limit_error', 'slow', '0'));
  const chain = fallbackChain([anthropicProvider('c', { apiKey: 'k', baseUrl: a.url, timeoutMs: 5000 }), openaiProvider('m', { baseUrl: `${o.url}/v1`, timeoutMs: 5000 })], { retries: 1, baseMs: 1, maxMs: 10 });
  const r = await runAgentLoop({ provider: chain, model: 'c', system: 's', messages: user, tools: toolSet([]), toolContext: ctx, maxIterations: 5, maxTokens: 64 });
  t.equal(r.reply, 'from fallback');
  t.equal(r.answeredBy, 'openai/m');
  t.equal(a.requests.length, 2, '429, retried, then 529');
});

t.test('compaction through the real SDK keeps tool pairs together', async (t) => {
  const srv = await startAnthropicServer(textReply('## Goals\n- watch the greenhouse\n## Decisions\n-\n## Facts about the user and devices\n- sensor a on I2C 0x76\n## Open tasks\n-\n## Next step\n-'));
  t.teardown(() => srv.close());
  const msgs: Message[] = [];
  for (let i = 0; i < 12; i++) {
    msgs.push({ role: 'user', content: [{ type: 'text', text: `q${i}` }] });
    msgs.push({ role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'read_sensor', input: { id: 'a' } }] });
    msgs.push({ role: 'user', content: [{ type: 'tool_result', toolUseId: `t${i}`, content: 'ok' }] });
    msgs.push({ role: 'assistant', content: [{ type: 'text', text: `a${i}` }] });
  }
  const r = (await compact(msgs, 5, anthropicProvider('c', { apiKey: 'k', baseUrl: srv.url, timeoutMs: 5000 }), 'c', 1024))!;
  const ids = new Set<string>();
  for (const m of r.messages) for (const b of m.content) {
    if (b.type === 'tool_use') ids.add(b.id);
    if (b.type === 'tool_result') t.ok(ids.has(b.toolUseId), `${b.toolUseId} has its tool_use`);
  }
  t.match(JSON.stringify(r.messages[0]), /sensor a on I2C 0x76/);
  // The summarized session is valid for the real API shape: send it and get an answer.
  const next = await anthropicProvider('c', { apiKey: 'k', baseUrl: srv.url, timeoutMs: 5000 }).complete({ model: 'c', system: 's', messages: r.messages, tools: [], maxTokens: 64 });
  t.equal(next.stopReason, 'end_turn');
  t.equal(srv.requests[1]!.body.messages[0].role, 'user');
});
