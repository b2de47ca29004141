// The durable queue: inbound messages and outbound replies. Every state change is one SQL statement
// or one transaction, so a crash at any point leaves rows that the next start can finish.
import type { Db } from './db.js';
import { sql } from './statements.js';

/**
 * Arrival order for the per-turn queries, sorted here rather than by an ORDER BY: with SQLite 3.54 a
 * statement with an equality on a bound parameter and an ORDER BY was planned again each time the
 * parameter was bound (sqlite3VdbeReprepareOnBind), and better-sqlite3 binds on every call, so such
 * a query was compiled anew each turn (25-40 µs alone, over 100 µs inside a turn, against 5 µs
 * without the ORDER BY; docs/performance.md). These queries return a handful of rows.
 */
const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;

export type InboundState = 'pending' | 'processing' | 'done' | 'failed';

export interface InboundRow {
  id: number;
  session_key: string;
  channel: string;
  chat_id: string;
  sender: string;
  text: string;
  meta: string | null;
  state: InboundState;
  attempts: number;
  last_error: string | null;
  owner: string | null;
  burst_id: number | null;
  available_at: number;
  created_at: number;
  updated_at: number;
}

export interface OutboundRow {
  id: number;
  idempotency_key: string;
  inbound_id: number | null;
  session_key: string;
  channel: string;
  chat_id: string;
  text: string;
  kind: 'reply' | 'notice';
  state: 'pending' | 'sent';
  created_at: number;
  sent_at: number | null;
  /** failed delivery attempts so far */
  attempts: number;
  /** not tried again before this time (ms epoch) */
  next_attempt_at: number;
  last_error: string | null;
  /** JSON array of the message ids of the parts already delivered, or null */
  delivered_parts: string | null;
}

export interface NewInbound {
  sessionKey: string;
  channel: string;
  chatId: string;
  sender: string;
  text: string;
  meta?: Record<string, unknown>;
}

/**
 * Commits the message as 'pending'. Earlier pending rows of the same sender in the same session
 * have their window pushed to now + debounce, so a burst becomes one prompt once it goes quiet.
 */
export function enqueue(db: Db, msg: NewInbound, debounceMs: number, now = Date.now()): InboundRow {
  const availableAt = now + debounceMs;
  return db.transaction(() => {
    if (debounceMs > 0) {
      sql(db, `update inbound set available_at = ?, updated_at = ? where session_key = ? and sender = ? and channel = ? and state = 'pending'`)
        .run(availableAt, now, msg.sessionKey, msg.sender, msg.channel);
    }
    return sql(db, 
      `insert into inbound (session_key, channel, chat_id, sender, text, meta, available_at, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?) returning *`,
    ).get(msg.sessionKey, msg.channel, msg.chatId, msg.sender, msg.text, msg.meta ? JSON.stringify(msg.meta) : null, availableAt, now, now) as InboundRow;
  })();
}

/** Sessions that have work ready for the given channels, oldest first. */
export function readySessions(db: Db, channels: readonly string[], now = Date.now()): string[] {
  if (channels.length === 0) return [];
  const rows = sql(db, 
    `select session_key, min(id) as first from inbound
     where state = 'pending' and available_at <= ? and channel in (${channels.map(() => '?').join(',')})
     group by session_key order by first`,
  ).all(now, ...channels) as { session_key: string }[];
  return rows.map((r) => r.session_key);
}

/** When the next pending row of these channels becomes ready (ms epoch), or null when none waits. */
export function nextAvailableAt(db: Db, channels: readonly string[]): number | null {
  if (channels.length === 0) return null;
  const row = sql(db, 
    `select min(available_at) as t from inbound where state = 'pending' and channel in (${channels.map(() => '?').join(',')})`,
  ).get(...channels) as { t: number | null };
  return row.t;
}

/**
 * Claims the oldest ready burst of one session: the first pending row and the following pending
 * rows from the same sender and channel that share its window (enqueue gave them one available_at),
 * in arrival order. Returns [] when another worker won.
 */
export function claimBurst(db: Db, sessionKey: string, owner: string, now = Date.now()): InboundRow[] {
  return db.transaction(() => {
    const pending = (sql(db, 
      `select * from inbound where session_key = ? and state = 'pending' and available_at <= ?`,
    ).all(sessionKey, now) as InboundRow[]).sort(byId);
    const first = pending[0];
    if (!first) return [];
    const burst: InboundRow[] = [];
    for (const row of pending) {
      if (row.sender !== first.sender || row.channel !== first.channel || row.available_at !== first.available_at) break;
      burst.push(row);
    }
    const claim = sql(db, `update inbound set state = 'processing', owner = ?, attempts = attempts + 1, updated_at = ? where id = ? and state = 'pending'`);
    for (const row of burst) claim.run(owner, now, row.id);
    return burst.map((r) => ({ ...r, state: 'processing' as const, owner, attempts: r.attempts + 1 }));
  }).immediate();
}

/** The burst is answered: every row done, each pointing at the row its reply is recorded for. */
export function markDone(db: Db, ids: readonly number[], now = Date.now()): void {
  const st = sql(db, `update inbound set state = 'done', last_error = null, burst_id = ?, updated_at = ? where id = ?`);
  for (const id of ids) st.run(ids.at(-1)!, now, id);
}

/** The rows a reply answers: its own inbound row and the others merged into that burst. */
export function burstMembers(db: Db, lastId: number): number[] {
  const rows = sql(db, 'select id from inbound where id = ? or burst_id = ?').all(lastId, lastId) as { id: number }[];
  return rows.map((r) => r.id);
}

/** The delivered reply (or latest notice) for an inbound row, directly or through its burst. */
export function deliveredFor(db: Db, inboundId: number): OutboundRow | undefined {
  return sql(db, 
    `select o.* from outbound o where o.state = 'sent' and o.inbound_id = coalesce((select burst_id from inbound where id = ?), ?)
     order by o.id desc limit 1`,
  ).get(inboundId, inboundId) as OutboundRow | undefined;
}

/** A failed attempt: back to 'pending' after `retryInMs`, or 'failed' when attempts are used up. */
export function markAttemptFailed(db: Db, ids: readonly number[], error: string, maxAttempts: number, retryInMs: number, now = Date.now()): InboundState {
  let state: InboundState = 'pending';
  const st = sql(db, 
    `update inbound set state = case when attempts >= ? then 'failed' else 'pending' end, last_error = ?, owner = null,
       available_at = ?, updated_at = ? where id = ? returning state`,
  );
  for (const id of ids) state = (st.get(maxAttempts, error, now + retryInMs, now, id) as { state: InboundState }).state;
  return state;
}

/**
 * Start-up recovery: rows left 'processing' by a process that is gone go back to 'pending'.
 * Owners are "pid:start-time" so a reused pid is not mistaken for the old process.
 */
export function recoverOrphans(db: Db, isAlive: (owner: string) => boolean, now = Date.now()): number {
  const rows = sql(db, `select distinct owner from inbound where state = 'processing'`).all() as { owner: string | null }[];
  let n = 0;
  const reset = sql(db, `update inbound set state = 'pending', owner = null, available_at = ?, updated_at = ? where state = 'processing' and owner is ?`);
  for (const { owner } of rows) {
    if (owner && isAlive(owner)) continue;
    n += reset.run(now, now, owner).changes;
  }
  return n;
}

export function recordOutbound(
  db: Db,
  o: { idempotencyKey: string; inboundId: number | null; sessionKey: string; channel: string; chatId: string; text: string; kind: 'reply' | 'notice' },
  now = Date.now(),
): OutboundRow {
  sql(db, 
    `insert into outbound (idempotency_key, inbound_id, session_key, channel, chat_id, text, kind, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?) on conflict (idempotency_key) do nothing`,
  ).run(o.idempotencyKey, o.inboundId, o.sessionKey, o.channel, o.chatId, o.text, o.kind, now);
  return sql(db, 'select * from outbound where idempotency_key = ?').get(o.idempotencyKey) as OutboundRow;
}

/** Replies not yet delivered through this channel, oldest first. */
export function pendingOutbound(db: Db, channel: string): OutboundRow[] {
  return (sql(db, `select * from outbound where state = 'pending' and channel = ?`).all(channel) as OutboundRow[]).sort(byId);
}

/** A failed delivery: tried again after `retryInMs`. */
export function markDeliveryFailed(db: Db, id: number, error: string, retryInMs: number, now = Date.now()): void {
  sql(db, `update outbound set attempts = attempts + 1, last_error = ?, next_attempt_at = ? where id = ? and state = 'pending'`).run(error, now + retryInMs, id);
}

/** The channel is back: its waiting replies may be tried at once. */
export function retryOutboundNow(db: Db, channel: string): void {
  sql(db, `update outbound set next_attempt_at = 0 where state = 'pending' and channel = ?`).run(channel);
}

/** The message ids of the parts of a reply delivered so far. */
export function deliveredParts(o: Pick<OutboundRow, 'delivered_parts'>): string[] {
  if (!o.delivered_parts) return [];
  const parts: unknown = JSON.parse(o.delivered_parts);
  return Array.isArray(parts) ? parts.map(String) : [];
}

/** Commits one more delivered part of a reply (its message id in the channel). */
export function recordDeliveredPart(db: Db, id: number, externalId: string): void {
  sql(db, `update outbound set delivered_parts = json_insert(coalesce(delivered_parts, '[]'), '$[#]', ?) where id = ?`).run(externalId, id);
}

/** Pending replies per channel and the age of the oldest, for doctor and /metrics. */
export function outboundBacklog(db: Db, now = Date.now()): { channel: string; pending: number; oldestAgeMs: number; failedAttempts: number }[] {
  const rows = sql(db,
    `select channel, count(*) as pending, min(created_at) as oldest, sum(attempts) as failed from outbound where state = 'pending' group by channel order by channel`,
  ).all() as { channel: string; pending: number; oldest: number; failed: number }[];
  return rows.map((r) => ({ channel: r.channel, pending: r.pending, oldestAgeMs: now - r.oldest, failedAttempts: r.failed }));
}

/** Replies that failed at least one delivery and still wait, per channel: what waits for a channel that is down. */
export function waitingReplies(db: Db): { channel: string; waiting: number }[] {
  return sql(db, `select channel, count(*) as waiting from outbound where state = 'pending' and attempts > 0 group by channel order by channel`).all() as { channel: string; waiting: number }[];
}

export function markSent(db: Db, id: number, now = Date.now()): void {
  sql(db, `update outbound set state = 'sent', sent_at = ? where id = ? and state = 'pending'`).run(now, id);
}

/** Messages waiting or being handled, in every session. */
export function unfinishedCount(db: Db): number {
  return (sql(db, `select count(*) as n from inbound where state in ('pending', 'processing')`).get() as { n: number }).n;
}

/** A message's text and meta once known in full (a voice note's transcript, src/voice/burst.ts). */
export function setInboundText(db: Db, id: number, text: string, meta: string | null, now = Date.now()): void {
  sql(db, 'update inbound set text = ?, meta = ?, updated_at = ? where id = ?').run(text, meta, now, id);
}

export function inboundById(db: Db, id: number): InboundRow | undefined {
  return sql(db, 'select * from inbound where id = ?').get(id) as InboundRow | undefined;
}

/** Gives claimed rows back untouched (shutdown): the attempt does not count. */
export function release(db: Db, ids: readonly number[], now = Date.now()): void {
  const st = sql(db, `update inbound set state = 'pending', owner = null, attempts = max(0, attempts - 1), updated_at = ? where id = ? and state = 'processing'`);
  for (const id of ids) st.run(now, id);
}
