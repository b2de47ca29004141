// A stand-in for an OpenAI-compatible chat completions API (POST /v1/chat/completions) speaking its
// wire format: SSE chunks (`data: {...}`, `data: [DONE]`) or JSON; tool call arguments streamed in
// fragments per index; finish_reason; usage in the last chunk; errors as {"error": {...}}.
import type { ServerResponse } from 'node:http';
import { pieces, sseWrite, startStandIn, type Recorded, type StandIn, type Step } from './stand-in.js';

export type OpenAIStep =
  | { kind: 'reply'; text?: string; toolCalls?: { name: string; arguments: unknown; id?: string }[]; finishReason?: string; promptTokens?: number; cutArgsAt?: number }
  | { kind: 'error'; status: number; message: string; retryAfter?: string }
  | { kind: 'stall' }
  | { kind: 'malformed' };

export const oaText = (text: string, promptTokens = 40): OpenAIStep => ({ kind: 'reply', text, promptTokens });
export const oaTools = (toolCalls: { name: string; arguments: unknown; id?: string }[], text?: string): OpenAIStep => ({ kind: 'reply', text, toolCalls, finishReason: 'tool_calls' });
export const oaError = (status: number, message: string, retryAfter?: string): OpenAIStep => ({ kind: 'error', status, message, retryAfter });

let ids = 0;

function respond(res: ServerResponse, step: OpenAIStep, req: Recorded): void {
  if (step.kind === 'stall') return;
  if (step.kind === 'error') {
    res.writeHead(step.status, { 'content-type': 'application/json', ...(step.retryAfter ? { 'retry-after': step.retryAfter } : {}) });
    res.end(JSON.stringify({ error: { message: step.message, type: 'server_error', code: null } }));
    return;
  }
  if (step.kind === 'malformed') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"id":"chatcmpl-x","choices":[{"delta":{"content":"Hel');
    res.write('\n\ndata: this is not json\n\n');
    res.end();
    return;
  }
  const model: string = req.body?.model ?? 'unknown';
  const id = `chatcmpl-${++ids}`;
  const calls = (step.toolCalls ?? []).map((c, i) => ({ id: c.id ?? `call_${++ids}`, index: i, name: c.name, args: JSON.stringify(c.arguments) }));
  const finish = step.finishReason ?? (calls.length ? 'tool_calls' : 'stop');
  const usage = { prompt_tokens: step.promptTokens ?? 40, completion_tokens: 9, total_tokens: (step.promptTokens ?? 40) + 9 };
  if (req.body?.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({
      id, object: 'chat.completion', model,
      choices: [{ index: 0, finish_reason: finish, message: { role: 'assistant', content: step.text ?? null, ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args } })) } : {}) } }],
      usage,
    }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: unknown, finish_reason: string | null = null) => sseWrite(res, null, { id, object: 'chat.completion.chunk', model, choices: [{ index: 0, delta, finish_reason }] });
  chunk({ role: 'assistant', content: '' });
  for (const p of step.text ? pieces(step.text, 3) : []) chunk({ content: p });
  for (const c of calls) {
    chunk({ tool_calls: [{ index: c.index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] });
    const args = step.cutArgsAt !== undefined && c.index === calls.length - 1 ? c.args.slice(0, step.cutArgsAt) : c.args;
    for (const p of pieces(args, 3)) chunk({ tool_calls: [{ index: c.index, function: { arguments: p } }] });
  }
  chunk({}, finish);
  sseWrite(res, null, { id, object: 'chat.completion.chunk', model, choices: [], usage });
  sseWrite(res, null, '[DONE]');
  res.end();
}

export function startOpenAIServer(defaultStep: Step<OpenAIStep> = oaText('ok')): Promise<StandIn<OpenAIStep>> {
  return startStandIn<OpenAIStep>((res, step, req) => {
    if (req.method === 'GET' && req.path === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'stand-in', object: 'model' }] }));
      return;
    }
    if (req.method !== 'POST' || req.path !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `no route ${req.path}` } }));
      return;
    }
    respond(res, step, req);
  }, defaultStep);
}
