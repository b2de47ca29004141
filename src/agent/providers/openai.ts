// OpenAI-compatible chat completions (OpenAI, Ollama, llama.cpp server, OpenRouter, vLLM) through
// undici, streaming. Tool calls arrive as argument fragments per index and are assembled here.
import { request } from 'undici';
import type { ContentBlock, Message, Provider, ProviderEvent, ProviderRequest, ProviderResponse, StopReason } from '../types.js';
import { ProviderError } from '../types.js';
import { httpError, isCallerAbort, networkError } from './errors.js';
import { sseData } from './sse.js';

export interface OpenAISettings {
  apiKey?: string;
  baseUrl: string;
  timeoutMs: number;
}

type WireMessage =
  | { role: 'system' | 'user'; content: string | { type: string; text?: string; image_url?: { url: string } }[] }
  | { role: 'assistant'; content: string | null; tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export function toOpenAI(system: string, messages: readonly Message[]): WireMessage[] {
  const out: WireMessage[] = [{ role: 'system', content: system }];
  for (const m of messages) {
    if (m.role === 'assistant') {
      const text = m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      const calls = m.content.flatMap((b) => (b.type === 'tool_use' ? [{ id: b.id, type: 'function' as const, function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } }] : []));
      out.push({ role: 'assistant', content: text || null, ...(calls.length ? { tool_calls: calls } : {}) });
      continue;
    }
    // Tool results become 'tool' messages, which must directly follow the assistant's calls.
    for (const b of m.content) if (b.type === 'tool_result') out.push({ role: 'tool', tool_call_id: b.toolUseId, content: b.isError ? `ERROR: ${b.content}` : b.content });
    type Part = { type: string; text?: string; image_url?: { url: string } };
    const parts = m.content.flatMap((b): Part[] =>
      b.type === 'text' ? [{ type: 'text', text: b.text }] : b.type === 'image' ? [{ type: 'image_url', image_url: { url: `data:${b.mediaType};base64,${b.data}` } }] : [],
    );
    if (parts.length) out.push({ role: 'user', content: parts.every((p) => p.type === 'text') ? parts.map((p) => p.text).join('\n') : parts });
  }
  return out;
}

const finish: Record<string, StopReason> = { stop: 'end_turn', tool_calls: 'tool_use', function_call: 'tool_use', length: 'max_tokens', content_filter: 'refusal' };

interface Chunk {
  model?: string;
  choices?: { delta?: { content?: string | null; tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[] }; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } } | null;
  error?: { message?: string };
}

export function openaiProvider(model: string, s: OpenAISettings): Provider {
  const id = `openai/${model}`;
  const url = `${s.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  return {
    id,
    async complete(req: ProviderRequest, onEvent?: (e: ProviderEvent) => void): Promise<ProviderResponse> {
      const body = {
        model,
        max_tokens: req.maxTokens,
        stream: true,
        stream_options: { include_usage: true },
        messages: toOpenAI(req.system, req.messages),
        ...(req.tools.length ? { tools: req.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.inputSchema } })) } : {}),
      };
      const timeout = AbortSignal.timeout(s.timeoutMs);
      const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
      let text = '';
      const calls = new Map<number, { id: string; name: string; args: string }>();
      let stop: StopReason = 'other';
      let usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0 };
      let answeredModel = model;
      try {
        const res = await request(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(s.apiKey ? { authorization: `Bearer ${s.apiKey}` } : {}) },
          body: JSON.stringify(body),
          signal,
        });
        if (res.statusCode >= 400) {
          const raw = await res.body.text();
          let message = raw.slice(0, 300);
          try {
            message = (JSON.parse(raw) as Chunk).error?.message ?? message;
          } catch {
            // not JSON: keep the text
          }
          const headers = res.headers;
          throw httpError(id, res.statusCode, message, (n) => {
            const v = headers[n];
            return Array.isArray(v) ? v[0] : v;
          });
        }
        let done = false;
        for await (const data of sseData(res.body)) {
          if (data === '[DONE]') {
            done = true;
            break;
          }
          let chunk: Chunk;
          try {
            chunk = JSON.parse(data) as Chunk;
          } catch {
            throw new ProviderError(id, `bad stream: an event is not JSON: ${data.slice(0, 80)}`, { retryable: true });
          }
          if (chunk.error) throw new ProviderError(id, `stream error: ${chunk.error.message ?? 'unknown'}`, { retryable: true });
          if (chunk.model) answeredModel = chunk.model;
          if (chunk.usage) usage = { inputTokens: chunk.usage.prompt_tokens ?? 0, outputTokens: chunk.usage.completion_tokens ?? 0, cacheReadTokens: chunk.usage.prompt_tokens_details?.cached_tokens ?? 0 };
          for (const choice of chunk.choices ?? []) {
            const d = choice.delta;
            if (d?.content) {
              text += d.content;
              onEvent?.({ type: 'text_delta', text: d.content });
            }
            for (const tc of d?.tool_calls ?? []) {
              const c = calls.get(tc.index) ?? { id: '', name: '', args: '' };
              if (tc.id) c.id = tc.id;
              if (tc.function?.name) c.name += tc.function.name;
              if (tc.function?.arguments) c.args += tc.function.arguments;
              calls.set(tc.index, c);
            }
            if (choice.finish_reason) stop = finish[choice.finish_reason] ?? 'other';
          }
        }
        if (!done) throw new ProviderError(id, 'bad stream: it ended before [DONE]', { retryable: true });
      } catch (err) {
        if (err instanceof ProviderError) throw err;
        if (isCallerAbort(req.signal)) throw new ProviderError(id, 'request aborted', { retryable: false, cause: err });
        if (timeout.aborted) throw new ProviderError(id, `timed out after ${s.timeoutMs} ms`, { retryable: true, cause: err });
        throw networkError(id, err);
      }
      const content: ContentBlock[] = text ? [{ type: 'text', text }] : [];
      for (const [, c] of [...calls].sort(([a], [b]) => a - b)) {
        let input: unknown;
        try {
          input = c.args ? JSON.parse(c.args) : {};
        } catch {
          // Only a reply cut off by the token limit may carry half an argument object; it is never executed.
          if (stop !== 'max_tokens') throw new ProviderError(id, `tool call ${c.name}: arguments are not valid JSON`, { retryable: true });
          input = { _incomplete: c.args };
        }
        content.push({ type: 'tool_use', id: c.id || `call_${c.name}_${content.length}`, name: c.name, input });
      }
      return { content, stopReason: stop, usage, model: answeredModel, answeredBy: id };
    },
  };
}
