// The one HTTP call shape of the voice backends: a POST (multipart for a transcription, JSON for
// speech) whose failure names the server, what went wrong (refused connection, timeout, HTTP status
// with the start of the server's own message) and so the way out.
import { httpFetch } from '../net/fetch.js';

export class VoiceServerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VoiceServerError';
  }
}

export const httpFailure = (what: string, why: string) => new VoiceServerError(`${what}: ${why}`);

interface PostOptions {
  apiKey?: string;
  timeoutMs: number;
  what: string;
  signal?: AbortSignal;
}

async function post(url: string, body: FormData | string, o: PostOptions, contentType?: string): Promise<Buffer> {
  const timeout = AbortSignal.timeout(o.timeoutMs);
  const signal = o.signal ? AbortSignal.any([o.signal, timeout]) : timeout;
  const headers: Record<string, string> = {};
  if (o.apiKey) headers.authorization = `Bearer ${o.apiKey}`;
  if (contentType) headers['content-type'] = contentType;
  let res: Response;
  try {
    res = await httpFetch(url, { method: 'POST', headers, body, signal });
  } catch (err) {
    if (timeout.aborted) throw httpFailure(o.what, `no answer within ${Math.round(o.timeoutMs / 1000)} s`);
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const code = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
    throw httpFailure(o.what, code === 'ECONNREFUSED' ? 'it is not running or not reachable (connection refused)' : `it could not be reached (${code})`);
  }
  const bytes = Buffer.from(await res.arrayBuffer());
  if (!res.ok) {
    const said = bytes.toString('utf8').replace(/\s+/g, ' ').trim().slice(0, 300);
    const hint = res.status === 401 || res.status === 403 ? ' (check the apiKey)' : res.status === 404 ? ' (check the baseUrl)' : '';
    throw httpFailure(o.what, `HTTP ${res.status}${hint}${said ? `: ${said}` : ''}`);
  }
  return bytes;
}

export const postForm = (url: string, form: FormData, o: PostOptions) => post(url, form, o);
export const postJson = (url: string, json: unknown, o: PostOptions) => post(url, JSON.stringify(json), o, 'application/json');
