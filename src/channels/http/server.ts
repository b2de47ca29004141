// The gateway's HTTP server: health, the dashboard's files and login, auth for /api/* (the bearer
// token, or the dashboard's session cookie), and a graceful drain on close. Routes for chat, events
// and metrics are added by the channels that own them.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PinclawError, errorMessage } from '../../errors.js';
import type { Db } from '../../store/db.js';
import { isDashboardPath, serveDashboard } from './dashboard.js';
import { dashboardApi, type DashboardSources } from './dashboard-api.js';
import { handleWebAuth, hasWebSession, PAIRING_CHANNEL, sameOrigin } from './web-auth.js';
import { PairingLimits } from './pairing-limits.js';
import { constantTimeEqual, GatewayGuard, type GuardDecision, type GuardOptions, type GuardStatus } from './guard.js';
import { ConnectionLimiter, connectionCap, descriptorLimit, type ConnectionOptions, type ConnectionStatus } from './connections.js';
import { log } from '../../log.js';
import { listenOn } from '../../net/listen-on.js';
import { HttpError, sendJson, sendRefusal, type ApiHandler } from './io.js';

export interface HttpServerOptions {
  host: string;
  port: number;
  /** Bearer token for /api/* and /metrics; without one those routes answer 401. */
  token?: string;
  api?: ApiHandler;
  /** The dashboard's login (/auth/*) and its session cookie on /api/* and /metrics; without it only the bearer token opens them. */
  web?: WebOptions;
  /** per-client rate limit and the lockout after wrong tokens (defaults in guard.ts) */
  guard?: GuardOptions;
  /** the cap on open connections and the time a silent one is kept (defaults in connections.ts) */
  connections?: ConnectionOptions;
}

export interface WebOptions {
  /** holds the login sessions (web_sessions) and the pairing requests */
  db: Db;
  /** the gateway's home: the pairing command shown in the page names it when it is not the default */
  home?: string;
  /** told of every wrong token given to POST /auth/login (a lockout guard plugs in here) */
  onBadCredential?(req: IncomingMessage): void;
  /** asked before a token given to POST /auth/login is compared (the guard's pause on token attempts) */
  checkCredential?(req: IncomingMessage): GuardDecision;
  /** told of a right token given to POST /auth/login */
  onGoodCredential?(req: IncomingMessage): void;
  /** the dashboard's read routes (sessions, audit, status, board, memory), tried after `api` */
  dashboard?: DashboardSources;
}

export interface RunningHttpServer {
  url: string;
  port: number;
  /** Stops accepting, lets in-flight requests finish for up to `drainMs`, then cuts what is left. */
  close(drainMs: number): Promise<void>;
  /** the guard's counts, for /metrics */
  guardStatus(): GuardStatus;
  /** the open connections and those refused, for /metrics */
  connectionStatus(): ConnectionStatus;
}

/** Logs what a wrong token started: once per lockout, not per guess. */
function noteBadCredential(guard: GatewayGuard, client: string | undefined): void {
  const started = guard.badCredential(client);
  if (started === 'client') log.warn(`gateway: too many wrong tokens from ${client ?? 'an unknown address'}; it is locked out`);
  else if (started === 'global') log.warn('gateway: too many wrong tokens from many addresses; token logins are paused for addresses that have not logged in lately');
}

export function authorized(req: IncomingMessage, token: string | undefined): boolean {
  if (!token) return false;
  const header = req.headers.authorization ?? '';
  const m = /^Bearer\s+(.+)$/i.exec(header);
  return m !== null && constantTimeEqual(m[1]!.trim(), token);
}

/** The options as handle() gets them: the web login wired to the guard and the pairing limits. */
type GuardedOptions = Omit<HttpServerOptions, 'web'> & { web?: WebOptions & { pairing: PairingLimits } };

async function handle(req: IncomingMessage, res: ServerResponse, opts: GuardedOptions, dashboardRoutes: ApiHandler | undefined, guard: GatewayGuard): Promise<void> {
  const path = (req.url ?? '/').split('?')[0]!;
  const client = req.socket.remoteAddress;
  const verdict = guard.check(client);
  if (!verdict.ok) return sendRefusal(res, verdict);
  if (path === '/healthz') {
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: 'method not allowed' });
    return sendJson(res, 200, { status: 'ok' });
  }
  if (isDashboardPath(path)) return serveDashboard(req, res, path);
  if (opts.web && path.startsWith('/auth/') && (await handleWebAuth(req, res, path, { ...opts.web, token: opts.token }))) return;
  if (path.startsWith('/api/') || path === '/metrics') {
    // A request that names a bearer token is judged by it alone; the cookie is the browser's way.
    const bearer = req.headers.authorization !== undefined;
    if (bearer) {
      // While token attempts are paused the token is not even looked at: the right one must not help.
      const attempt = guard.checkCredential(client);
      if (!attempt.ok) return sendRefusal(res, attempt);
    }
    const cookie = !bearer && opts.web !== undefined && hasWebSession(req, opts.web.db);
    if (!cookie && !authorized(req, opts.token)) {
      // A wrong token is a guess; a request with none is not (a browser before its login).
      if (bearer) noteBadCredential(guard, client);
      res.setHeader('www-authenticate', 'Bearer');
      const why = opts.token ? 'missing or wrong bearer token' : opts.web ? 'no gateway.token configured' : 'no gateway.token configured; /api is closed';
      return sendJson(res, 401, { error: opts.web ? `${why}, and no dashboard login` : why });
    }
    // SameSite=Strict already keeps the cookie off other sites' requests; the origin check holds
    // should a browser or a same-site page get that wrong.
    if (cookie && req.method !== 'GET' && req.method !== 'HEAD' && !sameOrigin(req)) return sendJson(res, 403, { error: 'cross-origin request refused' });
    if (bearer) guard.goodCredential(client);
    if (opts.api && (await opts.api(req, res, path))) return;
    if (dashboardRoutes && (await dashboardRoutes(req, res, path))) return;
  }
  sendJson(res, 404, { error: `no route for ${req.method} ${path}` });
}

export function startHttpServer(opts: HttpServerOptions): Promise<RunningHttpServer> {
  const dashboardRoutes = opts.web?.dashboard ? dashboardApi(opts.web.db, opts.web.dashboard) : undefined;
  const guard = new GatewayGuard(opts.guard);
  // The dashboard's wrong logins count like wrong bearer tokens, and wait out the same pause.
  const web = opts.web
    ? {
        ...opts.web,
        onBadCredential: (req: IncomingMessage) => (noteBadCredential(guard, req.socket.remoteAddress), opts.web!.onBadCredential?.(req)),
        checkCredential: (req: IncomingMessage) => guard.checkCredential(req.socket.remoteAddress),
        onGoodCredential: (req: IncomingMessage) => (guard.goodCredential(req.socket.remoteAddress), opts.web!.onGoodCredential?.(req)),
        pairing: new PairingLimits(PAIRING_CHANNEL),
      }
    : undefined;
  const withGuard: GuardedOptions = { ...opts, web };
  const server = createServer((req, res) => {
    handle(req, res, withGuard, dashboardRoutes, guard).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      if (!res.headersSent) sendJson(res, status, { error: errorMessage(err) });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5000;
  const fdLimit = opts.connections?.descriptorLimit ?? descriptorLimit();
  const cap = connectionCap({ ...opts.connections, descriptorLimit: fdLimit });
  if (cap.lowered) log.warn(`gateway.connections.max ${cap.lowered.wanted} lowered to ${cap.max}: half the open-files limit (${cap.lowered.descriptorLimit}) stays for the database, model calls and devices; raise the limit (LimitNOFILE= in the service unit, ulimit -n) or lower gateway.connections.max`);
  const connections = new ConnectionLimiter(cap, opts.connections?.firstRequestMs, (msg) => log.warn(msg));
  connections.attach(server);
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const why = err.code === 'EADDRINUSE' ? 'address already in use' : err.code === 'EACCES' ? 'permission denied' : err.message;
      reject(new PinclawError(`cannot listen on ${opts.host}:${opts.port}: ${why}`));
    });
    listenOn(server, opts.port, opts.host, () => {
      const addr = server.address() as AddressInfo;
      const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      resolve({
        url: `http://${host}:${addr.port}`,
        port: addr.port,
        guardStatus: () => guard.status(),
        connectionStatus: () => connections.status(),
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
