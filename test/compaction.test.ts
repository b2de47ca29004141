// Compaction: the boundary never separates a tool_use from its tool_result; failures leave the
// session intact; the estimate is the last reported size plus the count of what was added since.
import t from 'tap';
import { compact, contextOver, estimateContext, keepBoundary } from '../src/agent/compaction.js';
import { heuristicCount, tokenCounterFor, type TokenCounter } from '../src/agent/tokens.js';
import { buildCorpus } from './support/tokenizer-corpus.js';
import type { Message } from '../src/agent/types.js';
import { reply, scriptedProvider } from './support/scripted-provider.js';

const text = (role: 'user' | 'assistant', s: string): Message => ({ role, content: [{ type: 'text', text: s }] });
const use = (id: string): Message => ({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'x', input: {} }] });
const result = (id: string): Message => ({ role: 'user', content: [{ type: 'tool_result', toolUseId: id, content: 'r' }] });

function pairsIntact(messages: Message[]): boolean {
  const uses = new Set<string>();
  for (const m of messages) {
    for (const b of m.content) {
      if (b.type === 'tool_use') uses.add(b.id);
      if (b.type === 'tool_result' && !uses.has(b.toolUseId)) return false;
    }
  }
  return true;
}

t.test('the boundary moves back to keep tool_use and tool_result together', async (t) => {
  const msgs: Message[] = [text('user', 'a'), text('assistant', 'b'), text('user', 'c'), use('1'), result('1'), use('2'), result('2'), text('assistant', 'd')];
  // keepRecent 4 would start at result('1'): it must move back to use('1').
  t.equal(keepBoundary(msgs, 4), 3);
  t.equal(keepBoundary(msgs, 2), 5, 'use(2) is the first kept');
  t.equal(keepBoundary(msgs, 100), 0, 'nothing to cut');
  for (let k = 2; k <= msgs.length; k++) t.ok(pairsIntact(msgs.slice(keepBoundary(msgs, k))), `keepRecent ${k}: pairs intact`);
});

t.test('compact replaces the older part with the summary and keeps roles alternating', async (t) => {
  const msgs: Message[] = [];
  for (let i = 0; i < 10; i++) msgs.push(text('user', `q${i}`), use(`u${i}`), result(`u${i}`), text('assistant', `a${i}`));
  const provider = scriptedProvider([reply('## Goals\nlearn\n## Decisions\nnone\n## Facts about the user and devices\nrelay on GPIO 17\n## Open tasks\n-\n## Next step\n-')]);
  const r = (await compact(msgs, 6, provider, 'm', 1000))!;
  t.ok(r);
  // 40 messages; the last 6 would start at index 34, a tool_result, so the cut moves back to 33.
  t.equal(r.summarized, 33);
  t.equal(r.messages.length, 40 - 33 + 1);
  t.ok(pairsIntact(r.messages));
  t.equal(r.messages[0]!.role, 'user');
  t.match((r.messages[0]!.content[0] as { text: string }).text, /^\[Summary of the earlier conversation\]\n## Goals/);
  for (let i = 1; i < r.messages.length; i++) t.not(r.messages[i]!.role, r.messages[i - 1]!.role, `roles alternate at ${i}`);
  const asked = JSON.stringify(provider.requests[0]!.messages);
  t.match(asked, /q0/, 'the summarized part was sent to the model');
  t.match(asked, /## Next step/, 'with the structured instructions');
  t.same(provider.requests[0]!.tools, []);
});

t.test('a failing summary throws and the caller keeps its messages', async (t) => {
  const msgs: Message[] = Array.from({ length: 30 }, (_, i) => text(i % 2 ? 'assistant' : 'user', `m${i}`));
  const copy = structuredClone(msgs);
  const provider = scriptedProvider([() => { throw new Error('503 from provider'); }]);
  await t.rejects(compact(msgs, 10, provider, 'm', 1000), /503/);
  t.same(msgs, copy, 'untouched');
  const empty = scriptedProvider([reply('   ')]);
  await t.rejects(compact(msgs, 10, empty, 'm', 1000), /empty summary/);
});

t.test('the estimate: reported input tokens plus a count of what came after', async (t) => {
  const msgs: Message[] = [text('user', 'x'.repeat(700)), text('assistant', 'y'.repeat(70))];
  const counted = estimateContext(msgs, 'sys', heuristicCount);
  t.equal(counted, heuristicCount('sys') + 4 + heuristicCount('x'.repeat(700)) + 4 + heuristicCount('y'.repeat(70)));
  t.equal(estimateContext(msgs, 'sys', heuristicCount, { inputTokens: 5000, inputMessages: 1 }), 5000 + 4 + heuristicCount('y'.repeat(70)));
  t.equal(estimateContext(msgs, 'sys', heuristicCount, { inputTokens: 5000, inputMessages: 9 }), counted, 'a stale report is ignored');
});

t.test('the runtime counter counts o200k_base tokens, scaled for Claude models only', async (t) => {
  const { tokenCounterFor } = await import('../src/agent/tokens.js');
  const { getTokenizer } = await import('../src/native/tokenizer.js');
  const { CLAUDE_TOKEN_FACTOR } = await import('../src/native/token-estimate.js');
  const sample = 'The pump in the garden runs at 07:30; 東京タワー 😀 {"gpio": 17}';
  const exact = getTokenizer('o200k_base').count(sample);
  t.ok(exact > 10, `the sample has ${exact} tokens`);
  t.equal(tokenCounterFor('openai/gpt-5')(sample), exact);
  t.equal(tokenCounterFor('anthropic/claude-sonnet-5-5')(sample), Math.ceil(exact * CLAUDE_TOKEN_FACTOR));
  t.not(tokenCounterFor('openai/gpt-5')(sample), heuristicCount(sample), 'not the character heuristic');
});

t.test('the bound: never below the count, for every kind of text; a context within it is not counted', async (t) => {
  // The tokenizer corpus (every script, emoji, whitespace runs, lone surrogates, long pieces) in slices of varied length.
  const corpus = buildCorpus({ seed: 11, minBytes: 200_000 }).text;
  for (const model of ['openai/gpt-5', 'anthropic/claude-sonnet-5-5']) {
    const counter = tokenCounterFor(model);
    let below = 0;
    let slices = 0;
    for (let i = 0, n = 1; i < corpus.length; i += n, n = (n * 7 + 3) % 4001 + 1, slices++) {
      const s = corpus.slice(i, i + n);
      if (counter.atMost!(s) < counter(s)) below++;
      if (heuristicCount(s) > counter.atMost!(s)) below++;
    }
    t.equal(below, 0, `${model}: over ${slices} slices the bound is at least the count and the heuristic`);
  }
  const msgs: Message[] = [text('user', 'x'.repeat(700)), text('assistant', 'y'.repeat(70))];
  let counted = 0;
  const counter: TokenCounter = (s) => (counted++, heuristicCount(s));
  counter.atMost = (s) => Buffer.byteLength(s);
  t.equal(contextOver(msgs, 'sys', counter, 10_000), false);
  t.equal(counted, 0, 'within the threshold by its bound: nothing counted');
  const exact = estimateContext(msgs, 'sys', heuristicCount);
  const bound = estimateContext(msgs, 'sys', counter.atMost);
  t.ok(exact < bound, `${exact} tokens counted, ${bound} by the bound`);
  // Between the two the bound cannot answer: the count decides, as estimateContext alone would.
  for (const threshold of [exact - 1, exact, exact + 1, bound - 1, bound]) {
    t.equal(contextOver(msgs, 'sys', counter, threshold), exact > threshold, `threshold ${threshold}`);
  }
  t.ok(counted > 0, 'there it counts');
  const plain: TokenCounter = (s) => heuristicCount(s);
  t.equal(contextOver(msgs, 'sys', plain, exact - 1), true, 'a counter without a bound counts');
  t.equal(contextOver(msgs, 'sys', counter, 5000, { inputTokens: 4990, inputMessages: 1 }), 4990 + 4 + heuristicCount('y'.repeat(70)) > 5000, 'with the reported input tokens');
});
