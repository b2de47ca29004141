// The Response that fetchOverNodeHttp (src/net/http-fetch.ts) answers with: the Fetch standard's
// Response over an answer whose body is a Node stream. Node's own Response is undici's, and its first
// use loads undici's whole bundle (see src/net/fetch-headers.ts for what that costs). The body a
// caller reads with text(), json(), arrayBuffer() or bytes() is read from the Node stream as it is; a
// web stream (Node's own, not undici's) is made only for a caller that asks for `body`, as the
// Anthropic SDK does for its server-sent events. test/http-fetch.test.ts reads the same answers through
// this class and through undici's fetch.
import * as streams from 'node:stream';
import { Readable } from 'node:stream';
import { MIMEType } from 'node:util';
import { loadBuiltin } from '../v8-flags.js';
import { FetchHeaders } from './fetch-headers.js';

/** What a response says before its body. */
export interface ResponseHead {
  status: number;
  statusText: string;
  /** read when a caller asks (an answer's are parsed on first use: see NodeAnswer.headers) */
  readonly headers: Headers;
  /** where the request ended, after redirects */
  url: string;
  redirected: boolean;
}

const decoder = new TextDecoder();
/** Node's stream.isDisturbed (since 16.8), which @types/node does not declare: has a reader read or cancelled it? */
const isDisturbed = (streams as unknown as { isDisturbed(s: ReadableStream): boolean }).isDisturbed;

function unusable(): TypeError {
  return new TypeError('Body is unusable: Body has already been read');
}

export class NodeResponse implements Response {
  readonly status: number;
  readonly statusText: string;
  readonly url: string;
  readonly redirected: boolean;
  /** what a Response made with `new Response()` says: the standard's "default" */
  readonly type: ResponseType = 'default';
  readonly #head: ResponseHead;
  /** the answer's body until a caller asks for `body` (then that web stream holds it) */
  #node: Readable | null;
  #web: ReadableStream<Uint8Array<ArrayBuffer>> | null;
  /** read through text(), json(), arrayBuffer(), bytes() or blob() */
  #read = false;

  /** `body`: a Node stream (an answer's), or else a web stream (a clone's); null for a null body */
  constructor(head: ResponseHead, body: Readable | ReadableStream<Uint8Array<ArrayBuffer>> | null) {
    this.status = head.status;
    this.statusText = head.statusText;
    this.#head = head;
    this.url = head.url;
    this.redirected = head.redirected;
    this.#node = body instanceof Readable ? body : null;
    this.#web = body instanceof Readable ? null : body;
  }

  get headers(): Headers {
    return this.#head.headers;
  }

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
    if (!this.#web && this.#node) {
      // The first toWeb loads Node's web streams (up to six modules): under V8's defaults in the executable.
      const node = this.#node;
      this.#web = loadBuiltin('internal/webstreams/adapters', () => Readable.toWeb(node)) as ReadableStream<Uint8Array<ArrayBuffer>>;
      this.#node = null;
    }
    return this.#web;
  }

  get bodyUsed(): boolean {
    return this.#read || (this.#web !== null && isDisturbed(this.#web));
  }

  /** The whole body; an empty one for a null body. Fails as the stream does (a cut connection, the caller's abort). */
  async #bytes(): Promise<Uint8Array> {
    if (this.bodyUsed) throw unusable();
    const chunks: Uint8Array[] = [];
    // A null body is no body to use up: reading it again gives nothing again, as the standard says.
    if (this.#web) {
      this.#read = true;
      const reader = this.#web.getReader();
      for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
    } else if (this.#node) {
      // Kept: `body` afterwards is a stream of what is left (nothing), as undici's is.
      this.#read = true;
      for await (const c of this.#node) chunks.push(c as Uint8Array);
    }
    // A fresh buffer of its own: a chunk may be a view of a pooled one.
    const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
    let at = 0;
    for (const c of chunks) {
      out.set(c, at);
      at += c.byteLength;
    }
    return out;
  }

  async bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return (await this.#bytes()) as Uint8Array<ArrayBuffer>;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return (await this.#bytes()).buffer as ArrayBuffer;
  }

  /** UTF-8, a byte order mark dropped, as the standard decodes a body. */
  async text(): Promise<string> {
    return decoder.decode(await this.#bytes());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }

  /** Typed by the answer's Content-Type, parsed and written back as the standard does (nothing when it does not parse). */
  async blob(): Promise<Blob> {
    let type = '';
    try {
      type = String(new MIMEType(this.headers.get('content-type') ?? ''));
    } catch {
      // not a MIME type: an untyped blob
    }
    return new Blob([await this.bytes()], { type });
  }

  /** Read by the platform's Response (loading undici): no caller of pinclaw's sends forms back. */
  async formData(): Promise<FormData> {
    if (this.bodyUsed) throw unusable();
    return new Response(this.body, { status: this.status, headers: [...this.headers] }).formData();
  }

  clone(): Response {
    if (this.bodyUsed) throw new TypeError('Response.clone: Body has already been consumed.');
    const web = this.body;
    let other: ReadableStream<Uint8Array<ArrayBuffer>> | null = null;
    if (web) [this.#web, other] = web.tee();
    return new NodeResponse({ status: this.status, statusText: this.statusText, headers: new FetchHeaders(this.headers), url: this.url, redirected: this.redirected }, other);
  }

  get [Symbol.toStringTag](): string {
    return 'Response';
  }
}
