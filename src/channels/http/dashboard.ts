// The dashboard's static files: GET/HEAD / and /assets/<name>. They come from the single
// executable's assets (dashboard/<file>), else from a `dashboard` folder next to the running code:
// dist/dashboard next to the bundle (scripts/build.mjs copies it there), src/channels/http/dashboard
// under tsx. Each file is read once and kept: all of them together are a few tens of KiB.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isSea, seaTextAsset } from '../../native/sea.js';

/** The files, by name, with their content types; anything else is a 404. */
export const DASHBOARD_FILES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'markdown.js': 'text/javascript; charset=utf-8',
  'tabs.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  // The admin views (Home, Cron, Pairings, Logs, Config), modules app.js imports.
  'view-kit.js': 'text/javascript; charset=utf-8',
  'home.js': 'text/javascript; charset=utf-8',
  'admin.js': 'text/javascript; charset=utf-8',
  'views.css': 'text/css; charset=utf-8',
};

/** On every dashboard response, the 404s included: the page loads nothing from elsewhere and cannot be framed. */
export const DASHBOARD_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

interface Loaded {
  body: Buffer;
  etag: string;
}

const loaded = new Map<string, Loaded>();

function read(name: string): Buffer {
  if (isSea()) return Buffer.from(seaTextAsset(`dashboard/${name}`), 'utf8');
  return readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'dashboard', name));
}

function load(name: string): Loaded {
  let f = loaded.get(name);
  if (!f) {
    const body = read(name);
    f = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
    loaded.set(name, f);
  }
  return f;
}

/** The file a path names: / is the page, /assets/<name> the rest. */
function fileFor(path: string): string | undefined {
  if (path === '/') return 'index.html';
  if (!path.startsWith('/assets/')) return undefined;
  const name = path.slice('/assets/'.length);
  return name !== 'index.html' && Object.hasOwn(DASHBOARD_FILES, name) ? name : undefined;
}

export function isDashboardPath(path: string): boolean {
  return path === '/' || path.startsWith('/assets/');
}

function plain(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...DASHBOARD_HEADERS, 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text), ...extra });
  res.end(text);
}

/** Serves a path for which isDashboardPath is true. */
export function serveDashboard(req: IncomingMessage, res: ServerResponse, path: string): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'method not allowed\n', { allow: 'GET, HEAD' });
  const name = fileFor(path);
  if (!name) return plain(res, 404, 'not found\n');
  let f: Loaded;
  try {
    f = load(name);
  } catch {
    return plain(res, 500, `the dashboard file ${name} is missing from this build\n`);
  }
  // No hashed names: the browser asks again each time and gets a 304 while the file is the same.
  const headers = { ...DASHBOARD_HEADERS, 'content-type': DASHBOARD_FILES[name]!, 'cache-control': 'no-cache', etag: f.etag };
  const match = req.headers['if-none-match'];
  if (match !== undefined && match.split(',').some((t) => t.trim() === f.etag || t.trim() === '*')) {
    res.writeHead(304, headers);
    return void res.end();
  }
  res.writeHead(200, { ...headers, 'content-length': f.body.length });
  res.end(req.method === 'HEAD' ? undefined : f.body);
}
