// The tool-use loop: call the model, run the tool calls it asks for, feed the results back, until it
// answers in text or the iteration cap is reached. Plain functions; events go to `emit`.
// The import, not the global: a lazy built-in, loaded under V8's defaults (src/v8-flags.ts).
import { performance } from 'node:perf_hooks';
import { errorMessage } from '../errors.js';
import type { ToolContext, ToolResult, ToolSet } from '../tools/types.js';
import { validateInput } from '../tools/validate.js';
import type { ContentBlock, ImageBlock, Message, Provider, ProviderEvent, ToolResultBlock, ToolUseBlock, Usage } from './types.js';

export type LoopEvent =
  | ProviderEvent
  | { type: 'tool_start'; id: string; name: string; input: unknown }
  | { type: 'tool_end'; id: string; name: string; isError: boolean; durationMs: number }
  | { type: 'tool_output'; id: string; name: string; stream: 'stdout' | 'stderr'; text: string };

export interface LoopOptions {
  provider: Provider;
  model: string;
  system: string;
  /** the conversation so far, ending with the new user message; not mutated */
  messages: readonly Message[];
  tools: ToolSet;
  toolContext: ToolContext;
  maxIterations: number;
  maxTokens: number;
  signal?: AbortSignal;
  emit?: (e: LoopEvent) => void;
  /**
   * Called before each provider call with the full message list and what the previous call of this
   * turn reported (compaction hook); returns the list to send.
   */
  beforeCall?: (messages: Message[], lastCall?: { inputTokens: number; inputMessages: number }) => Promise<Message[]> | Message[];
}

export interface LoopResult {
  /** messages appended by this turn (assistant replies and tool results), in order */
  added: Message[];
  /** the whole conversation after the turn, as last sent plus the final reply (compaction included) */
  conversation: Message[];
  reply: string;
  iterations: number;
  /** usage of the last provider call: its input tokens are the size of the context it saw */
  lastUsage: Usage;
  /** how many messages the last call's input covered */
  lastInputMessages: number;
  answeredBy?: string;
  /** agent.fallback's local model, when it answered any call of the turn (the reply says so) */
  localModel?: string;
}

const CUT_OFF = 'not executed: the reply was cut off by the output-token limit before this call was complete';
const CAP_REACHED = 'not executed: the tool-use limit of this turn was reached';

function textOf(content: readonly ContentBlock[]): string {
  return content.filter((b): b is Extract<ContentBlock, { type: 'text' }> => b.type === 'text').map((b) => b.text).join('');
}

export async function runTool(tools: ToolSet, call: ToolUseBlock, ctx: ToolContext): Promise<ToolResult> {
  // A registry governs the call itself (policy, limits, audit); a plain set is run here.
  if (tools.run) return tools.run({ id: call.id, name: call.name, input: call.input }, ctx);
  const tool = tools.get(call.name);
  if (!tool) return { content: `unknown tool '${call.name}'; available: ${tools.specs().map((s) => s.name).join(', ') || 'none'}`, isError: true };
  const problems = validateInput(tool.inputSchema, call.input);
  if (problems.length) return { content: `invalid arguments for ${call.name}: ${problems.join('; ')}`, isError: true };
  try {
    return await tool.execute(call.input, ctx);
  } catch (err) {
    return { content: `${call.name} failed: ${errorMessage(err)}`, isError: true };
  }
}

/**
 * Parallel by default; calls to tools that declare `sequential` wait for each other, in order.
 * Their results, then the images they gave (a snapshot): in the same user message, so the model
 * sees them in this turn (tool results must come first in it, for both providers' formats).
 */
async function runCalls(calls: ToolUseBlock[], opts: LoopOptions): Promise<ContentBlock[]> {
  let chain: Promise<unknown> = Promise.resolve();
  const results = calls.map((call) => {
    const go = async (): Promise<{ block: ToolResultBlock; images: ImageBlock[] }> => {
      opts.emit?.({ type: 'tool_start', id: call.id, name: call.name, input: call.input });
      const started = performance.now();
      const emit = opts.emit;
      const ctx: ToolContext = emit ? { ...opts.toolContext, onOutput: (stream, text) => emit({ type: 'tool_output', id: call.id, name: call.name, stream, text }) } : opts.toolContext;
      const r = await runTool(opts.tools, call, ctx);
      opts.emit?.({ type: 'tool_end', id: call.id, name: call.name, isError: !!r.isError, durationMs: performance.now() - started });
      return { block: { type: 'tool_result', toolUseId: call.id, content: r.content, ...(r.isError ? { isError: true } : {}) }, images: r.images ?? [] };
    };
    if (!opts.tools.get(call.name, opts.toolContext)?.sequential) return go();
    const p = chain.then(go);
    chain = p.catch(() => undefined);
    return p;
  });
  const done = await Promise.all(results);
  return [...done.map((d) => d.block), ...done.flatMap((d) => d.images)];
}

/** Anthropic reports cached prompt tokens apart from input_tokens; the context is their sum. */
export function contextTokens(u: Usage): number {
  return u.inputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0);
}

function notExecuted(calls: ToolUseBlock[], why: string): ToolResultBlock[] {
  return calls.map((c) => ({ type: 'tool_result', toolUseId: c.id, content: why, isError: true }));
}

export async function runAgentLoop(opts: LoopOptions): Promise<LoopResult> {
  const added: Message[] = [];
  let conversation: Message[] = [...opts.messages];
  let lastUsage: Usage = { inputTokens: 0, outputTokens: 0 };
  let lastInputMessages = 0;
  let answeredBy: string | undefined;
  let localModel: string | undefined;
  let reply = '';
  const append = (m: Message) => {
    added.push(m);
    conversation.push(m);
  };

  let lastCall: { inputTokens: number; inputMessages: number } | undefined;
  for (let iteration = 1; ; iteration++) {
    const finalRound = iteration > opts.maxIterations;
    // An abort that came while tools ran ends the turn here, before the next call is paid for.
    opts.signal?.throwIfAborted();
    if (opts.beforeCall) {
      const before = conversation.length;
      conversation = await opts.beforeCall(conversation, lastCall);
      if (conversation.length !== before) lastCall = undefined; // indexes moved: the old report no longer applies
    }
    const res = await opts.provider.complete(
      { model: opts.model, system: opts.system, messages: conversation, tools: opts.tools.specs(opts.toolContext), maxTokens: opts.maxTokens, signal: opts.signal },
      opts.emit,
    );
    lastUsage = res.usage;
    lastInputMessages = conversation.length;
    lastCall = { inputTokens: contextTokens(res.usage), inputMessages: conversation.length };
    answeredBy = res.answeredBy ?? answeredBy;
    localModel = res.localModel ?? localModel;
    append({ role: 'assistant', content: res.content });
    reply = textOf(res.content);
    const calls = res.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
    if (calls.length === 0) return { added, conversation, reply, iterations: iteration, lastUsage, lastInputMessages, answeredBy, localModel };

    if (finalRound) {
      // The model was told to answer and still asked for tools: close the calls so the session stays valid.
      append({ role: 'user', content: notExecuted(calls, CAP_REACHED) });
      return { added, conversation, reply: reply || `I stopped after ${opts.maxIterations} rounds of tool use without a final answer.`, iterations: iteration, lastUsage, lastInputMessages, answeredBy, localModel };
    }
    const results = res.stopReason === 'max_tokens' ? notExecuted(calls, CUT_OFF) : await runCalls(calls, opts);
    const content: ContentBlock[] = [...results];
    if (iteration === opts.maxIterations) {
      content.push({ type: 'text', text: `You have used all ${opts.maxIterations} tool-use rounds of this turn. Do not call tools again; answer now with what you have.` });
    }
    append({ role: 'user', content });
  }
}
