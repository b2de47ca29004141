// The internal format → an Anthropic Messages request. Prompt caching: the system prompt is one
// text block with an ephemeral cache marker, and the last tool carries one too, which caches every
// tool definition before it; both stay byte-identical across the turns of a day.
import type Anthropic from '@anthropic-ai/sdk';
import type { ContentBlock, Message, ProviderRequest } from '../types.js';
import { onRelease } from '../../release.js';

const EPHEMERAL = { type: 'ephemeral' } as const;
/** The API refuses empty text blocks and empty non-final messages; this stands in for no content. */
export const EMPTY_CONTENT = '(no content)';

type WireBlock = Anthropic.ContentBlockParam;
type MediaType = Anthropic.Base64ImageSource['media_type'];

function toolInput(input: unknown): Record<string, unknown> {
  // The API takes only an object; anything else cannot have come from it.
  return typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
}

function block(b: ContentBlock): WireBlock | undefined {
  switch (b.type) {
    case 'text':
      return b.text ? { type: 'text', text: b.text } : undefined;
    case 'image':
      return { type: 'image', source: { type: 'base64', media_type: b.mediaType as MediaType, data: b.data } };
    case 'tool_use':
      return { type: 'tool_use', id: b.id, name: b.name, input: toolInput(b.input) };
    case 'tool_result':
      return { type: 'tool_result', tool_use_id: b.toolUseId, content: b.content, ...(b.isError ? { is_error: true } : {}) };
  }
}

/**
 * Each message's wire form, made once: a turn sends the whole conversation with each call, and
 * messages are values (the loop appends, never edits; src/store/sessions.ts shares them too), so a
 * message already sent converts to the same object. The SDK only serializes it. Weak: a message no
 * conversation holds is gone.
 */
const wire = new WeakMap<Message, Anthropic.MessageParam>();

function wireMessage(m: Message): Anthropic.MessageParam {
  let param = wire.get(m);
  if (!param) {
    const content = m.content.map(block).filter((b): b is WireBlock => b !== undefined);
    wire.set(m, (param = m.role === 'user' ? { role: 'user', content } : { role: 'assistant', content }));
  }
  return param;
}

/**
 * The last conversation converted (a copy of its array) and its wire form. The next call, the same
 * turn's next step or the same session's next turn, repeats it and adds to its end; that prefix is
 * found by comparing references in two arrays, where the weak map reads every message's entry (a
 * cache miss each inside a turn: about half the time of a 200-message conversion). Dropped when the
 * gateway goes idle.
 */
let lastIn: readonly Message[] = [];
let lastOut: readonly Anthropic.MessageParam[] = [];
onRelease('anthropic wire', () => {
  lastIn = [];
  lastOut = [];
});

export function toAnthropicMessages(messages: readonly Message[]): Anthropic.MessageParam[] {
  const last = messages.length - 1;
  // Neither call's last message is reused: an empty reply is sent as it is only while it is last.
  const reusable = Math.min(last, lastIn.length - 1);
  let k = 0;
  while (k < reusable && messages[k] === lastIn[k]) k++;
  const out = lastOut.slice(0, k);
  for (let i = k; i <= last; i++) {
    const param = wireMessage(messages[i]!);
    // An empty assistant reply (it happens) saved in the session would make every later request a 400.
    out.push(i < last && param.content.length === 0 ? { role: param.role, content: [{ type: 'text', text: EMPTY_CONTENT }] } : param);
  }
  lastIn = messages.slice();
  lastOut = out.slice();
  return out;
}

export function toAnthropicTools(tools: ProviderRequest['tools']): Anthropic.Tool[] {
  return tools.map((t, i) => ({
    name: t.name,
    description: t.description,
    input_schema: t.inputSchema as Anthropic.Tool.InputSchema,
    ...(i === tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
  }));
}

export function toAnthropicRequest(model: string, req: ProviderRequest): Anthropic.MessageCreateParamsStreaming {
  const tools = toAnthropicTools(req.tools);
  return {
    model,
    max_tokens: req.maxTokens,
    stream: true,
    ...(req.system ? { system: [{ type: 'text', text: req.system, cache_control: EPHEMERAL }] } : {}),
    messages: toAnthropicMessages(req.messages),
    ...(tools.length ? { tools } : {}),
  };
}
