// What the HTTP channel's handlers share to read and answer a request: JSON in and out, the error
// that carries a status, the guard's 429. A leaf: the server and the routes it mounts (api.ts,
// dashboard-api.ts, web-auth.ts) import it, and it imports none of them.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorMessage } from '../../errors.js';
import type { GuardDecision } from './guard.js';

/** Handles an authorized /api/* or /metrics request; returns false when it has no such route. */
export type ApiHandler = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<boolean>;

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

/** The 429 for a refusal of the guard, with Retry-After. */
export function sendRefusal(res: ServerResponse, verdict: Exclude<GuardDecision, { ok: true }>): void {
  res.setHeader('retry-after', String(verdict.retryAfterSeconds));
  const s = verdict.retryAfterSeconds;
  const error =
    verdict.reason === 'lockout' ? `too many wrong tokens from this address; locked out for ${s} s`
    : verdict.reason === 'global' ? `too many wrong tokens sent to this gateway from many addresses; token logins from addresses that have not logged in lately are paused for ${s} s (a logged-in dashboard keeps working)`
    : 'too many requests from this address';
  sendJson(res, 429, { error });
}
