// @ts-check
// What the admin views (home.js, admin.js) share: DOM building and JSON calls. Apart from app.js so
// that the views do not reach into its internals; everything from the server is shown with
// textContent, never parsed as HTML.

/** @typedef {Record<string, any>} Data */

/** @param {string} id */
export const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * @param {string} tag
 * @param {string} [className]
 * @param {string} [text]
 */
export function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** @param {string} text @param {() => void | Promise<void>} onClick @param {string} [className] */
export function button(text, onClick, className = 'quiet') {
  const b = /** @type {HTMLButtonElement} */ (el('button', className, text));
  b.type = 'button';
  b.addEventListener('click', () => void onClick());
  return b;
}

/** @param {unknown} err */
export const message = (err) => (err instanceof Error ? err.message : String(err));

/** @param {unknown} v */
export const str = (v) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

export const LOGIN_ENDED = 'Your login has ended; log in again.';

export class HttpFailure extends Error {
  /** @param {number} status 0 when the gateway did not answer at all @param {string} message */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

const unreachable = () => `The gateway is not reachable at ${location.host}: it is stopped, restarting, or the network is down.`;

/**
 * fetch, with a failure to connect said in words (the browser's own is "Failed to fetch").
 * @param {string} path
 * @param {RequestInit} init
 */
export async function request(path, init) {
  try {
    return await fetch(path, init);
  } catch (err) {
    if (init.signal?.aborted) throw err;
    throw new HttpFailure(0, unreachable());
  }
}

/**
 * The server's own error message, else the status in words; a 401 is the login gone, except from
 * /auth/ itself (a wrong token: the server says so).
 * @param {Response} res
 */
export async function failure(res) {
  const text = await res.text().catch(() => '');
  let error = '';
  try {
    error = str(JSON.parse(text).error);
  } catch {
    error = text.trim().slice(0, 300);
  }
  if (res.status === 401 && !new URL(res.url, location.href).pathname.startsWith('/auth/')) return new HttpFailure(401, LOGIN_ENDED);
  if (res.status === 503 && !error) error = 'the gateway is busy or stopping; try again in a moment';
  return new HttpFailure(res.status, error || `the gateway answered ${res.status} ${res.statusText}`);
}

/**
 * JSON from the gateway; a refusal is an HttpFailure with the server's own words (401: LOGIN_ENDED),
 * a gateway that does not answer one that says so. app.js's api() and the views' call() both use it.
 * @param {string} path
 * @param {RequestInit} [init]
 * @returns {Promise<Data>}
 */
export async function fetchJson(path, init = {}) {
  const res = await request(path, { ...init, headers: { accept: 'application/json', ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers } });
  if (!res.ok) throw await failure(res);
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : {};
  } catch {
    return { error: text };
  }
}

/**
 * JSON for the admin views: a body is sent as JSON with POST.
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<Data>}
 */
export function call(path, body) {
  return fetchJson(path, body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) });
}

/** Shows a result or a refusal in a note element (role=status or alert in the page). @param {HTMLElement} note @param {string} text @param {boolean} [bad] */
export function say(note, text, bad = false) {
  note.textContent = text;
  note.classList.toggle('error', bad);
}

/** @param {string} iso */
export const when = (iso) => new Date(iso).toLocaleString();
