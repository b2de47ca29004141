// Anthropic Messages API through the official SDK, streaming. The SDK's own retries are off: retry.ts
// retries every provider by the same rules. The SDK is given everything explicitly (key, base URL)
// so it never falls back to process.env behind buildProvider's back.
import type Anthropic from '@anthropic-ai/sdk';
import type { ClientOptions } from '@anthropic-ai/sdk';
import { format } from 'node:util';
import { unloadLazyChunk } from '../../lazy-chunk.js';
import { log } from '../../log.js';
import { onUnload } from '../../release.js';
import { loadBuiltin } from '../../v8-flags.js';
import type { Provider, ProviderEvent, ProviderRequest, ProviderResponse } from '../types.js';
import { ProviderError } from '../types.js';
import { AnthropicCollector } from './anthropic-stream.js';
import { toAnthropicRequest } from './anthropic-wire.js';
import { ANTHROPIC_DEFAULT_BASE_URL } from './models.js';
import { startDeadline, type Deadline } from '../../net/deadline.js';
import { ErrorFactory } from '../../net/errors.js';
import { httpFetch } from '../../net/fetch.js';

export { ANTHROPIC_DEFAULT_BASE_URL };

export interface AnthropicSettings {
  apiKey: string;
  /** default ANTHROPIC_DEFAULT_BASE_URL */
  baseUrl?: string;
  /** the whole request, streamed body included */
  timeoutMs: number;
}

/** Error types the API sends inside a stream that a later request may not meet. */
const TRANSIENT_TYPES = new Set(['overloaded_error', 'api_error', 'rate_limit_error', 'timeout_error']);

// The SDK logs to the console by default; here it goes to our log. Its errors (e.g. an event that is
// not JSON) become a ProviderError that is reported anyway, so they are debug lines.
const line = (msg: string, rest: unknown[]) => `anthropic sdk: ${format(msg, ...rest)}`;
const sdkLogger: NonNullable<ClientOptions['logger']> = {
  error: (msg, ...rest) => log.debug(line(msg, rest)),
  warn: (msg, ...rest) => log.warn(line(msg, rest)),
  info: (msg, ...rest) => log.debug(line(msg, rest)),
  debug: (msg, ...rest) => log.debug(line(msg, rest)),
};

type Sdk = typeof Anthropic;
/**
 * The SDK is a lazy chunk (src/lazy-chunk.ts): loaded by the first request, not at start, and dropped
 * by the idle unload (conductor.unloadCodeAfterIdleSeconds, src/release.ts) with every client made
 * from it (they are keyed by provider here, nowhere else), so that its code and source (2.3 MiB)
 * leave the process until the next request. The unload runs only when no turn is running, so no
 * request is in flight with the dropped SDK.
 */
let loaded: { sdk: Promise<Sdk>; clients: WeakMap<object, Anthropic> } | undefined;
const sdkState = () => (loaded ??= { sdk: import('@anthropic-ai/sdk').then(withWebStreams), clients: new WeakMap() });
/**
 * The SDK's first request reads the global ReadableStream, whose first read loads Node's web streams
 * (four modules): here, under V8's defaults in the executable (src/v8-flags.ts).
 */
function withWebStreams(m: { default: Sdk }): Sdk {
  loadBuiltin('internal/webstreams/readablestream', () => globalThis.ReadableStream);
  return m.default;
}
onUnload('anthropic-sdk', () => {
  loaded = undefined;
  unloadLazyChunk('anthropic-sdk');
});

function classify(Anthropic: Sdk, err: unknown, errors: ErrorFactory, deadline: Deadline, timeoutMs: number, caller: AbortSignal | undefined, streaming: boolean): ProviderError {
  if (deadline.expired() || err instanceof Anthropic.APIConnectionTimeoutError) return errors.timeout(timeoutMs, err);
  if (caller?.aborted || err instanceof Anthropic.APIUserAbortError) return errors.aborted(err);
  if (err instanceof ProviderError) return err;
  // APIConnectionError is an APIError without a status, so it is told apart first.
  if (err instanceof Anthropic.APIConnectionError) return errors.network(err.cause ?? err, streaming ? 'stream interrupted' : 'connection failed');
  if (err instanceof Anthropic.APIError) {
    if (typeof err.status === 'number') return errors.http(err.status, err.apiMessage ?? err.message, (n) => err.headers?.get(n));
    const type = err.type ?? 'error';
    return errors.inStream(type, err.apiMessage ?? err.message, TRANSIENT_TYPES.has(type));
  }
  if (err instanceof SyntaxError) return errors.badStream('an event is not JSON', err);
  // The body broke off (socket closed, "terminated"): the answer was lost on the way.
  return errors.network(err, streaming ? 'stream interrupted' : 'connection failed');
}

export function anthropicProvider(model: string, s: AnthropicSettings): Provider {
  const id = `anthropic/${model}`;
  const errors = new ErrorFactory(id, [s.apiKey]);
  const key = {};
  return {
    id,
    async complete(req: ProviderRequest, onEvent?: (e: ProviderEvent) => void): Promise<ProviderResponse> {
      // Mapping happens outside the try: a bug there must not pass for a network error and be retried.
      const params = toAnthropicRequest(model, req);
      const collector = new AnthropicCollector(onEvent && ((text) => onEvent({ type: 'text_delta', text })));
      const state = sdkState();
      const Sdk = await state.sdk;
      let client = state.clients.get(key);
      if (!client) {
        client = new Sdk({
          apiKey: s.apiKey,
          baseURL: s.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL,
          maxRetries: 0,
          timeout: s.timeoutMs,
          logger: sdkLogger,
          logLevel: 'warn',
          openTelemetry: false,
          // Not Node's fetch: undici's WebAssembly parser would stay in memory for good (src/net/fetch.ts).
          fetch: httpFetch,
        });
        state.clients.set(key, client);
      }
      const deadline = startDeadline(s.timeoutMs, req.signal);
      let streaming = false;
      try {
        const stream = await client.messages.create(params, { signal: deadline.signal });
        streaming = true;
        for await (const ev of stream) collector.add(ev);
      } catch (err) {
        throw classify(Sdk, err, errors, deadline, s.timeoutMs, req.signal, streaming);
      } finally {
        deadline.clear();
      }
      // The SDK ends its iterator quietly when the request is aborted, so an unfinished stream may be
      // our timeout or the caller as well as a connection that closed early.
      if (!collector.finished) {
        if (deadline.expired()) throw errors.timeout(s.timeoutMs);
        if (req.signal?.aborted) throw errors.aborted();
        throw errors.badStream('it ended before message_stop');
      }
      return { ...collector.result(errors, model), answeredBy: id };
    },
  };
}
