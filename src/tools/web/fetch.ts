// web_fetch: a page as readable text, over node:http/https (src/net/fetch.ts), with a redirect limit, a
// size cap, timeouts and the SSRF guard applied to every hop.
import type { LookupFunction } from 'node:net';
import { httpRequest } from '../../net/fetch.js';
import { rootMessage } from '../../net/errors.js';
import type { Tool } from '../types.js';
import { decodeBody } from './charset.js';
import { vetHost, type Vetted } from './ssrf.js';
import { defineTool } from '../define.js';

export interface WebSettings {
  allowedHosts: string[];
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}

export interface Page {
  url: string;
  status: number;
  contentType: string;
  title: string;
  text: string;
  truncated: boolean;
  /** what the reader should know about how the page was read (an unknown charset, a page left unfinished) */
  notes: string[];
}

/** net.connect looks the name up again; answering with the vetted address closes the rebinding gap. */
function pinned(v: Vetted): LookupFunction {
  return ((_host: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    if (opts?.all) cb(null, [{ address: v.address, family: v.family }]);
    else cb(null, v.address, v.family);
  }) as unknown as LookupFunction;
}

export async function fetchPage(target: string, s: WebSettings, signal?: AbortSignal): Promise<Page> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new Error(`not a URL: ${target}`);
  }
  const allowed = s.allowedHosts.map((h) => h.toLowerCase());
  const transport = { connectMs: s.timeoutMs, idleMs: s.timeoutMs };
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`refused: only http and https URLs can be fetched, not ${url.protocol}`);
    const vetted = await vetHost(url.hostname, allowed);
    // Redirects are followed here, not by the transport, so that every hop is vetted.
    const res = await httpRequest(
      url,
      { method: 'GET', headers: { 'user-agent': 'pinclaw (+web_fetch)', accept: 'text/html,text/plain,application/json;q=0.9,*/*;q=0.5' }, redirect: 'manual', signal },
      { ...transport, lookup: pinned(vetted) },
    );
    const location = res.header('location');
    if (res.status >= 300 && res.status < 400 && location) {
      res.drain();
      if (hop >= s.maxRedirects) throw new Error(`refused: more than ${s.maxRedirects} redirects`);
      url = new URL(location, url);
      continue;
    }
    // The body as decoded (gzip, deflate, br): the cap is on what the page holds, so a small
    // compressed answer cannot unpack into more than maxBytes here.
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    if (res.body) {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        const room = s.maxBytes - size;
        if (chunk.length >= room) {
          chunks.push(chunk.subarray(0, room));
          truncated = true;
          break;
        }
        chunks.push(chunk);
        size += chunk.length;
      }
    }
    if (truncated) res.destroy();
    const contentType = res.header('content-type') ?? '';
    const body = Buffer.concat(chunks);
    let title = '';
    let text: string;
    const notes: string[] = [];
    const html = /html/i.test(contentType);
    if (html || /^text\/|json|xml|javascript/i.test(contentType) || contentType === '') {
      const decoded = decodeBody(body, contentType, html);
      if (decoded.note) notes.push(decoded.note);
      text = decoded.text;
      if (html) {
        // The HTML parser is a lazy chunk (src/lazy-chunk.ts), loaded by the first page.
        const { htmlToText } = await import('./html.js');
        const page = await htmlToText(text, url.href, signal);
        ({ title, text } = page);
        if (page.stopped) notes.push(page.stopped);
      }
    } else text = `(${contentType} content, ${body.length} bytes, not shown)`;
    return { url: url.href, status: res.status, contentType, title, text, truncated, notes };
  }
}

const MAX_CHARS = 20_000;

export function webFetchTool(s: WebSettings): Tool {
  return defineTool({
    name: 'web_fetch',
    description: 'Fetch a web page (http or https) and return its readable text. Private and local network addresses are refused.',
    inputSchema: {
      type: 'object',
      properties: { url: { type: 'string', minLength: 1, description: 'absolute http(s) URL' }, maxChars: { type: 'integer', minimum: 100, maximum: 100_000 } },
      required: ['url'],
      additionalProperties: false,
    },
    async execute(input, ctx) {
      const { url, maxChars = MAX_CHARS } = input;
      try {
        const page = await fetchPage(url, s, ctx.signal);
        let text = page.text;
        const cut = text.length > maxChars;
        if (cut) text = text.slice(0, maxChars);
        const notes = [cut ? `[cut at ${maxChars} characters]` : '', page.truncated ? `[download stopped at ${s.maxBytes} bytes]` : '', ...page.notes.map((n) => `[${n}]`)].filter(Boolean).join(' ');
        return { content: `${page.status} ${page.url}${page.title ? `\n# ${page.title}` : ''}\n\n${text}${notes ? `\n\n${notes}` : ''}`, isError: page.status >= 400 };
      } catch (err) {
        // The cause's message ("connect ECONNREFUSED 203.0.113.5:80"), not the transport's "fetch failed".
        return { content: `web_fetch ${url}: ${rootMessage(err)}`, isError: true };
      }
    },
  });
}
