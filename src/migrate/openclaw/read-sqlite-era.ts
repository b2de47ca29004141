// The OpenClaw home's databases (2026.8.1 and later): transcripts and auth profiles of each agent
// (agents/<id>/agent/openclaw-agent.sqlite), cron jobs and auth profiles of the shared state
// (state/openclaw.sqlite). Schema and assumptions: read-sqlite.ts.
import { existsSync } from 'node:fs';
import type { Db } from '../../store/db.js';
import { errorMessage } from '../../errors.js';
import { agentDbOf, stateDbOf } from './locate.js';
import { keysOfProfiles } from './read-files-era.js';
import { columnNames, openCopy, quoteId, tableNames } from './read-sqlite.js';
import { isObject, type SourceHome } from './source.js';
import { convertEvents } from './transcript.js';

function parse(text: unknown): unknown {
  if (typeof text !== 'string') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function readTranscripts(home: SourceHome, db: Db, file: string, agentId: string): void {
  const tables = tableNames(db);
  if (!tables.includes('transcript_events')) {
    home.notes.push(`${file}: no transcript_events table; no session history read from it`);
    return;
  }
  const hasWindows = tables.includes('session_windows');
  const ids = db.prepare('select session_id as id, max(created_at) as at from transcript_events group by session_id').all() as { id: string; at: number | null }[];
  const windows = hasWindows ? (db.prepare('select session_id as id, session_key as key, updated_at as at from session_windows').all() as { id: string; key: unknown; at: number | null }[]) : [];
  const updated = new Map(windows.map((r) => [r.id, r.at ?? 0]));
  const keys = new Map(windows.filter((r) => typeof r.key === 'string').map((r) => [r.id, r.key as string]));
  const rows = db.prepare('select event_json from transcript_events where session_id = ? order by seq');
  for (const { id, at } of ids) {
    let bad = 0;
    const events = (rows.all(id) as { event_json: unknown }[]).map((r) => {
      const v = parse(r.event_json);
      if (v === undefined) bad++;
      return v;
    });
    if (bad) home.problems.push(`${file}: session ${id}: ${bad} event${bad === 1 ? '' : 's'} of transcript_events.event_json are not JSON; skipped, the others read`);
    const c = convertEvents(events);
    home.sessions.push({ agentId, id, key: keys.get(id), updatedAt: Math.max(c.lastAt, Number(at) || 0, Number(updated.get(id)) || 0), messages: c.messages, skipped: c.skipped + bad, where: `${file} session ${id}` });
  }
}

function readAuthStore(home: SourceHome, db: Db, file: string): void {
  if (!tableNames(db).includes('auth_profile_store')) return;
  for (const row of db.prepare('select * from auth_profile_store').all() as Record<string, unknown>[]) {
    const json = Object.entries(row).find(([k]) => k.endsWith('_json'))?.[1];
    home.keys.push(...keysOfProfiles(parse(json), `${file} auth_profile_store`));
  }
}

/** Cron jobs in the state database (the assumption of read-sqlite.ts), else nothing. */
function readCronTable(home: SourceHome, db: Db, file: string): void {
  for (const table of tableNames(db).filter((t) => /cron/i.test(t) && !/run/i.test(t))) {
    const jsonCol = columnNames(db, table).find((c) => /_json$/.test(c) && /job|json/.test(c));
    if (!jsonCol) {
      home.notes.push(`${file}: table ${table} holds no *_json column of jobs this reader knows; its jobs are not brought (recreate them with pinclaw cron add)`);
      continue;
    }
    const rows = db.prepare(`select ${quoteId(jsonCol)} as j from ${quoteId(table)}`).all() as { j: unknown }[];
    rows.forEach((r, i) => {
      const job = parse(r.j);
      if (isObject(job)) home.jobs.push({ raw: job, where: `${file} ${table} row ${i + 1}` });
      else home.problems.push(`${file}: ${table} row ${i + 1}: ${jsonCol} is not a JSON object; skipped`);
    });
  }
}

function withDb(home: SourceHome, file: string, fn: (db: Db) => void): void {
  if (!existsSync(file)) return;
  let ro;
  try {
    ro = openCopy(file);
  } catch (err) {
    home.problems.push(errorMessage(err));
    return;
  }
  try {
    fn(ro.db);
  } catch (err) {
    home.problems.push(`${file}: ${errorMessage(err)}`);
  } finally {
    ro.close();
  }
}

export function readSqliteEra(home: SourceHome): void {
  for (const agentId of home.agentIds) {
    const file = agentDbOf(home.dir, agentId);
    withDb(home, file, (db) => {
      readTranscripts(home, db, file, agentId);
      readAuthStore(home, db, file);
    });
  }
  const state = stateDbOf(home.dir);
  withDb(home, state, (db) => {
    readCronTable(home, db, state);
    readAuthStore(home, db, state);
  });
}
