// The dashboard's chat and connection, for real: the gateway process (the bundle) against the
// Anthropic stand-in on 127.0.0.1, and the page in Debian's Chromium through playwright-core.
// Covered: stopping a running turn (POST /api/chat/abort), a stopping gateway telling and closing
// its event streams before it exits, and in the browser at 1280 px and 390 px: the history after a
// reload, Markdown rendered with the model's HTML shown as text, the thinking sign and Stop, opening
// and resetting a session, the audit view with its long cells, the tablist by keyboard, one row of
// tabs on a phone, and the badge while the gateway stops and comes back. Screenshots of each view go
// to .tap/screenshots/dashboard (not committed) for a person to look at.
import t, { type Test } from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { errorReply, stall, startAnthropicServer, stallMidStream, textReply, toolUseReply, type StandIn, type AnthropicStep } from './support/anthropic-server.js';
import { bundle, cleanEnv, root, start, tempDir, type Started } from './support/proc.js';

const TOKEN = 'tok-dashboard-chat-1234';
const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(root, '.tap', 'screenshots', 'dashboard');
const auth = { authorization: `Bearer ${TOKEN}` };

interface Gateway {
  srv: StandIn<AnthropicStep>;
  home: string;
  url: string;
  gw: Started;
  port: number;
}

function startGateway(srv: StandIn<AnthropicStep>, home: string, port = 0): Started {
  return start(process.execPath, [bundle, 'gateway', '--port', String(port)], { env: cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: srv.url }) });
}

async function gateway(t: Test, config: Record<string, unknown> = {}): Promise<Gateway> {
  const srv = await startAnthropicServer(textReply('unused'));
  t.teardown(() => srv.close());
  const home = tempDir();
  mkdirSync(join(home, 'workspace'), { recursive: true });
  writeFileSync(join(home, 'config.json'), JSON.stringify({ gateway: { token: TOKEN }, memory: { embedder: 'none' }, ...config }));
  const gw = startGateway(srv, home);
  const url = (await gw.waitFor(/listening on (http:\/\/\S+)/))[1]!;
  const g = { srv, home, url, gw, port: Number(new URL(url).port) };
  t.teardown(async () => {
    g.gw.child.kill('SIGTERM');
    await g.gw.exited;
  });
  return g;
}

/** An SSE response read frame by frame: each event's name and data, and its end. */
function sseEvents(res: IncomingMessage, on: (name: string, data: unknown) => void): Promise<void> {
  let buf = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    buf += chunk;
    let end;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const name = /^event: (.*)$/m.exec(block)?.[1];
      const data = [...block.matchAll(/^data: (.*)$/gm)].map((m) => m[1]).join('\n');
      if (name) on(name, data ? JSON.parse(data) : null);
    }
  });
  return new Promise((resolve) => res.on('close', resolve));
}

function open(url: string, path: string, method = 'GET', body?: unknown): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, headers: { ...auth, accept: 'text/event-stream', ...(body ? { 'content-type': 'application/json' } : {}) } }, resolve);
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

const post = (url: string, path: string, body: unknown) => fetch(`${url}${path}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });

t.test('POST /api/chat/abort stops the running turn: turn_aborted, a notice, the message done and not tried again', async (t) => {
  const g = await gateway(t);
  g.srv.enqueue(stallMidStream('Let me think about this at length'));
  const names: string[] = [];
  let replied: unknown;
  let firstText!: () => void;
  const streaming = new Promise<void>((r) => (firstText = r));
  const res = await open(g.url, '/api/chat', 'POST', { session: 'abort-me', text: 'write me a long poem' });
  t.equal(res.statusCode, 200);
  const ended = sseEvents(res, (name, data) => {
    names.push(name);
    if (name === 'text_delta') firstText();
    if (name === 'reply') replied = data;
  });
  await streaming;
  t.equal((await post(g.url, '/api/chat/abort', {})).status, 400, 'no session named: 400');
  const abort = await post(g.url, '/api/chat/abort', { session: 'abort-me' });
  t.equal(abort.status, 200);
  t.same(await abort.json(), { session: 'abort-me', aborted: true });
  await ended;
  t.ok(names.includes('turn_aborted'), `the stream was told (${names.join(' ')})`);
  t.ok(names.indexOf('turn_aborted') < names.indexOf('reply'), 'before the reply');
  t.match(replied, { reply: /^Stopped/, kind: 'notice' }, 'the reply is the notice that it stopped');
  t.notOk(names.includes('turn_error'), 'not a failure');

  const again = await post(g.url, '/api/chat/abort', { session: 'abort-me' });
  t.equal(again.status, 409, 'nothing runs any more');
  t.match(await again.json(), { error: /no turn is running in session abort-me/ });
  const status = (await (await fetch(`${g.url}/api/status`, { headers: auth })).json()) as { queue: { inbound: Record<string, number> } };
  t.match(status.queue.inbound, { done: 1, pending: 0, processing: 0, failed: 0 }, 'the message is done: it will not be run again');

  // The session is free: the next message gets its answer.
  g.srv.enqueue(textReply('Here is a short one.'));
  const next = await post(g.url, '/api/chat', { session: 'abort-me', text: 'a short one then' });
  t.same(await next.json(), { reply: 'Here is a short one.', kind: 'reply' });
});

t.test('SIGTERM: every event stream gets gateway_stopping and is closed before the gateway exits', async (t) => {
  const g = await gateway(t);
  const order: string[] = [];
  const live = await open(g.url, '/api/events');
  t.equal(live.statusCode, 200);
  const closed = sseEvents(live, (name) => name === 'gateway_stopping' && order.push('stopping event'));
  live.on('end', () => order.push('stream ended'));
  // A turn that is running too: its chat stream is told as well.
  g.srv.enqueue(stallMidStream('thinking'));
  const chat = await open(g.url, '/api/chat', 'POST', { session: 'drain', text: 'hello' });
  const chatNames: string[] = [];
  const chatClosed = sseEvents(chat, (name) => chatNames.push(name));
  while (!chatNames.includes('text_delta')) await new Promise((r) => setTimeout(r, 20));
  g.gw.child.kill('SIGTERM');
  await closed;
  order.push('stream closed');
  await g.gw.exited;
  order.push('gateway exited');
  t.same(order, ['stopping event', 'stream ended', 'stream closed', 'gateway exited'], 'told, ended cleanly, then the exit');
  await chatClosed;
  t.ok(chatNames.includes('gateway_stopping'), `the chat stream was told too (${chatNames.join(' ')})`);
});

// .ci/run installs chromium: there a missing browser is a failure, not a skip.
const noBrowser = process.env.CI ? false : (await import('node:fs')).existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: the browser test needs Debian's chromium`;

const MARKDOWN = [
  '## Plan',
  '',
  'Here is **bold**, *italic* and `inline code`, and [the docs](https://example.org/docs).',
  '',
  '- first item',
  '- second item',
  '',
  '1. one',
  '2. two',
  '',
  '| Pin | State |',
  '|-----|------:|',
  '| GPIO17 | on |',
  '',
  '```sh',
  'echo "<b>not bold</b>"',
  '```',
  '',
  'Careful: <script>window.__pwned = 1</script> and <img src=x onerror="window.__pwned = 2"> and [bad](javascript:window.__pwned=3) stay text.',
].join('\n');

t.test('in Chromium: history after reload, Markdown, thinking and Stop, sessions, audit, tabs, badge; desktop and phone', { skip: noBrowser }, async (t) => {
  mkdirSync(SHOTS, { recursive: true });
  const { chromium } = await import('playwright-core');
  const g = await gateway(t);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  t.teardown(() => browser.close());
  const problems: string[] = [];
  const watch = (page: import('playwright-core').Page) => {
    // Chromium logs failed loads itself (the gateway stopped on purpose below); page errors and CSP reports are ours.
    page.on('console', (m) => void (m.type() === 'error' && !/Failed to load resource|net::ERR_|EventSource/.test(m.text()) ? problems.push(`console: ${m.text()}`) : undefined));
    page.on('pageerror', (e) => void problems.push(`page error: ${e.message}`));
  };
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  watch(page);
  await page.goto(g.url);
  await page.fill('#token', TOKEN);
  await page.click('#login-form button[type=submit]');
  await page.locator('#live[data-state="live"]', { hasText: 'live' }).waitFor();

  // A reply in Markdown, with HTML and a script in it.
  // The call's long input gives the audit a long cell.
  g.srv.enqueue(toolUseReply([{ name: 'current_time', input: { timezone: 'UTC', why: 'the owner asked for a reply in Markdown and this is a long reason to fill the cell' } }], 'Looking.'), textReply(MARKDOWN));
  await page.fill('#chat-text', 'show me markdown');
  await page.press('#chat-text', 'Enter');
  const md = page.locator('#chat-log .msg.assistant', { hasText: 'Here is bold' });
  await md.waitFor();
  await page.waitForFunction(() => !(document.getElementById('chat-send') as HTMLButtonElement).disabled);
  const checkMarkdown = async (where: string) => {
    t.equal(await md.locator('h5', { hasText: 'Plan' }).count(), 1, `${where}: heading`);
    t.equal(await md.locator('strong', { hasText: 'bold' }).count(), 1, `${where}: bold`);
    t.equal(await md.locator('em', { hasText: 'italic' }).count(), 1, `${where}: italic`);
    t.equal(await md.locator('code', { hasText: 'inline code' }).count(), 1, `${where}: inline code`);
    t.equal(await md.locator('ul > li').count(), 2, `${where}: bullet list`);
    t.equal(await md.locator('ol > li').count(), 2, `${where}: numbered list`);
    t.equal(await md.locator('table th', { hasText: 'State' }).count(), 1, `${where}: table head`);
    t.equal(await md.locator('table td', { hasText: 'GPIO17' }).count(), 1, `${where}: table cell`);
    t.equal(await md.locator('pre code').textContent(), 'echo "<b>not bold</b>"', `${where}: code block, as written`);
    const link = md.locator('a', { hasText: 'the docs' });
    t.equal(await link.getAttribute('href'), 'https://example.org/docs', `${where}: link`);
    t.equal(await link.getAttribute('rel'), 'noopener noreferrer', `${where}: link rel`);
    t.equal(await md.locator('a', { hasText: 'bad' }).count(), 0, `${where}: a javascript: link is not a link`);
    t.equal(await md.locator('script, img, b').count(), 0, `${where}: the model's HTML made no element`);
    t.match(await md.textContent(), '<script>window.__pwned = 1</script> and <img src=x onerror="window.__pwned = 2">', `${where}: it is shown as text`);
    t.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined, `${where}: nothing of it ran`);
  };
  await checkMarkdown('streamed');
  await page.screenshot({ path: join(SHOTS, 'chat-1280.png') });

  // The thinking sign and Stop, on a turn that hangs.
  // The provider takes the request and says nothing.
  g.srv.enqueue(stall);
  await page.fill('#chat-text', 'take your time');
  await page.press('#chat-text', 'Enter');
  await page.locator('#thinking').waitFor({ state: 'visible' });
  await g.srv.received(3);
  t.ok(await page.locator('#thinking').isVisible(), 'the sign stays while the model is silent');
  await page.screenshot({ path: join(SHOTS, 'thinking-1280.png') });
  await page.click('#chat-stop');
  await page.locator('#chat-log .msg.aborted', { hasText: 'Stopped' }).waitFor();
  await page.locator('#chat-stop').waitFor({ state: 'hidden' });
  t.notOk(await page.locator('#thinking').isVisible(), 'no sign after the stop');

  // A reload: the chat shows the session's history, rendered the same.
  await page.reload();
  await md.waitFor();
  await page.locator('#chat-log .msg.user', { hasText: 'show me markdown' }).waitFor();
  await page.locator('#chat-log .tool', { hasText: 'current_time' }).waitFor();
  await checkMarkdown('after a reload');

  // The tablist: roles, and the arrow keys.
  t.equal(await page.locator('.tabs').getAttribute('role'), 'tablist');
  t.equal(await page.locator('.tabs [role=tab]').count(), await page.locator('.tabs button').count(), 'every tab button is a tab');
  await page.click('.tabs [data-tab=events]');
  t.equal(await page.locator('.tabs [data-tab=events]').getAttribute('aria-selected'), 'true');
  t.equal(await page.locator('#events').getAttribute('role'), 'tabpanel');
  t.equal(await page.locator('#events').getAttribute('aria-labelledby'), await page.locator('.tabs [data-tab=events]').getAttribute('id'));
  await page.keyboard.press('ArrowRight');
  t.equal(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.tab), 'sessions', 'ArrowRight moves to the next tab');
  t.equal(await page.locator('.tabs [data-tab=sessions]').getAttribute('aria-selected'), 'true', 'and selects it');
  t.equal(await page.locator('.tabs [aria-selected=true]').count(), 1, 'one tab is selected');
  t.equal(await page.locator('.tabs [tabindex="0"]').count(), 1, 'one tab is in the focus order');

  // Sessions: another one opened into the chat, then reset.
  g.srv.enqueue(textReply('The other session answers.'));
  t.same(await (await post(g.url, '/api/chat', { session: 'other', text: 'hello other' })).json(), { reply: 'The other session answers.', kind: 'reply' });
  await page.click('#sessions-refresh');
  await page.locator('#session-list .item', { hasText: 'other' }).click();
  await page.locator('#chat-log .msg.assistant', { hasText: 'The other session answers.' }).waitFor();
  t.equal(await page.inputValue('#session'), 'other', 'the chat is on that session');
  t.equal(await page.locator('#chat-log .msg', { hasText: 'show me markdown' }).count(), 0, 'and shows its messages only');
  await page.click('#session-reset');
  await page.locator('#session-reset', { hasText: 'Really reset?' }).waitFor();
  await page.click('#session-reset');
  await page.locator('#chat-log .msg.notice', { hasText: 'Session reset' }).waitFor();
  t.equal(await page.locator('#chat-log .msg.assistant, #chat-log .msg.user').count(), 0, 'the chat is empty after the reset');
  const other = await fetch(`${g.url}/api/sessions/other`, { headers: auth });
  const messages = other.status === 404 ? [] : ((await other.json()) as { messages: { text: string }[] }).messages;
  t.same(messages, [], `the session history is cleared on the gateway (${other.status})`);

  // Audit: the whole width, long cells shortened until selected.
  await page.click('.tabs [data-tab=audit]');
  const row = page.locator('#audit-table tbody tr', { hasText: 'current_time' });
  await row.waitFor();
  t.notOk(await page.locator('#chat').isVisible(), 'the chat steps aside for the audit');
  const width = await page.locator('#audit').evaluate((e) => e.getBoundingClientRect().width);
  t.ok(width > 1200, `the audit view is full width (${width} px)`);
  const timeCell = await row.locator('td').first().evaluate((e) => e.getBoundingClientRect().height);
  const lineHeight = await row.locator('td').first().evaluate((e) => parseFloat(getComputedStyle(e).lineHeight));
  t.ok(timeCell < lineHeight * 2.5, 'the time is on one line');
  const clip = row.locator('.clip').first();
  const shut = await clip.evaluate((e) => e.getBoundingClientRect().height);
  t.equal(await clip.getAttribute('aria-expanded'), 'false', 'the long input is shortened');
  await clip.click();
  t.equal(await clip.getAttribute('aria-expanded'), 'true');
  t.ok((await clip.evaluate((e) => e.getBoundingClientRect().height)) > shut, 'and opens when selected');
  t.match(await clip.textContent(), 'a long reason to fill the cell', 'all of it');
  await page.screenshot({ path: join(SHOTS, 'audit-1280.png') });
  await page.click('.tabs [data-tab=chat]');
  t.ok(await page.locator('#chat').isVisible(), 'the chat tab brings the chat back');
  t.same(problems, [], 'no page errors or CSP reports');

  // The badge while the gateway stops and comes back on the same port.
  await page.click('.tabs [data-tab=events]');
  const badge = page.locator('#live');
  const seen: string[] = [];
  await page.exposeFunction('badgeSeen', (s: string) => seen.push(s));
  await page.evaluate(() => {
    const live = document.getElementById('live')!;
    new MutationObserver(() => void (window as unknown as { badgeSeen: (s: string) => void }).badgeSeen(live.dataset.state ?? '')).observe(live, { attributes: true, attributeFilter: ['data-state'] });
  });
  g.gw.child.kill('SIGTERM');
  // The stop takes a moment only, so the states are read from the record, not caught on screen.
  await g.gw.exited;
  await page.locator('#live[data-state="unreachable"]', { hasText: 'gateway unreachable' }).waitFor();
  await page.screenshot({ path: join(SHOTS, 'badge-unreachable-1280.png') });
  t.equal(seen[0], 'stopping', `first it says the gateway is stopping (${seen.join(' ')})`);
  t.notOk(seen.includes('live'), 'never live while stopping');
  g.gw = startGateway(g.srv, g.home, g.port);
  await g.gw.waitFor(/listening on/);
  await page.locator('#live[data-state="live"]').waitFor({ timeout: 30_000 });
  t.equal(await badge.textContent(), 'live', 'live again once it is back');

  // A request while the gateway is gone says so in words.
  g.gw.child.kill('SIGTERM');
  await g.gw.exited;
  await page.click('.tabs [data-tab=health]');
  await page.locator('#health-facts .error', { hasText: `The gateway is not reachable at 127.0.0.1:${g.port}` }).waitFor();
  t.equal(await page.getByText('Failed to fetch').count(), 0, 'not "Failed to fetch"');
  g.gw = startGateway(g.srv, g.home, g.port);
  await g.gw.waitFor(/listening on/);
  await page.locator('#live[data-state="live"]').waitFor({ timeout: 30_000 });

  // A phone: one row of tabs, nothing wider than the screen, each view.
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2, storageState: await context.storageState() });
  const mobile = await phone.newPage();
  watch(mobile);
  await mobile.goto(g.url);
  await mobile.locator('#app').waitFor();
  // The last session chosen is remembered (the reset one): back to the first.
  t.equal(await mobile.inputValue('#session'), 'other', 'the chat stays on the session chosen last');
  await mobile.fill('#session', 'dashboard');
  await mobile.press('#session', 'Enter');
  await mobile.locator('#chat-log .msg.assistant table').waitFor();
  const scrollWidth = () => mobile.evaluate(() => document.documentElement.scrollWidth);
  const rows = () => mobile.evaluate(() => new Set([...document.querySelectorAll('.tabs [role=tab]')].filter((b) => (b as HTMLElement).offsetParent).map((b) => (b as HTMLElement).offsetTop)).size);
  t.equal(await rows(), 1, 'the tabs are one row');
  t.ok(await mobile.locator('#chat').isVisible(), 'the chat first');
  await mobile.screenshot({ path: join(SHOTS, 'chat-390.png') });
  for (const tab of ['events', 'sessions', 'memory', 'audit', 'board', 'health']) {
    await mobile.click(`.tabs [data-tab=${tab}]`);
    await mobile.locator(`#${tab}`).waitFor();
    t.ok(await mobile.locator(`.tabs [data-tab=${tab}]`).isVisible(), `${tab}: its tab is scrolled into view`);
    t.ok((await scrollWidth()) <= 390, `${tab}: no horizontal scroll (${await scrollWidth()} px)`);
    if (tab === 'audit') {
      const clip = mobile.locator('#audit-table .clip').first();
      if ((await clip.count()) > 0) {
        await clip.click();
        t.equal(await clip.getAttribute('aria-expanded'), 'true', 'a long cell opens');
      }
    }
    await mobile.screenshot({ path: join(SHOTS, `${tab}-390.png`) });
  }
  t.equal(await rows(), 1, 'still one row');
  t.same(problems, [], 'no page errors on the phone either');
});

t.test('in Chromium: a failed turn is shown in the chat and leaves the badge live', { skip: noBrowser }, async (t) => {
  const { chromium } = await import('playwright-core');
  const g = await gateway(t);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  t.teardown(() => browser.close());
  const page = await (await browser.newContext()).newPage();
  await page.goto(g.url);
  await page.fill('#token', TOKEN);
  await page.click('#login-form button[type=submit]');
  await page.locator('#live[data-state="live"]').waitFor();
  const seen: string[] = [];
  await page.exposeFunction('badgeSeen', (s: string) => seen.push(s));
  await page.evaluate(() => {
    const live = document.getElementById('live')!;
    new MutationObserver(() => void (window as unknown as { badgeSeen: (s: string) => void }).badgeSeen(live.dataset.state ?? '')).observe(live, { attributes: true, attributeFilter: ['data-state'] });
  });
  // A refusal the provider does not retry: the turn fails at once.
  g.srv.enqueue(errorReply(400, 'invalid_request_error', 'the model refused this request'));
  await page.fill('#chat-text', 'fail please');
  await page.press('#chat-text', 'Enter');
  await page.locator('#chat-log .msg.error', { hasText: 'the model refused this request' }).waitFor();
  await page.click('[data-tab="events"]');
  await page.locator('#event-list .ev-turn_error').waitFor();
  await page.locator('#event-list .ev-turn_end').waitFor();
  t.same(seen, [], 'the badge did not change');
  t.equal(await page.locator('#live').textContent(), 'live');
});
