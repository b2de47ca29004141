// The Matrix client-server API over Node's fetch, with the bot's access token. A 429 is waited out
// for the retry_after_ms the homeserver names (M_LIMIT_EXCEEDED) and tried again, so a burst of
// replies slows down instead of failing; any other refusal is a MatrixApiError carrying the HTTP
// status and the errcode (M_UNKNOWN_TOKEN, M_FORBIDDEN...), which the callers turn into words.
import { httpFetch } from '../../net/fetch.js';

/** A refusal by the homeserver (HTTP status and errcode) or no answer from it (status 0). */
export class MatrixApiError extends Error {
  constructor(
    readonly route: string,
    readonly status: number,
    readonly errcode: string,
    readonly description: string,
  ) {
    super(`Matrix ${route}: ${description}`);
  }
}

export interface MatrixApi {
  readonly homeserver: string;
  call<T>(method: string, path: string, body?: unknown, opts?: { signal?: AbortSignal; timeoutMs?: number }): Promise<T>;
}

/** 429s waited out before the request fails (and the delivery's own retry timer takes over). */
const MAX_RATE_LIMITED = 5;
/** What a 429 without retry_after_ms waits. */
const DEFAULT_RETRY_MS = 1000;
const DEFAULT_TIMEOUT_MS = 30_000;

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const done = () => (clearTimeout(timer), signal?.removeEventListener('abort', done), resolve());
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done);
  });

/** `/_matrix/client/v3` + the path with each id encoded ('!room:server' holds reserved characters). */
export const enc = encodeURIComponent;

export function matrixApi(homeserver: string, token: string): MatrixApi {
  const base = homeserver.replace(/\/+$/, '');
  return {
    homeserver: base,
    async call<T>(method: string, path: string, body?: unknown, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<T> {
      // The route as logged: the path without its query (a sync's since token is noise there).
      const route = `${method} ${path.split('?')[0]}`;
      for (let limited = 0; ; ) {
        if (opts.signal?.aborted) throw new MatrixApiError(route, 0, '', 'cancelled');
        const timeout = AbortSignal.timeout(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
        let res: Response;
        try {
          res = await httpFetch(`${base}/_matrix/client/v3${path}`, {
            method,
            headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
            ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
            signal: opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout,
          });
        } catch (err) {
          const cause = (err as { cause?: { code?: string; message?: string } }).cause;
          throw new MatrixApiError(route, 0, '', timeout.aborted ? `no answer within ${Math.round((opts.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000)} s` : opts.signal?.aborted ? 'cancelled' : `${base} cannot be reached (${cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err))})`);
        }
        let text: string;
        try {
          text = await res.text();
        } catch (err) {
          throw new MatrixApiError(route, 0, '', opts.signal?.aborted ? 'cancelled' : `the answer broke off (${err instanceof Error ? err.message : String(err)})`);
        }
        const json = parse(text) as { errcode?: string; error?: string; retry_after_ms?: number } | undefined;
        if (res.status === 429) {
          if (++limited > MAX_RATE_LIMITED) throw new MatrixApiError(route, 429, json?.errcode ?? 'M_LIMIT_EXCEEDED', `still rate limited after ${MAX_RATE_LIMITED} waits`);
          const header = Number(res.headers.get('retry-after'));
          await sleep(json?.retry_after_ms ?? (header > 0 ? header * 1000 : DEFAULT_RETRY_MS), opts.signal);
          continue;
        }
        if (res.status >= 400) {
          throw new MatrixApiError(route, res.status, json?.errcode ?? '', `HTTP ${res.status}${json?.errcode ? ` ${json.errcode}` : ''}${json?.error ? `: ${json.error}` : ''}`);
        }
        if (json === undefined) throw new MatrixApiError(route, res.status, '', `the answer is not JSON (HTTP ${res.status}): is ${base} a Matrix homeserver?`);
        return json as T;
      }
    },
  };
}

function parse(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/** A refused access token: the channel cannot work until the owner sets another. */
export const isRefusedToken = (err: unknown) => err instanceof MatrixApiError && (err.errcode === 'M_UNKNOWN_TOKEN' || err.errcode === 'M_MISSING_TOKEN' || (err.status === 401 && err.errcode === ''));

export const refusedTokenText = (homeserver: string) => `channels.matrix.accessToken was refused by ${homeserver} (M_UNKNOWN_TOKEN): log the bot in again and set the new token with pinclaw config set channels.matrix.accessToken TOKEN`;
