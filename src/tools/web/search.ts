// web_search: a query through the provider the owner configured (web.search), answered as numbered
// results. The tool exists only when a provider is set, so an unconfigured install offers the model
// nothing it cannot use.
//
// The search endpoint is deliberately NOT run through the SSRF guard of web_fetch: it is an address
// the owner wrote into the config, not one a model or a page chose, and SearXNG instances usually
// live on the LAN (a private address the guard would refuse). The URLs in the results are only
// text; reading one goes through web_fetch and its guard.
import type { PinclawConfig } from '../../config/schema.js';
import { describeValue } from '../../config/validate.js';
import { ConfigError, errorMessage } from '../../errors.js';
import { httpRequest } from '../../net/fetch.js';
import { errorCode, rootMessage } from '../../net/errors.js';
import type { Tool } from '../types.js';
import type { snippetToText } from './html.js';
import { PROVIDERS, type Provider, type ProviderName, type SearchHit } from './search-providers.js';
import { defineTool } from '../define.js';

export type WebConfig = PinclawConfig['web'];

export interface SearchSettings {
  provider: ProviderName;
  base: URL;
  apiKey: string;
  timeoutMs: number;
  /** the config key that set the time limit, for the timeout message */
  timeoutKey: string;
  maxBytes: number;
}

export const MAX_COUNT = 20;
const DEFAULT_COUNT = 5;
const MAX_SNIPPET = 500;

/**
 * The settings web_search runs with, or undefined when no provider is configured. Throws a
 * ConfigError (exit 78) naming the key when the provider lacks what it needs.
 */
export function searchSettings(web: WebConfig): SearchSettings | undefined {
  const s = web.search;
  if (s.provider === 'none') return undefined;
  const provider = PROVIDERS[s.provider];
  if (s.provider === 'brave' && !s.apiKey) {
    throw new ConfigError('web.search.apiKey: required when web.search.provider is "brave" (pinclaw config set web.search.apiKey KEY)');
  }
  const raw = s.baseUrl || provider.defaultBase;
  if (!raw) throw new ConfigError(`web.search.baseUrl: required when web.search.provider is "${s.provider}" (the instance's address, e.g. http://searx.lan:8080)`);
  let base: URL;
  try {
    base = new URL(raw);
  } catch {
    throw new ConfigError(`web.search.baseUrl: expected an http or https URL, found ${describeValue(raw)}`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new ConfigError(`web.search.baseUrl: expected an http or https URL, found ${describeValue(raw)}`);
  return {
    provider: s.provider,
    base,
    apiKey: s.apiKey,
    timeoutMs: s.timeoutMs ?? web.timeoutMs,
    timeoutKey: s.timeoutMs === undefined ? 'web.timeoutMs' : 'web.search.timeoutMs',
    maxBytes: web.maxBytes,
  };
}

/** A failure the owner can act on; `message` is what the tool result says. */
class SearchFailure extends Error {}

/** The endpoint without query string or user info, for messages. */
function shown(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/** Brave explains a refusal as {error: {code, detail}}; other bodies give nothing usable. */
function errorDetail(body: string): { code: string; detail: string } {
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; detail?: unknown } };
    const code = typeof parsed.error?.code === 'string' ? parsed.error.code : '';
    const detail = typeof parsed.error?.detail === 'string' ? parsed.error.detail : '';
    return { code, detail };
  } catch {
    return { code: '', detail: '' };
  }
}

function httpProblem(s: SearchSettings, p: Provider, url: URL, status: number, retryAfter: string | undefined, body: string): string {
  const { code, detail } = errorDetail(body);
  const said = detail ? `: ${detail.slice(0, 200)}` : '';
  // Brave answers a malformed or unknown token with 422 and a SUBSCRIPTION_TOKEN_* code.
  if (s.provider === 'brave' && (status === 401 || status === 403 || /TOKEN|SUBSCRIPTION/i.test(code))) {
    return `the Brave API key was refused (${status}${said}) (web.search.apiKey)`;
  }
  if (s.provider === 'searxng' && status === 403) {
    return `the SearXNG instance at ${shown(url)} refused the JSON format (403); its settings.yml must list json under search.formats (web.search.baseUrl)`;
  }
  if (status === 429) {
    const wait = retryAfter && /^\d+$/.test(retryAfter) ? `; retry after ${retryAfter} s` : '; try again later';
    return `${p.label} rate-limited the search (429)${said}${wait}${s.provider === 'brave' ? ' (the plan of web.search.apiKey sets the limit)' : ''}`;
  }
  if (status >= 500) return `${p.label} failed with ${status}${said}; try again later (${shown(url)}, web.search.baseUrl)`;
  if (status >= 300 && status < 400) return `${p.label} answered ${status}, a redirect, at ${shown(url)}; set web.search.baseUrl to the address it redirects to`;
  if (status === 404) return `no ${p.label} search API at ${shown(url)} (404); check web.search.baseUrl`;
  return `${p.label} answered ${status}${said} (${shown(url)}, web.search.baseUrl)`;
}

/** Messages for the ways a request fails before an HTTP status arrives. */
function transportProblem(s: SearchSettings, p: Provider, url: URL, err: unknown, timedOut: boolean, aborted: boolean): string {
  const code = errorCode(err);
  if (timedOut || /TIMEOUT/.test(code ?? '')) return `${p.label} did not answer within ${s.timeoutMs} ms (${s.timeoutKey})`;
  if (aborted) return 'the search was stopped';
  return `cannot reach ${p.label} at ${shown(url)}: ${code ?? rootMessage(err)} (web.search.baseUrl)`;
}

export async function searchWeb(s: SearchSettings, query: string, count: number, signal?: AbortSignal): Promise<SearchHit[]> {
  const p = PROVIDERS[s.provider];
  const { url, headers } = p.request(s.base, query, count, s.apiKey);
  // One deadline for the whole search: the transport's limits apply to each phase separately.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), s.timeoutMs);
  const stop = () => deadline.abort();
  if (signal?.aborted) deadline.abort();
  else signal?.addEventListener('abort', stop, { once: true });
  try {
    let status: number;
    let retryAfter: string | undefined;
    let contentType: string;
    const chunks: Buffer[] = [];
    try {
      // A redirect is reported (httpProblem), not followed: the search API's address is configuration.
      const res = await httpRequest(url, { method: 'GET', headers, redirect: 'manual', signal: deadline.signal }, { connectMs: s.timeoutMs, idleMs: s.timeoutMs });
      status = res.status;
      retryAfter = res.header('retry-after');
      contentType = res.header('content-type') ?? '';
      let size = 0;
      if (res.body) {
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          size += chunk.length;
          if (size > s.maxBytes) {
            res.destroy();
            throw new SearchFailure(`the ${p.label} answer is larger than ${s.maxBytes} bytes (web.maxBytes)`);
          }
          chunks.push(chunk);
        }
      }
    } catch (err) {
      if (err instanceof SearchFailure) throw err;
      const aborted = deadline.signal.aborted;
      throw new SearchFailure(transportProblem(s, p, url, err, aborted && !signal?.aborted, aborted));
    }
    const body = Buffer.concat(chunks).toString('utf8');
    if (status < 200 || status >= 300) throw new SearchFailure(httpProblem(s, p, url, status, retryAfter, body));
    let decoded: unknown;
    try {
      decoded = JSON.parse(body);
    } catch {
      throw new SearchFailure(`${p.label} did not answer with JSON (content-type ${contentType || 'none'}, ${body.length} characters) at ${shown(url)}; check web.search.baseUrl`);
    }
    try {
      return p.parse(decoded).slice(0, count);
    } catch (err) {
      throw new SearchFailure(`${p.label} answered JSON that is not a search result: ${errorMessage(err)} (${shown(url)}, web.search.baseUrl)`);
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', stop);
  }
}

/** Snippets and titles arrive with markup (<strong> around the matched words) and entities. */
function plain(toText: typeof snippetToText, s: string, max: number): string {
  const flat = toText(s).replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function formatResults(label: string, query: string, results: readonly SearchHit[], toText: typeof snippetToText): string {
  if (results.length === 0) return `No results for ${JSON.stringify(query)} from ${label}.`;
  const items = results.map((r, i) => {
    const lines = [`${i + 1}. ${plain(toText, r.title, 200) || '(no title)'}`, `   ${r.url}`];
    const snippet = plain(toText, r.snippet, MAX_SNIPPET);
    if (snippet) lines.push(`   ${snippet}`);
    return lines.join('\n');
  });
  return `${results.length} result${results.length === 1 ? '' : 's'} for ${JSON.stringify(query)} from ${label}:\n\n${items.join('\n\n')}`;
}

function searchTool(s: SearchSettings): Tool {
  const label = PROVIDERS[s.provider].label;
  // The registry redacts known secrets too; this keeps the key out even where the tool is used alone.
  const scrub = (text: string) => (s.apiKey.length >= 4 ? text.split(s.apiKey).join('[redacted]') : text);
  return defineTool({
    name: 'web_search',
    description: `Search the web (${label}) and get numbered results with title, URL and snippet. Read a result with web_fetch.`,
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 400, description: 'what to search for' },
        count: { type: 'integer', minimum: 1, maximum: MAX_COUNT, description: `number of results, default ${DEFAULT_COUNT}` },
      },
      required: ['query'],
      additionalProperties: false,
    },
    async execute(input, ctx) {
      const { query, count = DEFAULT_COUNT } = input;
      const q = query.trim();
      if (!q) return { content: 'web_search: input.query is blank; say what to search for', isError: true };
      try {
        const hits = await searchWeb(s, q, count, ctx.signal);
        // The HTML parser is a lazy chunk (src/lazy-chunk.ts), loaded by the first call that needs it.
        const { snippetToText } = await import('./html.js');
        return { content: scrub(formatResults(label, q, hits, snippetToText)) };
      } catch (err) {
        return { content: scrub(`web_search: ${errorMessage(err)}`), isError: true };
      }
    },
  });
}

/** [web_search] when web.search.provider is set, else []; throws a ConfigError for an incomplete setup. */
export function webSearchTools(web: WebConfig): Tool[] {
  const s = searchSettings(web);
  return s ? [searchTool(s)] : [];
}
