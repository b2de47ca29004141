// The internal format → an OpenAI-compatible chat completions request: the system prompt becomes the
// first message, tool_use blocks the assistant's tool_calls (arguments as JSON text), and each
// tool_result a role "tool" message placed right after the assistant message that asked for it.
import type { ImageBlock, Message, ProviderRequest } from '../types.js';

type TextPart = { type: 'text'; text: string };
type ImagePart = { type: 'image_url'; image_url: { url: string } };
export interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}
export type WireMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | (TextPart | ImagePart)[] }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface WireTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface ChatRequest {
  model: string;
  messages: WireMessage[];
  stream: true;
  stream_options: { include_usage: true };
  max_tokens?: number;
  max_completion_tokens?: number;
  tools?: WireTool[];
}

/** Chat completions has no error flag on a tool message; the model reads this prefix instead. */
export const TOOL_ERROR_PREFIX = 'ERROR: ';

function assistant(m: Message): WireMessage {
  const text = m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
  const calls = m.content.flatMap((b): WireToolCall[] =>
    b.type === 'tool_use' ? [{ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } }] : [],
  );
  // null content is only valid beside tool calls; a bare empty reply stays an empty string.
  return calls.length ? { role: 'assistant', content: text || null, tool_calls: calls } : { role: 'assistant', content: text };
}

/** An image as a model that takes none reads it: what it is and where it is saved, so it can say so. */
export function imageAsText(b: ImageBlock): string {
  return `[an image the model cannot see (this model takes no images): ${b.note ?? b.mediaType}]`;
}

function user(m: Message, images: boolean): WireMessage[] {
  const out: WireMessage[] = [];
  // Tool messages must directly follow the assistant's calls, so they go before any user text.
  for (const b of m.content) {
    if (b.type === 'tool_result') out.push({ role: 'tool', tool_call_id: b.toolUseId, content: b.isError ? `${TOOL_ERROR_PREFIX}${b.content}` : b.content });
  }
  const parts = m.content.flatMap((b): (TextPart | ImagePart)[] =>
    b.type === 'text' ? [{ type: 'text', text: b.text }]
      : b.type !== 'image' ? []
      : images ? [{ type: 'image_url', image_url: { url: `data:${b.mediaType};base64,${b.data}` } }]
      : [{ type: 'text', text: imageAsText(b) }],
  );
  // Plain text as a string: some local servers accept nothing else.
  if (parts.length) out.push({ role: 'user', content: parts.every((p): p is TextPart => p.type === 'text') ? parts.map((p) => p.text).join('\n') : parts });
  return out;
}

/** `images`: false for a model that takes none (providers.openai.images): each becomes its text note. */
export function toOpenAIMessages(system: string, messages: readonly Message[], images = true): WireMessage[] {
  const out: WireMessage[] = system ? [{ role: 'system', content: system }] : [];
  for (const m of messages) {
    if (m.role === 'assistant') out.push(assistant(m));
    else out.push(...user(m, images));
  }
  return out;
}

export function toOpenAITools(tools: ProviderRequest['tools']): WireTool[] {
  return tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.inputSchema } }));
}

/**
 * `maxTokensField`: OpenAI's own API wants max_completion_tokens (its reasoning models refuse
 * max_tokens); the local servers (llama.cpp, Ollama, older vLLM) know only max_tokens.
 */
export function toOpenAIRequest(model: string, req: ProviderRequest, maxTokensField: 'max_tokens' | 'max_completion_tokens', images = true): ChatRequest {
  const tools = toOpenAITools(req.tools);
  return {
    model,
    messages: toOpenAIMessages(req.system, req.messages, images),
    stream: true,
    stream_options: { include_usage: true },
    [maxTokensField]: req.maxTokens,
    ...(tools.length ? { tools } : {}),
  };
}
