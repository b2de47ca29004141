// A stand-in for the Anthropic Messages API (POST /v1/messages) on 127.0.0.1, speaking its wire
// format: a JSON message, or an SSE stream of message_start, ping, content_block_start /
// content_block_delta (text_delta, input_json_delta with the tool input split into several
// partial_json fragments) / content_block_stop, message_delta (stop_reason, usage), message_stop.
// Errors come in the API's error shape with its statuses and headers. Each test scripts the replies
// (`srv.enqueue(step | (req) => step)`); with the script empty, the default step answers, so a
// benchmark can run any number of turns. Every request is recorded (body and headers).
import type { ServerResponse } from 'node:http';
import { pieces, sseWrite, startStandIn, type Recorded, type StandIn, type Step } from './stand-in.js';

export type { Recorded, StandIn, Step } from './stand-in.js';

type Block = { type: 'text'; text: string } | { type: 'tool_use'; id?: string; name: string; input: unknown };
export type AnthropicStep =
  | {
      kind: 'reply';
      content: Block[];
      stopReason?: string;
      inputTokens?: number;
      outputTokens?: number;
      cacheRead?: number;
      cacheWrite?: number;
      /** cut the last tool_use's input JSON after this many characters (max_tokens mid tool call) */
      cutToolJsonAt?: number;
    }
  | { kind: 'error'; status: number; type: string; message: string; retryAfter?: string; retryAfterMs?: string }
  /** never answers: no status line, no headers */
  | { kind: 'stall' }
  /** sends the headers and the first events, then nothing more */
  | { kind: 'stall-mid-stream'; text: string }
  /**
   * truncated: the stream breaks off mid-event and the connection is cut; garbage: an event that is
   * not JSON; ended: the response ends cleanly after some text, without message_delta and message_stop
   */
  | { kind: 'malformed'; how?: 'truncated' | 'garbage' | 'ended' }
  /** a 200 stream that fails part way with an `event: error`, as the API does when it overloads mid-answer */
  | { kind: 'stream-error'; type: string; message: string; afterText?: string }
  /** a text answer written slowly: one chunk every gapMs (what a channel's live view sees) */
  | { kind: 'slow-text'; chunks: string[]; gapMs: number };

export const textReply = (text: string, inputTokens = 50): AnthropicStep => ({ kind: 'reply', content: [{ type: 'text', text }], inputTokens });

export const toolUseReply = (calls: { name: string; input: unknown; id?: string }[], text?: string): AnthropicStep => ({
  kind: 'reply',
  content: [...(text ? [{ type: 'text' as const, text }] : []), ...calls.map((c) => ({ type: 'tool_use' as const, ...c }))],
  stopReason: 'tool_use',
});

/** A reply that hits max_tokens inside the input JSON of its last tool call, after `complete` whole ones. */
export const cutOffToolUseReply = (text: string, cut: { name: string; input: unknown; id?: string }, cutAt: number, complete: { name: string; input: unknown; id?: string }[] = []): AnthropicStep => ({
  kind: 'reply',
  content: [...(text ? [{ type: 'text' as const, text }] : []), ...[...complete, cut].map((c) => ({ type: 'tool_use' as const, ...c }))],
  stopReason: 'max_tokens',
  cutToolJsonAt: cutAt,
});

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

export interface ErrorOptions {
  type?: string;
  message?: string;
  /** seconds, sent as retry-after */
  retryAfter?: number | string;
  /** sent as retry-after-ms */
  retryAfterMs?: number;
}

/** errorReply(429, { retryAfter: 1 }); the positional form (status, type, message, retryAfter) also works. */
export function errorReply(status: number, opts?: ErrorOptions): AnthropicStep;
export function errorReply(status: number, type: string, message: string, retryAfter?: string): AnthropicStep;
export function errorReply(status: number, a: ErrorOptions | string = {}, message?: string, retryAfter?: string): AnthropicStep {
  const o: ErrorOptions = typeof a === 'string' ? { type: a, message, retryAfter } : a;
  const type = o.type ?? ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  return {
    kind: 'error',
    status,
    type,
    message: o.message ?? (type === 'overloaded_error' ? 'Overloaded' : `stand-in ${type}`),
    retryAfter: o.retryAfter === undefined ? undefined : String(o.retryAfter),
    retryAfterMs: o.retryAfterMs === undefined ? undefined : String(o.retryAfterMs),
  };
}

export const stall: AnthropicStep = { kind: 'stall' };
export const stallMidStream = (text = 'I am thinking'): AnthropicStep => ({ kind: 'stall-mid-stream', text });
export const malformed: AnthropicStep = { kind: 'malformed', how: 'truncated' };
export const garbage: AnthropicStep = { kind: 'malformed', how: 'garbage' };
export const endedEarly: AnthropicStep = { kind: 'malformed', how: 'ended' };
export const slowText = (chunks: string[], gapMs: number): AnthropicStep => ({ kind: 'slow-text', chunks, gapMs });
export const streamError = (type = 'overloaded_error', message = 'Overloaded', afterText?: string): AnthropicStep => ({ kind: 'stream-error', type, message, afterText });

let ids = 0;
const nextId = (prefix: string) => `${prefix}_01${String(++ids).padStart(22, '0')}`;

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': nextId('req'), ...headers });
  res.end(JSON.stringify(body));
}

function startStream(res: ServerResponse, model: string, usage: Record<string, number>): string {
  const id = nextId('msg');
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': nextId('req') });
  sseWrite(res, 'message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage } });
  sseWrite(res, 'ping', { type: 'ping' });
  return id;
}

function textBlock(res: ServerResponse, index: number, text: string): void {
  sseWrite(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
  for (const p of pieces(text, 3)) sseWrite(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: p } });
}

async function respond(res: ServerResponse, step: AnthropicStep, req: Recorded): Promise<void> {
  if (step.kind === 'stall') return; // the client's timeout, or close(), ends it
  const model: string = req.body?.model ?? 'unknown';
  const startUsage = { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 };
  if (step.kind === 'slow-text') {
    startStream(res, model, startUsage);
    sseWrite(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    for (const text of step.chunks) {
      sseWrite(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
      await new Promise((r) => setTimeout(r, step.gapMs));
    }
    sseWrite(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
    sseWrite(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: step.chunks.length } });
    sseWrite(res, 'message_stop', { type: 'message_stop' });
    res.end();
    return;
  }
  if (step.kind === 'error') {
    const headers: Record<string, string> = { ...(step.retryAfter ? { 'retry-after': step.retryAfter } : {}), ...(step.retryAfterMs ? { 'retry-after-ms': step.retryAfterMs } : {}) };
    json(res, step.status, { type: 'error', error: { type: step.type, message: step.message } }, headers);
    return;
  }
  if (step.kind === 'malformed') {
    if (step.how === 'garbage') {
      startStream(res, model, startUsage);
      res.write('event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n');
      res.write('event: content_block_delta\ndata: <html>502 Bad Gateway</html>\n\n');
      res.end();
    } else if (step.how === 'ended') {
      startStream(res, model, startUsage);
      textBlock(res, 0, 'Half an ans');
      res.end();
    } else {
      startStream(res, model, startUsage);
      // Cut the connection once the half event is out, so the client sees a stream that breaks off.
      res.write('event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_blo', () => res.socket?.destroy());
    }
    return;
  }
  if (step.kind === 'stall-mid-stream') {
    startStream(res, model, startUsage);
    textBlock(res, 0, step.text);
    return; // headers and some text went out; the rest never comes
  }
  if (step.kind === 'stream-error') {
    startStream(res, model, startUsage);
    if (step.afterText) textBlock(res, 0, step.afterText);
    sseWrite(res, 'error', { type: 'error', error: { type: step.type, message: step.message } });
    res.end();
    return;
  }

  const content = step.content.map((b) => (b.type === 'tool_use' ? { ...b, id: b.id ?? nextId('toolu') } : b));
  const stopReason = step.stopReason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  const outputTokens = step.outputTokens ?? 12;
  const usage = { input_tokens: step.inputTokens ?? 50, cache_creation_input_tokens: step.cacheWrite ?? 0, cache_read_input_tokens: step.cacheRead ?? 0, output_tokens: outputTokens };
  const lastTool = content.map((b) => b.type).lastIndexOf('tool_use');
  const inputJson = (b: (typeof content)[number], index: number) => {
    const whole = JSON.stringify(b.type === 'tool_use' ? b.input : null);
    return step.cutToolJsonAt !== undefined && index === lastTool ? whole.slice(0, step.cutToolJsonAt) : whole;
  };

  if (req.body?.stream !== true) {
    // Without streaming, a cut-off input is whatever the API could parse of it; the stand-in sends {}.
    const blocks = content.map((b, i) => (b.type === 'tool_use' && step.cutToolJsonAt !== undefined && i === lastTool ? { ...b, input: {} } : b));
    json(res, 200, { id: nextId('msg'), type: 'message', role: 'assistant', model, content: blocks, stop_reason: stopReason, stop_sequence: null, usage });
    return;
  }
  startStream(res, model, { ...usage, output_tokens: 1 });
  content.forEach((b, index) => {
    if (b.type === 'text') textBlock(res, index, b.text);
    else {
      sseWrite(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      // The API opens every tool input with an empty fragment, then sends the JSON in pieces.
      for (const p of ['', ...pieces(inputJson(b, index), 4)]) sseWrite(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: p } });
    }
    sseWrite(res, 'content_block_stop', { type: 'content_block_stop', index });
  });
  sseWrite(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens } });
  sseWrite(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

export interface AnthropicServerOptions {
  /** when set, requests without this key (x-api-key, or Authorization: Bearer) get the API's 401 */
  apiKey?: string;
}

function authorized(req: Recorded, key: string): boolean {
  return req.headers['x-api-key'] === key || req.headers.authorization === `Bearer ${key}`;
}

export function startAnthropicServer(defaultStep: Step<AnthropicStep> = textReply('ok'), opts: AnthropicServerOptions = {}): Promise<StandIn<AnthropicStep>> {
  return startStandIn<AnthropicStep>((res, step, req) => {
    if (req.method !== 'POST' || req.path.split('?')[0] !== '/v1/messages') {
      json(res, 404, { type: 'error', error: { type: 'not_found_error', message: `no route ${req.method} ${req.path}` } });
      return;
    }
    if (opts.apiKey !== undefined && !authorized(req, opts.apiKey)) {
      json(res, 401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
      return;
    }
    return respond(res, step, req);
  }, defaultStep);
}
