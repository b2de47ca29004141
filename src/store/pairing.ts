// Pairing: who may talk to pinclaw besides the configured allow-lists. A stranger (a Telegram user
// not in channels.telegram.allowFrom, a browser without the gateway token) gets a pending request
// with a short code; the owner approves it with `pinclaw pairing approve CODE` on the machine.
import { randomInt } from 'node:crypto';
import type { Db } from './db.js';
import { sql } from './statements.js';

export interface Pairing {
  id: number;
  channel: string;
  subject: string;
  label: string | null;
  code: string;
  state: 'pending' | 'approved';
  created_at: number;
  prompted_at: number | null;
  approved_at: number | null;
}

/** A pending code is good for this long; a later request by the same sender gets a fresh one. */
export const PAIRING_CODE_TTL_MS = 60 * 60_000;

// No 0/O, 1/I/L: the code is read off one screen and typed on another.
const ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 8;

function newCode(): string {
  let code = '';
  for (let i = 0; i < CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

/** The sender's pairing row, approved or pending, if any. */
export function findPairing(db: Db, channel: string, subject: string): Pairing | undefined {
  return sql(db, 'select * from pairing where channel = ? and subject = ?').get(channel, subject) as Pairing | undefined;
}

export function isPaired(db: Db, channel: string, subject: string): boolean {
  return findPairing(db, channel, subject)?.state === 'approved';
}

/**
 * The pending request of this sender, created when missing; an expired code is replaced. An
 * approved sender's row is returned as is.
 */
export function requestPairing(db: Db, channel: string, subject: string, label: string | null, now = Date.now()): Pairing {
  return db.transaction(() => {
    const row = findPairing(db, channel, subject);
    if (row && (row.state === 'approved' || now - row.created_at < PAIRING_CODE_TTL_MS)) return row;
    for (;;) {
      const code = newCode();
      if (sql(db, 'select 1 from pairing where code = ?').get(code)) continue;
      sql(db,
        `insert into pairing (channel, subject, label, code, state, created_at) values (?, ?, ?, ?, 'pending', ?)
         on conflict (channel, subject) do update set code = excluded.code, label = excluded.label, created_at = excluded.created_at, prompted_at = null`,
      ).run(channel, subject, label, code, now);
      return findPairing(db, channel, subject)!;
    }
  }).immediate();
}

/** Records that the sender was told how to pair; returns false when that happened within the hour. */
export function claimPrompt(db: Db, id: number, intervalMs = PAIRING_CODE_TTL_MS, now = Date.now()): boolean {
  const r = sql(db, 'update pairing set prompted_at = ? where id = ? and (prompted_at is null or prompted_at <= ?)').run(now, id, now - intervalMs);
  return r.changes === 1;
}

export type ApproveResult = { ok: true; pairing: Pairing } | { ok: false; reason: string };

export function approvePairing(db: Db, code: string, now = Date.now()): ApproveResult {
  const normalized = code.trim().toUpperCase();
  const row = sql(db, 'select * from pairing where code = ?').get(normalized) as Pairing | undefined;
  if (!row) return { ok: false, reason: `no pairing request has the code ${normalized}` };
  if (row.state === 'approved') return { ok: true, pairing: row };
  if (now - row.created_at >= PAIRING_CODE_TTL_MS) return { ok: false, reason: `the code ${normalized} has expired (codes are good for an hour); the sender gets a new one by writing again` };
  sql(db, `update pairing set state = 'approved', approved_at = ? where id = ?`).run(now, row.id);
  return { ok: true, pairing: { ...row, state: 'approved', approved_at: now } };
}

/** Removes a sender's pairing (approved or pending); returns whether there was one. */
export function revokePairing(db: Db, channel: string, subject: string): boolean {
  return sql(db, 'delete from pairing where channel = ? and subject = ?').run(channel, subject).changes === 1;
}

export function listPairings(db: Db): Pairing[] {
  return sql(db, 'select * from pairing order by state, created_at').all() as Pairing[];
}

/**
 * A channel's pending requests whose code is still good. The expired ones of that channel are
 * removed on the way: a stranger's request must not hold a place in the table for ever.
 */
export function pendingPairings(db: Db, channel: string, now = Date.now()): Pairing[] {
  sql(db, `delete from pairing where channel = ? and state = 'pending' and created_at <= ?`).run(channel, now - PAIRING_CODE_TTL_MS);
  return sql(db, `select * from pairing where channel = ? and state = 'pending' order by created_at`).all(channel) as Pairing[];
}
