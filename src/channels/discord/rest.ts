// Discord's REST API over Node's fetch, within its rate limits: each route learns its bucket from
// X-RateLimit-Bucket, and a bucket with no requests left (X-RateLimit-Remaining 0) holds the next
// request on it until X-RateLimit-Reset-After has passed. A 429 is waited out (retry_after, for the
// route or, with `global`, for every route) and tried again, so a burst of replies slows down
// instead of failing.
import { httpFetch } from '../../net/fetch.js';

/** A refusal by Discord (HTTP status and its JSON error code) or no answer (status 0). */
export class DiscordApiError extends Error {
  constructor(
    readonly route: string,
    readonly status: number,
    readonly code: number,
    readonly description: string,
  ) {
    super(`Discord ${route}: ${description}`);
  }
}

export interface DiscordRest {
  call<T>(method: string, path: string, body?: unknown, opts?: { signal?: AbortSignal; timeoutMs?: number }): Promise<T>;
}

interface Bucket {
  remaining: number;
  /** epoch ms when the bucket is full again */
  resetAt: number;
}

/** 429s tried again before the request fails (and the delivery's own retry timer takes over). */
const MAX_RATE_LIMITED = 5;
const DEFAULT_TIMEOUT_MS = 30_000;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const done = () => (clearTimeout(timer), signal?.removeEventListener('abort', done), resolve());
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done);
  });

/** The route's rate-limit key: method and path with the ids that are not major parameters replaced. */
export function routeKey(method: string, path: string): string {
  // channels/<id>, guilds/<id> and webhooks/<id>/<token> are Discord's major parameters; other ids share a bucket.
  const p = path.replace(/^\/(interactions)\/\d+\/[^/]+/, '/$1/:id/:token').replace(/\/(?!(?:channels|guilds|webhooks)\/)([a-z-]+)\/\d{15,}/g, '/$1/:id');
  return `${method} ${p}`;
}

export function discordRest(baseUrl: string, token: string, now: () => number = Date.now): DiscordRest {
  const base = baseUrl.replace(/\/+$/, '');
  const bucketOfRoute = new Map<string, string>();
  const buckets = new Map<string, Bucket>();
  let globalUntil = 0;

  return {
    async call<T>(method: string, path: string, body?: unknown, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<T> {
      const route = routeKey(method, path);
      for (let limited = 0; ; ) {
        const bucketId = bucketOfRoute.get(route);
        const b = bucketId ? buckets.get(bucketId) : undefined;
        const t = now();
        const wait = Math.max(globalUntil - t, b && b.remaining <= 0 ? b.resetAt - t : 0);
        if (wait > 0) await sleep(wait, opts.signal);
        if (opts.signal?.aborted) throw new DiscordApiError(route, 0, 0, 'cancelled');
        if (b && b.remaining > 0) b.remaining--;
        const timeout = AbortSignal.timeout(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
        let res: Response;
        try {
          res = await httpFetch(`${base}${path}`, {
            method,
            headers: { authorization: `Bot ${token}`, 'user-agent': 'DiscordBot (https://github.com/pinclaw, 1) pinclaw', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
            ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
            signal: opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout,
          });
        } catch (err) {
          const cause = (err as { cause?: { code?: string; message?: string } }).cause;
          throw new DiscordApiError(route, 0, 0, timeout.aborted ? `no answer within ${Math.round((opts.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000)} s` : opts.signal?.aborted ? 'cancelled' : `${base} cannot be reached (${cause?.code ?? cause?.message ?? errorText(err)})`);
        }
        learn(route, res.headers);
        const text = await res.text();
        const json = parse(text);
        if (res.status === 429) {
          const after = Number((json as { retry_after?: number } | undefined)?.retry_after ?? res.headers.get('retry-after') ?? 1) * 1000;
          if ((json as { global?: boolean } | undefined)?.global || res.headers.get('x-ratelimit-global') === 'true') globalUntil = now() + after;
          else if (bucketOfRoute.has(route)) buckets.set(bucketOfRoute.get(route)!, { remaining: 0, resetAt: now() + after });
          if (++limited > MAX_RATE_LIMITED) throw new DiscordApiError(route, 429, 0, `still rate limited after ${MAX_RATE_LIMITED} waits`);
          if (!bucketOfRoute.has(route) && !(json as { global?: boolean } | undefined)?.global) await sleep(after, opts.signal);
          continue;
        }
        if (res.status >= 400) {
          const e = (json ?? {}) as { code?: number; message?: string };
          throw new DiscordApiError(route, res.status, e.code ?? 0, `HTTP ${res.status}${e.message ? ` ${e.message}` : ''}${e.code ? ` (code ${e.code})` : ''}`);
        }
        return json as T;
      }
    },
  };

  function learn(route: string, h: Headers): void {
    const id = h.get('x-ratelimit-bucket');
    const remaining = h.get('x-ratelimit-remaining');
    const resetAfter = h.get('x-ratelimit-reset-after');
    if (!id || remaining === null || resetAfter === null) return;
    bucketOfRoute.set(route, id);
    buckets.set(id, { remaining: Number(remaining), resetAt: now() + Number(resetAfter) * 1000 });
  }
}

function parse(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));
