// A stand-in for the Anthropic Messages API (POST /v1/messages) speaking its wire format: JSON, or
// SSE with message_start / content_block_* / message_delta / message_stop and ping events; tool input
// arrives as input_json_delta fragments; errors in the API's error shape.
import type { ServerResponse } from 'node:http';
import { pieces, sseWrite, startStandIn, type Recorded, type StandIn, type Step } from './stand-in.js';

type Block = { type: 'text'; text: string } | { type: 'tool_use'; id?: string; name: string; input: unknown };
export type AnthropicStep =
  | { kind: 'reply'; content: Block[]; stopReason?: string; inputTokens?: number; cacheRead?: number; cutToolJsonAt?: number }
  | { kind: 'error'; status: number; type: string; message: string; retryAfter?: string }
  | { kind: 'stall' }
  | { kind: 'stallMidStream' }
  | { kind: 'malformed' };

export const textReply = (text: string, inputTokens = 50): AnthropicStep => ({ kind: 'reply', content: [{ type: 'text', text }], inputTokens });
export const toolUseReply = (calls: { name: string; input: unknown; id?: string }[], text?: string): AnthropicStep => ({
  kind: 'reply',
  content: [...(text ? [{ type: 'text' as const, text }] : []), ...calls.map((c) => ({ type: 'tool_use' as const, ...c }))],
  stopReason: 'tool_use',
});
export const errorReply = (status: number, type: string, message: string, retryAfter?: string): AnthropicStep => ({ kind: 'error', status, type, message, retryAfter });
export const stall: AnthropicStep = { kind: 'stall' };
export const malformed: AnthropicStep = { kind: 'malformed' };

let ids = 0;

function respond(res: ServerResponse, step: AnthropicStep, req: Recorded): void {
  if (step.kind === 'stall') return; // never answers; the client's timeout or a kill ends it
  if (step.kind === 'stallMidStream') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    sseWrite(res, 'message_start', { type: 'message_start', message: { id: 'msg_s', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } });
    return; // headers and one event, then silence
  }
  if (step.kind === 'error') {
    res.writeHead(step.status, { 'content-type': 'application/json', ...(step.retryAfter ? { 'retry-after': step.retryAfter } : {}) });
    res.end(JSON.stringify({ type: 'error', error: { type: step.type, message: step.message } }));
    return;
  }
  const stream = req.body?.stream === true;
  if (step.kind === 'malformed') {
    res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json' });
    if (stream) res.write('event: message_start\ndata: {"type":"message_start","message":{"id":"msg_x","type":"mess');
    else res.write('{"id": "msg_x", "content": [');
    res.socket?.destroy();
    return;
  }
  const model: string = req.body?.model ?? 'unknown';
  const content = step.content.map((b) => (b.type === 'tool_use' ? { ...b, id: b.id ?? `toolu_${++ids}` } : b));
  const stopReason = step.stopReason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  const usage = { input_tokens: step.inputTokens ?? 50, output_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: step.cacheRead ?? 0 };
  const id = `msg_${++ids}`;
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id, type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null, usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  sseWrite(res, 'message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
  sseWrite(res, 'ping', { type: 'ping' });
  content.forEach((b, index) => {
    if (b.type === 'text') {
      sseWrite(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const p of pieces(b.text, 3)) sseWrite(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: p } });
    } else {
      sseWrite(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      let json = JSON.stringify(b.input);
      if (step.cutToolJsonAt !== undefined && index === content.length - 1) json = json.slice(0, step.cutToolJsonAt);
      for (const p of pieces(json, 3)) sseWrite(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: p } });
    }
    sseWrite(res, 'content_block_stop', { type: 'content_block_stop', index });
  });
  sseWrite(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 12 } });
  sseWrite(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

export function startAnthropicServer(defaultStep: Step<AnthropicStep> = textReply('ok')): Promise<StandIn<AnthropicStep>> {
  return startStandIn<AnthropicStep>((res, step, req) => {
    if (req.method !== 'POST' || !req.path.startsWith('/v1/messages')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `no route ${req.path}` } }));
      return;
    }
    respond(res, step, req);
  }, defaultStep);
}
