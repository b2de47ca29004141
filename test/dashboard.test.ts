// The dashboard, for real: the gateway process (the bundle) serving the page and its login over
// HTTP, then the page itself in Chromium (headless) against a gateway whose provider is the
// Anthropic stand-in: log in, chat with a streamed reply, answer a confirmation, and read the
// events, the session, the audit log, memory search and health, on a desktop and a phone screen.
import t, { type Test } from 'tap';
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DASHBOARD_FILES } from '../src/channels/http/dashboard.js';
import { startHttpServer } from '../src/channels/http/server.js';
import { openDatabase } from '../src/store/db.js';
import { approvePairing } from '../src/store/pairing.js';
import { createWebSession, useWebSession, WEB_SESSION_TTL_MS } from '../src/store/web-sessions.js';
import { startAnthropicServer, textReply, toolUseReply } from './support/anthropic-server.js';
import { bundle, cleanEnv, root, run, seaX64, start, tempDir } from './support/proc.js';

const TOKEN = 'tok-dashboard-1234';
const CHROMIUM = '/usr/bin/chromium';
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

async function gateway(t: Test, config: Record<string, unknown> = {}) {
  const srv = await startAnthropicServer(textReply('unused'));
  t.teardown(() => srv.close());
  const home = tempDir();
  mkdirSync(join(home, 'workspace'), { recursive: true });
  // Keyword-only memory keeps these tests independent of the embedder (test/memory*.test.ts cover those).
  writeFileSync(join(home, 'workspace', 'MEMORY.md'), '# Household\n\nLunch is at noon on Sundays.\n');
  writeFileSync(join(home, 'config.json'), JSON.stringify({ gateway: { token: TOKEN }, memory: { embedder: 'none' }, ...config }));
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: srv.url }) });
  const url = (await gw.waitFor(/listening on (http:\/\/\S+)/))[1]!;
  t.teardown(async () => {
    gw.child.kill('SIGTERM');
    await gw.exited;
  });
  return { srv, home, url, gw };
}

/** The value of the session cookie a response sets, with its attributes. */
function setCookie(res: Response): { value: string; attrs: string } | undefined {
  const line = res.headers.getSetCookie().find((c) => c.startsWith('pinclaw_session='));
  if (!line) return undefined;
  const [pair, ...attrs] = line.split(';');
  return { value: pair!.slice('pinclaw_session='.length), attrs: attrs.map((a) => a.trim()).join('; ') };
}

function checkSecurityHeaders(t: Test, res: Response, what: string) {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) t.equal(res.headers.get(name), value, `${what}: ${name}`);
  const cors = [...res.headers.keys()].filter((k) => k.startsWith('access-control-'));
  t.same(cors, [], `${what}: no CORS header`);
}

t.test('the page and its assets: security headers, content types, ETag, small', async (t) => {
  const { url } = await gateway(t);
  const page = await fetch(`${url}/`);
  t.equal(page.status, 200);
  t.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
  checkSecurityHeaders(t, page, '/');
  const html = await page.text();
  t.match(html, '<script type="module" src="/assets/app.js"></script>');
  t.notMatch(html, /https?:\/\//, 'nothing is loaded from elsewhere');
  const etag = page.headers.get('etag')!;
  t.match(etag, /^"[\w-]+"$/);
  const again = await fetch(`${url}/`, { headers: { 'if-none-match': etag } });
  t.equal(again.status, 304, 'an unchanged page is a 304');
  t.equal(await again.text(), '');
  checkSecurityHeaders(t, again, '304');

  let total = Buffer.byteLength(html);
  for (const [name, type] of Object.entries(DASHBOARD_FILES).filter(([n]) => n !== 'index.html')) {
    const res = await fetch(`${url}/assets/${name}`);
    t.equal(res.status, 200, name);
    t.equal(res.headers.get('content-type'), type, `${name}: content type`);
    checkSecurityHeaders(t, res, name);
    total += (await res.arrayBuffer()).byteLength;
  }
  t.ok(total < 96 * 1024, `the dashboard is ${total} bytes, under 96 KiB`);
  for (const name of Object.keys(DASHBOARD_FILES).filter((n) => n.endsWith('.js'))) {
    const js = await (await fetch(`${url}/assets/${name}`)).text();
    t.notMatch(js, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser|createContextualFragment/, `${name}: server text is never parsed as HTML`);
  }

  const head = await fetch(`${url}/`, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(await head.text(), '');
  const missing = await fetch(`${url}/assets/../../package.json`);
  t.equal(missing.status, 404);
  const missing2 = await fetch(`${url}/assets/secret.key`);
  t.equal(missing2.status, 404);
  checkSecurityHeaders(t, missing2, '404');
  t.equal((await fetch(`${url}/`, { method: 'POST' })).status, 405);
});

t.test('/api without auth is a 401 with no data; CORS stays closed', async (t) => {
  const { url } = await gateway(t);
  for (const path of ['/api/status', '/api/sessions', '/api/sessions/dashboard', '/api/audit', '/api/board', '/api/memory/search?q=x', '/api/events', '/metrics']) {
    const res = await fetch(`${url}${path}`);
    t.equal(res.status, 401, path);
    t.same(Object.keys((await res.json()) as object), ['error'], `${path}: nothing but the error`);
  }
  const bogus = await fetch(`${url}/api/status`, { headers: { cookie: 'pinclaw_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' } });
  t.equal(bogus.status, 401, 'a made-up cookie is refused');
  const preflight = await fetch(`${url}/api/chat`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
  t.same([...preflight.headers.keys()].filter((k) => k.startsWith('access-control-')), [], 'a preflight gets no CORS header');
  await preflight.arrayBuffer();
});

t.test('login by token: the cookie, and what it opens', async (t) => {
  const { url } = await gateway(t);
  const login = (token: string, headers: Record<string, string> = {}) => fetch(`${url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ token }) });

  const wrong = await login('not-the-token');
  t.equal(wrong.status, 401);
  t.same(await wrong.json(), { error: 'wrong token' });
  t.notOk(setCookie(wrong), 'no cookie for a wrong token');
  t.equal((await login(TOKEN, { origin: 'https://evil.example' })).status, 403, 'a login posted from another site is refused');

  const ok = await login(TOKEN, { origin: url });
  t.equal(ok.status, 204);
  const c = setCookie(ok)!;
  t.match(c.value, /^[\w-]{43}$/, '32 random bytes, base64url');
  t.equal(c.attrs, 'HttpOnly; SameSite=Strict; Path=/; Max-Age=2592000', 'HttpOnly, SameSite=Strict, 30 days; no Secure over http');
  const secure = setCookie(await login(TOKEN, { 'x-forwarded-proto': 'https' }))!;
  t.match(secure.attrs, /; Secure$/, 'Secure behind an https proxy');

  const cookie = { cookie: `pinclaw_session=${c.value}` };
  const status = await fetch(`${url}/api/status`, { headers: cookie });
  t.equal(status.status, 200);
  const body = (await status.json()) as { version: string; uptimeS: number; queue: { inbound: Record<string, number> }; channels: { channel: string; state: string }[] };
  t.match(body, { version: /^\d+\.\d+\.\d+/, uptimeS: Number, queue: { inbound: { pending: 0, processing: 0, done: 0, failed: 0 }, outboundPending: {} } });
  t.match(body.channels, [{ channel: 'http', state: 'up' }], 'the channels with their state');
  t.equal((await fetch(`${url}/auth/me`, { headers: cookie })).status, 200);
  t.equal((await fetch(`${url}/auth/me`)).status, 401);
  t.equal((await fetch(`${url}/metrics`, { headers: cookie })).status, 200, '/metrics takes the cookie too');

  // A POST on the cookie must come from the gateway's own page.
  const confirm = (headers: Record<string, string>) => fetch(`${url}/api/confirm`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ id: 'x', allow: 'yes' }) });
  const noOrigin = await confirm(cookie);
  t.equal(noOrigin.status, 403, 'cookie POST without Origin');
  t.same(await noOrigin.json(), { error: 'cross-origin request refused' });
  t.equal((await confirm({ ...cookie, origin: 'https://evil.example' })).status, 403, 'cookie POST from another origin');
  t.equal((await confirm({ ...cookie, origin: url.replace('127.0.0.1', 'localhost') })).status, 403, 'another host is another origin');
  t.equal((await confirm({ ...cookie, origin: url })).status, 400, 'from its own origin it reaches the route (which refuses the body)');
  t.equal((await confirm({ ...cookie, origin: 'https://pi.example', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'pi.example' })).status, 400, 'behind a proxy, the origin the proxy names');
  t.equal((await confirm({ authorization: `Bearer ${TOKEN}` })).status, 400, 'bearer requests need no Origin');
  t.equal((await confirm({ authorization: 'Bearer wrong', ...cookie, origin: url })).status, 401, 'a wrong bearer token is not rescued by the cookie');

  const out = await fetch(`${url}/auth/logout`, { method: 'POST', headers: { ...cookie, origin: url } });
  t.equal(out.status, 204);
  t.match(setCookie(out), { value: '', attrs: /Max-Age=0/ });
  t.equal((await fetch(`${url}/api/status`, { headers: cookie })).status, 401, 'the session is gone after logout');
});

t.test('login by pairing: request, approve on the machine, collect once', async (t) => {
  const { url, home } = await gateway(t);
  const req = await fetch(`${url}/auth/pair`, { method: 'POST', headers: { 'user-agent': `TestBrowser/1.0 ${'x'.repeat(300)}` } });
  t.equal(req.status, 200);
  const { request, code, command } = (await req.json()) as { request: string; code: string; command: string };
  t.match(code, /^[A-HJ-NP-Z2-9]{8}$/);
  t.equal(command, `pinclaw --home ${home} pairing approve ${code}`, 'the command to run names this home (not the default one)');
  t.match(request, /^[\w-]{32}$/);
  const poll = () => fetch(`${url}/auth/pair/${request}`);
  const pending = await poll();
  t.same(await pending.json(), { state: 'pending' });
  t.notOk(setCookie(pending));
  t.equal((await fetch(`${url}/auth/pair/${'A'.repeat(32)}`)).status, 404, 'another request id gets nothing');
  t.equal((await fetch(`${url}/auth/pair`, { method: 'POST', headers: { origin: 'https://evil.example' } })).status, 403, 'another site cannot ask');

  const db = openDatabase(join(home, 'pinclaw.db'));
  const approved = approvePairing(db, code);
  db.close();
  t.match(approved, { ok: true, pairing: { channel: 'dashboard', subject: request, label: /^TestBrowser\/1\.0 x+$/ } });
  if (approved.ok) t.equal(approved.pairing.label!.length, 120, 'the user agent is capped');

  const collected = await poll();
  t.equal(collected.status, 200);
  t.same(await collected.json(), { state: 'approved' });
  const c = setCookie(collected)!;
  t.equal(c.attrs, 'HttpOnly; SameSite=Strict; Path=/; Max-Age=2592000');
  t.equal((await fetch(`${url}/api/sessions`, { headers: { cookie: `pinclaw_session=${c.value}` } })).status, 200, 'the paired cookie works');
  const twice = await poll();
  t.equal(twice.status, 404, 'the request id is single-use');
  t.notOk(setCookie(twice));
});

t.test('the dashboard read routes', async (t) => {
  const { url } = await gateway(t);
  const get = (path: string) => fetch(`${url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  t.same(await (await get('/api/sessions')).json(), { sessions: [] });
  t.equal((await get('/api/sessions/nobody')).status, 404);
  t.same(await (await get('/api/audit?limit=5')).json(), { rows: [], before: null });
  t.equal((await get('/api/audit?limit=zero')).status, 400);
  const board = (await (await get('/api/board')).json()) as { board: unknown; reason?: string };
  t.ok(board.board === null ? board.reason === 'no hardware' : typeof board.board === 'object', 'the board, or why there is none');
  const memory = await get('/api/memory/search?q=lunch%20sunday');
  t.equal(memory.status, 200);
  t.match(await memory.json(), { results: [{ text: /Lunch is at noon on Sundays/, citation: 'MEMORY.md:1-3' }] }, 'MEMORY.md is searched, with its citation');
  t.equal((await get('/api/memory/search?q=')).status, 400);
});

t.test('in-process: dashboard files from the source tree, the bad-token hook, session expiry', async (t) => {
  const db = openDatabase(':memory:');
  t.teardown(() => db.close());
  const bad: string[] = [];
  const server = await startHttpServer({ host: '127.0.0.1', port: 0, token: TOKEN, web: { db, onBadCredential: (req) => bad.push(req.url ?? '') } });
  t.teardown(() => server.close(100));
  const page = await fetch(`${server.url}/`);
  t.equal(page.status, 200);
  t.match(await page.text(), /<title>pinclaw<\/title>/);
  for (const token of ['one', 'two']) await fetch(`${server.url}/auth/login`, { method: 'POST', body: JSON.stringify({ token }) });
  await fetch(`${server.url}/auth/login`, { method: 'POST', body: JSON.stringify({ token: TOKEN }) });
  t.same(bad, ['/auth/login', '/auth/login'], 'each wrong token, and only those, is reported');

  const now = Date.UTC(2026, 0, 1);
  const secret = createWebSession(db, 'test', now);
  const stored = db.prepare('select id_hash from web_sessions').all() as { id_hash: string }[];
  t.notOk(stored.some((r) => r.id_hash.includes(secret)), 'only the hash is stored');
  t.ok(useWebSession(db, secret, now + WEB_SESSION_TTL_MS - 1000), 'alive just before 30 days');
  t.ok(useWebSession(db, secret, now + 2 * WEB_SESSION_TTL_MS - 2000), 'use slid the expiry');
  t.notOk(useWebSession(db, secret, now + 4 * WEB_SESSION_TTL_MS), 'expired after 30 days unused');
  t.notOk(useWebSession(db, secret, now), 'and removed');
});

t.test('the single executable serves the files it embeds', { skip: existsSync(seaX64) ? false : `${seaX64} is not built (npm test builds it)` }, async (t) => {
  // Copied into an empty directory: no dist/dashboard or source tree to fall back on.
  const dir = tempDir('pinclaw-sea-dash-');
  const exe = join(dir, 'pinclaw');
  copyFileSync(seaX64, exe);
  run('chmod', ['755', exe]);
  const gw = start(exe, ['gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: join(dir, 'home') }), cwd: dir });
  t.teardown(async () => {
    gw.child.kill('SIGTERM');
    await gw.exited;
  });
  const url = (await gw.waitFor(/listening on (http:\/\/\S+)/))[1]!;
  for (const [path, file] of [['/', 'index.html'], ['/assets/app.js', 'app.js'], ['/assets/app.css', 'app.css']] as const) {
    const res = await fetch(`${url}${path}`);
    t.equal(res.status, 200, path);
    checkSecurityHeaders(t, res, path);
    t.equal(await res.text(), readFileSync(join(root, 'src', 'channels', 'http', 'dashboard', file), 'utf8'), `${path}: the embedded ${file}`);
  }
});

// .ci/run installs chromium: there a missing browser is a failure, not a skip.
const noBrowser = existsSync(CHROMIUM) || process.env.CI ? false : `${CHROMIUM} is missing: the browser test needs Debian's chromium`;

t.test('in Chromium: log in, chat, confirm, events, sessions, audit, memory, health; on a phone too', { skip: noBrowser }, async (t) => {
  t.ok(statSync(join(root, 'dist', 'dashboard', 'app.js')).isFile(), 'the build copied the dashboard next to the bundle');
  const { chromium } = await import('playwright-core');
  const g = await gateway(t, { tools: { confirm: ['current_time'] } });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  t.teardown(() => browser.close());
  const problems: string[] = [];
  // Chromium logs every 4xx/5xx fetch as an error; the wrong token's 401 is expected.
  const expected = /^Failed to load resource: the server responded with a status of 401/;
  const watch = (page: import('playwright-core').Page) => {
    page.on('console', (m) => void ((m.type() === 'error' || m.type() === 'warning') && !expected.test(m.text()) ? problems.push(`console ${m.type()}: ${m.text()}`) : undefined));
    page.on('pageerror', (e) => void problems.push(`page error: ${e.message}`));
  };

  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  watch(page);
  await page.goto(g.url);
  await page.locator('#login').waitFor();
  await page.fill('#token', 'wrong-token');
  await page.click('#login-form button[type=submit]');
  await page.locator('#login-error', { hasText: 'wrong token' }).waitFor();
  await page.fill('#token', TOKEN);
  await page.click('#login-form button[type=submit]');
  await page.locator('#app').waitFor();
  await page.locator('#live[data-state="live"]').waitFor();

  // The model asks for the time (a confirmed tool), then answers in streamed pieces.
  g.srv.enqueue(toolUseReply([{ name: 'current_time', input: { timezone: 'UTC' } }], 'Let me look.'), textReply('It is noon in UTC, as you asked.'));
  await page.fill('#chat-text', 'what time is it?');
  await page.press('#chat-text', 'Enter');
  await page.locator('.msg.user', { hasText: 'what time is it?' }).waitFor();
  await page.locator('#chat-log .confirm', { hasText: 'current_time wants your yes' }).waitFor();
  await page.locator('#chat-log .msg.assistant', { hasText: 'Let me look.' }).waitFor();
  await page.click('#chat-log .confirm button:text-is("Allow")');
  await page.locator('#chat-log .confirm.allowed').waitFor();
  await page.locator('#chat-log .tool', { hasText: /current_time done \(\d+ ms\)/ }).waitFor();
  const reply = page.locator('#chat-log .msg.assistant', { hasText: 'It is noon in UTC, as you asked.' });
  await reply.waitFor();
  await page.waitForFunction(() => !document.querySelector('#chat-log .streaming') && !(document.getElementById('chat-send') as HTMLButtonElement).disabled);
  t.equal(await reply.count(), 1, 'the streamed reply is shown once, complete');
  t.equal(await page.locator('#chat-log .confirm').count(), 1, 'the question is shown once though it came on both streams');

  // The live event stream saw the turn.
  // Home is the view beside the chat at first; the events are one click away.
  await page.click('[data-tab="events"]');
  for (const name of ['message_received', 'turn_start', 'tool_start', 'tool_end', 'confirm_request', 'turn_end']) await page.locator(`#event-list .ev-${name}`).first().waitFor();
  await page.locator('#event-list .ev-text_delta', { hasText: 'It is noon' }).first().waitFor();

  // A session opened from the list is read into the chat, from the store.
  await page.click('.tabs button[data-tab=sessions]');
  await page.evaluate(() => document.getElementById('chat-log')!.replaceChildren());
  await page.locator('#session-list button.item', { hasText: 'dashboard' }).click();
  await page.locator('#chat-log .msg.user', { hasText: 'what time is it?' }).waitFor();
  await page.locator('#chat-log .msg.assistant', { hasText: 'It is noon in UTC' }).waitFor();
  await page.locator('#chat-log .tool', { hasText: 'current_time' }).waitFor();

  await page.click('.tabs button[data-tab=audit]');
  const row = page.locator('#audit-table tbody tr', { hasText: 'current_time' });
  await row.waitFor();
  t.match(await row.textContent(), /ok/, 'the audit row shows the call');

  await page.click('.tabs button[data-tab=memory]');
  await page.fill('#memory-q', 'noon');
  await page.press('#memory-q', 'Enter');
  await page.locator('#memory-results li', { hasText: '[MEMORY.md:1-3] # Household Lunch is at noon on Sundays.' }).waitFor();

  await page.click('.tabs button[data-tab=board]');
  await page.locator('#board-view', { hasText: /\S/ }).waitFor();
  await page.click('.tabs button[data-tab=health]');
  await page.locator('#health-facts dd', { hasText: /^\d+\.\d+\.\d+/ }).waitFor();
  await page.locator('#health-channels li', { hasText: 'http' }).waitFor();
  t.same(problems, [], 'no console errors, CSP violations or page errors');

  // A phone, logged in by pairing: one column, nothing wider than the screen, on every pane.
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 3 });
  const mobile = await phone.newPage();
  watch(mobile);
  await mobile.goto(g.url);
  const scrollWidth = () => mobile.evaluate(() => document.documentElement.scrollWidth);
  await mobile.locator('#login').waitFor();
  t.ok((await scrollWidth()) <= 390, 'login: no horizontal scroll');
  await mobile.click('#pair');
  const command = (await mobile.locator('#pair-command', { hasText: /^pinclaw --home \S+ pairing approve [A-Z0-9]{8}$/ }).textContent())!;
  t.ok(command.startsWith(`pinclaw --home ${g.home} `), 'the page shows the command for this home');
  const db = openDatabase(join(g.home, 'pinclaw.db'));
  t.match(approvePairing(db, command.split(' ').pop()!), { ok: true });
  db.close();
  await mobile.locator('#app').waitFor();
  t.ok((await scrollWidth()) <= 390, 'chat: no horizontal scroll');
  t.ok(await mobile.locator('#chat').isVisible(), 'the chat is the first pane on a phone');
  t.notOk(await mobile.locator('#events').isVisible(), 'one pane at a time');
  for (const tab of ['events', 'sessions', 'audit', 'board', 'health', 'memory']) {
    await mobile.click(`.tabs button[data-tab=${tab}]`);
    await mobile.locator(`#${tab}`).waitFor();
    if (tab === 'audit') await mobile.locator('#audit-table tbody tr', { hasText: 'current_time' }).waitFor();
    t.ok((await scrollWidth()) <= 390, `${tab}: no horizontal scroll (${await scrollWidth()} px)`);
  }
  await mobile.click('.tabs button[data-tab=chat]');
  await mobile.fill('#chat-text', 'and now?');
  g.srv.enqueue(textReply('Still noon.'));
  await mobile.click('#chat-send');
  await mobile.locator('#chat-log .msg.assistant', { hasText: 'Still noon.' }).waitFor();
  t.ok((await scrollWidth()) <= 390, 'after a chat: no horizontal scroll');

  await mobile.click('#logout');
  await mobile.locator('#login').waitFor();
  t.equal((await phone.cookies()).filter((c) => c.name === 'pinclaw_session' && c.value).length, 0, 'logout clears the cookie');
  t.same(problems, [], 'no console errors on the phone either');
});

t.test('in Chromium: a hardware trigger that cannot start shows the hardware channel degraded, naming it', { skip: noBrowser }, async (t) => {
  const { chromium } = await import('playwright-core');
  // This machine has no GPIO chip: the Pi profile's trigger on GPIO17 cannot start.
  const g = await gateway(t, {
    board: { profile: 'rpi-3b' },
    hardware: { lines: [{ name: 'door', line: 'GPIO17', direction: 'input' }], triggers: [{ line: 'door', edge: 'falling', session: 'house', message: 'the door opened' }] },
  });
  await g.gw.waitFor(/channel hardware: degraded/);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  t.teardown(() => browser.close());
  const page = await (await browser.newContext()).newPage();
  await page.goto(g.url);
  await page.fill('#token', TOKEN);
  await page.click('#login-form button[type=submit]');
  await page.locator('#app').waitFor();
  await page.click('.tabs button[data-tab=health]');
  const item = page.locator('#health-channels li.channel.degraded', { hasText: "hardware: degraded (trigger 'door': trigger on door: no GPIO chip on this machine" });
  await item.waitFor();
  const colour = (sel: string) => page.evaluate((s) => getComputedStyle(document.querySelector(s)!, '::before').color, sel);
  t.not(await colour('#health-channels li.channel.degraded'), await colour('#health-channels li.channel.up'), 'marked apart from the channels that are up');
});
