// Reads a whole OpenClaw home into a SourceHome: the files every era has, then the databases of the
// SQLite era. Nothing here writes anywhere but a temporary directory (read-sqlite.ts).
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { agentIdsOf, eraOf } from './locate.js';
import { readAuthProfileFiles, readConfig, readJobsFile, readJsonlSessions } from './read-files-era.js';
import { readSqliteEra } from './read-sqlite-era.js';
import { isObject, str, type SourceHome } from './source.js';

/** The newest OpenClaw this reader was written against (meta.lastTouchedVersion, YYYY.M.D). */
export const KNOWN_VERSION = '2026.9';

/** a newer than b, compared as dotted numbers ("2026.10.1" > "2026.9") */
export function newerThan(a: string, b: string): boolean {
  const x = a.split(/[.-]/).map((n) => Number.parseInt(n, 10));
  const y = b.split(/[.-]/).map((n) => Number.parseInt(n, 10));
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (!Number.isFinite(x[i]) || !Number.isFinite(y[i])) return false;
    if (x[i]! !== y[i]!) return x[i]! > y[i]!;
  }
  return false;
}

function workspaceOf(home: SourceHome, env: NodeJS.ProcessEnv): string {
  const agents = home.config?.agents;
  const configured = isObject(agents) && isObject(agents.defaults) ? str(agents.defaults.workspace) : undefined;
  if (!configured) return join(home.dir, 'workspace');
  const expanded = configured.startsWith('~/') ? join(env.HOME ?? homedir(), configured.slice(2)) : configured;
  return isAbsolute(expanded) ? expanded : resolve(home.dir, expanded);
}

export function readHome(dir: string, env: NodeJS.ProcessEnv): SourceHome {
  const agentIds = agentIdsOf(dir);
  const home: SourceHome = {
    dir, era: eraOf(dir, agentIds), configFile: join(dir, 'openclaw.json'), workspace: join(dir, 'workspace'),
    agentIds, sessions: [], jobs: [], keys: [], problems: [], notes: [],
  };
  readConfig(home);
  home.workspace = workspaceOf(home, env);
  if (home.version && newerThan(home.version, KNOWN_VERSION)) {
    home.notes.push(`${home.configFile}: written by OpenClaw ${home.version}, newer than this reader knows (${KNOWN_VERSION}); what it recognises is read, the rest is listed as not mapped`);
  }
  readAuthProfileFiles(home);
  readJobsFile(home);
  readJsonlSessions(home);
  if (home.era === 'sqlite') {
    const fromFiles = new Set(home.sessions.map((s) => `${s.agentId}/${s.id}`));
    const before = home.sessions.length;
    readSqliteEra(home);
    // A session both imported into the database and left as a legacy .jsonl: the database's wins.
    const fromDb = new Set(home.sessions.slice(before).map((s) => `${s.agentId}/${s.id}`));
    home.sessions = home.sessions.filter((s, i) => i >= before || !fromDb.has(`${s.agentId}/${s.id}`) || !fromFiles.has(`${s.agentId}/${s.id}`));
  }
  return home;
}
