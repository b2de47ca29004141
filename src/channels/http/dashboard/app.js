// @ts-check
// The pinclaw dashboard: plain DOM, no framework, no build step. Everything the server sends is
// shown with textContent, never parsed as HTML; the model's replies are Markdown, rendered by
// markdown.js into nodes the same way.
import { renderMarkdown } from './markdown.js';
import { isShown, setUpTabs, showTab } from './tabs.js';
import { loadHome } from './home.js';
import { loadConfig, loadCron, loadLogs, loadPairings } from './admin.js';
import { $, el, fetchJson, HttpFailure, LOGIN_ENDED, message, request, failure, str } from './view-kit.js';

/** @typedef {Record<string, any>} Data */

// The bus's event names (src/conductor/bus.ts) and the stream's own (src/channels/http/api.ts).
const EVENT_NAMES = ['message_received', 'turn_start', 'turn_end', 'text_delta', 'retry', 'tool_start', 'tool_output', 'tool_end', 'reply', 'turn_error', 'turn_aborted', 'confirm_request', 'confirm_answer', 'channel_status', 'dropped'];
const STOPPING = 'gateway_stopping';
const MAX_EVENTS = 300;
const SESSION_KEY = 'pinclaw.session';

/** @param {string} iso */
const time = (iso) => new Date(iso).toLocaleTimeString();

/**
 * JSON from the gateway; a 401 means the login is gone, so the page goes back to the login form.
 * @param {string} path
 * @param {RequestInit} [init]
 * @returns {Promise<Data>}
 */
async function api(path, init = {}) {
  try {
    return await fetchJson(path, init);
  } catch (err) {
    if (err instanceof HttpFailure && err.status === 401 && !path.startsWith('/auth/')) showLogin(LOGIN_ENDED);
    throw err;
  }
}

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
  showTab('chat');
  void loadHistory().then(loadPendingConfirms);
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
    const { request, code, command } = await api('/auth/pair', { method: 'POST' });
    $('pair-box').hidden = false;
    $('pair-command').textContent = typeof command === 'string' ? command : `pinclaw pairing approve ${code}`;
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

// ---- tabs (tabs.js) -----------------------------------------------------------------------------

setUpTabs();
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
for (const [id, load] of Object.entries(onShow)) $(id).addEventListener('pane-show', load);

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

/** @type {WeakMap<HTMLElement, string>} the Markdown source of an assistant bubble */
const sources = new WeakMap();

/** An assistant bubble shows its text as Markdown. @param {HTMLElement} b @param {string} text */
function setText(b, text) {
  sources.set(b, text);
  if (b.classList.contains('assistant')) b.replaceChildren(renderMarkdown(text));
  else b.textContent = text;
}

/** @param {string} role @param {string} text */
function bubble(role, text) {
  const b = el('div', `msg ${role}`);
  setText(b, text);
  append(b);
  return b;
}

// A streamed reply is rendered again at most once a frame, not once per delta.
/** @type {Set<HTMLElement>} */
const dirty = new Set();
/** @param {HTMLElement} b @param {string} more */
function addText(b, more) {
  sources.set(b, (sources.get(b) ?? '') + more);
  if (!dirty.size) requestAnimationFrame(() => {
    for (const d of dirty) setText(d, sources.get(d) ?? '');
    dirty.clear();
    chatLog.scrollTop = chatLog.scrollHeight;
  });
  dirty.add(b);
}

/** @param {boolean} on */
function thinking(on) {
  $('thinking').hidden = !on;
}

/** A message of the session as the chat shows it. @param {Data} m */
function historyItem(m) {
  const items = [];
  if (m.text) {
    const b = el('div', `msg ${m.role}`);
    setText(b, m.text);
    items.push(b);
  }
  for (const t of m.tools) items.push(el('div', `tool${t.isError ? ' failed' : ''}`, `${t.name}${t.isError ? ' failed' : ' done'}`));
  return items;
}

const sessionInput = /** @type {HTMLInputElement} */ ($('session'));
sessionInput.value = localStorage.getItem(SESSION_KEY) || 'dashboard';
const chatSession = () => sessionInput.value.trim() || 'dashboard';

/** The session's messages, so that a reload (or opening another session) shows what was said. */
async function loadHistory() {
  const key = chatSession();
  localStorage.setItem(SESSION_KEY, key);
  toolLines.clear();
  confirmBoxes.clear();
  try {
    // A session that does not exist yet is an empty chat: looked up in the list rather than asked
    // for and answered 404, which the browser would log as an error.
    const { sessions } = await api('/api/sessions');
    // The list holds the latest 200: past that, the session is asked for all the same.
    const exists = sessions.length >= 200 || sessions.some((/** @type {Data} */ s) => s.key === key);
    const { messages } = exists ? await api(`/api/sessions/${encodeURIComponent(key)}`) : { messages: [] };
    chatLog.replaceChildren(...messages.flatMap(historyItem));
  } catch (err) {
    chatLog.replaceChildren(...(err instanceof HttpFailure && err.status === 404 ? [] : [el('div', 'msg error', message(err))]));
  }
  chatLog.scrollTop = chatLog.scrollHeight;
}

/** @param {string} key */
function openInChat(key) {
  sessionInput.value = key;
  showTab('chat');
  return loadHistory();
}

$('session-form').addEventListener('submit', (e) => {
  e.preventDefault();
  void loadHistory();
});
sessionInput.addEventListener('change', () => void loadHistory());

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
const chatStop = /** @type {HTMLButtonElement} */ ($('chat-stop'));

/** @param {string} text @param {{ show?: boolean }} [o] */
async function send(text = chatText.value.trim(), { show = true } = {}) {
  const session = chatSession();
  if (!text || chatSend.disabled) return;
  if (show) chatText.value = '';
  chatSend.disabled = true;
  chatStop.hidden = false;
  chatStop.disabled = false;
  thinking(true);
  if (show) bubble('user', text);
  /** @type {{ bubble: HTMLElement | null, aborted: boolean }} the reply being streamed */
  const streaming = { bubble: null, aborted: false };
  const reply = () => (streaming.bubble ??= bubble('assistant streaming', ''));
  try {
    const res = await request('/api/chat', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify({ session, text }) });
    if (res.status === 401) return showLogin(LOGIN_ENDED);
    if (!res.ok || !res.body) throw await failure(res);
    await readSse(res.body, (name, e) => {
      if (name === 'text_delta') {
        thinking(false);
        addText(reply(), str(e.text));
      }
      // The provider is asked again: what it streamed so far is void.
      else if (name === 'retry') {
        if (streaming.bubble) setText(streaming.bubble, '');
        thinking(true);
      } else if (name === 'tool_start') {
        // Text before a tool call is its own message; what follows goes in a new bubble.
        streaming.bubble?.classList.remove('streaming');
        streaming.bubble = null;
        thinking(false);
        toolStart(e);
      } else if (name === 'tool_output') toolOutput(e);
      else if (name === 'tool_end') {
        toolEnd(e);
        thinking(true);
      } else if (name === 'confirm_request') confirmRequest(e);
      else if (name === 'confirm_answer') confirmAnswer(e);
      else if (name === 'turn_error') append(el('div', 'msg error', str(e.message)));
      else if (name === 'turn_aborted') {
        streaming.aborted = true;
        append(el('div', 'msg aborted', 'Stopped. Nothing of this turn was kept.'));
      } else if (name === STOPPING) append(el('div', 'msg notice', 'The gateway is stopping; the reply comes once it is back (reload then).'));
      else if (name === 'reply' && 'reply' in e) {
        // A turn that ends in tool calls alone has nothing more to say; a stopped one said so above.
        if ((!e.reply && !streaming.bubble) || streaming.aborted) return;
        const b = reply();
        b.classList.remove('streaming');
        if (e.kind === 'notice') b.classList.add('notice');
        setText(b, str(e.reply));
      } else if (name === 'reply') bubble('assistant', str(e.text));
    });
  } catch (err) {
    append(el('div', 'msg error', message(err)));
  } finally {
    streaming.bubble?.classList.remove('streaming');
    thinking(false);
    chatSend.disabled = false;
    chatStop.hidden = true;
    chatText.focus();
  }
}

chatStop.addEventListener('click', async () => {
  chatStop.disabled = true;
  try {
    await api('/api/chat/abort', { method: 'POST', body: JSON.stringify({ session: chatSession() }) });
  } catch (err) {
    append(el('div', 'msg error', message(err)));
    chatStop.disabled = false;
  }
});

// Reset asks twice: the history it clears is not coming back.
/** @param {HTMLButtonElement} button @param {() => string} key @param {(reply: string) => void} done */
function resetButton(button, key, done) {
  let armed = 0;
  const label = button.textContent;
  button.addEventListener('click', async () => {
    if (!armed) {
      button.textContent = 'Really reset?';
      armed = window.setTimeout(() => {
        armed = 0;
        button.textContent = label;
      }, 4000);
      return;
    }
    clearTimeout(armed);
    armed = 0;
    button.textContent = label;
    button.disabled = true;
    try {
      // The same /reset a chat or Telegram message gives: the conductor clears the session.
      const r = await api('/api/chat', { method: 'POST', body: JSON.stringify({ session: key(), text: '/reset' }) });
      done(str(r.reply));
    } catch (err) {
      append(el('div', 'msg error', message(err)));
    } finally {
      button.disabled = false;
    }
  });
}
/** @param {string} reply */
const afterReset = (reply) => void loadHistory().then(() => append(el('div', 'msg notice', reply)));
resetButton(/** @type {HTMLButtonElement} */ ($('session-reset')), chatSession, afterReset);

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

/** The badge's states and what it says for each. */
const BADGE = { connecting: 'connecting', live: 'live', reconnecting: 'reconnecting', stopping: 'gateway stopping', unreachable: 'gateway unreachable', offline: 'offline', 'logged-out': 'not logged in' };

/** @param {keyof typeof BADGE} state */
function setLive(state) {
  const live = $('live');
  live.textContent = BADGE[state];
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
    case 'turn_error':
      return str(e.message);
    case 'turn_aborted':
      return 'stopped by the owner';
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
  else if (name === 'channel_status' && isShown('health')) void loadHealth();
}

/** the gateway said it is stopping; cleared once a stream opens again */
let stopping = false;
let retryTimer = 0;

// The stream's end is looked into, since EventSource says nothing of why: the gateway answers
// (reconnecting, or still stopping), does not (unreachable), or the login is gone.
async function lostStream() {
  if (!source) return;
  clearTimeout(retryTimer);
  try {
    const res = await fetch('/auth/me', { headers: { accept: 'application/json' } });
    if (res.status === 401) return showLogin(LOGIN_ENDED);
    if (!stopping) setLive('reconnecting');
  } catch {
    setLive('unreachable');
  }
  // EventSource retries by itself after a dropped connection, but not after a refusal (a 503 while
  // the gateway stops): then it is opened again here.
  if (source && source.readyState === EventSource.CLOSED) retryTimer = window.setTimeout(() => reopen(), 2000);
}

function reopen() {
  source?.close();
  source = null;
  openEvents();
}

function openEvents() {
  if (source) return;
  if (!stopping) setLive('connecting');
  source = new EventSource('/api/events');
  source.onopen = () => {
    stopping = false;
    setLive('live');
  };
  // Only the connection's own errors come here: the gateway's events have names of their own.
  source.onerror = () => void lostStream();
  source.addEventListener(STOPPING, () => {
    stopping = true;
    setLive('stopping');
  });
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
  clearTimeout(retryTimer);
  source?.close();
  source = null;
  setLive('logged-out');
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
  b.title = 'open in the chat';
  b.append(el('strong', '', s.key), el('span', 'muted', ` ${s.messages} messages, ${new Date(s.updatedAt).toLocaleString()}`), el('span', 'preview', str(s.preview)));
  b.addEventListener('click', () => void openInChat(s.key));
  const reset = /** @type {HTMLButtonElement} */ (el('button', 'quiet', 'Reset'));
  reset.type = 'button';
  reset.setAttribute('aria-label', `reset ${s.key}`);
  resetButton(reset, () => s.key, (reply) => {
    void loadSessions();
    if (s.key === chatSession()) afterReset(reply);
  });
  const li = el('li', 'session');
  li.append(b, reset);
  return li;
}

$('sessions-refresh').addEventListener('click', () => void loadSessions());

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
      for (const cell of [time(a.at), a.tool, a.outcome, a.session]) tr.append(el('td', '', str(cell)));
      for (const long of [str(a.input), [a.rule, a.detail, a.physical].filter(Boolean).join(' · ')]) tr.append(clipped(long));
      tr.append(el('td', 'num', a.durationMs === null ? '' : `${a.durationMs} ms`));
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

// A long input or detail shows its start on one line; selecting it shows all of it.
/** @param {string} text */
function clipped(text) {
  const td = el('td', 'long');
  if (text.length <= 60) {
    td.textContent = text;
    return td;
  }
  const b = el('button', 'clip', text);
  b.setAttribute('type', 'button');
  b.setAttribute('aria-expanded', 'false');
  b.addEventListener('click', () => b.setAttribute('aria-expanded', String(b.getAttribute('aria-expanded') !== 'true')));
  td.append(b);
  return td;
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
    // The MCP servers (mcp.servers), when the gateway runs any: each one's state, and why when down.
    /** @type {Data[]} */
    const mcp = r.mcp ?? [];
    if (mcp.length) rows.push(['MCP servers', mcp.map((m) => `${str(m.name)}: ${str(m.state)}${m.state === 'up' ? ` (${m.tools} tools)` : m.error ? ` (${str(m.error)})` : ''}`).join('; ')]);
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
  if (!$('app').hidden && document.visibilityState === 'visible' && isShown('health')) void loadHealth();
}, 15000);

// ---- start -------------------------------------------------------------------------------------

api('/auth/me').then(showApp, () => showLogin());
