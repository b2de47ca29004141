// A stand-in for an OpenAI-compatible chat completions API on 127.0.0.1: POST /v1/chat/completions
// as SSE chunks (`data: {...}` lines, `data: [DONE]`) or one JSON completion, and GET /v1/models.
// Tool call arguments are streamed in fragments per index; finish_reason stop / tool_calls /
// length; usage in a last chunk with no choices when stream_options.include_usage asks for it.
// Errors as {"error": {...}} (or Ollama's {"error": "..."}). Scripted and recording like the
// Anthropic stand-in.
import type { ServerResponse } from 'node:http';
import { pieces, sseWrite, startStandIn, type Recorded, type StandIn, type Step } from './stand-in.js';

export type { Recorded, StandIn, Step } from './stand-in.js';

type Call = { name: string; arguments: unknown; id?: string };
export type OpenAIStep =
  | {
      kind: 'reply';
      text?: string;
      toolCalls?: Call[];
      finishReason?: string;
      promptTokens?: number;
      cachedTokens?: number;
      completionTokens?: number;
      /** cut the last call's arguments after this many characters (the length limit mid tool call) */
      cutArgsAt?: number;
      /** end the stream after the finish chunk without `data: [DONE]`, as some servers do */
      omitDone?: boolean;
    }
  | { kind: 'error'; status: number; message: string; type?: string; retryAfter?: string; retryAfterMs?: string; bare?: boolean }
  | { kind: 'stall' }
  | { kind: 'stall-mid-stream'; text: string }
  /** truncated: cut mid-chunk with the connection; garbage: a chunk that is not JSON; ended: a clean end with no finish_reason and no [DONE] */
  | { kind: 'malformed'; how?: 'truncated' | 'garbage' | 'ended' }
  /** a 200 stream that fails part way with a chunk holding an error object */
  | { kind: 'stream-error'; message: string; afterText?: string };

export const textReply = (text: string, promptTokens = 40): OpenAIStep => ({ kind: 'reply', text, promptTokens });
export const toolCallsReply = (toolCalls: Call[], text?: string): OpenAIStep => ({ kind: 'reply', text, toolCalls, finishReason: 'tool_calls' });
/** finish_reason "length" inside the arguments of the last call, after `complete` whole ones. */
export const cutOffToolCallReply = (text: string | undefined, cut: Call, cutAt: number, complete: Call[] = []): OpenAIStep => ({
  kind: 'reply',
  text,
  toolCalls: [...complete, cut],
  finishReason: 'length',
  cutArgsAt: cutAt,
});

export interface ErrorOptions {
  message?: string;
  type?: string;
  /** seconds, sent as retry-after */
  retryAfter?: number | string;
  retryAfterMs?: number;
  /** Ollama and llama.cpp style: {"error": "message"} */
  bare?: boolean;
}

/** errorReply(429, { retryAfter: 1 }); the positional form (status, message, retryAfter) also works. */
export function errorReply(status: number, opts?: ErrorOptions): OpenAIStep;
export function errorReply(status: number, message: string, retryAfter?: string): OpenAIStep;
export function errorReply(status: number, a: ErrorOptions | string = {}, retryAfter?: string): OpenAIStep {
  const o: ErrorOptions = typeof a === 'string' ? { message: a, retryAfter } : a;
  return {
    kind: 'error',
    status,
    message: o.message ?? `stand-in error ${status}`,
    type: o.type,
    retryAfter: o.retryAfter === undefined ? undefined : String(o.retryAfter),
    retryAfterMs: o.retryAfterMs === undefined ? undefined : String(o.retryAfterMs),
    bare: o.bare,
  };
}

export const stall: OpenAIStep = { kind: 'stall' };
export const stallMidStream = (text = 'I am thinking'): OpenAIStep => ({ kind: 'stall-mid-stream', text });
export const malformed: OpenAIStep = { kind: 'malformed', how: 'truncated' };
export const garbage: OpenAIStep = { kind: 'malformed', how: 'garbage' };
export const endedEarly: OpenAIStep = { kind: 'malformed', how: 'ended' };
export const streamError = (message = 'the model runner crashed', afterText?: string): OpenAIStep => ({ kind: 'stream-error', message, afterText });

/** Older names, kept for the tests that use them. */
export const oaText = textReply;
export const oaTools = toolCallsReply;
export const oaError = (status: number, message: string, retryAfter?: string): OpenAIStep => errorReply(status, message, retryAfter);

let ids = 0;

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function defaultType(status: number): string {
  return status === 429 ? 'rate_limit_exceeded' : status === 401 ? 'invalid_request_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
}

function respond(res: ServerResponse, step: OpenAIStep, req: Recorded): void {
  if (step.kind === 'stall') return;
  if (step.kind === 'error') {
    const headers: Record<string, string> = { ...(step.retryAfter ? { 'retry-after': step.retryAfter } : {}), ...(step.retryAfterMs ? { 'retry-after-ms': step.retryAfterMs } : {}) };
    json(res, step.status, step.bare ? { error: step.message } : { error: { message: step.message, type: step.type ?? defaultType(step.status), param: null, code: null } }, headers);
    return;
  }
  const model: string = req.body?.model ?? 'unknown';
  const id = `chatcmpl-${++ids}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: unknown, finish_reason: string | null = null) =>
    sseWrite(res, null, { id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, logprobs: null, finish_reason }] });
  const startStream = () => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    chunk({ role: 'assistant', content: '' });
  };
  if (step.kind === 'malformed') {
    startStream();
    if (step.how === 'garbage') {
      res.write('data: {"id":"chatcmpl-x","choices":[{"delta":{"content":"Hel\n\n');
      res.end();
    } else if (step.how === 'ended') {
      chunk({ content: 'Half an ans' });
      res.end();
    } else {
      // Cut the connection once the half chunk is out, so the client sees a stream that breaks off.
      res.write(`data: {"id":"${id}","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel`, () => res.socket?.destroy());
    }
    return;
  }
  if (step.kind === 'stall-mid-stream') {
    startStream();
    chunk({ content: step.text });
    return;
  }
  if (step.kind === 'stream-error') {
    startStream();
    if (step.afterText) chunk({ content: step.afterText });
    sseWrite(res, null, { error: { message: step.message, type: 'server_error', code: null } });
    res.end();
    return;
  }

  const calls = (step.toolCalls ?? []).map((c, i) => ({ id: c.id ?? `call_${++ids}`, index: i, name: c.name, args: JSON.stringify(c.arguments) }));
  const lastCall = calls.length - 1;
  const argsOf = (c: (typeof calls)[number]) => (step.cutArgsAt !== undefined && c.index === lastCall ? c.args.slice(0, step.cutArgsAt) : c.args);
  const finish = step.finishReason ?? (calls.length ? 'tool_calls' : 'stop');
  const promptTokens = step.promptTokens ?? 40;
  const completionTokens = step.completionTokens ?? 9;
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    ...(step.cachedTokens !== undefined ? { prompt_tokens_details: { cached_tokens: step.cachedTokens } } : {}),
  };
  if (req.body?.stream !== true) {
    const toolCalls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: argsOf(c) } }));
    json(res, 200, {
      id, object: 'chat.completion', created, model,
      choices: [{ index: 0, finish_reason: finish, logprobs: null, message: { role: 'assistant', content: step.text ?? null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) } }],
      usage,
    });
    return;
  }
  startStream();
  for (const p of step.text ? pieces(step.text, 3) : []) chunk({ content: p });
  for (const c of calls) {
    chunk({ tool_calls: [{ index: c.index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] });
    for (const p of pieces(argsOf(c), 4)) chunk({ tool_calls: [{ index: c.index, function: { arguments: p } }] });
  }
  chunk({}, finish);
  if (req.body?.stream_options?.include_usage === true) sseWrite(res, null, { id, object: 'chat.completion.chunk', created, model, choices: [], usage });
  if (!step.omitDone) sseWrite(res, null, '[DONE]');
  res.end();
}

export interface OpenAIServerOptions {
  /**
   * When set, requests without `Authorization: Bearer <apiKey>` get a 401 whose message repeats the
   * key that was sent, as some proxies do: the worst case for keeping keys out of error messages.
   */
  apiKey?: string;
}

export function startOpenAIServer(defaultStep: Step<OpenAIStep> = textReply('ok'), opts: OpenAIServerOptions = {}): Promise<StandIn<OpenAIStep>> {
  return startStandIn<OpenAIStep>((res, step, req) => {
    const path = req.path.split('?')[0];
    if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      const sent = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      json(res, 401, { error: { message: `Incorrect API key provided: ${sent}.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
      return;
    }
    if (req.method === 'GET' && path === '/v1/models') {
      json(res, 200, { object: 'list', data: [{ id: 'stand-in', object: 'model', created: 0, owned_by: 'pinclaw-test' }] });
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      json(res, 404, { error: { message: `no route ${req.method} ${req.path}`, type: 'invalid_request_error', param: null, code: null } });
      return;
    }
    respond(res, step, req);
  }, defaultStep);
}
