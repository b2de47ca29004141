// Fabricated OpenClaw homes of both eras for the migration's tests: the layout and formats OpenClaw
// writes (docs/migrate.md names the sources): a JSON5 openclaw.json with comments and trailing
// commas, the workspace, skills, cron/jobs.json ({version: 1, jobs}), pi-format transcripts as
// agents/<id>/sessions/*.jsonl (files era) or rows of transcript_events in a real SQLite
// agents/<id>/agent/openclaw-agent.sqlite (SQLite era, 2026.8.1+), auth profiles.
import Database from 'better-sqlite3';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadAddon } from '../../src/native/loader.js';

export const BOT_TOKEN = '123456:AAFakeTelegramTokenForTests';
export const ANTHROPIC_KEY = 'sk-ant-fake-migration-key';
export const FUTURE_CRON = '0 7 * * *';

function put(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

export function openClawConfigText(version = '2026.7.2'): string {
  return `// OpenClaw config, JSON5 as the owner edits it
{
  meta: { lastTouchedVersion: "${version}", },
  agents: {
    defaults: {
      model: { primary: "anthropic/claude-opus-4-6", fallbacks: ["openrouter/meta-llama/llama-4", "google/gemini-3-pro",], },
      userTimezone: "Europe/Berlin",
    },
  },
  /* channels pinclaw has, and one it has not */
  channels: {
    telegram: { botToken: "${BOT_TOKEN}", allowFrom: [123456789, "tg:987654321", "*"], dmPolicy: "allowlist", },
    signal: { account: "+4915112345678", httpUrl: "http://127.0.0.1:8080", allowFrom: ["+4915199999999"], },
    discord: { token: "\${DISCORD_BOT_TOKEN}", dm: { allowFrom: ["80351110224678912", "someone#1234"] }, },
    whatsapp: { allowFrom: ["+4915100000000"] },
  },
  auth: { profiles: { "anthropic:default": { provider: "anthropic", mode: "api_key" } } },
}
`;
}

const session = (id: string, at: string) => JSON.stringify({ type: 'session', version: 3, id, timestamp: at, cwd: '/home/owner/.openclaw/workspace' });
const msg = (id: string, role: string, content: unknown, at: string) => JSON.stringify({ type: 'message', id, parentId: null, timestamp: at, message: { role, content, timestamp: Date.parse(at) } });

/** A transcript's lines: a header, a model change, user and assistant text, a tool call and result. */
export function transcriptLines(id: string, words: string): string[] {
  return [
    session(id, '2026-07-01T10:00:00.000Z'),
    JSON.stringify({ type: 'model_change', id: 'm1', parentId: null, timestamp: '2026-07-01T10:00:00.010Z', provider: 'anthropic', modelId: 'claude-opus-4-6' }),
    msg('a1', 'user', [{ type: 'text', text: `hello ${words}` }], '2026-07-01T10:00:01.000Z'),
    msg('a2', 'assistant', [{ type: 'thinking', thinking: 'hm' }, { type: 'text', text: `hi, ${words}` }, { type: 'toolCall', id: 'c1', name: 'read', arguments: {} }], '2026-07-01T10:00:02.000Z'),
    msg('a3', 'toolResult', [{ type: 'text', text: 'file body' }], '2026-07-01T10:00:03.000Z'),
    msg('a4', 'assistant', 'that file says hello', '2026-07-01T10:00:04.000Z'),
    msg('a5', 'user', 'thanks', '2026-07-01T10:00:05.000Z'),
  ];
}

function jobsJson(): string {
  return `{
  version: 1,
  jobs: [
    { id: "job-morning", name: "Morning brief", enabled: true, createdAtMs: 1, updatedAtMs: 1,
      schedule: { kind: "cron", expr: "${FUTURE_CRON}", tz: "Europe/Berlin" }, sessionTarget: "isolated", wakeMode: "now",
      payload: { kind: "agentTurn", message: "Summarize the night." },
      delivery: { mode: "announce", channel: "telegram", to: "123456789" }, state: {} },
    { id: "job-water", name: "Water plants", enabled: false, createdAtMs: 1, updatedAtMs: 1,
      schedule: { kind: "every", everyMs: 7200000 }, sessionTarget: "main", wakeMode: "next-heartbeat",
      payload: { kind: "systemEvent", text: "Check the soil sensor." }, state: {} },
    { id: "job-old", name: "Long gone", enabled: true, createdAtMs: 1, updatedAtMs: 1,
      schedule: { kind: "at", at: "2020-01-01T00:00:00Z" }, sessionTarget: "isolated", wakeMode: "now",
      payload: { kind: "agentTurn", message: "too late" }, state: {} },
  ],
}
`;
}

function workspace(dir: string): void {
  const ws = join(dir, 'workspace');
  put(join(ws, 'AGENTS.md'), '# OpenClaw agents file\nBe brief.\n');
  put(join(ws, 'SOUL.md'), '# Soul\nCurious.\n');
  put(join(ws, 'USER.md'), '# User\nName: Ada\n');
  put(join(ws, 'IDENTITY.md'), '# Identity\nName: Clawd\n');
  put(join(ws, 'TOOLS.md'), '# Tools\nRelay on GPIO 17.\n');
  put(join(ws, 'HEARTBEAT.md'), '# Heartbeat\n- check the greenhouse\n');
  put(join(ws, 'MEMORY.md'), '# Memory\nAda likes tea.\n');
  put(join(ws, 'BOOTSTRAP.md'), '# first run\n');
  put(join(ws, 'memory', '2026-07-01.md'), 'Watered the plants.\n');
  put(join(ws, 'skills', 'weather', 'SKILL.md'), '---\nname: weather\ndescription: the weather\n---\nAsk wttr.in.\n');
  put(join(ws, 'skills', 'weather', 'scripts', 'get.sh'), '#!/bin/sh\ncurl wttr.in\n');
  put(join(dir, 'skills', 'notes', 'SKILL.md'), '---\nname: notes\ndescription: notes\n---\nKeep notes.\n');
}

function authProfiles(): string {
  return JSON.stringify({ version: 1, profiles: { 'anthropic:default': { type: 'api_key', provider: 'anthropic', key: ANTHROPIC_KEY } } });
}

/** OpenClaw up to 2026.7: everything in files. */
export function filesEraHome(dir: string, opts: { version?: string } = {}): string {
  put(join(dir, 'openclaw.json'), openClawConfigText(opts.version));
  workspace(dir);
  put(join(dir, 'cron', 'jobs.json'), jobsJson());
  put(join(dir, 'agents', 'main', 'agent', 'auth-profiles.json'), authProfiles());
  // The session store: the Telegram DM's current session, and the shared main one.
  put(join(dir, 'agents', 'main', 'sessions', 'sessions.json'), JSON.stringify({ 'agent:main:telegram:direct:123456789': { sessionId: 's-two', updatedAt: 1 }, 'agent:main:main': { sessionId: 's-one', updatedAt: 1 } }));
  put(join(dir, 'agents', 'main', 'sessions', 's-one.jsonl'), transcriptLines('s-one', 'one').join('\n') + '\n');
  put(join(dir, 'agents', 'main', 'sessions', 's-two.jsonl'), transcriptLines('s-two', 'two').join('\n') + '\n');
  return dir;
}

export function openSqlite(file: string): Database.Database {
  mkdirSync(dirname(file), { recursive: true });
  return new Database(file, { nativeBinding: loadAddon<object>('better_sqlite3') as never });
}

/**
 * OpenClaw 2026.8.1 and later: transcripts and auth profiles in the agent's database, shared state
 * in state/openclaw.sqlite (its cron table is this reader's assumption, see read-sqlite.ts), the
 * config and the workspace still files. `wal`: left in WAL mode with a commit not yet checkpointed.
 */
export function sqliteEraHome(dir: string, opts: { wal?: boolean } = {}): string {
  put(join(dir, 'openclaw.json'), openClawConfigText('2026.8.3'));
  workspace(dir);
  const agent = openSqlite(join(dir, 'agents', 'main', 'agent', 'openclaw-agent.sqlite'));
  if (opts.wal) agent.pragma('journal_mode = WAL');
  agent.exec(`
    create table session_windows (session_id text not null primary key, session_key text not null, previous_session_id text, reason text, session_scope text not null default 'conversation', created_at integer not null, updated_at integer not null) strict;
    create table transcript_events (session_id text not null, seq integer not null, event_json text not null, created_at integer not null, primary key (session_id, seq)) strict;
    create table auth_profile_store (store_key text primary key, store_json text not null);
  `);
  const t0 = Date.parse('2026-08-10T09:00:00Z');
  const win = agent.prepare('insert into session_windows (session_id, session_key, reason, created_at, updated_at) values (?, ?, ?, ?, ?)');
  const ev = agent.prepare('insert into transcript_events (session_id, seq, event_json, created_at) values (?, ?, ?, ?)');
  for (const id of ['db-one', 'db-two']) {
    win.run(id, id === 'db-two' ? 'agent:main:telegram:direct:123456789' : 'agent:main:main', 'initial', t0, t0 + 5000);
    transcriptLines(id, id).forEach((line, i) => ev.run(id, i, line, t0 + i));
  }
  agent.prepare('insert into auth_profile_store (store_key, store_json) values (?, ?)').run('primary', authProfiles());
  const state = openSqlite(join(dir, 'state', 'openclaw.sqlite'));
  state.exec(`create table cron_jobs (job_id text primary key, job_json text not null, updated_at integer not null)`);
  state.prepare('insert into cron_jobs values (?, ?, ?)').run('job-db', JSON.stringify({ id: 'job-db', name: 'From the database', enabled: true, schedule: { kind: 'cron', expr: '30 6 * * 1' }, payload: { kind: 'agentTurn', message: 'Weekly review.' }, state: {} }), t0);
  state.close();
  if (opts.wal) {
    // A commit that is only in the -wal: the reader must see it without checkpointing the original.
    agent.pragma('wal_autocheckpoint = 0');
    ev.run('db-two', 99, msg('late', 'user', 'one more thing', '2026-08-10T09:10:00.000Z'), t0 + 99);
    // Kept open by the caller's process end; closing would checkpoint. The handle is returned below.
    openHandles.push(agent);
  } else agent.close();
  return dir;
}

/** Connections left open on purpose (a running OpenClaw); the test closes them. */
export const openHandles: Database.Database[] = [];
