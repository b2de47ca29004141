// The Streamable HTTP transport (MCP 2025-03-26 and later): each message is a POST to the one
// endpoint; the answer comes as a JSON body or as a server-sent event stream that ends with it.
// The session id the server gives at initialize (Mcp-Session-Id) and the agreed revision
// (MCP-Protocol-Version) go with every later request; a GET stream, when the server offers one,
// brings its notifications (tools/list_changed). Closing ends the session with a DELETE.
import { log } from '../../log.js';
import type { JsonObject } from '../types.js';
import type { Transport } from './jsonrpc.js';
import { httpFetch } from '../../net/fetch.js';

/** The largest answer read; a bigger one is refused rather than held in memory. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** The wait before a GET stream that ended is opened again. */
const LISTEN_RETRY_MS = 5000;

export interface HttpTarget {
  url: string;
  headers: Record<string, string>;
}

export class HttpTransport implements Transport {
  onMessage?: (message: unknown) => void;
  onClose?: (reason: string) => void;
  private sessionId: string | undefined;
  /** Set once initialize is answered; sent as MCP-Protocol-Version from then on. */
  protocolVersion: string | undefined;
  private readonly streams = new AbortController();
  private closed = false;

  constructor(private readonly server: string, private readonly target: HttpTarget) {}

  private headers(extra: Record<string, string>): Record<string, string> {
    return {
      ...this.target.headers,
      ...extra,
      ...(this.sessionId ? { 'mcp-session-id': this.sessionId } : {}),
      ...(this.protocolVersion ? { 'mcp-protocol-version': this.protocolVersion } : {}),
    };
  }

  async send(message: JsonObject, done?: AbortSignal): Promise<void> {
    if (this.closed) throw new Error(`MCP server ${this.server}: the connection was closed`);
    let res: Response;
    try {
      res = await httpFetch(this.target.url, {
        method: 'POST',
        headers: this.headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' }),
        body: JSON.stringify(message),
        // A hung server's request is let go when its answer timed out, not only at close.
        signal: done ? AbortSignal.any([this.streams.signal, done]) : this.streams.signal,
      });
    } catch (err) {
      throw new Error(`MCP server ${this.server}: cannot reach ${this.target.url}: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`);
    }
    const sid = res.headers.get('mcp-session-id');
    if (sid) this.sessionId = sid;
    // Once the session exists, the server may push notifications (list_changed) on a GET stream.
    // The server accepts notifications/initialized with 202, so this comes before that return.
    if (message.method === 'notifications/initialized' && res.ok) void this.listen();
    if (res.status === 202) {
      await res.body?.cancel();
      return;
    }
    if (!res.ok) {
      const text = (await res.text().catch(() => '')).slice(0, 300);
      // A session the server no longer knows: everything after this fails alike.
      if (res.status === 404 && this.sessionId && message.method !== 'initialize') this.onClose?.(`MCP server ${this.server}: its session expired (HTTP 404)`);
      throw new Error(`MCP server ${this.server}: HTTP ${res.status} from ${this.target.url}${text ? `: ${text}` : ''}`);
    }
    const type = res.headers.get('content-type') ?? '';
    // The answer arrives after send() returns for a stream: read it in the background.
    if (type.includes('text/event-stream')) void this.readEvents(res, 'POST', done);
    else if (type.includes('application/json')) this.deliver(await readCapped(res, this.server), 'a JSON answer');
    else await res.body?.cancel();
  }

  private deliver(text: string, what: string): void {
    if (!text.trim()) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      log.warn(`MCP server ${this.server}: ${what} is not JSON: ${text.slice(0, 120)}`);
      return;
    }
    this.onMessage?.(parsed);
  }

  private async readEvents(res: Response, from: string, done?: AbortSignal): Promise<void> {
    if (!res.body) return;
    const decoder = new TextDecoder();
    let buf = '';
    let data: string[] = [];
    let total = 0;
    try {
      for await (const chunk of res.body) {
        total += (chunk as Uint8Array).length;
        if (total > MAX_BODY_BYTES) throw new Error(`an event stream over ${MAX_BODY_BYTES} bytes`);
        buf += decoder.decode(chunk as Uint8Array, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf('\n')) !== -1) {
          const line = buf.slice(0, nl).replace(/\r$/, '');
          buf = buf.slice(nl + 1);
          if (line === '') {
            if (data.length) this.deliver(data.join('\n'), 'an event');
            data = [];
          } else if (line.startsWith('data:')) {
            data.push(line.slice(line[5] === ' ' ? 6 : 5));
          }
        }
      }
      if (data.length) this.deliver(data.join('\n'), 'an event');
    } catch (err) {
      // Ended on purpose: the gateway closed it, or the answer it was for came (or timed out).
      if (!this.closed && !done?.aborted) log.warn(`MCP server ${this.server}: the ${from} event stream broke: ${(err as Error).message}`);
    }
  }

  /**
   * The optional GET stream of server notifications; a server without one answers 405 (or anything
   * but an event stream), and then list changes are seen at the next start. A stream the server
   * (or a proxy) ends is opened again after LISTEN_RETRY_MS, as long as the session lasts.
   */
  private async listen(): Promise<void> {
    while (!this.closed) {
      try {
        const res = await httpFetch(this.target.url, { method: 'GET', headers: this.headers({ accept: 'text/event-stream' }), signal: this.streams.signal });
        if (!res.ok || !(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
          await res.body?.cancel();
          return;
        }
        await this.readEvents(res, 'GET');
      } catch {
        // unreachable now: tried again below, like an ended stream
      }
      if (this.closed) return;
      await new Promise((resolve) => setTimeout(resolve, LISTEN_RETRY_MS).unref());
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.streams.abort();
    if (!this.sessionId) return;
    // Ends the session on the server; one that does not allow it answers 405, which is fine.
    try {
      const res = await httpFetch(this.target.url, { method: 'DELETE', headers: this.headers({}), signal: AbortSignal.timeout(2000) });
      await res.body?.cancel();
    } catch {
      // unreachable: nothing left to end
    }
  }
}

async function readCapped(res: Response, server: string): Promise<string> {
  if (!res.body) return '';
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of res.body) {
    total += (chunk as Uint8Array).length;
    if (total > MAX_BODY_BYTES) throw new Error(`MCP server ${server}: an answer over ${MAX_BODY_BYTES} bytes`);
    parts.push(chunk as Uint8Array);
  }
  return Buffer.concat(parts).toString('utf8');
}
