// The OpenClaw home's files (up to 2026.7, and what 2026.8 still keeps in files): openclaw.json,
// agents/<id>/sessions/*.jsonl, cron/jobs.json, agents/<id>/agent/auth-profiles.json.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readJson5File } from './read-json5.js';
import { isObject, str, type SourceHome, type SourceKey } from './source.js';
import { convertEvents } from './transcript.js';

/** The cron store's format version this reader knows (CronStoreFile.version). */
const KNOWN_JOBS_VERSION = 1;

export function readConfig(home: SourceHome): void {
  const r = readJson5File(home.configFile);
  if (!r.ok) {
    home.problems.push(r.problem);
    return;
  }
  if (!isObject(r.value)) {
    home.problems.push(`${home.configFile}: expected an object at the top, found ${Array.isArray(r.value) ? 'a list' : typeof r.value}`);
    return;
  }
  home.config = r.value;
  // OpenClaw's $include splits a config over files; this reader takes openclaw.json alone.
  if (JSON.stringify(r.value).includes('"$include"')) home.notes.push(`${home.configFile}: uses $include; the included files are not read (what they set is not brought)`);
  const meta = r.value.meta;
  if (isObject(meta)) home.version = str(meta.lastTouchedVersion);
}

/** sessions.json: {"<session key>": {"sessionId", "updatedAt", ...}} → session id → key. */
function sessionIndex(home: SourceHome, file: string): Map<string, string> {
  const out = new Map<string, string>();
  try {
    statSync(file);
  } catch {
    return out;
  }
  const r = readJson5File(file);
  if (!r.ok) {
    home.notes.push(`${r.problem}; the sessions are brought under their own ids, not their chats`);
    return out;
  }
  if (!isObject(r.value)) return out;
  for (const [key, entry] of Object.entries(r.value)) {
    const id = isObject(entry) ? str(entry.sessionId) : undefined;
    if (id) out.set(id, key);
  }
  return out;
}

/** agents/<id>/sessions/*.jsonl: a line that does not parse is named and skipped, the rest read. */
export function readJsonlSessions(home: SourceHome): void {
  for (const agentId of home.agentIds) {
    const dir = join(home.dir, 'agents', agentId, 'sessions');
    let names: string[];
    try {
      names = readdirSync(dir).filter((n) => n.endsWith('.jsonl')).sort();
    } catch {
      continue;
    }
    const keys = sessionIndex(home, join(dir, 'sessions.json'));
    for (const name of names) {
      const file = join(dir, name);
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (err) {
        home.problems.push(`${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
        continue;
      }
      const lines = text.split('\n');
      const events: unknown[] = [];
      lines.forEach((line, i) => {
        if (line.trim() === '') return;
        try {
          events.push(JSON.parse(line));
        } catch {
          // The last line of a log being appended to when OpenClaw stopped is the usual cut: a note.
          // A bad line in the middle is a damaged file: a problem, though the rest is still read.
          const last = lines.slice(i + 1).every((l) => l.trim() === '');
          (last ? home.notes : home.problems).push(`${file}:${i + 1}: ${last ? 'the last line is cut off (OpenClaw stopped while writing it); read up to the line before' : 'not a JSON line; skipped, the other lines read'}`);
        }
      });
      const c = convertEvents(events);
      let mtime = 0;
      try {
        mtime = statSync(file).mtimeMs;
      } catch {
        // read above; a race is no reason to fail
      }
      const id = c.headerId ?? name.replace(/\.jsonl$/, '');
      home.sessions.push({ agentId, id, key: keys.get(id), updatedAt: c.lastAt || mtime, messages: c.messages, skipped: c.skipped, where: file });
    }
  }
}

export function readJobsFile(home: SourceHome): void {
  const file = join(home.dir, 'cron', 'jobs.json');
  try {
    statSync(file);
  } catch {
    return;
  }
  const r = readJson5File(file);
  if (!r.ok) {
    home.problems.push(r.problem);
    return;
  }
  // { version: 1, jobs: [...] }; a bare list is what some early stores held.
  const jobs = Array.isArray(r.value) ? r.value : isObject(r.value) ? r.value.jobs : undefined;
  if (!Array.isArray(jobs)) {
    home.problems.push(`${file}: expected {"version":1,"jobs":[...]}, found no jobs list`);
    return;
  }
  const version = isObject(r.value) ? r.value.version : undefined;
  if (typeof version === 'number' && version > KNOWN_JOBS_VERSION) {
    home.notes.push(`${file}: format version ${version} is newer than this reader knows (${KNOWN_JOBS_VERSION}); read the jobs it recognises`);
  }
  jobs.forEach((j, i) => {
    if (isObject(j)) home.jobs.push({ raw: j, where: `${file} jobs[${i}]` });
    else home.problems.push(`${file}: jobs[${i}] is not an object; skipped`);
  });
}

/** Keys of an auth-profile store: {"profiles": {"anthropic:default": {"provider", "key" | "token"}}}. */
export function keysOfProfiles(value: unknown, where: string): SourceKey[] {
  const profiles = isObject(value) ? value.profiles : undefined;
  if (!isObject(profiles)) return [];
  const out: SourceKey[] = [];
  for (const [id, p] of Object.entries(profiles)) {
    if (!isObject(p)) continue;
    const provider = str(p.provider) ?? id.split(':')[0]!;
    const key = str(p.key) ?? str(p.apiKey) ?? (p.type === 'token' ? str(p.token) : undefined);
    if (key) out.push({ provider, key, where: `${where} profiles.${id}` });
  }
  return out;
}

export function readAuthProfileFiles(home: SourceHome): void {
  for (const agentId of home.agentIds) {
    const file = join(home.dir, 'agents', agentId, 'agent', 'auth-profiles.json');
    try {
      statSync(file);
    } catch {
      continue;
    }
    const r = readJson5File(file);
    if (!r.ok) home.problems.push(r.problem);
    else home.keys.push(...keysOfProfiles(r.value, file));
  }
}
