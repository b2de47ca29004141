// Folds chat completion chunks into one response. Tool calls arrive as fragments keyed by index
// (the first with id and name, then pieces of the arguments); servers differ in the details, so the
// assembly is lenient: a missing index continues the last call, a missing id is made up, arguments
// sent as an object are taken as they are.
import { randomBytes } from 'node:crypto';
import type { ContentBlock, ProviderResponse, StopReason, Usage } from '../types.js';
import type { ErrorFactory } from '../../net/errors.js';
import { incompleteInput, parseToolInput } from './tool-input.js';

interface WireCallDelta {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string | Record<string, unknown> };
}
interface WireChoice {
  index?: number;
  delta?: { content?: string | null; tool_calls?: WireCallDelta[] | null };
  /** the whole message, in a non-streamed completion */
  message?: { content?: string | null; tool_calls?: WireCallDelta[] | null };
  finish_reason?: string | null;
}
/** A stream chunk, or a whole non-streamed completion (some servers ignore stream: true). */
export interface WireChunk {
  model?: string;
  choices?: WireChoice[];
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } | null } | null;
  error?: { message?: string; type?: string; code?: string | number | null } | string;
}

const finishReasons: Record<string, StopReason> = { stop: 'end_turn', tool_calls: 'tool_use', function_call: 'tool_use', length: 'max_tokens', content_filter: 'refusal' };

export class OpenAICollector {
  private text = '';
  private readonly calls = new Map<number, { id: string; name: string; args: string }>();
  private lastIndex = -1;
  private finish: string | null = null;
  private model = '';
  private usage: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0 };

  constructor(private readonly onText?: (text: string) => void) {}

  /** A finish reason arrived; with or without the closing [DONE], the answer is whole. */
  get finished(): boolean {
    return this.finish !== null;
  }

  add(chunk: WireChunk): void {
    if (chunk.model) this.model = chunk.model;
    if (chunk.usage) {
      // prompt_tokens includes the cached ones; the internal format counts them apart (as Anthropic does).
      const cached = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
      this.usage = { inputTokens: (chunk.usage.prompt_tokens ?? 0) - cached, outputTokens: chunk.usage.completion_tokens ?? 0, cacheReadTokens: cached };
    }
    for (const choice of chunk.choices ?? []) {
      if ((choice.index ?? 0) !== 0) continue; // n is never set, so only choice 0 exists
      const d = choice.delta ?? choice.message;
      if (d?.content) {
        this.text += d.content;
        this.onText?.(d.content);
      }
      for (const tc of d?.tool_calls ?? []) this.addCall(tc);
      if (choice.finish_reason) this.finish = choice.finish_reason;
    }
  }

  private addCall(tc: WireCallDelta): void {
    const index = typeof tc.index === 'number' ? tc.index : tc.id && this.calls.has(this.lastIndex) ? this.lastIndex + 1 : Math.max(this.lastIndex, 0);
    this.lastIndex = index;
    const call = this.calls.get(index) ?? { id: '', name: '', args: '' };
    if (tc.id) call.id = tc.id;
    if (tc.function?.name) call.name += tc.function.name;
    const args = tc.function?.arguments;
    if (typeof args === 'string') call.args += args;
    else if (args && typeof args === 'object') call.args = JSON.stringify(args);
    this.calls.set(index, call);
  }

  /** The response; throws a retryable bad-stream error for arguments that are broken without a cut-off. */
  result(errors: ErrorFactory, fallbackModel: string): ProviderResponse {
    const hasCalls = this.calls.size > 0;
    let stopReason = finishReasons[this.finish ?? ''] ?? 'other';
    // Some servers (Ollama among them) report "stop" for a reply that calls tools.
    if (hasCalls && stopReason === 'end_turn') stopReason = 'tool_use';
    const content: ContentBlock[] = this.text ? [{ type: 'text', text: this.text }] : [];
    for (const [, c] of [...this.calls].sort(([a], [b]) => a - b)) {
      const id = c.id || `call_${randomBytes(6).toString('hex')}`;
      const parsed = parseToolInput(c.args);
      if (parsed.ok) content.push({ type: 'tool_use', id, name: c.name, input: parsed.input });
      else if (stopReason === 'max_tokens') content.push({ type: 'tool_use', id, name: c.name, input: incompleteInput(c.args) });
      else throw errors.badStream(`the arguments of tool call ${c.name} are not a JSON object`);
    }
    return { content, stopReason, usage: this.usage, model: this.model || fallbackModel };
  }
}
