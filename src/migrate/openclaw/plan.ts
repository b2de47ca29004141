// What the migration will do, worked out in full before anything is written: each item compared
// with what pinclaw already has, so that a second run finds everything "already here" and writes
// nothing, and nothing the owner set in pinclaw is replaced (a different value is kept and named).
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isStarterText, PROMPT_FILES } from '../../agent/workspace.js';
import { readConfigFile, validateConfig, formatIssues } from '../../config/index.js';
import { decryptSecret, isEncrypted, secretKey } from '../../config/secrets.js';
import type { Message } from '../../agent/types.js';
import { errorMessage } from '../../errors.js';
import type { Paths } from '../../paths.js';
import { mapConfig, type NotMapped } from './map-config.js';
import { mapJob, type JobRow } from './map-job.js';
import type { SourceHome } from './source.js';

/** The sessions brought: the most recent ones, the history rather than an archive. */
export const MAX_SESSIONS = 20;
/** The workspace files pinclaw reads (src/agent/workspace.ts, the heartbeat, the memory). */
const WORKSPACE_FILES = [...PROMPT_FILES, 'HEARTBEAT.md', 'MEMORY.md'];

export interface FileCopy {
  from: string;
  to: string;
  /** replaces pinclaw's untouched starter file */
  replacesStarter: boolean;
}

export interface Plan {
  /** the whole new config.json (raw), when it changes */
  config?: Record<string, unknown>;
  configSet: { key: string; shown: string; from: string }[];
  files: FileCopy[];
  skills: { name: string; from: string; to: string }[];
  jobs: { row: JobRow; label: string }[];
  sessions: { key: string; messages: Message[]; from: string; skipped: number }[];
  already: string[];
  notMapped: NotMapped[];
  problems: string[];
  notes: string[];
}

/** What the pinclaw side holds, as the plan asks it (a read-only view; see run.ts). */
export interface PinclawSide {
  paths: Paths;
  /** the stored messages (JSON) of a session, undefined when there is none */
  sessionMessages(key: string): string | undefined;
  jobExists(createdBy: string): boolean;
}

const setAt = (raw: Record<string, unknown>, key: string, value: unknown) => {
  const segs = key.split('.');
  let cur = raw;
  for (const s of segs.slice(0, -1)) {
    if (typeof cur[s] !== 'object' || cur[s] === null || Array.isArray(cur[s])) cur[s] = {};
    cur = cur[s] as Record<string, unknown>;
  }
  cur[segs[segs.length - 1]!] = value;
};
const getAt = (raw: Record<string, unknown>, key: string): unknown => key.split('.').reduce<unknown>((c, k) => (typeof c === 'object' && c !== null && !Array.isArray(c) ? (c as Record<string, unknown>)[k] : undefined), raw);

function planConfig(home: SourceHome, includeSecrets: boolean, side: PinclawSide, plan: Plan): void {
  const mapping = mapConfig(home, includeSecrets);
  plan.notMapped.push(...mapping.notMapped);
  if (!mapping.changes.length) return;
  const raw = readConfigFile(side.paths.config);
  let changed = false;
  let key: Buffer | undefined;
  for (const c of mapping.changes) {
    const have = getAt(raw, c.key);
    let current = have;
    if (c.secret && isEncrypted(have)) {
      try {
        key ??= secretKey(side.paths.secretKey, false);
        current = decryptSecret(have, key, c.key);
      } catch (err) {
        plan.notMapped.push({ what: c.from, why: `pinclaw's ${c.key} cannot be read to compare (${errorMessage(err)}); kept` });
        continue;
      }
    }
    const shown = c.secret ? '(secret)' : JSON.stringify(c.value);
    if (c.merge && Array.isArray(c.value)) {
      const before = Array.isArray(current) ? current.map(String) : [];
      const union = [...new Set([...before, ...c.value])];
      if (union.length === before.length) {
        plan.already.push(`${c.key} already holds ${shown}`);
        continue;
      }
      setAt(raw, c.key, union);
      plan.configSet.push({ key: c.key, shown: before.length ? `${JSON.stringify(union)} (added to yours)` : shown, from: c.from });
      changed = true;
      continue;
    }
    if (JSON.stringify(current) === JSON.stringify(c.value)) {
      plan.already.push(`${c.key} already ${c.secret ? 'holds that secret' : `= ${shown}`}`);
      continue;
    }
    if (current !== undefined && current !== '') {
      plan.notMapped.push({ what: `${c.from} → ${c.key}`, why: `pinclaw already has ${c.key}${c.secret ? ' (another value)' : ` = ${JSON.stringify(current)}`}; yours is kept` });
      continue;
    }
    setAt(raw, c.key, c.value);
    plan.configSet.push({ key: c.key, shown, from: c.from });
    changed = true;
  }
  if (!changed) return;
  const { errors } = validateConfig(raw);
  if (errors.length) {
    plan.problems.push(`the config this would write does not pass pinclaw's checks, so it is not written:\n${formatIssues(errors, side.paths.config)}`);
    plan.configSet = [];
    return;
  }
  plan.config = raw;
}

function sameBytes(a: string, b: string): boolean {
  try {
    return readFileSync(a).equals(readFileSync(b));
  } catch {
    return false;
  }
}

function planFile(from: string, to: string, rel: string, plan: Plan): void {
  if (!existsSync(to)) return void plan.files.push({ from, to, replacesStarter: false });
  if (sameBytes(from, to)) return void plan.already.push(`workspace/${rel} already the same`);
  let text = '';
  try {
    text = readFileSync(to, 'utf8');
  } catch {
    // unreadable: treated as the owner's
  }
  if (isStarterText(rel, text)) return void plan.files.push({ from, to, replacesStarter: true });
  plan.notMapped.push({ what: from, why: `pinclaw's workspace/${rel} has your own text; kept (merge by hand if you want both)` });
}

function planWorkspace(home: SourceHome, side: PinclawSide, plan: Plan): void {
  const ws = home.workspace;
  if (!existsSync(ws)) {
    plan.notes.push(`no OpenClaw workspace at ${ws}: no workspace files or skills brought from it`);
    return;
  }
  for (const name of WORKSPACE_FILES) {
    const from = join(ws, name);
    if (existsSync(from) && lstatSync(from).isFile()) planFile(from, join(side.paths.workspace, name), name, plan);
  }
  let top: string[] = [];
  try {
    top = readdirSync(ws).filter((n) => n.endsWith('.md') && !WORKSPACE_FILES.includes(n));
  } catch {
    // read above
  }
  for (const n of top) plan.notMapped.push({ what: join(ws, n), why: 'pinclaw does not read this workspace file' });
  const mem = join(ws, 'memory');
  let notes: string[] = [];
  try {
    notes = readdirSync(mem).filter((n) => n.endsWith('.md') && lstatSync(join(mem, n)).isFile()).sort();
  } catch {
    // no memory folder
  }
  for (const n of notes) planFile(join(mem, n), join(side.paths.workspace, 'memory', n), `memory/${n}`, plan);
}

/** A skill's files (relative path → bytes), symlinks left out; undefined when past the limits. */
export function skillFiles(dir: string): Map<string, Buffer> | undefined {
  const out = new Map<string, Buffer>();
  let bytes = 0;
  const walk = (d: string): boolean => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (!walk(p)) return false;
      } else if (e.isFile() && e.name !== '.disabled') {
        const buf = readFileSync(p);
        bytes += buf.length;
        out.set(relative(dir, p), buf);
        if (out.size > 1000 || bytes > 16 * 1024 * 1024) return false;
      }
    }
    return true;
  };
  return walk(dir) ? out : undefined;
}

function planSkills(home: SourceHome, side: PinclawSide, plan: Plan): void {
  const seen = new Set<string>();
  for (const root of [join(home.workspace, 'skills'), join(home.dir, 'skills')]) {
    let dirs: string[] = [];
    try {
      dirs = readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory() && !d.name.startsWith('.')).map((d) => d.name).sort();
    } catch {
      continue;
    }
    for (const name of dirs) {
      const from = join(root, name);
      if (!existsSync(join(from, 'SKILL.md'))) continue;
      if (seen.has(name)) {
        plan.notMapped.push({ what: from, why: `a skill named ${name} was already taken from the workspace` });
        continue;
      }
      seen.add(name);
      if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) {
        plan.notMapped.push({ what: from, why: 'its name is not one pinclaw takes for a skill folder (letters, digits, . _ -)' });
        continue;
      }
      const files = skillFiles(from);
      if (!files) {
        plan.notMapped.push({ what: from, why: 'more than 1000 files or 16 MiB: install it by hand (pinclaw skills install DIR)' });
        continue;
      }
      const to = join(side.paths.workspace, 'skills', name);
      if (existsSync(to)) {
        const mine = skillFiles(to);
        const same = mine !== undefined && mine.size === files.size && [...files].every(([p, b]) => mine.get(p)?.equals(b));
        if (same) plan.already.push(`skill ${name} already installed`);
        else plan.notMapped.push({ what: from, why: `pinclaw already has a skill ${name} with other files; kept` });
        continue;
      }
      plan.skills.push({ name, from, to });
    }
  }
}

async function planJobs(home: SourceHome, side: PinclawSide, tz: string, now: number, plan: Plan): Promise<void> {
  for (const job of home.jobs) {
    const m = await mapJob(job, tz, now);
    if ('why' in m) {
      plan.notMapped.push({ what: m.label, why: m.why });
      continue;
    }
    plan.notes.push(...m.notes);
    if (side.jobExists(m.row.created_by)) plan.already.push(`cron job ${m.label} already brought`);
    else plan.jobs.push({ row: m.row, label: m.label });
  }
}

/**
 * The pinclaw session a Telegram conversation continues in (src/channels/telegram/inbound.ts names
 * them telegram:<chat>), from OpenClaw's key for a direct or group chat of that channel. Other
 * channels and OpenClaw's shared "main" session are brought under their own ids.
 */
export function chatSessionOf(key: string | undefined): string | undefined {
  const m = key === undefined ? null : /^agent:[^:]+:telegram:(?:direct|dm|group):(-?\d+)$/.exec(key);
  return m ? `telegram:${m[1]}` : undefined;
}

function planSessions(home: SourceHome, side: PinclawSide, plan: Plan): void {
  const withText = home.sessions.filter((s) => s.messages.length > 0).sort((a, b) => b.updatedAt - a.updatedAt || a.id.localeCompare(b.id));
  const empty = home.sessions.length - withText.length;
  if (empty) plan.notes.push(`${empty} OpenClaw session${empty === 1 ? '' : 's'} without user or assistant text left out`);
  if (withText.length > MAX_SESSIONS) plan.notMapped.push({ what: `${withText.length - MAX_SESSIONS} older sessions`, why: `only the ${MAX_SESSIONS} most recent are brought; the rest stay in OpenClaw's home` });
  const chatsTaken = new Set<string>();
  for (const s of withText.slice(0, MAX_SESSIONS)) {
    const own = `openclaw:${s.agentId}:${s.id}`;
    const text = JSON.stringify(s.messages);
    // The chat's most recent session continues in pinclaw's session of that chat, unless pinclaw
    // already has a conversation there (then it is kept, and this one comes under its own id).
    const chat = chatSessionOf(s.key);
    let key = own;
    if (chat && !chatsTaken.has(chat)) {
      chatsTaken.add(chat);
      const there = side.sessionMessages(chat);
      if (there === undefined || there === text) key = chat;
      else plan.notes.push(`pinclaw already has a conversation in ${chat}: kept; OpenClaw's comes as ${own}`);
    }
    const stored = side.sessionMessages(key);
    if (stored === text) plan.already.push(`session ${key} already brought`);
    else if (stored !== undefined) plan.notMapped.push({ what: s.where, why: `pinclaw already has a session ${key} with other messages; kept` });
    else plan.sessions.push({ key, messages: s.messages, from: s.where, skipped: s.skipped });
  }
}

export async function makePlan(home: SourceHome, side: PinclawSide, opts: { includeSecrets: boolean; tz: string; now: number }): Promise<Plan> {
  const plan: Plan = { configSet: [], files: [], skills: [], jobs: [], sessions: [], already: [], notMapped: [], problems: [...home.problems], notes: [...home.notes] };
  planConfig(home, opts.includeSecrets, side, plan);
  planWorkspace(home, side, plan);
  planSkills(home, side, plan);
  await planJobs(home, side, opts.tz, opts.now, plan);
  planSessions(home, side, plan);
  return plan;
}

export const writes = (p: Plan) => (p.config ? 1 : 0) + p.files.length + p.skills.length + p.jobs.length + p.sessions.length;
