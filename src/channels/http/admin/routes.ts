// The routes of the dashboard's admin views, the entry of the lazy chunk 'dashboard-admin': a
// gateway nobody opens the dashboard of never loads this. dashboard-api.ts hands over every
// /api/home, /api/readings, /api/cron, /api/pairings, /api/logs and /api/config request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Db } from '../../../store/db.js';
import { HttpError, readJson, sendJson } from '../server.js';
import { configSet, configView } from './config-api.js';
import { cronAct, cronCreate, cronJobs, cronRuns } from './cron-api.js';
import { home, readings, switchLine } from './home-api.js';
import { approve, pairings, revoke } from './pairings-api.js';
import type { AdminSources } from './sources.js';

function decoded(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new HttpError(400, `the ${what} in the path is not valid percent-encoding`);
  }
}

function jobId(part: string): number {
  const id = Number(part);
  if (!Number.isInteger(id) || id < 1) throw new HttpError(400, `job id: expected a positive integer, got '${part}'`);
  return id;
}

/** Answers one request; false when no route matches (the caller answers 404). */
export async function adminRoute(db: Db, s: AdminSources, req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const get = req.method === 'GET';
  const post = req.method === 'POST';
  const reply = async (body: unknown | Promise<unknown>) => (sendJson(res, 200, await body), true);
  const parts = path.split('/').slice(2); // ['home', ...]

  if (path === '/api/home' && get) return reply(home(db, s));
  if (path === '/api/readings' && get) return reply(readings(db, s, url));
  if (parts[0] === 'home' && parts[1] === 'lines' && parts.length === 3 && post) return reply(switchLine(s, decoded(parts[2]!, 'line name'), await readJson(req, 4096)));

  if (path === '/api/cron' && get) return reply(cronJobs(db));
  if (path === '/api/cron' && post) return reply(cronCreate(db, s, await readJson(req, 16384)));
  if (parts[0] === 'cron' && parts.length === 3 && parts[2] === 'runs' && get) return reply(cronRuns(db, jobId(parts[1]!)));
  if (parts[0] === 'cron' && parts.length === 3 && post) return reply(cronAct(db, s, jobId(parts[1]!), parts[2]!));

  if (path === '/api/pairings' && get) return reply(pairings(db));
  if (path === '/api/pairings/approve' && post) return reply(approve(db, await readJson(req, 4096)));
  if (path === '/api/pairings/revoke' && post) return reply(revoke(db, await readJson(req, 4096)));

  if (path === '/api/logs' && get) {
    const after = Number(url.searchParams.get('after') ?? 0);
    const from = Number.isInteger(after) && after > 0 ? after : 0;
    return reply({ lines: s.recentLog().filter((l) => l.seq > from) });
  }

  if (path === '/api/config' && get) return reply(configView(s));
  if (path === '/api/config' && post) return reply(configSet(s, await readJson(req, 65536)));
  return false;
}
