// The dashboard's login: a browser gets the session cookie either by giving the gateway token once
// (POST /auth/login) or by pairing (POST /auth/pair, then the owner runs `pinclaw pairing approve
// CODE` on the machine and the page collects the cookie with GET /auth/pair/<request>). The cookie
// then stands in for the bearer token on /api/* and /metrics (see server.ts).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Db } from '../../store/db.js';
import { findPairing, PAIRING_CODE_TTL_MS, requestPairing, revokePairing } from '../../store/pairing.js';
import { createWebSession, deleteWebSession, pruneWebSessions, useWebSession, WEB_SESSION_TTL_MS } from '../../store/web-sessions.js';
import { clientKey, type GuardDecision } from './guard.js';
import { PairingLimits } from './pairing-limits.js';
import { HttpError, readJson, sendJson, sendRefusal } from './io.js';
import { approveCommand } from '../pairing-hint.js';

export const SESSION_COOKIE = 'pinclaw_session';
export const PAIRING_CHANNEL = 'dashboard';
const REQUEST_ID = /^[A-Za-z0-9_-]{32}$/;

export interface WebAuthOptions {
  db: Db;
  /** the gateway's home: the pairing command names it when it is not the default (pairing-hint.ts) */
  home?: string;
  /** the gateway token; without one, login by token is closed and pairing is the only way in */
  token?: string;
  /** told of every wrong token given to POST /auth/login (a lockout guard plugs in here) */
  onBadCredential?(req: IncomingMessage): void;
  /** asked before a token is compared; a refusal is answered 429 (the guard's pause on token attempts) */
  checkCredential?(req: IncomingMessage): GuardDecision;
  /** told of a right token given to POST /auth/login (the guard then trusts the address) */
  onGoodCredential?(req: IncomingMessage): void;
  /** how many pairing requests each client may have waiting (kept for the server's life; absent: one per database) */
  pairing?: PairingLimits;
}

/** The first value of a header a proxy may have set (a chain of proxies appends with commas). */
function forwarded(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return (Array.isArray(v) ? v[0] : v)?.split(',')[0]?.trim() || undefined;
}

function overHttps(req: IncomingMessage): boolean {
  return (req.socket as TLSSocket).encrypted === true || forwarded(req, 'x-forwarded-proto')?.toLowerCase() === 'https';
}

/**
 * The origin the browser sees this server at: behind a reverse proxy, the one the proxy names.
 * Trusting the X-Forwarded-* headers costs nothing here: a page on another site cannot make a
 * browser send them without a CORS preflight, which this server never grants.
 */
export function ownOrigin(req: IncomingMessage): string {
  return `${overHttps(req) ? 'https' : 'http'}://${forwarded(req, 'x-forwarded-host') ?? req.headers.host ?? ''}`;
}

/** A browser's request from one of this server's own pages; a request without Origin is not one. */
export function sameOrigin(req: IncomingMessage): boolean {
  return req.headers.origin !== undefined && req.headers.origin === ownOrigin(req);
}

export function sessionCookie(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function hasWebSession(req: IncomingMessage, db: Db): boolean {
  const secret = sessionCookie(req);
  return secret !== undefined && useWebSession(db, secret);
}

function setCookie(req: IncomingMessage, res: ServerResponse, value: string, maxAgeS: number): void {
  res.setHeader('set-cookie', `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAgeS}${overHttps(req) ? '; Secure' : ''}`);
}

function noContent(res: ServerResponse): void {
  res.writeHead(204, { 'cache-control': 'no-store' });
  res.end();
}

// Hashing first makes both sides the same length, so the comparison time says nothing about the token.
function tokenMatches(given: string, token: string): boolean {
  const h = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(h(given), h(token));
}

/** The user agent as a label: short, and without control characters that a terminal would act on. */
function label(req: IncomingMessage): string {
  return (req.headers['user-agent'] ?? 'unknown browser').replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').slice(0, 120);
}

function startSession(req: IncomingMessage, res: ServerResponse, db: Db, how: string): void {
  pruneWebSessions(db);
  setCookie(req, res, createWebSession(db, `${how}: ${label(req)}`), WEB_SESSION_TTL_MS / 1000);
}

async function login(req: IncomingMessage, res: ServerResponse, o: WebAuthOptions): Promise<void> {
  const body = await readJson(req, 4096);
  const given = body && typeof body === 'object' ? (body as { token?: unknown }).token : undefined;
  if (typeof given !== 'string' || given === '') throw new HttpError(400, 'body must be a JSON object {"token": string}');
  const attempt = o.checkCredential?.(req);
  if (attempt && !attempt.ok) return sendRefusal(res, attempt);
  if (!o.token || !tokenMatches(given, o.token)) {
    o.onBadCredential?.(req);
    return sendJson(res, 401, { error: o.token ? 'wrong token' : 'no gateway.token configured; pair this browser instead' });
  }
  o.onGoodCredential?.(req);
  startSession(req, res, o.db, 'token');
  noContent(res);
}

// The limits when the caller keeps none: never none at all.
const defaultLimits = new WeakMap<Db, PairingLimits>();

function pairingLimits(o: WebAuthOptions): PairingLimits {
  if (o.pairing) return o.pairing;
  let l = defaultLimits.get(o.db);
  if (!l) defaultLimits.set(o.db, (l = new PairingLimits(PAIRING_CHANNEL)));
  return l;
}

function requestPair(req: IncomingMessage, res: ServerResponse, o: WebAuthOptions): void {
  const now = Date.now();
  const client = clientKey(req.socket.remoteAddress);
  const limits = pairingLimits(o);
  const admitted = limits.admit(o.db, client, now);
  if (!admitted.ok) {
    res.setHeader('retry-after', String(PAIRING_CODE_TTL_MS / 1000));
    throw new HttpError(429, `${admitted.waiting} pairing requests from this address are waiting already; approve one (pinclaw pairing approve CODE on the machine) or let them expire (an hour)`);
  }
  const id = randomBytes(24).toString('base64url');
  const p = requestPairing(o.db, PAIRING_CHANNEL, id, label(req), now);
  limits.asked(client, id);
  sendJson(res, 200, { request: id, code: p.code, command: approveCommand(p.code, o.home) });
}

// Only the browser that holds the request id can collect the cookie, and only once.
function collectPair(req: IncomingMessage, res: ServerResponse, db: Db, id: string): void {
  const p = REQUEST_ID.test(id) ? findPairing(db, PAIRING_CHANNEL, id) : undefined;
  if (!p) return sendJson(res, 404, { error: 'no such pairing request: it expired or was collected already' });
  if (p.state === 'pending') {
    if (Date.now() - p.created_at < PAIRING_CODE_TTL_MS) return sendJson(res, 200, { state: 'pending' });
    revokePairing(db, PAIRING_CHANNEL, id);
    return sendJson(res, 200, { state: 'expired' });
  }
  if (!revokePairing(db, PAIRING_CHANNEL, id)) return sendJson(res, 404, { error: 'no such pairing request: it was collected already' });
  startSession(req, res, db, 'paired');
  res.setHeader('cache-control', 'no-store');
  sendJson(res, 200, { state: 'approved' });
}

/** Handles /auth/*; false when the path is not one of its routes. */
export async function handleWebAuth(req: IncomingMessage, res: ServerResponse, path: string, o: WebAuthOptions): Promise<boolean> {
  const route = ['/auth/login', '/auth/logout', '/auth/pair', '/auth/me'].includes(path) ? path : path.startsWith('/auth/pair/') ? '/auth/pair/' : undefined;
  if (!route) return false;
  const post = route !== '/auth/me' && route !== '/auth/pair/';
  if (req.method !== (post ? 'POST' : 'GET')) {
    res.setHeader('allow', post ? 'POST' : 'GET');
    sendJson(res, 405, { error: `${path} takes ${post ? 'POST' : 'GET'}` });
    return true;
  }
  // A page elsewhere can post here too (a form needs no CORS); a browser names its origin, tools do not.
  if (post && req.headers.origin !== undefined && !sameOrigin(req)) {
    sendJson(res, 403, { error: 'cross-origin request refused' });
    return true;
  }
  switch (route) {
    case '/auth/login':
      await login(req, res, o);
      break;
    case '/auth/logout': {
      const secret = sessionCookie(req);
      if (secret) deleteWebSession(o.db, secret);
      setCookie(req, res, '', 0);
      noContent(res);
      break;
    }
    case '/auth/me': {
      const secret = sessionCookie(req);
      if (!secret || !useWebSession(o.db, secret)) {
        sendJson(res, 401, { authenticated: false });
        break;
      }
      // The session slides in the table; the cookie slides with it.
      setCookie(req, res, secret, WEB_SESSION_TTL_MS / 1000);
      res.setHeader('cache-control', 'no-store');
      sendJson(res, 200, { authenticated: true });
      break;
    }
    case '/auth/pair':
      requestPair(req, res, o);
      break;
    default:
      collectPair(req, res, o.db, path.slice('/auth/pair/'.length));
  }
  return true;
}
