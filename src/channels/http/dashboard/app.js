// @ts-check
// The pinclaw dashboard: plain DOM, no framework, no build step. Everything the server sends is
// shown with textContent, never parsed as HTML.
import { loadHome } from './home.js';
import { loadConfig, loadCron, loadLogs, loadPairings } from './admin.js';

/** @typedef {Record<string, any>} Data */

const EVENT_NAMES = ['message_received', 'turn_start', 'turn_end', 'text_delta', 'retry', 'tool_start', 'tool_output', 'tool_end', 'reply', 'error', 'confirm_request', 'confirm_answer', 'channel_status', 'dropped'];
const MAX_EVENTS = 300;
const WIDE = window.matchMedia('(min-width: 900px)');

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * @param {string} tag
 * @param {string} [className]
 * @param {string} [text]
 */
function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** @param {unknown} v */
const str = (v) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
/** @param {string} iso */
const time = (iso) => new Date(iso).toLocaleTimeString();

class HttpFailure extends Error {
  /** @param {number} status @param {string} message */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * JSON from the gateway; a 401 means the login is gone, so the page goes back to the login form.
 * @param {string} path
 * @param {RequestInit} [init]
 * @returns {Promise<Data>}
 */
async function api(path, init = {}) {
  const res = await fetch(path, { ...init, headers: { accept: 'application/json', ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers } });
  if (res.status === 401 && !path.startsWith('/auth/')) {
    showLogin('Your login has ended; log in again.');
    throw new HttpFailure(401, 'not logged in');
  }
  const text = await res.text();
  /** @type {Data} */
  let body = {};
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    body = { error: text };
  }
  if (!res.ok) throw new HttpFailure(res.status, str(body.error) || `${res.status} ${res.statusText}`);
  return body;
}

/** @param {unknown} err */
const message = (err) => (err instanceof Error ? err.message : String(err));

// ---- login -------------------------------------------------------------------------------------

let pairTimer = 0;

/** @param {string} [note] */
function showLogin(note = '') {
  closeEvents();
  $('app').hidden = true;
  $('logout').hidden = true;
  $('login').hidden = false;
  $('login-error').textContent = note;
  /** @type {HTMLInputElement} */ ($('token')).focus();
}

function showApp() {
  clearTimeout(pairTimer);
  $('login').hidden = true;
  $('app').hidden = false;
  $('logout').hidden = false;
  openEvents();
  showTab(WIDE.matches ? 'events' : 'chat');
  loadPendingConfirms();
}

$('login-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const input = /** @type {HTMLInputElement} */ ($('token'));
  try {
    await api('/auth/login', { method: 'POST', body: JSON.stringify({ token: input.value }) });
    input.value = '';
    showApp();
  } catch (err) {
    $('login-error').textContent = message(err);
  }
});

$('pair').addEventListener('click', async () => {
  clearTimeout(pairTimer);
  try {
    const { request, code } = await api('/auth/pair', { method: 'POST' });
    $('pair-box').hidden = false;
    $('pair-command').textContent = `pinclaw pairing approve ${code}`;
    $('pair-state').textContent = 'Waiting for your approval…';
    const poll = async () => {
      try {
        const r = await api(`/auth/pair/${encodeURIComponent(request)}`);
        if (r.state === 'approved') return showApp();
        if (r.state === 'expired') return void ($('pair-state').textContent = 'The code expired; ask for a new one.');
        pairTimer = window.setTimeout(poll, 2000);
      } catch (err) {
        $('pair-state').textContent = message(err);
      }
    };
    pairTimer = window.setTimeout(poll, 2000);
  } catch (err) {
    $('login-error').textContent = message(err);
  }
});

$('logout').addEventListener('click', async () => {
  await api('/auth/logout', { method: 'POST' }).catch(() => {});
  showLogin();
});

// ---- tabs --------------------------------------------------------------------------------------

/** @type {Record<string, () => void>} */
const onShow = {
  sessions: () => void loadSessions(),
  audit: () => void loadAudit(),
  board: () => void loadBoard(),
  health: () => void loadHealth(),
  home: () => void loadHome(),
  cron: () => void loadCron(),
  pairings: () => void loadPairings(),
  logs: () => loadLogs(),
  config: () => void loadConfig(),
};

let currentTab = 'chat';

// On a wide screen the chat stays in the left column and the tabs choose the right one.
/** @param {string} tab */
function showTab(tab) {
  currentTab = tab;
  const side = tab === 'chat' ? document.querySelector('.pane.side')?.id ?? 'events' : tab;
  for (const pane of document.querySelectorAll('.pane')) {
    pane.classList.toggle('active', pane.id === tab);
    pane.classList.toggle('side', pane.id === side && pane.id !== 'chat');
  }
  for (const b of document.querySelectorAll('.tabs button')) b.setAttribute('aria-current', String(/** @type {HTMLElement} */ (b).dataset.tab === (WIDE.matches && tab === 'chat' ? side : tab)));
  onShow[tab === 'chat' ? '' : tab]?.();
}

for (const b of document.querySelectorAll('.tabs button')) b.addEventListener('click', () => showTab(/** @type {HTMLElement} */ (b).dataset.tab ?? 'chat'));
WIDE.addEventListener('change', () => showTab(currentTab));

// ---- chat --------------------------------------------------------------------------------------

const chatLog = $('chat-log');
/** @type {Map<string, HTMLElement>} tool lines by call id */
const toolLines = new Map();
/** @type {Map<string, HTMLElement>} confirmation boxes by question id */
const confirmBoxes = new Map();

/** @param {Node} node */
function append(node) {
  const atEnd = chatLog.scrollHeight - chatLog.scrollTop - chatLog.clientHeight < 40;
  chatLog.append(node);
  if (atEnd) chatLog.scrollTop = chatLog.scrollHeight;
}

/** @param {string} role @param {string} text */
function bubble(role, text) {
  const b = el('div', `msg ${role}`, text);
  append(b);
  return b;
}

/** @param {Data} e */
function toolStart(e) {
  const line = el('div', 'tool running');
  line.append(el('span', 'tool-name', e.name), el('span', 'tool-state', ' running…'));
  toolLines.set(e.id, line);
  append(line);
}

/** @param {Data} e */
function toolOutput(e) {
  const line = toolLines.get(e.id);
  if (!line) return;
  const out = line.querySelector('pre') ?? line.appendChild(el('pre', 'tool-out'));
  // Keep the tail: the end of a long output says the most about where it is.
  out.textContent = (out.textContent + str(e.text)).slice(-4000);
}

/** @param {Data} e */
function toolEnd(e) {
  const line = toolLines.get(e.id);
  if (!line) return;
  line.classList.remove('running');
  line.classList.toggle('failed', !!e.isError);
  const state = line.querySelector('.tool-state');
  if (state) state.textContent = ` ${e.isError ? 'failed' : 'done'} (${Math.round(Number(e.durationMs) || 0)} ms)`;
}

/** @param {Data} q */
function confirmRequest(q) {
  if (confirmBoxes.has(q.id)) return;
  const box = el('div', 'confirm');
  box.append(el('strong', '', `${q.tool} wants your yes`), ...(q.reason ? [el('p', '', str(q.reason))] : []), el('p', '', str(q.summary)));
  if (q.input !== undefined) box.append(el('pre', 'tool-out', JSON.stringify(q.input, null, 1)));
  const buttons = el('div', 'row');
  const state = el('span', 'muted', q.expiresAt ? `answer before ${time(q.expiresAt)}` : '');
  for (const allow of [true, false]) {
    const b = /** @type {HTMLButtonElement} */ (el('button', allow ? '' : 'quiet', allow ? 'Allow' : 'Deny'));
    b.type = 'button';
    b.addEventListener('click', async () => {
      for (const x of buttons.querySelectorAll('button')) /** @type {HTMLButtonElement} */ (x).disabled = true;
      try {
        await api('/api/confirm', { method: 'POST', body: JSON.stringify({ id: q.id, allow }) });
      } catch (err) {
        state.textContent = message(err);
      }
    });
    buttons.append(b);
  }
  buttons.append(state);
  box.append(buttons);
  confirmBoxes.set(q.id, box);
  append(box);
}

/** @param {Data} a */
function confirmAnswer(a) {
  const box = confirmBoxes.get(a.id);
  if (!box) return;
  for (const b of box.querySelectorAll('button')) /** @type {HTMLButtonElement} */ (b).disabled = true;
  box.classList.add(a.allowed ? 'allowed' : 'denied');
  const state = box.querySelector('.row .muted');
  if (state) state.textContent = `${a.allowed ? 'allowed' : 'denied'}${a.by === 'timeout' ? ' (no answer in time)' : ''}`;
}

async function loadPendingConfirms() {
  try {
    const { pending } = await api('/api/confirm');
    for (const q of pending ?? []) confirmRequest(q);
  } catch {
    // a gateway without confirmations answers 404: nothing waits
  }
}

/**
 * Reads a server-sent-events body, calling `on` for each event.
 * @param {ReadableStream<Uint8Array>} body
 * @param {(name: string, data: Data) => void} on
 */
async function readSse(body, on) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
    let end;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (!data.length) continue;
      try {
        on(name, JSON.parse(data.join('\n')));
      } catch {
        // a frame that is not JSON is not one of ours
      }
    }
  }
}

const chatText = /** @type {HTMLTextAreaElement} */ ($('chat-text'));
const chatSend = /** @type {HTMLButtonElement} */ ($('chat-send'));

async function send() {
  const text = chatText.value.trim();
  const session = /** @type {HTMLInputElement} */ ($('session')).value.trim() || 'dashboard';
  if (!text || chatSend.disabled) return;
  chatText.value = '';
  chatSend.disabled = true;
  bubble('user', text);
  /** @type {{ bubble: HTMLElement | null }} the reply being streamed */
  const streaming = { bubble: null };
  const reply = () => (streaming.bubble ??= bubble('assistant streaming', ''));
  try {
    const res = await fetch('/api/chat', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify({ session, text }) });
    if (res.status === 401) return showLogin('Your login has ended; log in again.');
    if (!res.ok || !res.body) {
      const body = await res.json().catch(() => ({}));
      throw new Error(str(body.error) || `${res.status} ${res.statusText}`);
    }
    await readSse(res.body, (name, e) => {
      if (name === 'text_delta') reply().textContent += str(e.text);
      // The provider is asked again: what it streamed so far is void.
      else if (name === 'retry') reply().textContent = '';
      else if (name === 'tool_start') {
        // Text before a tool call is its own message; what follows goes in a new bubble.
        streaming.bubble?.classList.remove('streaming');
        streaming.bubble = null;
        toolStart(e);
      } else if (name === 'tool_output') toolOutput(e);
      else if (name === 'tool_end') toolEnd(e);
      else if (name === 'confirm_request') confirmRequest(e);
      else if (name === 'confirm_answer') confirmAnswer(e);
      else if (name === 'error') append(el('div', 'msg error', str(e.message)));
      else if (name === 'reply' && 'reply' in e) {
        // A turn that ends in tool calls alone has nothing more to say.
        if (!e.reply && !streaming.bubble) return;
        const b = reply();
        b.textContent = str(e.reply);
        b.classList.remove('streaming');
        if (e.kind === 'notice') b.classList.add('notice');
      } else if (name === 'reply') bubble('assistant', str(e.text));
    });
  } catch (err) {
    append(el('div', 'msg error', message(err)));
  } finally {
    streaming.bubble?.classList.remove('streaming');
    chatSend.disabled = false;
    chatText.focus();
  }
}

$('chat-form').addEventListener('submit', (e) => {
  e.preventDefault();
  void send();
});
chatText.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    void send();
  }
});

// ---- live events -------------------------------------------------------------------------------

/** @type {EventSource | null} */
let source = null;
const eventList = $('event-list');
/** @type {{ item: HTMLElement, session: string } | null} the row text deltas are added to */
let deltaRow = null;

/** @param {string} state */
function setLive(state) {
  const live = $('live');
  live.textContent = state;
  live.dataset.state = state;
}

/** @param {string} name @param {Data} e */
function summary(name, e) {
  switch (name) {
    case 'message_received':
    case 'reply':
      return `${str(e.channel)}: ${str(e.text ?? e.reply)}`;
    case 'tool_start':
      return `${str(e.name)} ${str(e.input)}`;
    case 'tool_end':
      return `${str(e.name)} ${e.isError ? 'failed' : 'ok'} in ${Math.round(Number(e.durationMs) || 0)} ms`;
    case 'tool_output':
      return `${str(e.name)} ${str(e.stream)}: ${str(e.text)}`;
    case 'turn_end':
      return `${e.ok ? 'ok' : 'failed'}, ${str(e.iterations)} iterations`;
    case 'retry':
      return `attempt ${str(e.attempt)} in ${str(e.delayMs)} ms: ${str(e.reason)}`;
    case 'confirm_request':
      return `${str(e.tool)}: ${str(e.summary)}`;
    case 'confirm_answer':
      return `${e.allowed ? 'allowed' : 'denied'} by ${str(e.by)}`;
    case 'channel_status':
      return `${str(e.channel)} ${str(e.state)} ${str(e.detail)}`;
    case 'error':
      return str(e.message);
    case 'dropped':
      return `${str(e.count)} events missed (too slow)`;
    default:
      return str(e.text ?? '');
  }
}

/** @param {string} name @param {Data} e */
function showEvent(name, e) {
  const session = str(e.sessionKey);
  // A reply streams as hundreds of deltas: one row per run of them.
  if (name === 'text_delta' && deltaRow && deltaRow.session === session && eventList.firstElementChild === deltaRow.item) {
    const text = deltaRow.item.querySelector('.ev-text');
    if (text) text.textContent = (text.textContent + str(e.text)).slice(-500);
    return;
  }
  const item = el('li', `ev ev-${name}`);
  item.append(el('span', 'ev-time', new Date().toLocaleTimeString()), el('span', 'ev-name', name), el('span', 'ev-session', session), el('span', 'ev-text', summary(name, e).slice(0, 500)));
  eventList.prepend(item);
  deltaRow = name === 'text_delta' ? { item, session } : null;
  while (eventList.childElementCount > MAX_EVENTS) eventList.lastElementChild?.remove();
}

/** @param {string} name @param {Data} e */
function onLiveEvent(name, e) {
  showEvent(name, e);
  if (name === 'confirm_request') confirmRequest(e);
  else if (name === 'confirm_answer') confirmAnswer(e);
  // The gateway keeps the channels' states; a change is read back from it.
  else if (name === 'channel_status' && $('health').matches('.active, .side')) void loadHealth();
}

function openEvents() {
  if (source) return;
  setLive('connecting');
  source = new EventSource('/api/events');
  source.onopen = () => setLive('live');
  source.onerror = () => {
    setLive('reconnecting');
    // EventSource retries by itself, but not after a 401: find out whether the login is gone.
    api('/auth/me').catch((err) => err instanceof HttpFailure && err.status === 401 && showLogin('Your login has ended; log in again.'));
  };
  for (const name of EVENT_NAMES) {
    source.addEventListener(name, (m) => {
      try {
        onLiveEvent(name, JSON.parse(/** @type {MessageEvent} */ (m).data));
      } catch {
        // not JSON: not an event of ours
      }
    });
  }
}

function closeEvents() {
  source?.close();
  source = null;
  setLive('offline');
}

$('events-clear').addEventListener('click', () => {
  eventList.replaceChildren();
  deltaRow = null;
});

// ---- sessions ----------------------------------------------------------------------------------

async function loadSessions() {
  const list = $('session-list');
  try {
    const { sessions } = await api('/api/sessions');
    list.replaceChildren(...(sessions.length ? sessions.map(sessionItem) : [el('li', 'muted', 'No sessions yet.')]));
  } catch (err) {
    list.replaceChildren(el('li', 'error', message(err)));
  }
}

/** @param {Data} s */
function sessionItem(s) {
  const b = /** @type {HTMLButtonElement} */ (el('button', 'item'));
  b.type = 'button';
  b.append(el('strong', '', s.key), el('span', 'muted', ` ${s.messages} messages, ${new Date(s.updatedAt).toLocaleString()}`), el('span', 'preview', str(s.preview)));
  b.addEventListener('click', () => void openSession(s.key));
  const li = el('li');
  li.append(b);
  return li;
}

/** @param {string} key */
async function openSession(key) {
  const log = $('session-log');
  $('session-title').textContent = key;
  $('session-view').hidden = false;
  $('session-list').hidden = true;
  try {
    const { messages } = await api(`/api/sessions/${encodeURIComponent(key)}`);
    log.replaceChildren(
      ...messages.map((/** @type {Data} */ m) => {
        const item = el('div', `msg ${m.role}`, m.text);
        for (const t of m.tools) item.append(el('div', `tool${t.isError ? ' failed' : ''}`, `${t.name}${t.isError ? ' (failed)' : ''}`));
        return item;
      }),
    );
  } catch (err) {
    log.replaceChildren(el('div', 'msg error', message(err)));
  }
}

$('sessions-refresh').addEventListener('click', () => void loadSessions());
$('session-close').addEventListener('click', () => {
  $('session-view').hidden = true;
  $('session-list').hidden = false;
});

// ---- memory ------------------------------------------------------------------------------------

$('memory-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const q = /** @type {HTMLInputElement} */ ($('memory-q')).value.trim();
  const note = $('memory-note');
  const results = $('memory-results');
  note.textContent = 'Searching…';
  results.replaceChildren();
  try {
    const r = await api(`/api/memory/search?q=${encodeURIComponent(q)}`);
    note.textContent = r.results.length ? '' : 'Nothing found.';
    results.replaceChildren(...r.results.map((/** @type {Data} */ x) => el('li', 'block', `[${str(x.citation)}] ${str(x.text).replace(/\s*\n\s*/g, ' ')}`)));
  } catch (err) {
    note.textContent = message(err);
  }
});

// ---- audit -------------------------------------------------------------------------------------

/** @type {number | null} */
let auditBefore = null;

/** @param {boolean} [older] */
async function loadAudit(older = false) {
  const body = /** @type {HTMLTableElement} */ ($('audit-table')).tBodies[0];
  if (!body) return;
  try {
    const r = await api(`/api/audit?limit=50${older && auditBefore !== null ? `&before=${auditBefore}` : ''}`);
    const rows = r.rows.map((/** @type {Data} */ a) => {
      const tr = el('tr', a.physical ? 'physical' : a.outcome === 'denied' || a.outcome === 'error' ? 'bad' : '');
      for (const cell of [time(a.at), a.tool, a.outcome, a.session, a.input, [a.rule, a.detail, a.physical].filter(Boolean).join(' · '), a.durationMs === null ? '' : `${a.durationMs} ms`]) tr.append(el('td', '', str(cell)));
      return tr;
    });
    if (older) body.append(...rows);
    else body.replaceChildren(...rows);
    if (!rows.length && !older) body.append(el('tr', 'muted', 'No tool calls yet.'));
    auditBefore = r.before;
    $('audit-more').hidden = r.before === null;
  } catch (err) {
    body.replaceChildren(el('tr', 'error', message(err)));
  }
}

$('audit-refresh').addEventListener('click', () => void loadAudit());
$('audit-more').addEventListener('click', () => void loadAudit(true));

// ---- board and health --------------------------------------------------------------------------

async function loadBoard() {
  const view = $('board-view');
  try {
    const r = await api('/api/board');
    const b = r.board;
    /** @param {unknown} v */
    const show = (v) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));
    view.textContent = b === null ? `No board: ${str(r.reason)}.` : typeof b === 'object' && !Array.isArray(b) ? Object.entries(b).map(([k, v]) => `${k}:\n${show(v)}`).join('\n\n') : show(b);
  } catch (err) {
    view.textContent = message(err);
  }
}

/** @param {number} s */
function duration(s) {
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return d ? `${d}d ${h}h` : h ? `${h}h ${m}m` : `${m}m ${s % 60}s`;
}

async function loadHealth() {
  const facts = $('health-facts');
  try {
    const r = await api('/api/status');
    /** @type {[string, string][]} */
    const rows = [
      ['Version', `${r.version} (Node ${r.node}, ${r.arch})`],
      ['Uptime', duration(r.uptimeS)],
      ['Memory', `${(r.rssBytes / 1048576).toFixed(1)} MiB`],
      ['Inbound', Object.entries(r.queue.inbound).map(([k, v]) => `${k} ${v}`).join(', ')],
      ['Outbound pending', Object.entries(r.queue.outboundPending).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'],
    ];
    facts.replaceChildren(...rows.flatMap(([k, v]) => [el('dt', '', k), el('dd', '', v)]));
    /** @type {Map<string, Data>} */
    /** @type {Data[]} */
    const channels = r.channels ?? [];
    $('health-channels').replaceChildren(...(channels.length ? channels.map((c) => el('li', `channel ${str(c.state)}`, `${str(c.channel)}: ${str(c.state)}${c.detail ? ` (${str(c.detail)})` : ''}`)) : [el('li', 'muted', 'No channel reports its state.')]));
  } catch (err) {
    facts.replaceChildren(el('dd', 'error', message(err)));
  }
}

$('board-refresh').addEventListener('click', () => void loadBoard());
$('health-refresh').addEventListener('click', () => void loadHealth());
window.setInterval(() => {
  if (!$('app').hidden && document.visibilityState === 'visible' && $('health').matches('.active, .side')) void loadHealth();
}, 15000);

// ---- start -------------------------------------------------------------------------------------

api('/auth/me').then(showApp, () => showLogin());
