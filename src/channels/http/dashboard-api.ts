// What the dashboard reads besides chat and events: sessions, the audit log, status, the board, and
// memory search. Read-only; every route is GET. The admin views' routes (Home, Cron, Pairings,
// Logs, Config), which also change things, are the lazy chunk 'dashboard-admin' (./admin/routes.ts),
// loaded by the first request for one of them. What the gateway knows elsewhere (channels, the
// board, memory) comes in through DashboardSources, so this module depends on none of it.
import type { McpServerStatus } from '../../mcp/types.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Message } from '../../agent/types.js';
import type { AuditRow } from '../../store/audit.js';
import { queryAudit } from '../../store/audit.js';
import type { Db } from '../../store/db.js';
import { loadSession } from '../../store/sessions.js';
import { sql } from '../../store/statements.js';
import { pinclawVersion } from '../../version.js';
import { HttpError, readJson, sendJson, type ApiHandler } from './io.js';
import type { AdminSources } from './admin/sources.js';

/** One channel's connection as the channels report it (the shape of channels/status.ts's list). */
export interface ChannelState {
  channel: string;
  /** e.g. 'up', 'down', 'starting' */
  state: string;
  detail?: string;
  /** ISO time of the last change */
  since?: string;
}

/** What the dashboard shows that the store does not hold; the gateway connects them. */
export interface DashboardSources {
  /** when the gateway started, ms since the epoch */
  startedAt: number;
  channels?: () => ChannelState[];
  /** the MCP servers' states, when mcp.servers has an enabled one */
  mcp?: () => McpServerStatus[];
  /** the board and its GPIO state; absent on a machine without hardware */
  board?: () => Promise<unknown>;
  /** absent until memory lands: the route answers 501 */
  memorySearch?: (q: string, limit: number) => Promise<unknown[]>;
  /** the gateway's parts the admin views act on; without it their routes answer 501 */
  admin?: AdminSources;
}

/** The paths ./admin/routes.ts answers, here so the bundle can tell without loading it. */
const ADMIN_PREFIXES = ['/api/home', '/api/readings', '/api/cron', '/api/pairings', '/api/logs', '/api/config'];
const isAdminPath = (path: string) => ADMIN_PREFIXES.some((p) => path === p || path.startsWith(`${p}/`));

export interface DashboardMessage {
  role: 'user' | 'assistant';
  text: string;
  tools: { name: string; isError: boolean }[];
}

const PREVIEW_CHARS = 120;
const CELL_CHARS = 400;
const MAX_SESSIONS = 200;

const cap = (s: string | null, n = CELL_CHARS) => (s === null || s.length <= n ? s : `${s.slice(0, n)}…`);

function intParam(url: URL, name: string, fallback: number, max: number): number {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new HttpError(400, `${name}: expected a positive integer`);
  return Math.min(n, max);
}

function listSessionPreviews(db: Db) {
  // The preview is the last text block of the session, found by SQLite's JSON functions rather than
  // by parsing every session's messages here.
  const rows = sql(db, `select s.key, s.updated_at, json_array_length(s.messages) as n,
      (select json_extract(b.value, '$.text') from json_each(s.messages) m, json_each(m.value, '$.content') b
        where json_extract(b.value, '$.type') = 'text' order by m.key desc, b.key desc limit 1) as preview
    from sessions s order by s.updated_at desc limit ?`).all(MAX_SESSIONS) as { key: string; updated_at: number; n: number; preview: string | null }[];
  return rows.map((r) => ({ key: r.key, updatedAt: new Date(r.updated_at).toISOString(), messages: r.n, preview: cap(r.preview, PREVIEW_CHARS) }));
}

/** Messages as the dashboard shows them: text, and the tools called with their outcome; never image data. */
export function dashboardMessages(messages: readonly Message[]): DashboardMessage[] {
  const failed = new Set<string>();
  for (const m of messages) for (const b of m.content) if (b.type === 'tool_result' && b.isError) failed.add(b.toolUseId);
  const out: DashboardMessage[] = [];
  for (const m of messages) {
    const text = m.content.flatMap((b) => (b.type === 'text' ? [b.text] : b.type === 'image' ? ['[image]'] : [])).join('\n');
    const tools = m.content.flatMap((b) => (b.type === 'tool_use' ? [{ name: b.name, isError: failed.has(b.id) }] : []));
    // A message of tool results alone adds nothing its call did not show.
    if (text || tools.length) out.push({ role: m.role, text, tools });
  }
  return out;
}

function audit(db: Db, url: URL) {
  const limit = intParam(url, 'limit', 50, 500);
  const before = url.searchParams.has('before') ? intParam(url, 'before', 0, Number.MAX_SAFE_INTEGER) : undefined;
  const rows = (before === undefined
    ? queryAudit(db, { limit })
    : (sql(db, 'select * from (select * from audit where id < ? order by id desc limit ?) order by id').all(before, limit) as AuditRow[])
  ).reverse();
  return {
    rows: rows.map((r) => ({
      id: r.id,
      at: new Date(r.at).toISOString(),
      session: r.session_key,
      channel: r.channel,
      tool: r.tool,
      input: cap(r.input),
      outcome: r.outcome,
      rule: r.rule,
      detail: cap(r.detail),
      durationMs: r.duration_ms,
      physical: cap(r.physical),
    })),
    // The id to pass as `before` for the next, older page; null when this page reached the start.
    before: rows.length === limit ? rows.at(-1)!.id : null,
  };
}

function status(db: Db, s: DashboardSources) {
  const inbound = Object.fromEntries(['pending', 'processing', 'done', 'failed'].map((k) => [k, 0]));
  for (const r of sql(db, 'select state, count(*) as n from inbound group by state').all() as { state: string; n: number }[]) inbound[r.state] = r.n;
  const outbound = sql(db, `select channel, count(*) as n from outbound where state = 'pending' group by channel`).all() as { channel: string; n: number }[];
  return {
    version: pinclawVersion(),
    node: process.version,
    arch: process.arch,
    startedAt: new Date(s.startedAt).toISOString(),
    uptimeS: Math.round((Date.now() - s.startedAt) / 1000),
    rssBytes: process.memoryUsage.rss(),
    queue: { inbound, outboundPending: Object.fromEntries(outbound.map((r) => [r.channel, r.n])) },
    channels: s.channels?.() ?? null,
    mcp: s.mcp?.() ?? null,
  };
}

export function dashboardApi(db: Db, s: DashboardSources): ApiHandler {
  return async (req: IncomingMessage, res: ServerResponse, path: string) => {
    if (isAdminPath(path)) {
      if (!s.admin) {
        sendJson(res, 501, { error: 'this server has no admin views (only the gateway serves them)' });
        return true;
      }
      // The body is read here, so the chunk needs nothing of the server module; 64 KiB fits any form.
      const body = req.method === 'POST' ? await readJson(req, 65536) : undefined;
      const url = new URL(req.url ?? '/', 'http://localhost');
      const r = await (await import('./admin/routes.js')).adminRoute(db, s.admin, { method: req.method ?? 'GET', path, url, body });
      if (!r) return false;
      sendJson(res, r.status, r.body);
      return true;
    }
    if (req.method !== 'GET') return false;
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (path === '/api/sessions') {
      sendJson(res, 200, { sessions: listSessionPreviews(db) });
      return true;
    }
    if (path.startsWith('/api/sessions/')) {
      let key: string;
      try {
        key = decodeURIComponent(path.slice('/api/sessions/'.length));
      } catch {
        throw new HttpError(400, 'the session key is not valid percent-encoding');
      }
      if (!sql(db, 'select 1 from sessions where key = ?').get(key)) throw new HttpError(404, `no session ${key}`);
      const session = loadSession(db, key);
      sendJson(res, 200, { key, messages: dashboardMessages(session.messages), ...(session.recovered ? { recovered: session.recovered } : {}) });
      return true;
    }
    if (path === '/api/audit') {
      sendJson(res, 200, audit(db, url));
      return true;
    }
    if (path === '/api/status') {
      sendJson(res, 200, status(db, s));
      return true;
    }
    if (path === '/api/board') {
      sendJson(res, 200, s.board ? { board: await s.board() } : { board: null, reason: 'no hardware' });
      return true;
    }
    if (path === '/api/memory/search') {
      if (!s.memorySearch) {
        sendJson(res, 501, { error: 'memory search is not available in this build yet' });
        return true;
      }
      const q = url.searchParams.get('q')?.trim() ?? '';
      if (!q) throw new HttpError(400, 'q: expected a search text');
      sendJson(res, 200, { results: await s.memorySearch(q, intParam(url, 'limit', 10, 50)) });
      return true;
    }
    return false;
  };
}
