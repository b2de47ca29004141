// The wire formats web_search speaks: how a query becomes a request to each provider, and how the
// provider's JSON becomes results. HTTP, timeouts and error wording live in search.ts.
import { isObject as isRecord } from '../../is-object.js';

export type ProviderName = 'brave' | 'searxng';

export interface SearchHit {
  title: string;
  url: string;
  /** the provider's summary of the page, as plain text */
  snippet: string;
}

export interface ProviderRequest {
  url: URL;
  headers: Record<string, string>;
}

export interface Provider {
  /** how results and errors name it */
  label: string;
  /** where it answers when web.search.baseUrl is empty; undefined when it has no public default */
  defaultBase?: string;
  request(base: URL, query: string, count: number, apiKey: string): ProviderRequest;
  /** Results from the decoded body; throws (a message for the owner) when the body is not this provider's answer. */
  parse(body: unknown): SearchHit[];
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** base + path, keeping a path prefix the base has (a SearXNG instance served under /searx). */
function endpoint(base: URL, path: string): URL {
  const url = new URL(base.href);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
  return url;
}

function hits(list: unknown[], snippetKey: string): SearchHit[] {
  return list.filter(isRecord).filter((r) => text(r.url) !== '').map((r) => ({ title: text(r.title), url: text(r.url), snippet: text(r[snippetKey]) }));
}

const USER_AGENT = 'pinclaw (+web_search)';

const brave: Provider = {
  label: 'Brave Search',
  defaultBase: 'https://api.search.brave.com',
  request(base, query, count, apiKey) {
    const url = endpoint(base, '/res/v1/web/search');
    url.searchParams.set('q', query);
    url.searchParams.set('count', String(count));
    return { url, headers: { accept: 'application/json', 'x-subscription-token': apiKey, 'user-agent': USER_AGENT } };
  },
  parse(body) {
    if (!isRecord(body)) throw new Error('the answer is not a JSON object');
    // Brave leaves out `web` altogether when nothing matched.
    if (body.web === undefined) return [];
    if (!isRecord(body.web) || !Array.isArray(body.web.results)) throw new Error('the answer has no web.results list');
    return hits(body.web.results, 'description');
  },
};

const searxng: Provider = {
  label: 'SearXNG',
  request(base, query) {
    // SearXNG has no result-count parameter: it answers with its first page and the caller cuts it.
    const url = endpoint(base, '/search');
    url.searchParams.set('q', query);
    url.searchParams.set('format', 'json');
    return { url, headers: { accept: 'application/json', 'user-agent': USER_AGENT } };
  },
  parse(body) {
    if (!isRecord(body)) throw new Error('the answer is not a JSON object');
    if (!Array.isArray(body.results)) throw new Error('the answer has no results list');
    return hits(body.results, 'content');
  },
};

export const PROVIDERS: Readonly<Record<ProviderName, Provider>> = { brave, searxng };
