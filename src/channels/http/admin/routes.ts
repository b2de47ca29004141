// The routes of the dashboard's admin views, the entry of the lazy chunk 'dashboard-admin': a
// gateway nobody opens the dashboard of never loads this. dashboard-api.ts hands over every
// /api/home, /api/readings, /api/cron, /api/pairings, /api/logs and /api/config request, with a
// POST's body already read, and sends what this answers.
import type { Db } from '../../../store/db.js';
import { Refusal } from './refusal.js';
import { configSet, configView } from './config-api.js';
import { cronAct, cronCreate, cronJobs, cronRuns } from './cron-api.js';
import { home, readings, switchLine } from './home-api.js';
import { approve, pairings, revoke } from './pairings-api.js';
import type { AdminSources } from './sources.js';

function decoded(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new Refusal(400, `the ${what} in the path is not valid percent-encoding`);
  }
}

function jobId(part: string): number {
  const id = Number(part);
  if (!Number.isInteger(id) || id < 1) throw new Refusal(400, `job id: expected a positive integer, got '${part}'`);
  return id;
}

export interface AdminRequest {
  method: string;
  path: string;
  url: URL;
  /** a POST's JSON body */
  body: unknown;
}

/** The answer to one request, or undefined when no route matches (the caller answers 404). */
export async function adminRoute(db: Db, s: AdminSources, r: AdminRequest): Promise<{ status: number; body: unknown } | undefined> {
  try {
    const body = await answer(db, s, r);
    return body === NO_ROUTE ? undefined : { status: 200, body };
  } catch (err) {
    if (err instanceof Refusal) return { status: err.status, body: { error: err.message } };
    throw err;
  }
}

const NO_ROUTE = Symbol('no route');

async function answer(db: Db, s: AdminSources, { method, path, url, body }: AdminRequest): Promise<unknown> {
  const get = method === 'GET';
  const post = method === 'POST';
  const parts = path.split('/').slice(2); // ['home', ...]

  if (path === '/api/home' && get) return home(db, s);
  if (path === '/api/readings' && get) return readings(db, s, url);
  if (parts[0] === 'home' && parts[1] === 'lines' && parts.length === 3 && post) return switchLine(s, decoded(parts[2]!, 'line name'), body);

  if (path === '/api/cron' && get) return cronJobs(db);
  if (path === '/api/cron' && post) return cronCreate(db, s, body);
  if (parts[0] === 'cron' && parts.length === 3 && parts[2] === 'runs' && get) return cronRuns(db, jobId(parts[1]!));
  if (parts[0] === 'cron' && parts.length === 3 && post) return cronAct(db, s, jobId(parts[1]!), parts[2]!);

  if (path === '/api/pairings' && get) return pairings(db);
  if (path === '/api/pairings/approve' && post) return approve(db, body);
  if (path === '/api/pairings/revoke' && post) return revoke(db, body);

  if (path === '/api/logs' && get) {
    const after = Number(url.searchParams.get('after') ?? 0);
    const from = Number.isInteger(after) && after > 0 ? after : 0;
    return { lines: s.recentLog().filter((l) => l.seq > from) };
  }

  if (path === '/api/config' && get) return configView(s);
  if (path === '/api/config' && post) return configSet(s, body);
  return NO_ROUTE;
}
