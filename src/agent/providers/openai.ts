// OpenAI-compatible chat completions (OpenAI, Ollama, llama.cpp server, OpenRouter, vLLM), streamed,
// through src/net/fetch.ts: undici's client, with its WebAssembly parser, would stay in memory after
// the first turn (docs/performance.md, "Memory after many turns"). The key is optional: local
// servers usually need none.
import type { Provider, ProviderEvent, ProviderRequest, ProviderResponse } from '../types.js';
import { ProviderError } from '../types.js';
import { startDeadline, type Deadline } from '../../net/deadline.js';
import { ErrorFactory, errorBodyMessage } from '../../net/errors.js';
import { httpRequest } from '../../net/fetch.js';
import { OpenAICollector, type WireChunk } from './openai-stream.js';
import { toOpenAIRequest } from './openai-wire.js';
import { SseEventTooLarge, sseData } from './sse.js';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export interface OpenAISettings {
  apiKey?: string;
  /** including /v1; default OPENAI_DEFAULT_BASE_URL */
  baseUrl?: string;
  /** the whole request, streamed body included */
  timeoutMs: number;
  /** the provider's name in messages and metrics; default openai/<model> (agent.fallback's is local/<model>) */
  id?: string;
  /** the model takes image_url parts (providers.openai.images); false: images go as their text note */
  images?: boolean;
}

/** An error page may be anything (a proxy's HTML); only its start is read. */
const MAX_ERROR_BODY = 16 * 1024;

async function readCapped(body: AsyncIterable<Uint8Array>, max: number): Promise<string> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    parts.push(chunk);
    size += chunk.length;
    if (size >= max) break; // leaving the loop destroys the rest of the body
  }
  return Buffer.concat(parts).toString('utf8').slice(0, max);
}

function classify(err: unknown, errors: ErrorFactory, deadline: Deadline, timeoutMs: number, caller: AbortSignal | undefined, streaming: boolean): ProviderError {
  if (deadline.expired()) return errors.timeout(timeoutMs, err);
  if (caller?.aborted) return errors.aborted(err);
  if (err instanceof ProviderError) return err;
  if (err instanceof SyntaxError) return errors.badStream('a chunk is not JSON', err);
  if (err instanceof SseEventTooLarge) return errors.oversizedStream(err.message, err);
  return errors.network(err, streaming ? 'stream interrupted' : 'connection failed');
}

function inStreamError(errors: ErrorFactory, e: NonNullable<WireChunk['error']>): ProviderError {
  if (typeof e === 'string') return errors.inStream('error', e, true);
  // The server gave up half way; asking again is the only remedy there is.
  return errors.inStream(e.type ?? String(e.code ?? 'error'), e.message ?? 'unknown', true);
}

export function openaiProvider(model: string, s: OpenAISettings): Provider {
  const id = s.id ?? `openai/${model}`;
  const errors = new ErrorFactory(id, [s.apiKey]);
  const base = (s.baseUrl ?? OPENAI_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const url = `${base}/chat/completions`;
  const maxTokensField = new URL(base).hostname === 'api.openai.com' ? 'max_completion_tokens' : 'max_tokens';
  const headers = {
    'content-type': 'application/json',
    accept: 'text/event-stream',
    ...(s.apiKey ? { authorization: `Bearer ${s.apiKey}` } : {}),
  };
  return {
    id,
    async complete(req: ProviderRequest, onEvent?: (e: ProviderEvent) => void): Promise<ProviderResponse> {
      const body = JSON.stringify(toOpenAIRequest(model, req, maxTokensField, s.images ?? true));
      const collector = new OpenAICollector(onEvent && ((text) => onEvent({ type: 'text_delta', text })));
      const deadline = startDeadline(s.timeoutMs, req.signal);
      let streaming = false;
      let sawDone = false;
      try {
        // Redirects are not followed: a 301 means the base URL is wrong, and says so.
        const res = await httpRequest(url, { method: 'POST', headers, body, signal: deadline.signal, redirect: 'manual' });
        if (res.status < 200 || res.status >= 300) {
          const raw = res.body ? await readCapped(res.body, MAX_ERROR_BODY) : '';
          throw errors.http(res.status, errorBodyMessage(raw), (n) => res.header(n));
        }
        streaming = true;
        const type = res.header('content-type') ?? '';
        if (type.includes('application/json')) {
          // A server that ignored stream: true answers with the whole completion.
          collector.add(JSON.parse(res.body ? await readCapped(res.body, Infinity) : '') as WireChunk);
        } else if (!type.includes('text/event-stream') || !res.body) {
          // e.g. a captive portal's HTML page on a board's Wi-Fi
          res.body?.destroy();
          throw errors.badStream(`the server answered with ${type || 'no content-type'}, not an event stream`);
        } else {
          const body = res.body;
          try {
            // Not destroyed when the loop ends at [DONE]: Node closes the socket of an answer destroyed
            // before its end was read, and every turn would then open a new connection.
            for await (const data of sseData(body.iterator({ destroyOnReturn: false }))) {
              if (data === '[DONE]') {
                sawDone = true;
                break;
              }
              const chunk = JSON.parse(data) as WireChunk;
              if (chunk.error) throw inStreamError(errors, chunk.error);
              collector.add(chunk);
            }
          } finally {
            // After [DONE] the rest is read to its end, so the connection serves the next call (the
            // answer is complete); on any other way out the answer is dropped with its connection.
            if (sawDone) res.drain();
            else body.destroy();
          }
        }
      } catch (err) {
        throw classify(err, errors, deadline, s.timeoutMs, req.signal, streaming);
      } finally {
        deadline.clear();
      }
      if (!collector.finished && !sawDone) throw errors.badStream('it ended without a finish_reason or [DONE]');
      return { ...collector.result(errors, model), answeredBy: id };
    },
  };
}
