// The audit table: what the tool registry records about every call, and what `pinclaw audit` reads.
// Values arrive redacted; this module stores and reads, it does not judge.
import type { Db } from './db.js';
import { flushWritesSoon, writeSoon } from './write-soon.js';
import { sql } from './statements.js';

export type AuditOutcome = 'allowed' | 'denied' | 'error' | 'ok';

export interface NewAudit {
  /** milliseconds since the epoch */
  at: number;
  sessionKey: string;
  channel: string;
  chatId: string;
  caller?: string;
  tool: string;
  input: string;
  outcome: AuditOutcome;
  rule?: string;
  detail?: string;
  durationMs?: number;
  outputBytes?: number;
}

export interface AuditFinish {
  outcome: 'ok' | 'error';
  detail?: string;
  durationMs: number;
  outputBytes: number;
  /** a physical action's device and values before and after, as JSON */
  physical?: string;
}

export interface AuditRow {
  id: number;
  at: number;
  session_key: string;
  channel: string;
  chat_id: string;
  caller: string | null;
  tool: string;
  input: string;
  outcome: AuditOutcome;
  rule: string | null;
  detail: string | null;
  duration_ms: number | null;
  output_bytes: number | null;
  physical: string | null;
}

export function insertAudit(db: Db, e: NewAudit): number {
  const r = sql(db, `insert into audit (at, session_key, channel, chat_id, caller, tool, input, outcome, rule, detail, duration_ms, output_bytes)
    values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    .run(e.at, e.sessionKey, e.channel, e.chatId, e.caller ?? null, e.tool, e.input, e.outcome, e.rule ?? null, e.detail ?? null, e.durationMs ?? null, e.outputBytes ?? null);
  return Number(r.lastInsertRowid);
}

/** Writes the rows insertAuditSoon holds for this connection now (tests, and the close). */
export const flushAuditSoon = flushWritesSoon;

/**
 * Writes the row shortly after, with the others waiting in one transaction (store/write-soon.ts: at
 * once for a lone call, in batches held up to HOLD_MS for calls back to back): for the call of a
 * tool that changed nothing, whose row need not exist before its answer goes out (a remote read
 * answers the other board first). Written at the latest when the connection closes or this process
 * reads the audit; a process killed in between loses these rows only, and nothing was changed by
 * their calls.
 */
export function insertAuditSoon(db: Db, e: NewAudit, onError: (err: unknown) => void): void {
  writeSoon(db, () => void insertAudit(db, e), onError);
}

/** Closes an 'allowed' row; a row already closed is left as it is. */
export function finishAudit(db: Db, id: number, f: AuditFinish): void {
  sql(db, `update audit set outcome = ?, detail = ?, duration_ms = ?, output_bytes = ?, physical = ? where id = ? and outcome = 'allowed'`)
    .run(f.outcome, f.detail ?? null, Math.round(f.durationMs), f.outputBytes, f.physical ?? null, id);
}

export interface AuditQuery {
  /** rows at or after this time, ms since the epoch */
  since?: number;
  tool?: string;
  /** the newest rows up to this many, returned oldest first */
  limit?: number;
}

export function queryAudit(db: Db, q: AuditQuery = {}): AuditRow[] {
  // Rows this process holds back (insertAuditSoon) are read too: the dashboard and the tests see
  // every call that has ended, without waiting for the batch.
  flushWritesSoon(db);
  const where: string[] = [];
  const args: (string | number)[] = [];
  if (q.since !== undefined) {
    where.push('at >= ?');
    args.push(q.since);
  }
  if (q.tool !== undefined) {
    where.push('tool = ?');
    args.push(q.tool);
  }
  const text = `select * from (select * from audit${where.length ? ` where ${where.join(' and ')}` : ''} order by id desc limit ?) order by id`;
  return sql(db, text).all(...args, q.limit ?? -1) as AuditRow[];
}
