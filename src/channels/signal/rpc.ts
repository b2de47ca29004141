// The signal-cli daemon's HTTP endpoints (signal-cli-jsonrpc(5)): JSON-RPC requests on POST
// /api/v1/rpc and the liveness check on GET /api/v1/check, over Node's built-in fetch. The event
// stream (GET /api/v1/events) is ./events.ts.
import { httpFetch } from '../../net/fetch.js';

/** A refusal by the daemon (a JSON-RPC error) or no answer from it (code 0, HTTP status). */
export class SignalRpcError extends Error {
  constructor(
    readonly method: string,
    /** the JSON-RPC error code; 0 when the daemon gave no JSON-RPC answer */
    readonly code: number,
    readonly description: string,
  ) {
    super(`signal-cli ${method}: ${description}`);
  }
}

export interface SignalRpc {
  call<T>(method: string, params: Record<string, unknown>, opts?: { timeoutMs?: number; signal?: AbortSignal }): Promise<T>;
  /** resolves when GET /api/v1/check answers 200 */
  check(timeoutMs?: number): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 60_000;

/** Why a fetch failed, in words an owner can act on (the daemon not started is the usual one). */
export function transportReason(err: unknown, url: string, account?: string): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'ECONNREFUSED') return `nothing listens at ${url} (ECONNREFUSED): is the signal-cli daemon running? Start it: signal-cli -a ${account || 'ACCOUNT'} daemon --http ${new URL(url).host}`;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

export function signalRpc(baseUrl: string, account: string): SignalRpc {
  const base = baseUrl.replace(/\/+$/, '');
  let nextId = 1;
  return {
    async call<T>(method: string, params: Record<string, unknown>, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<T> {
      const timeout = AbortSignal.timeout(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
      const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
      let res: Response;
      try {
        // The account goes in every call: a daemon in multi-account mode needs it, a single-account one ignores it.
        res = await httpFetch(`${base}/api/v1/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: { account, ...params } }), signal });
      } catch (err) {
        throw new SignalRpcError(method, 0, timeout.aborted ? `no answer within ${Math.round((opts.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000)} s` : opts.signal?.aborted ? 'cancelled' : transportReason(err, base, account));
      }
      let body: { result?: T; error?: { code?: number; message?: string } };
      try {
        body = (await res.json()) as typeof body;
      } catch {
        throw new SignalRpcError(method, 0, `the daemon's answer was not JSON (HTTP ${res.status})`);
      }
      if (body.error) throw new SignalRpcError(method, body.error.code ?? -1, body.error.message ?? 'refused');
      return body.result as T;
    },
    async check(timeoutMs = 5000) {
      let res: Response;
      try {
        res = await httpFetch(`${base}/api/v1/check`, { signal: AbortSignal.timeout(timeoutMs) });
      } catch (err) {
        throw new SignalRpcError('check', 0, transportReason(err, base, account));
      }
      await res.body?.cancel();
      if (res.status !== 200) throw new SignalRpcError('check', 0, `${base}/api/v1/check answered HTTP ${res.status}: is that a signal-cli daemon started with --http?`);
    },
  };
}
