// Where the OpenClaw home is: --from, else $OPENCLAW_STATE_DIR (OpenClaw's own override), else
// ~/.openclaw; and which era it is of.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { PinclawError } from '../../errors.js';

export function locateHome(from: string | undefined, env: NodeJS.ProcessEnv): string {
  const dir = resolve(from ?? (env.OPENCLAW_STATE_DIR?.trim() || join(env.HOME ?? homedir(), '.openclaw')));
  const how = from !== undefined ? '--from' : env.OPENCLAW_STATE_DIR?.trim() ? 'OPENCLAW_STATE_DIR' : 'the default';
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    // missing: said below
  }
  if (!isDir) throw new PinclawError(`no OpenClaw home at ${dir} (${how}): give its place with --from DIR`);
  if (!['openclaw.json', 'agents', 'workspace', 'state', 'cron'].some((n) => existsSync(join(dir, n)))) {
    throw new PinclawError(`${dir} does not look like an OpenClaw home (none of openclaw.json, agents/, workspace/, state/, cron/ is there): give its place with --from DIR`);
  }
  return dir;
}

/** The agents of the home: the directories under agents/ (OpenClaw's default one is "main"). */
export function agentIdsOf(dir: string): string[] {
  try {
    return readdirSync(join(dir, 'agents'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  } catch {
    return [];
  }
}

export const stateDbOf = (dir: string) => join(dir, 'state', 'openclaw.sqlite');
export const agentDbOf = (dir: string, agentId: string) => join(dir, 'agents', agentId, 'agent', 'openclaw-agent.sqlite');

/** sqlite from 2026.8.1: its databases are there; files before. */
export function eraOf(dir: string, agentIds: readonly string[]): 'files' | 'sqlite' {
  return existsSync(stateDbOf(dir)) || agentIds.some((id) => existsSync(agentDbOf(dir, id))) ? 'sqlite' : 'files';
}
