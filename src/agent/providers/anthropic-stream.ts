// Folds the raw Messages stream events into one response. Done here rather than by the SDK's
// MessageStream because that helper re-parses the whole partial tool input on every fragment
// (quadratic in the input size, slow on a small board) and turns a cut-off input into a plausible
// but wrong object; here a tool input is parsed once, strictly, when the stream is over.
import type Anthropic from '@anthropic-ai/sdk';
import type { ContentBlock, ProviderResponse, StopReason, Usage } from '../types.js';
import type { ErrorFactory } from '../../net/errors.js';
import { incompleteInput, parseToolInput } from './tool-input.js';

type Slot = { kind: 'text'; text: string } | { kind: 'tool'; id: string; name: string; json: string; startInput: unknown } | { kind: 'other' };

const stopReasons: Record<string, StopReason> = {
  end_turn: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  // The output ran into the context window: cut off just the same.
  model_context_window_exceeded: 'max_tokens',
  stop_sequence: 'stop_sequence',
  refusal: 'refusal',
};

export class AnthropicCollector {
  private readonly slots: Slot[] = [];
  private stop: string | null = null;
  private model = '';
  private usage: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  private began = false;
  private stopped = false;

  constructor(private readonly onText?: (text: string) => void) {}

  /** message_stop arrived: the response is whole. */
  get finished(): boolean {
    return this.stopped;
  }

  add(ev: Anthropic.RawMessageStreamEvent): void {
    switch (ev.type) {
      case 'message_start': {
        this.began = true;
        this.model = ev.message.model;
        const u = ev.message.usage;
        this.usage = { inputTokens: u.input_tokens, outputTokens: u.output_tokens, cacheReadTokens: u.cache_read_input_tokens ?? 0, cacheWriteTokens: u.cache_creation_input_tokens ?? 0 };
        return;
      }
      case 'content_block_start': {
        const b = ev.content_block;
        this.slots[ev.index] =
          b.type === 'text' ? { kind: 'text', text: b.text } : b.type === 'tool_use' ? { kind: 'tool', id: b.id, name: b.name, json: '', startInput: b.input } : { kind: 'other' };
        if (b.type === 'text' && b.text) this.onText?.(b.text);
        return;
      }
      case 'content_block_delta': {
        const slot = this.slots[ev.index];
        if (ev.delta.type === 'text_delta' && slot?.kind === 'text') {
          slot.text += ev.delta.text;
          this.onText?.(ev.delta.text);
        } else if (ev.delta.type === 'input_json_delta' && slot?.kind === 'tool') {
          slot.json += ev.delta.partial_json;
        }
        return;
      }
      case 'message_delta': {
        this.stop = ev.delta.stop_reason ?? this.stop;
        // message_delta usage is cumulative; fields it leaves null keep message_start's values.
        const u = ev.usage;
        this.usage = {
          inputTokens: u.input_tokens ?? this.usage.inputTokens,
          outputTokens: u.output_tokens,
          cacheReadTokens: u.cache_read_input_tokens ?? this.usage.cacheReadTokens,
          cacheWriteTokens: u.cache_creation_input_tokens ?? this.usage.cacheWriteTokens,
        };
        return;
      }
      case 'message_stop':
        this.stopped = this.began;
        return;
      case 'content_block_stop':
        return;
    }
  }

  /** The response; throws a retryable bad-stream error for a tool input that is broken without a cut-off. */
  result(errors: ErrorFactory, fallbackModel: string): ProviderResponse {
    const stopReason = stopReasons[this.stop ?? ''] ?? 'other';
    const content: ContentBlock[] = [];
    for (const slot of this.slots) {
      if (slot?.kind === 'text') {
        if (slot.text) content.push({ type: 'text', text: slot.text });
      } else if (slot?.kind === 'tool') {
        const parsed = slot.json ? parseToolInput(slot.json) : parseToolInput(JSON.stringify(slot.startInput ?? {}));
        if (parsed.ok) content.push({ type: 'tool_use', id: slot.id, name: slot.name, input: parsed.input });
        else if (stopReason === 'max_tokens') content.push({ type: 'tool_use', id: slot.id, name: slot.name, input: incompleteInput(slot.json) });
        else throw errors.badStream(`the input of tool_use ${slot.name} is not a JSON object`);
      }
    }
    return { content, stopReason, usage: this.usage, model: this.model || fallbackModel };
  }
}
