// Anthropic Messages API through the official SDK: streaming, tool use, prompt caching of the system
// prompt and the tool definitions. The SDK's own retries are off; retry.ts retries every provider alike.
import Anthropic from '@anthropic-ai/sdk';
import type { ContentBlock, Message, Provider, ProviderEvent, ProviderRequest, ProviderResponse, StopReason } from '../types.js';
import { ProviderError } from '../types.js';
import { httpError, isCallerAbort, networkError } from './errors.js';

export interface AnthropicSettings {
  apiKey: string;
  baseUrl?: string;
  timeoutMs: number;
}

type WireBlock = Anthropic.ContentBlockParam;

function toWire(messages: readonly Message[]): Anthropic.MessageParam[] {
  return messages.map((m) => ({
    role: m.role,
    content: m.content.map((b): WireBlock => {
      switch (b.type) {
        case 'text':
          return { type: 'text', text: b.text };
        case 'image':
          return { type: 'image', source: { type: 'base64', media_type: b.mediaType as 'image/png', data: b.data } };
        case 'tool_use':
          return { type: 'tool_use', id: b.id, name: b.name, input: (b.input ?? {}) as Record<string, unknown> };
        case 'tool_result':
          return { type: 'tool_result', tool_use_id: b.toolUseId, content: b.content, ...(b.isError ? { is_error: true } : {}) };
      }
    }),
  }));
}

function fromWire(content: readonly Anthropic.ContentBlock[]): ContentBlock[] {
  const out: ContentBlock[] = [];
  for (const b of content) {
    if (b.type === 'text') out.push({ type: 'text', text: b.text });
    else if (b.type === 'tool_use') out.push({ type: 'tool_use', id: b.id, name: b.name, input: b.input });
  }
  return out;
}

const stopReasons: Record<string, StopReason> = { end_turn: 'end_turn', tool_use: 'tool_use', max_tokens: 'max_tokens', stop_sequence: 'stop_sequence', refusal: 'refusal' };

export function anthropicProvider(model: string, s: AnthropicSettings): Provider {
  const id = `anthropic/${model}`;
  const client = new Anthropic({ apiKey: s.apiKey, baseURL: s.baseUrl, maxRetries: 0, timeout: s.timeoutMs });
  return {
    id,
    async complete(req: ProviderRequest, onEvent?: (e: ProviderEvent) => void): Promise<ProviderResponse> {
      const tools = req.tools.map((t, i) => ({
        name: t.name,
        description: t.description,
        input_schema: t.inputSchema as Anthropic.Tool.InputSchema,
        // The last tool's marker caches every tool definition before it as well.
        ...(i === req.tools.length - 1 ? { cache_control: { type: 'ephemeral' as const } } : {}),
      }));
      // The SDK's timeout ends when the headers arrive; a stream that stalls halfway needs our own deadline.
      const deadline = AbortSignal.timeout(s.timeoutMs);
      const signal = req.signal ? AbortSignal.any([req.signal, deadline]) : deadline;
      let msg: Anthropic.Message;
      try {
        const stream = client.messages.stream(
          {
            model,
            max_tokens: req.maxTokens,
            system: [{ type: 'text', text: req.system, cache_control: { type: 'ephemeral' } }],
            messages: toWire(req.messages),
            ...(tools.length ? { tools } : {}),
          },
          { signal },
        );
        stream.on('text', (text) => onEvent?.({ type: 'text_delta', text }));
        msg = await stream.finalMessage();
      } catch (err) {
        if (err instanceof ProviderError) throw err;
        if (isCallerAbort(req.signal)) throw new ProviderError(id, 'request aborted', { retryable: false, cause: err });
        if (deadline.aborted || err instanceof Anthropic.APIConnectionTimeoutError) throw new ProviderError(id, `timed out after ${s.timeoutMs} ms`, { retryable: true, cause: err });
        if (err instanceof Anthropic.APIError && typeof err.status === 'number') {
          const body = err.error as { error?: { message?: string; type?: string } } | undefined;
          throw httpError(id, err.status, body?.error?.message ?? err.message, (n) => err.headers?.get(n));
        }
        // Connection failures and streams that break off or do not parse are transient from here.
        throw networkError(id, err, err instanceof Anthropic.APIConnectionError ? 'connection failed' : 'bad or interrupted stream');
      }
      const u = msg.usage;
      return {
        content: fromWire(msg.content),
        stopReason: stopReasons[msg.stop_reason ?? ''] ?? 'other',
        usage: {
          inputTokens: u.input_tokens,
          outputTokens: u.output_tokens,
          cacheReadTokens: u.cache_read_input_tokens ?? 0,
          cacheWriteTokens: u.cache_creation_input_tokens ?? 0,
        },
        model: msg.model,
        answeredBy: id,
      };
    },
  };
}
