// The tool-use loop against a scripted provider (behind the Provider interface).
import t from 'tap';
import { runAgentLoop } from '../src/agent/loop.js';
import type { Message, ToolUseBlock } from '../src/agent/types.js';
import { toolSet, type Tool } from '../src/tools/types.js';
import { reply, scriptedProvider } from './support/scripted-provider.js';

const user: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }];
const call = (id: string, name: string, input: unknown): ToolUseBlock => ({ type: 'tool_use', id, name, input });
const ctx = { sessionKey: 's', channel: 'test', chatId: 'c' };

function sleepTool(name: string, log: string[], opts: { sequential?: boolean; ms?: number } = {}): Tool {
  return {
    name,
    description: 'waits, then says which call it was',
    sequential: opts.sequential,
    inputSchema: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'], additionalProperties: false },
    async execute(input) {
      const { tag } = input as { tag: string };
      log.push(`start ${tag}`);
      await new Promise((r) => setTimeout(r, opts.ms ?? 30));
      log.push(`end ${tag}`);
      return { content: `done ${tag}` };
    },
  };
}

const base = { model: 'm', system: 'sys', tools: toolSet([]), toolContext: ctx, maxIterations: 20, maxTokens: 100 };

t.test('a tool round trip: call, result, final answer', async (t) => {
  const log: string[] = [];
  const provider = scriptedProvider([reply([{ type: 'text', text: 'checking' }, call('t1', 'wait', { tag: 'a' })]), reply('all done')]);
  const r = await runAgentLoop({ ...base, provider, messages: user, tools: toolSet([sleepTool('wait', log)]) });
  t.equal(r.reply, 'all done');
  t.equal(r.iterations, 2);
  t.same(r.added.map((m) => m.role), ['assistant', 'user', 'assistant']);
  t.same(r.added[1]!.content, [{ type: 'tool_result', toolUseId: 't1', content: 'done a' }]);
  t.equal(provider.requests[1]!.messages.length, 3, 'the second call sees the tool result');
  t.same(provider.requests[0]!.tools.map((s) => s.name), ['wait']);
});

t.test('tool calls run in parallel; sequential tools wait for each other in order', async (t) => {
  const log: string[] = [];
  const tools = toolSet([sleepTool('par', log), sleepTool('seq', log, { sequential: true })]);
  const provider = scriptedProvider([
    reply([call('1', 'par', { tag: 'p1' }), call('2', 'par', { tag: 'p2' }), call('3', 'seq', { tag: 's1' }), call('4', 'seq', { tag: 's2' })]),
    reply('ok'),
  ]);
  const r = await runAgentLoop({ ...base, provider, messages: user, tools });
  t.equal(r.reply, 'ok');
  // Both parallel calls start before either ends; the sequential ones never overlap, s1 first.
  t.ok(log.indexOf('start p2') < log.indexOf('end p1'), `parallel calls overlap: ${log.join(', ')}`);
  t.ok(log.indexOf('end s1') < log.indexOf('start s2'), `sequential calls do not overlap: ${log.join(', ')}`);
  t.same((r.added[1]!.content as { toolUseId: string }[]).map((b) => b.toolUseId), ['1', '2', '3', '4'], 'results keep the call order');
});

t.test('the iteration cap: after maxIterations rounds the model is asked for a final answer', async (t) => {
  const log: string[] = [];
  let n = 0;
  const provider = scriptedProvider([], (req) => (req.messages.at(-1)!.content.some((b) => b.type === 'text' && /answer now/.test(b.text)) ? reply('final answer') : reply([call(`c${++n}`, 'wait', { tag: `x${n}` })])));
  const r = await runAgentLoop({ ...base, provider, messages: user, tools: toolSet([sleepTool('wait', log, { ms: 1 })]), maxIterations: 3 });
  t.equal(r.reply, 'final answer');
  t.equal(r.iterations, 4, '3 tool rounds, then the final call');
  t.equal(log.filter((l) => l.startsWith('end')).length, 3, 'exactly maxIterations rounds of tools ran');
});

t.test('a model that keeps calling tools past the cap: nothing more runs, the session stays valid', async (t) => {
  const log: string[] = [];
  let n = 0;
  const provider = scriptedProvider([], () => reply([call(`c${++n}`, 'wait', { tag: `x${n}` })]));
  const r = await runAgentLoop({ ...base, provider, messages: user, tools: toolSet([sleepTool('wait', log, { ms: 1 })]), maxIterations: 2 });
  t.equal(log.filter((l) => l.startsWith('end')).length, 2);
  t.match(r.reply, /stopped after 2 rounds/);
  const last = r.conversation.at(-1)!;
  t.equal(last.role, 'user');
  t.match(JSON.stringify(last.content), /tool-use limit of this turn was reached/, 'the dangling call got a result');
});

t.test('tool calls in a reply cut off by max_tokens are never executed', async (t) => {
  const log: string[] = [];
  const provider = scriptedProvider([reply([{ type: 'text', text: 'let me' }, call('t1', 'wait', { tag: 'a' })], 'max_tokens'), reply('sorry, shorter now')]);
  const r = await runAgentLoop({ ...base, provider, messages: user, tools: toolSet([sleepTool('wait', log)]) });
  t.same(log, [], 'the tool did not run');
  t.match(JSON.stringify(r.added[1]!.content), /cut off by the output-token limit/);
  t.equal(r.reply, 'sorry, shorter now');
});

t.test('unknown tools, invalid arguments and throwing tools become error results', async (t) => {
  const boom: Tool = { name: 'boom', description: 'throws', inputSchema: { type: 'object' }, execute: async () => { throw new Error('kaput'); } };
  const log: string[] = [];
  const provider = scriptedProvider([
    reply([call('1', 'nope', {}), call('2', 'wait', { tag: 7 }), call('3', 'wait', {}), call('4', 'boom', {}), call('5', 'wait', { tag: 'a', extra: 1 })]),
    reply('handled'),
  ]);
  const r = await runAgentLoop({ ...base, provider, messages: user, tools: toolSet([sleepTool('wait', log), boom]) });
  const results = r.added[1]!.content as { content: string; isError?: boolean }[];
  t.ok(results.every((b) => b.isError), 'all five are errors');
  t.match(results[0]!.content, /unknown tool 'nope'; available: wait, boom/);
  t.match(results[1]!.content, /invalid arguments for wait: input\.tag: expected string, got number/);
  t.match(results[2]!.content, /input\.tag: required/);
  t.match(results[3]!.content, /boom failed: kaput/);
  t.match(results[4]!.content, /input\.extra: unknown field/);
  t.same(log, []);
  t.equal(r.reply, 'handled');
});

t.test('provider failures propagate to the caller (the conductor keeps the message)', async (t) => {
  const provider = scriptedProvider([() => { throw new Error('overloaded'); }]);
  await t.rejects(runAgentLoop({ ...base, provider, messages: user }), /overloaded/);
});
