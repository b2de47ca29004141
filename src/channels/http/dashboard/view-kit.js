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

/**
 * JSON from the gateway; a refusal becomes an Error with the server's own words.
 * @param {string} path
 * @param {unknown} [body] sent as JSON with POST
 * @returns {Promise<Data>}
 */
export async function call(path, body) {
  const init = body === undefined ? {} : { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } };
  const res = await fetch(path, { ...init, headers: { accept: 'application/json', ...init.headers } });
  const text = await res.text();
  /** @type {Data} */
  let data = {};
  try {
    data = text ? JSON.parse(text) : {};
  } catch {
    data = { error: text };
  }
  if (res.status === 401) throw new Error('not logged in: reload the page and log in again');
  if (!res.ok) throw new Error(typeof data.error === 'string' ? data.error : `${res.status} ${res.statusText}`);
  return data;
}

/** Shows a result or a refusal in a note element (role=status or alert in the page). @param {HTMLElement} note @param {string} text @param {boolean} [bad] */
export function say(note, text, bad = false) {
  note.textContent = text;
  note.classList.toggle('error', bad);
}

/** @param {string} iso */
export const when = (iso) => new Date(iso).toLocaleString();
