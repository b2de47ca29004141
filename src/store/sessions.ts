// Sessions: the full message state of each conversation, saved after every turn. A row that cannot
// be parsed is moved to sessions_quarantine (kept, never deleted) and the session starts fresh.
import type { Message } from '../agent/types.js';
import type { Db } from './db.js';
import { sql } from './statements.js';

export interface SessionMeta {
  /** input tokens the provider reported for the last call, and how many messages that covered */
  lastInputTokens?: number;
  lastInputMessages?: number;
  compactions?: number;
}

export interface Session {
  key: string;
  messages: Message[];
  meta: SessionMeta;
  /** set when a corrupt row was moved aside while loading */
  recovered?: string;
}

function isMessage(m: unknown): m is Message {
  if (!m || typeof m !== 'object') return false;
  const { role, content } = m as { role?: unknown; content?: unknown };
  return (role === 'user' || role === 'assistant') && Array.isArray(content) && content.every((b) => b && typeof b === 'object' && typeof (b as { type?: unknown }).type === 'string');
}

export function loadSession(db: Db, key: string, now = Date.now()): Session {
  const row = sql(db, 'select messages, meta from sessions where key = ?').get(key) as { messages: string; meta: string } | undefined;
  if (!row) return { key, messages: [], meta: {} };
  try {
    const messages: unknown = JSON.parse(row.messages);
    if (!Array.isArray(messages)) throw new Error('messages is not an array');
    const bad = messages.findIndex((m) => !isMessage(m));
    if (bad >= 0) throw new Error(`message ${bad} is malformed`);
    const meta = JSON.parse(row.meta) as SessionMeta;
    return { key, messages: messages as Message[], meta: meta && typeof meta === 'object' ? meta : {} };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    db.transaction(() => {
      sql(db, 'insert into sessions_quarantine (key, messages, meta, error, moved_at) values (?, ?, ?, ?, ?)').run(key, row.messages, row.meta, error, now);
      sql(db, 'delete from sessions where key = ?').run(key);
    })();
    return { key, messages: [], meta: {}, recovered: error };
  }
}

/** Images are bulky and were already seen by the model; a short note in their place keeps the turn readable. */
export function stripBinary(messages: readonly Message[]): Message[] {
  return messages.map((m) => ({
    role: m.role,
    content: m.content.map((b) => (b.type === 'image' ? { type: 'text' as const, text: b.note ? `[image removed from the history: ${b.note}]` : `[image ${b.mediaType} removed]` } : b)),
  }));
}

export function saveSession(db: Db, s: Session, now = Date.now()): void {
  sql(db, 
    `insert into sessions (key, messages, meta, created_at, updated_at) values (?, ?, ?, ?, ?)
     on conflict (key) do update set messages = excluded.messages, meta = excluded.meta, updated_at = excluded.updated_at`,
  ).run(s.key, JSON.stringify(stripBinary(s.messages)), JSON.stringify(s.meta), now, now);
}

export function resetSession(db: Db, key: string): boolean {
  return sql(db, 'delete from sessions where key = ?').run(key).changes > 0;
}

export interface SessionSummary {
  key: string;
  messages: number;
  updatedAt: string;
}

/** Keys starting with `prefix`, without reading any session's messages. */
export function sessionKeysWithPrefix(db: Db, prefix: string): string[] {
  // substr, not LIKE: a key may contain % and _. SQLite counts code points, not UTF-16 units.
  return (sql(db, 'select key from sessions where substr(key, 1, ?) = ?').all([...prefix].length, prefix) as { key: string }[]).map((r) => r.key);
}

export function listSessions(db: Db): SessionSummary[] {
  const rows = sql(db, 'select key, json_array_length(messages) as n, updated_at from sessions order by updated_at desc').all() as { key: string; n: number; updated_at: number }[];
  return rows.map((r) => ({ key: r.key, messages: r.n, updatedAt: new Date(r.updated_at).toISOString() }));
}
