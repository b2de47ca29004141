// @ts-check
// The dashboard's tabs, as an accessible tablist (role tablist/tab/tabpanel, aria-selected, one tab
// in the focus order, arrow keys, Home and End). A view is added by adding its two parts to
// index.html, nothing here:
//   <button type="button" data-tab="x">X</button>     inside <div class="tabs">
//   <section id="x" class="pane">…</section>           inside <main id="app">
// A section with `data-full` takes the whole width on a wide screen (the chat steps aside);
// the others share it with the chat. Whenever a pane is shown it gets a `pane-show` event, so a
// view's own module loads its data with
//   document.getElementById('x').addEventListener('pane-show', load);

const WIDE = window.matchMedia('(min-width: 900px)');

/** @returns {HTMLButtonElement[]} */
const tabs = () => [...document.querySelectorAll('.tabs [data-tab]')].map((b) => /** @type {HTMLButtonElement} */ (b));

let current = 'chat';
/** the pane beside the chat on a wide screen */
let side = '';

/** Gives the tabs and panes their roles; safe to call again after a view added its parts. */
export function setUpTabs() {
  const list = document.querySelector('.tabs');
  if (!list) return;
  list.setAttribute('role', 'tablist');
  for (const b of tabs()) {
    const id = b.dataset.tab ?? '';
    const pane = document.getElementById(id);
    b.setAttribute('role', 'tab');
    b.id ||= `tab-${id}`;
    b.setAttribute('aria-controls', id);
    if (pane) {
      pane.setAttribute('role', 'tabpanel');
      pane.setAttribute('aria-labelledby', b.id);
      pane.removeAttribute('aria-label');
    }
    if (b.dataset.wired) continue;
    b.dataset.wired = '1';
    b.addEventListener('click', () => showTab(id));
    b.addEventListener('keydown', onKey);
  }
}

/** @param {KeyboardEvent} e */
function onKey(e) {
  const visible = tabs().filter((b) => b.offsetParent !== null);
  const at = visible.indexOf(/** @type {HTMLButtonElement} */ (e.currentTarget));
  const to = e.key === 'ArrowRight' ? at + 1 : e.key === 'ArrowLeft' ? at - 1 : e.key === 'Home' ? 0 : e.key === 'End' ? visible.length - 1 : null;
  if (to === null || at < 0) return;
  e.preventDefault();
  const next = visible[(to + visible.length) % visible.length];
  if (!next) return;
  next.focus();
  showTab(next.dataset.tab ?? 'chat');
}

/** The tab shown (on a wide screen the chat is beside it unless it is full-width). */
export const currentTab = () => current;

/** @param {string} id */
export function isShown(id) {
  return id === current || id === side;
}

/** @param {string} tab */
export function showTab(tab) {
  const pane = document.getElementById(tab);
  if (!pane) return;
  current = tab;
  const wide = WIDE.matches;
  // On a wide screen the chat keeps the left column; the tab chooses the right one, or the whole
  // width for a full-width view.
  if (tab !== 'chat') side = tab;
  else if (wide && !side) side = tabs().find((b) => b.dataset.tab !== 'chat' && !document.getElementById(b.dataset.tab ?? '')?.hasAttribute('data-full'))?.dataset.tab ?? '';
  const full = wide && pane.hasAttribute('data-full');
  document.getElementById('app')?.classList.toggle('full', full);
  const selected = wide && tab === 'chat' ? side : tab;
  for (const p of document.querySelectorAll('.pane')) {
    p.classList.toggle('active', p.id === tab);
    p.classList.toggle('side', wide && p.id === side && p.id !== 'chat' && !full);
  }
  for (const b of tabs()) {
    const on = b.dataset.tab === selected;
    b.setAttribute('aria-selected', String(on));
    b.tabIndex = on ? 0 : -1;
    // On a phone the row scrolls: the chosen tab is brought into view.
    if (on) b.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }
  for (const id of new Set([tab, wide && !full ? side : ''])) if (id) document.getElementById(id)?.dispatchEvent(new Event('pane-show'));
}

WIDE.addEventListener('change', () => showTab(current));
