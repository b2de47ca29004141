// @ts-check
// The Home view: the named lines with their state and a switch for outputs, the sensors with their
// last value and a plot of the last 24 hours, the board's temperature, throttling and disk. A switch
// asks the gateway for a gpio_write through the tool registry; when the policy wants the owner's
// yes, the question shows here (it is also on the events stream) and the answer goes to /api/confirm.
import { $, button, call, el, message, say } from './view-kit.js';

/** @typedef {import('./view-kit.js').Data} Data */

const SVG = 'http://www.w3.org/2000/svg';
const W = 600;
const H = 160;
const PAD = 28;

/** @param {string} tag @param {Record<string, string | number>} attrs */
function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** @param {number} n */
const num = (n) => (Math.abs(n) >= 1000 ? n.toFixed(0) : Number(n.toPrecision(4)).toString());

/**
 * A line plot of readings over time, as inline SVG: no library, a few hundred points at most.
 * @param {{ at: number, value: number }[]} readings oldest first
 * @param {string} label what is plotted, for screen readers
 * @param {[number, number]} [range] the value axis; by default the readings' own span
 */
export function plot(readings, label, range) {
  const box = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'plot', role: 'img', 'aria-label': label });
  const t0 = readings[0].at;
  const t1 = readings[readings.length - 1].at;
  const vs = readings.map((r) => r.value);
  let [lo, hi] = range ?? [Math.min(...vs), Math.max(...vs)];
  if (hi === lo) [lo, hi] = [lo - 1, hi + 1];
  const x = (/** @type {number} */ t) => PAD + ((t - t0) / (t1 - t0 || 1)) * (W - 2 * PAD);
  const y = (/** @type {number} */ v) => H - PAD / 2 - ((v - lo) / (hi - lo)) * (H - PAD);
  box.append(svg('line', { x1: PAD, y1: y(lo), x2: W - PAD, y2: y(lo), class: 'axis' }));
  const points = readings.length === 1 ? `${x(t0) - 3},${y(vs[0])} ${x(t0) + 3},${y(vs[0])}` : readings.map((r) => `${x(r.at).toFixed(1)},${y(r.value).toFixed(1)}`).join(' ');
  box.append(svg('polyline', { points, class: 'trace' }));
  for (const [v, yy] of [[hi, y(hi) + 4], [lo, y(lo) - 2]]) {
    const t = svg('text', { x: 2, y: yy, class: 'tick' });
    t.textContent = num(v);
    box.append(t);
  }
  for (const [t, anchor] of [[t0, 'start'], [t1, 'end']]) {
    const e = svg('text', { x: anchor === 'start' ? PAD : W - PAD, y: H - 1, class: 'tick', 'text-anchor': String(anchor) });
    e.textContent = new Date(Number(t)).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
    box.append(e);
  }
  return box;
}

/**
 * @param {'sensor' | 'line'} kind
 * @param {string} name
 */
async function readingsPlot(kind, name) {
  const holder = el('div', 'plot-box');
  try {
    const r = await call(`/api/readings?${kind}=${encodeURIComponent(name)}`);
    // A line nobody switched and no trigger watches has no history: its state says enough.
    if (!r.readings.length) holder.append(...(kind === 'sensor' ? [el('p', 'muted', 'no readings yet')] : []));
    else {
      // A line holds its level until the next change: drawn on to now.
      const points = kind === 'line' ? [...r.readings, { at: Date.now(), value: r.readings.at(-1).value }] : r.readings;
      holder.append(plot(points, `${name}: ${r.readings.length} readings over the last 24 hours`, kind === 'line' ? [0, 1] : undefined));
    }
  } catch (err) {
    holder.append(el('p', 'error', message(err)));
  }
  return holder;
}

/** @param {Data} l */
async function lineRow(l) {
  const li = el('li', `home-line ${l.direction}`);
  const state = l.value === null ? `unknown${l.error ? ` (${l.error})` : ''}` : l.value ? 'on' : 'off';
  li.append(el('strong', '', l.name), el('span', 'muted', ` ${l.line}, ${l.direction}`), el('span', `state s-${l.value === null ? 'unknown' : l.value ? 'on' : 'off'}`, state));
  if (l.direction === 'output') {
    const next = l.value ? 0 : 1;
    const b = button(next ? 'Turn on' : 'Turn off', () => switchLine(l.name, next, b), '');
    b.dataset.line = l.name;
    li.append(b);
  } else li.append(el('span', 'muted', 'read only'));
  li.append(await readingsPlot('line', l.name));
  return li;
}

/** The dashboard's questions waiting for an answer, shown until the switch's call ends. */
let asking = 0;

async function showQuestions() {
  const box = $('home-confirm');
  try {
    const { pending } = await call('/api/confirm');
    // The Home view's own chat (src/channels/http/admin/home-api.ts HOME_CHAT).
    const mine = (pending ?? []).filter((/** @type {Data} */ q) => q.sessionKey === 'dashboard-home');
    box.replaceChildren(
      ...mine.map((/** @type {Data} */ q) => {
        const d = el('div', 'confirm');
        const state = el('span', 'muted', '');
        const answer = (/** @type {boolean} */ allow) => async () => {
          for (const b of d.querySelectorAll('button')) /** @type {HTMLButtonElement} */ (b).disabled = true;
          try {
            await call('/api/confirm', { id: q.id, allow });
            state.textContent = allow ? 'allowed' : 'denied';
          } catch (err) {
            state.textContent = message(err);
          }
        };
        const row = el('div', 'row');
        row.append(button('Allow', answer(true), ''), button('Deny', answer(false)), state);
        d.append(el('strong', '', `${q.tool} wants your yes`), el('p', '', String(q.summary)), ...(q.reason ? [el('p', '', String(q.reason))] : []), row);
        return d;
      }),
    );
  } catch (err) {
    box.replaceChildren(el('p', 'error', message(err)));
  }
}

/**
 * @param {string} name
 * @param {number} value
 * @param {HTMLButtonElement} [b]
 */
export async function switchLine(name, value, b) {
  const note = $('home-note');
  if (b) b.disabled = true;
  say(note, `${name}: asking the gateway…`);
  // The call waits for the owner's answer when one is needed: look for the question meanwhile.
  const poll = window.setInterval(() => void showQuestions(), 700);
  asking++;
  try {
    const r = await call(`/api/home/lines/${encodeURIComponent(name)}`, { value });
    say(note, r.ok ? `${name}: ${r.text}` : `${name} not switched: ${r.text}`, !r.ok);
  } catch (err) {
    say(note, message(err), true);
  } finally {
    window.clearInterval(poll);
    if (--asking === 0) $('home-confirm').replaceChildren();
    await loadHome(false);
  }
}

/** @param {Data} b */
function boardRows(b) {
  const gb = (/** @type {number} */ n) => `${(n / 1e9).toFixed(1)} GB`;
  /** @type {[string, string][]} */
  const rows = [
    ['Temperature', b.temperatureC === null ? `unknown${b.temperatureNote ? ` (${b.temperatureNote})` : ''}` : `${b.temperatureC.toFixed(1)} °C`],
    ['Throttling', `${b.throttling}${b.throttledRaw ? ` (${b.throttledRaw})` : ''}`],
    ['Disk', b.disk ? `${gb(b.disk.freeBytes)} free of ${gb(b.disk.totalBytes)} (${b.disk.path})` : 'unknown'],
  ];
  return rows.flatMap(([k, v]) => [el('dt', '', k), el('dd', '', v)]);
}

/** @param {boolean} [clearNote] */
export async function loadHome(clearNote = true) {
  if (clearNote) say($('home-note'), '');
  try {
    const h = await call('/api/home');
    $('home-lines').replaceChildren(...(h.lines.length ? await Promise.all(h.lines.map(lineRow)) : [el('li', 'muted', 'No named lines (hardware.lines).')]));
    const sensors = await Promise.all(
      h.sensors.map(async (/** @type {Data} */ s) => {
        const li = el('li', 'home-sensor');
        const last = s.last ? `${num(s.last.value)}${s.unit ? ` ${s.unit}` : ''} at ${new Date(s.last.at).toLocaleTimeString()}` : '';
        li.append(el('div', 'row', ''), await readingsPlot('sensor', s.name));
        /** @type {HTMLElement} */ (li.firstChild).append(el('strong', '', s.name), el('span', 'muted', last));
        return li;
      }),
    );
    $('home-sensors').replaceChildren(...(sensors.length ? sensors : [el('li', 'muted', 'No named sensors (hardware.sensors).')]));
    $('home-board').replaceChildren(...boardRows(h.board));
  } catch (err) {
    say($('home-note'), message(err), true);
  }
}

$('home-refresh').addEventListener('click', () => void loadHome());
