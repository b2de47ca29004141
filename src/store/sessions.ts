// Sessions: the full message state of each conversation, saved after every turn. A row that cannot
// be parsed is moved to sessions_quarantine (kept, never deleted) and the session starts fresh.
import type { Message } from '../agent/types.js';
import { onRelease } from '../release.js';
import { beforeClose, type Db } from './db.js';
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

/**
 * The sessions this process saved or loaded last, as stored: a turn reads its session and writes it
 * back whole, and parsing and writing out the JSON of a long conversation was a tenth of a turn's
 * own cost (docs/performance.md, "The turn, fourth pass"). Messages are values: the agent loop
 * appends to a conversation and never edits a message, so the cached objects are shared with the
 * turns that load them. Every write to the sessions table of this connection goes through this
 * file; a commit by any other connection (the CLI's `sessions reset`, a migration) changes SQLite's
 * data_version, and the cache of that connection is dropped before the next load. A quiet gateway
 * drops it too (src/release.ts).
 */
interface Cached {
  /** the messages as stored (images already replaced by their notes) */
  messages: Message[];
  /** their JSON, as written to the row */
  json: string;
  /** the meta column */
  meta: string;
}
interface SessionCache {
  dataVersion: number;
  entries: Map<string, Cached>;
  chars: number;
}
/** Small on purpose: a gateway talks in a few conversations at a time, and idle memory counts. */
const CACHE_SESSIONS = 4;
const CACHE_CHARS = 1 << 20;
const caches = new WeakMap<Db, SessionCache>();
const dropAll = new Set<SessionCache>();
onRelease('session cache', () => {
  for (const c of dropAll) {
    c.entries.clear();
    c.chars = 0;
  }
});

function dataVersion(db: Db): number {
  return sql(db, 'pragma data_version').pluck().get() as number;
}

/** This connection's cache, emptied first when another connection has committed since it was filled. */
function cacheOf(db: Db): SessionCache {
  const version = dataVersion(db);
  let c = caches.get(db);
  if (!c) {
    const made: SessionCache = { dataVersion: version, entries: new Map(), chars: 0 };
    c = made;
    caches.set(db, made);
    dropAll.add(made);
    beforeClose(db, () => {
      dropAll.delete(made);
      caches.delete(db);
    });
  } else if (c.dataVersion !== version) {
    c.entries.clear();
    c.chars = 0;
    c.dataVersion = version;
  }
  return c;
}

function forget(db: Db, key: string): void {
  const c = caches.get(db);
  const old = c?.entries.get(key);
  if (!c || !old) return;
  c.entries.delete(key);
  c.chars -= old.json.length;
}

function remember(db: Db, key: string, entry: Cached): void {
  forget(db, key);
  const c = caches.get(db);
  if (!c || entry.json.length > CACHE_CHARS) return;
  c.entries.set(key, entry);
  c.chars += entry.json.length;
  // Map order is insertion order: the first entries are the least recently used.
  for (const [k, e] of c.entries) {
    if (c.entries.size <= CACHE_SESSIONS && c.chars <= CACHE_CHARS) break;
    c.entries.delete(k);
    c.chars -= e.json.length;
  }
}

export function loadSession(db: Db, key: string, now = Date.now()): Session {
  const c = cacheOf(db);
  const hit = c.entries.get(key);
  if (hit) {
    // Most recently used: moved to the end.
    c.entries.delete(key);
    c.entries.set(key, hit);
    return { key, messages: hit.messages.slice(), meta: parseMeta(hit.meta) };
  }
  const row = sql(db, 'select messages, meta from sessions where key = ?').get(key) as { messages: string; meta: string } | undefined;
  if (!row) return { key, messages: [], meta: {} };
  try {
    const messages: unknown = JSON.parse(row.messages);
    if (!Array.isArray(messages)) throw new Error('messages is not an array');
    const bad = messages.findIndex((m) => !isMessage(m));
    if (bad >= 0) throw new Error(`message ${bad} is malformed`);
    const meta = parseMeta(row.meta);
    // The next save appends to this text: kept as read when it ends with the array's bracket (as
    // every row pinclaw writes does), written out again when another program left space after it.
    remember(db, key, { messages: messages as Message[], json: row.messages.endsWith(']') ? row.messages : JSON.stringify(messages), meta: row.meta });
    return { key, messages: (messages as Message[]).slice(), meta };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    forget(db, key);
    db.transaction(() => {
      sql(db, 'insert into sessions_quarantine (key, messages, meta, error, moved_at) values (?, ?, ?, ?, ?)').run(key, row.messages, row.meta, error, now);
      sql(db, 'delete from sessions where key = ?').run(key);
    })();
    return { key, messages: [], meta: {}, recovered: error };
  }
}

function parseMeta(text: string): SessionMeta {
  const meta = JSON.parse(text) as SessionMeta;
  return meta && typeof meta === 'object' ? meta : {};
}

/** Images are bulky and were already seen by the model; a short note in their place keeps the turn readable. */
export function stripBinary(messages: readonly Message[]): Message[] {
  return messages.map((m) => ({
    role: m.role,
    content: m.content.map((b) => (b.type === 'image' ? { type: 'text' as const, text: b.note ? `[image removed from the history: ${b.note}]` : `[image ${b.mediaType} removed]` } : b)),
  }));
}

/**
 * The stored form of `messages` and its JSON. A conversation that continues the cached one (the same
 * message objects first, as a turn that loaded it has) only has its new messages written out.
 */
function storedForm(db: Db, key: string, messages: readonly Message[], meta: string): Cached {
  const prev = caches.get(db)?.entries.get(key);
  const n = prev?.messages.length ?? 0;
  if (prev && n > 0 && n <= messages.length && prev.messages.every((m, i) => messages[i] === m)) {
    if (n === messages.length) return { ...prev, meta };
    const added = stripBinary(messages.slice(n));
    return { messages: prev.messages.concat(added), json: `${prev.json.slice(0, -1)},${JSON.stringify(added).slice(1)}`, meta };
  }
  const stored = stripBinary(messages);
  return { messages: stored, json: JSON.stringify(stored), meta };
}

export function saveSession(db: Db, s: Session, now = Date.now()): void {
  const stored = storedForm(db, s.key, s.messages, JSON.stringify(s.meta));
  sql(db, 
    `insert into sessions (key, messages, meta, created_at, updated_at) values (?, ?, ?, ?, ?)
     on conflict (key) do update set messages = excluded.messages, meta = excluded.meta, updated_at = excluded.updated_at`,
  ).run(s.key, stored.json, stored.meta, now, now);
  // Cached once written. A transaction around the save that then rolls back leaves the cache ahead
  // of the table: the conductor writes such a reply again until it is stored (storeLater), and the
  // next turn continues the conversation the owner saw. The data_version is asked at loads only: a
  // commit by another connection since the last load empties the cache at the next one, this entry too.
  if (!caches.has(db)) cacheOf(db);
  remember(db, s.key, stored);
}

export function resetSession(db: Db, key: string): boolean {
  forget(db, key);
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
