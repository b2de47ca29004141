// What the migration read from an OpenClaw home, whatever its era: the one shape the mapping
// (map.ts) works from, so the readers of the two eras (read-files.ts, read-sqlite.ts) only have to
// fill it in, and a file they could not read becomes a problem that names it instead of a stop.
import type { Message } from '../../agent/types.js';

/** One conversation of OpenClaw's, already in pinclaw's message format. */
export interface SourceSession {
  agentId: string;
  /** OpenClaw's session id (the transcript's name, or session_windows.session_id) */
  id: string;
  /** OpenClaw's session key (agent:<id>:telegram:direct:<chat>, agent:<id>:main...), when known */
  key?: string;
  /** ms epoch of its last event; the most recent sessions are the ones brought */
  updatedAt: number;
  messages: Message[];
  /** events that are not user or assistant text (tool calls and results, model changes...) */
  skipped: number;
  /** the transcript file, or the database and session id */
  where: string;
}

/** A cron job as OpenClaw stores it (src/cron/types.ts of openclaw: CronJob), read loosely. */
export interface SourceJob {
  raw: Record<string, unknown>;
  where: string;
}

/** An API key OpenClaw holds for a provider (auth profiles, models.providers.*.apiKey, env). */
export interface SourceKey {
  provider: string;
  key: string;
  where: string;
}

export interface SourceHome {
  dir: string;
  /** files: up to 2026.7; sqlite: 2026.8.1 and later (state/openclaw.sqlite or an agent database) */
  era: 'files' | 'sqlite';
  /** meta.lastTouchedVersion of openclaw.json, when it says */
  version?: string;
  /** openclaw.json, parsed (JSON5); undefined when missing or unreadable */
  config?: Record<string, unknown>;
  configFile: string;
  /** the agent workspace: agents.defaults.workspace, else DIR/workspace */
  workspace: string;
  agentIds: string[];
  sessions: SourceSession[];
  jobs: SourceJob[];
  keys: SourceKey[];
  /** files that could not be read: "FILE:LINE: why" */
  problems: string[];
  /** what the owner should know about the reading (a version newer than known, a cut last line) */
  notes: string[];
}

export { isObject } from '../../is-object.js';
export const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
