// @ts-check
// The Cron, Pairings, Logs and Config views. Every change goes through the gateway's own checks
// (the scheduler's, the pairing store's, `config set`'s); a refusal is shown in the view's note in
// the server's words, and nothing is changed.
import { $, button, call, el, message, say, when } from './view-kit.js';

/** @typedef {import('./view-kit.js').Data} Data */

// ---- cron --------------------------------------------------------------------------------------

/** @param {Data} j */
function jobRow(j) {
  const li = el('li', `job ${j.state}`);
  const head = el('div', 'row');
  head.append(el('strong', '', `#${j.id} ${j.schedule}`), el('span', `badge ${j.state}`, j.state));
  const last = j.lastRun ? `last run ${when(j.lastRun.firedAt)}: ${j.lastRun.outcome}` : 'never run';
  li.append(head, el('p', 'preview', j.message), el('p', 'muted', `${j.state === 'active' ? `next ${j.nextRun === 'none' ? 'none' : when(j.nextRun)}; ` : ''}${last}`));
  const act = (/** @type {string} */ what) => async () => {
    try {
      say($('cron-note'), (await call(`/api/cron/${j.id}/${what}`, {})).message);
    } catch (err) {
      say($('cron-note'), message(err), true);
    }
    await loadCron(false);
  };
  const history = el('ol', 'runs');
  const buttons = el('div', 'row');
  buttons.append(
    j.state === 'paused' ? button('Resume', act('resume')) : button('Pause', act('pause')),
    button('Run now', act('run')),
    button('History', async () => {
      try {
        const { runs } = await call(`/api/cron/${j.id}/runs`);
        history.replaceChildren(...(runs.length ? runs.map((/** @type {Data} */ r) => el('li', `run ${r.outcome}`, `${when(r.firedAt)} ${r.kind}: ${r.outcome}${r.reply ? ` — ${r.reply}` : ''}`)) : [el('li', 'muted', 'not run yet')]));
      } catch (err) {
        history.replaceChildren(el('li', 'error', message(err)));
      }
    }),
  );
  li.append(buttons, history);
  return li;
}

/** @param {boolean} [clearNote] */
export async function loadCron(clearNote = true) {
  if (clearNote) say($('cron-note'), '');
  try {
    const { jobs } = await call('/api/cron');
    $('cron-list').replaceChildren(...(jobs.length ? jobs.map(jobRow) : [el('li', 'muted', 'No jobs yet.')]));
  } catch (err) {
    say($('cron-note'), message(err), true);
  }
}

$('cron-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const form = /** @type {HTMLFormElement} */ (e.target);
  const data = new FormData(form);
  try {
    const r = await call('/api/cron', { cron: data.get('cron'), message: data.get('message') });
    say($('cron-note'), r.message);
    form.reset();
  } catch (err) {
    say($('cron-note'), message(err), true);
  }
  await loadCron(false);
});
$('cron-refresh').addEventListener('click', () => void loadCron());

// ---- pairings ----------------------------------------------------------------------------------

/** @param {boolean} [clearNote] */
export async function loadPairings(clearNote = true) {
  const note = $('pairings-note');
  if (clearNote) say(note, '');
  /** @param {string} path @param {Data} body @param {string} done */
  const act = (path, body, done) => async () => {
    try {
      await call(path, body);
      say(note, done);
    } catch (err) {
      say(note, message(err), true);
    }
    await loadPairings(false);
  };
  try {
    const { pairings } = await call('/api/pairings');
    const pending = pairings.filter((/** @type {Data} */ p) => p.state === 'pending');
    const paired = pairings.filter((/** @type {Data} */ p) => p.state === 'approved');
    $('pairings-pending').replaceChildren(
      ...(pending.length
        ? pending.map((/** @type {Data} */ p) => {
            const li = el('li', 'pairing row');
            li.append(el('strong', '', `${p.channel} ${p.label ?? p.id}`), el('span', 'muted', `code ${p.code}${p.expired ? ' (expired)' : ''}, asked ${when(p.since)}`));
            if (!p.expired) li.append(button('Approve', act('/api/pairings/approve', { code: p.code }, `approved ${p.channel} ${p.label ?? p.id}`), ''));
            li.append(button('Refuse', act('/api/pairings/revoke', { channel: p.channel, id: p.id }, `refused ${p.channel} ${p.label ?? p.id}`)));
            return li;
          })
        : [el('li', 'muted', 'Nobody is waiting.')]),
    );
    $('pairings-paired').replaceChildren(
      ...(paired.length
        ? paired.map((/** @type {Data} */ p) => {
            const li = el('li', 'pairing row');
            li.append(el('strong', '', `${p.channel} ${p.label ?? p.id}`), el('span', 'muted', `${p.id}, since ${when(p.since)}`), button('Revoke', act('/api/pairings/revoke', { channel: p.channel, id: p.id }, `revoked ${p.channel} ${p.label ?? p.id}`)));
            return li;
          })
        : [el('li', 'muted', 'No paired browsers or senders.')]),
    );
  } catch (err) {
    say(note, message(err), true);
  }
}
$('pairings-refresh').addEventListener('click', () => void loadPairings());

// ---- logs --------------------------------------------------------------------------------------

const MAX_LOG_LINES = 500;
let lastSeq = 0;
let logTimer = 0;

async function pollLogs() {
  window.clearTimeout(logTimer);
  const list = $('logs-list');
  try {
    const { lines } = await call(`/api/logs?after=${lastSeq}`);
    for (const l of lines) {
      list.append(el('li', `log-line ${l.level}`, `${new Date(l.at).toLocaleTimeString()} ${l.level}: ${l.text}`));
      lastSeq = l.seq;
    }
    while (list.childElementCount > MAX_LOG_LINES) list.firstElementChild?.remove();
    if (lines.length && /** @type {HTMLInputElement} */ ($('logs-follow')).checked) list.scrollTop = list.scrollHeight;
    say($('logs-note'), list.childElementCount ? '' : 'Nothing logged yet.');
  } catch (err) {
    say($('logs-note'), message(err), true);
  }
  // Live while the view is on screen; a hidden view or tab asks nothing.
  if ($('logs').matches('.active, .side') && document.visibilityState === 'visible') logTimer = window.setTimeout(() => void pollLogs(), 2000);
}

export function loadLogs() {
  void pollLogs();
}

// ---- config ------------------------------------------------------------------------------------

/** @param {Data} k */
function keyRow(k) {
  const form = /** @type {HTMLFormElement} */ (el('form', 'config-key'));
  const id = `cfg-${k.key.replace(/\W/g, '-')}`;
  const label = /** @type {HTMLLabelElement} */ (el('label', '', k.key));
  label.htmlFor = id;
  /** @type {HTMLInputElement | HTMLSelectElement} */
  let input;
  if (k.kind === 'enum') {
    input = /** @type {HTMLSelectElement} */ (el('select'));
    for (const v of k.values) input.append(new Option(v, v, false, v === k.value));
  } else {
    input = /** @type {HTMLInputElement} */ (el('input'));
    input.type = k.secret ? 'password' : 'text';
    input.value = k.value;
    input.autocomplete = 'off';
    input.spellcheck = false;
    if (k.secret) input.placeholder = k.isSet ? 'set (hidden); type a new value to replace it' : 'not set';
    else if (k.kind === 'array') input.placeholder = '["…"] (JSON)';
  }
  input.id = id;
  input.name = 'value';
  const note = el('p', 'muted', '');
  note.setAttribute('role', 'status');
  const save = /** @type {HTMLButtonElement} */ (el('button', '', 'Save'));
  save.type = 'submit';
  const row = el('div', 'row');
  row.append(input, save);
  form.append(label, el('p', 'muted small', `${k.description}${k.inFile ? '' : ' (not in the file: the default)'}`), row, note);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (k.secret && !input.value) return say(note, 'type the new value first (the current one is never shown)', true);
    save.disabled = true;
    try {
      const r = await call('/api/config', { key: k.key, value: input.value });
      say(note, `${r.note}${r.encrypted ? ' (stored encrypted)' : ''}${r.stillToFix.length ? `; still to fix: ${r.stillToFix.join('; ')}` : ''}`);
    } catch (err) {
      say(note, message(err), true);
    } finally {
      save.disabled = false;
    }
  });
  return form;
}

/**
 * Shown once, and again on Refresh: a tab switch or a rotated phone (app.js shows the tab again)
 * must not throw away what the owner is typing.
 * @param {boolean} [fresh]
 */
export async function loadConfig(fresh = false) {
  if (!fresh && $('config-form').childElementCount) return;
  try {
    const c = await call('/api/config');
    say($('config-note'), c.problem ? `${c.file} has problems: ${c.problem}` : `${c.file}: changes are checked as pinclaw config set checks them, and apply at the gateway's next start.`, !!c.problem);
    $('config-form').replaceChildren(...c.keys.map(keyRow));
  } catch (err) {
    say($('config-note'), message(err), true);
  }
}
$('config-refresh').addEventListener('click', () => void loadConfig(true));
