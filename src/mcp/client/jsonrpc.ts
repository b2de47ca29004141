// JSON-RPC 2.0 as MCP uses it, over any transport that carries whole messages: requests matched to
// their responses by id, each with its own time limit and abort, notifications handed on, and the
// server's own requests (ping; anything else we do not offer) answered so that it never waits on us.
import type { JsonObject } from '../types.js';
import { isObject } from '../../is-object.js';

export interface Transport {
  /**
   * Sends one message; rejects when it cannot be delivered (the server is gone). `done` is aborted
   * once a request is answered, timed out or stopped: a transport that holds something open for it
   * (an HTTP request) lets go then.
   */
  send(message: JsonObject, done?: AbortSignal): Promise<void>;
  /** Called with every message that arrives (a transport may deliver several per send). */
  onMessage?: (message: unknown) => void;
  /** Called once when the transport can no longer carry anything, with why. */
  onClose?: (reason: string) => void;
  close(): Promise<void>;
}

/** A JSON-RPC error the server answered with. */
export class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
    this.name = 'RpcError';
  }
}

interface Pending {
  method: string;
  resolve(result: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
  cleanup(): void;
  /** set when the request asked for progress: a notification for it starts its time limit again */
  progress?: (params: ProgressParams) => void;
}

/** What `notifications/progress` carries (the spec's ProgressNotification params). */
export interface ProgressParams {
  progress: number;
  total?: number;
  message?: string;
}

export interface ProgressOptions {
  /** told of each progress notification for the request */
  onProgress?: (p: ProgressParams) => void;
  /**
   * The longest the request may take however often the server reports progress: `timeoutMs` counts
   * from the last progress, and a server that reports forever must not hold a call forever.
   */
  hardCapMs: number;
}

const METHOD_NOT_FOUND = -32601;

export class RpcSession {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closedWith: string | undefined;
  /** Called with each notification the server sends. */
  onNotification?: (method: string, params: unknown) => void;
  /** Called once when the transport closes or the session is closed. */
  onClose?: (reason: string) => void;

  constructor(private readonly transport: Transport, private readonly server: string) {
    transport.onMessage = (m) => this.receive(m);
    transport.onClose = (reason) => this.fail(reason);
  }

  get closed(): string | undefined {
    return this.closedWith;
  }

  /**
   * Sends a request and waits `timeoutMs` for its answer. With `progress`, the request carries
   * `_meta.progressToken` (its id, unique among the requests in flight as the spec asks) and each
   * `notifications/progress` for it starts `timeoutMs` again, up to `progress.hardCapMs` in all.
   */
  request(method: string, params: JsonObject | undefined, timeoutMs: number, signal?: AbortSignal, progress?: ProgressOptions): Promise<unknown> {
    if (this.closedWith !== undefined) return Promise.reject(new Error(this.closedWith));
    const id = this.nextId++;
    const done = new AbortController();
    const startedAt = Date.now();
    return new Promise<unknown>((resolve, reject) => {
      const onAbort = (): void => {
        this.settle(id)?.reject(new Error(`MCP server ${this.server}: ${method} was stopped`));
        // The server may still be working on it; cancelling tells it to stop.
        void this.transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'stopped by the client' } }).catch(() => undefined);
      };
      const expire = (why: string): void => {
        this.settle(id)?.reject(new Error(why));
        void this.transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'timed out' } }).catch(() => undefined);
      };
      const silence = `MCP server ${this.server}: no answer to ${method} within ${timeoutMs} ms`;
      const timer = setTimeout(() => expire(silence), timeoutMs);
      const cleanup = (): void => {
        signal?.removeEventListener('abort', onAbort);
        done.abort();
      };
      const entry: Pending = { method, resolve, reject, timer, cleanup };
      if (progress) {
        entry.progress = (p) => {
          clearTimeout(entry.timer);
          const left = startedAt + progress.hardCapMs - Date.now();
          const capped = left < timeoutMs;
          entry.timer = setTimeout(() => expire(capped
            ? `MCP server ${this.server}: ${method} still unanswered after ${progress.hardCapMs} ms, the most a call may take even while it reports progress`
            : `${silence} since its last progress`), Math.max(0, Math.min(timeoutMs, left)));
          progress.onProgress?.(p);
        };
      }
      this.pending.set(id, entry);
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      const sent = progress ? { ...params, _meta: { ...(isObject(params?._meta) ? params._meta : {}), progressToken: id } } : params;
      this.transport.send({ jsonrpc: '2.0', id, method, ...(sent ? { params: sent } : {}) }, done.signal).catch((err: unknown) => {
        this.settle(id)?.reject(err instanceof Error ? err : new Error(String(err)));
      });
    });
  }

  notify(method: string, params?: JsonObject): Promise<void> {
    return this.transport.send({ jsonrpc: '2.0', method, ...(params ? { params } : {}) });
  }

  async close(): Promise<void> {
    this.fail(`MCP server ${this.server}: the connection was closed`);
    await this.transport.close();
  }

  private settle(id: number): Pending | undefined {
    const p = this.pending.get(id);
    if (!p) return undefined;
    this.pending.delete(id);
    clearTimeout(p.timer);
    p.cleanup();
    return p;
  }

  /** A progress notification: its token is the id of a request in flight that asked for progress. */
  private progress(params: unknown): void {
    if (!isObject(params) || typeof params.progress !== 'number') return;
    const token = params.progressToken;
    const id = typeof token === 'number' ? token : typeof token === 'string' && /^\d+$/.test(token) ? Number(token) : undefined;
    const p = id === undefined ? undefined : this.pending.get(id);
    // A token of no request in flight (a late one, or a server's mistake): nothing to extend.
    if (!p?.progress) return;
    p.progress({
      progress: params.progress,
      ...(typeof params.total === 'number' ? { total: params.total } : {}),
      ...(typeof params.message === 'string' ? { message: params.message } : {}),
    });
  }

  private fail(reason: string): void {
    if (this.closedWith !== undefined) return;
    this.closedWith = reason;
    for (const id of [...this.pending.keys()]) this.settle(id)?.reject(new Error(reason));
    this.onClose?.(reason);
  }

  private receive(m: unknown): void {
    // A batch (2025-03-26 allowed them): each element on its own.
    if (Array.isArray(m)) {
      for (const item of m) this.receive(item);
      return;
    }
    if (!isObject(m) || m.jsonrpc !== '2.0') return;
    const hasId = typeof m.id === 'number' || typeof m.id === 'string';
    if (typeof m.method === 'string') {
      if (!hasId) {
        if (m.method === 'notifications/progress') this.progress(m.params);
        else this.onNotification?.(m.method, m.params);
        return;
      }
      // The server asks us something. We declare no client capabilities, so only ping is ours to answer.
      const reply = m.method === 'ping'
        ? { jsonrpc: '2.0', id: m.id as number | string, result: {} }
        : { jsonrpc: '2.0', id: m.id as number | string, error: { code: METHOD_NOT_FOUND, message: `pinclaw does not offer ${m.method}` } };
      void this.transport.send(reply).catch(() => undefined);
      return;
    }
    if (typeof m.id !== 'number') return;
    const p = this.settle(m.id);
    if (!p) return; // late answer to a request that timed out or was stopped
    if (isObject(m.error)) {
      const e = m.error;
      p.reject(new RpcError(typeof e.code === 'number' ? e.code : 0, `MCP server ${this.server}: ${p.method} failed: ${typeof e.message === 'string' ? e.message : 'error'}`, e.data));
    } else {
      p.resolve(m.result);
    }
  }
}
