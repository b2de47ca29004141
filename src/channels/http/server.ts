// The gateway's HTTP server: health, bearer-token auth for /api/*, and a graceful drain on close.
// Routes for chat, events, metrics and the dashboard are added by the channels that own them.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { PinclawError, errorMessage } from '../../errors.js';

/** Handles an authorized /api/* or /metrics request; returns false when it has no such route. */
export type ApiHandler = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<boolean>;

export interface HttpServerOptions {
  host: string;
  port: number;
  /** Bearer token for /api/* and /metrics; without one those routes answer 401. */
  token?: string;
  api?: ApiHandler;
}

export interface RunningHttpServer {
  url: string;
  port: number;
  /** Stops accepting, lets in-flight requests finish for up to `drainMs`, then cuts what is left. */
  close(drainMs: number): Promise<void>;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** An error that becomes a response with its status (bad input: 4xx). */
export class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

export async function readJson(req: IncomingMessage, limit = 1 << 20): Promise<unknown> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new HttpError(413, `request body larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    throw new HttpError(400, `invalid JSON body: ${errorMessage(err)}`);
  }
}

export function authorized(req: IncomingMessage, token: string | undefined): boolean {
  if (!token) return false;
  const header = req.headers.authorization ?? '';
  const m = /^Bearer\s+(.+)$/i.exec(header);
  if (!m) return false;
  const given = Buffer.from(m[1]!.trim());
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}

async function handle(req: IncomingMessage, res: ServerResponse, opts: HttpServerOptions): Promise<void> {
  const path = (req.url ?? '/').split('?')[0]!;
  if (path === '/healthz') {
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: 'method not allowed' });
    return sendJson(res, 200, { status: 'ok' });
  }
  if (path.startsWith('/api/') || path === '/metrics') {
    if (!authorized(req, opts.token)) {
      res.setHeader('www-authenticate', 'Bearer');
      return sendJson(res, 401, { error: opts.token ? 'missing or wrong bearer token' : 'no gateway.token configured; /api is closed' });
    }
    if (opts.api && (await opts.api(req, res, path))) return;
  }
  sendJson(res, 404, { error: `no route for ${req.method} ${path}` });
}

export function startHttpServer(opts: HttpServerOptions): Promise<RunningHttpServer> {
  const server = createServer((req, res) => {
    handle(req, res, opts).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      if (!res.headersSent) sendJson(res, status, { error: errorMessage(err) });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5000;
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const why = err.code === 'EADDRINUSE' ? 'address already in use' : err.code === 'EACCES' ? 'permission denied' : err.message;
      reject(new PinclawError(`cannot listen on ${opts.host}:${opts.port}: ${why}`));
    });
    server.listen(opts.port, opts.host, () => {
      const addr = server.address() as AddressInfo;
      const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      resolve({
        url: `http://${host}:${addr.port}`,
        port: addr.port,
        close: (drainMs) =>
          new Promise<void>((done) => {
            const timer = setTimeout(() => server.closeAllConnections(), drainMs);
            timer.unref();
            server.close(() => {
              clearTimeout(timer);
              done();
            });
            server.closeIdleConnections();
          }),
      });
    });
  });
}
