// Dashboard logins. The browser holds a random secret in a cookie; the table holds only its SHA-256,
// so a copy of the database does not log anyone in. A session lasts 30 days from its last use.
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from './db.js';
import { sql } from './statements.js';

export const WEB_SESSION_TTL_MS = 30 * 24 * 60 * 60_000;
// Use is written at most this often: a dashboard polls, and an SD card should not take a write per poll.
const TOUCH_INTERVAL_MS = 60_000;
// 32 bytes in base64url, no padding.
const SECRET = /^[A-Za-z0-9_-]{43}$/;

const hash = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** Creates a session and returns the secret for the cookie (it is not stored). */
export function createWebSession(db: Db, label: string | null, now = Date.now()): string {
  const secret = randomBytes(32).toString('base64url');
  sql(db, 'insert into web_sessions (id_hash, label, created_at, last_seen_at, expires_at) values (?, ?, ?, ?, ?)').run(hash(secret), label, now, now, now + WEB_SESSION_TTL_MS);
  return secret;
}

/** Whether the secret names a live session; a live one is extended, an expired one removed. */
export function useWebSession(db: Db, secret: string, now = Date.now()): boolean {
  if (!SECRET.test(secret)) return false;
  const id = hash(secret);
  const row = sql(db, 'select last_seen_at, expires_at from web_sessions where id_hash = ?').get(id) as { last_seen_at: number; expires_at: number } | undefined;
  if (!row) return false;
  if (row.expires_at <= now) {
    sql(db, 'delete from web_sessions where id_hash = ?').run(id);
    return false;
  }
  if (now - row.last_seen_at >= TOUCH_INTERVAL_MS) sql(db, 'update web_sessions set last_seen_at = ?, expires_at = ? where id_hash = ?').run(now, now + WEB_SESSION_TTL_MS, id);
  return true;
}

export function deleteWebSession(db: Db, secret: string): boolean {
  if (!SECRET.test(secret)) return false;
  return sql(db, 'delete from web_sessions where id_hash = ?').run(hash(secret)).changes === 1;
}

/** Removes expired sessions; returns how many. */
export function pruneWebSessions(db: Db, now = Date.now()): number {
  return sql(db, 'delete from web_sessions where expires_at <= ?').run(now).changes;
}
