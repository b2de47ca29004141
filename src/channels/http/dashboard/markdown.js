// @ts-check
// A small Markdown renderer for the model's replies: headings, paragraphs with line breaks, fenced
// code, inline code, bold, italic, strike-through, lists (one level, numbered or not), quotes,
// tables, rules and links. It builds DOM nodes and puts the model's text in with text nodes only:
// nothing the model writes is ever parsed as HTML, so a <script> or an <img onerror> in a reply is
// shown as the characters it is (the strongest form of "escape first"). Links keep only http(s) and
// mailto targets; any other (javascript:, data:) stays plain text.

const FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)\s*$/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const BULLET = /^\s{0,3}[-*+]\s+(.*)$/;
const NUMBERED = /^\s{0,3}(\d{1,9})[.)]\s+(.*)$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
const TABLE_RULE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
const LINK_SCHEMES = new Set(['http:', 'https:', 'mailto:']);

// One alternative per inline form; the first match wins, left to right.
const INLINE = new RegExp(
  [
    /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/.source, // 1, 2: code
    /\*\*(?=\S)([\s\S]*?\S)\*\*/.source, // 3: bold
    /__(?=\S)([\s\S]*?\S)__(?!\w)/.source, // 4: bold
    /\*(?=[^\s*])([\s\S]*?[^\s*])\*/.source, // 5: italic
    /(?<!\w)_(?=[^\s_])([\s\S]*?[^\s_])_(?!\w)/.source, // 6: italic
    /~~(?=\S)([\s\S]*?\S)~~/.source, // 7: strike
    /\[([^\]\n]+)\]\(\s*<?([^\s<>()]*(?:\([^\s<>()]*\)[^\s<>()]*)*)>?\s*\)/.source, // 8, 9: link
    /(?<![\w/])(https?:\/\/[^\s<>"]*[^\s<>".,:;!?')\]])/.source, // 10: a bare address
  ].join('|'),
  'g',
);

/**
 * @param {string} tag
 * @param {(Node | string)[]} [children]
 */
function node(tag, children = []) {
  const e = document.createElement(tag);
  e.append(...children);
  return e;
}

/** @param {string} href @returns {string | null} the address when it is one a link may go to */
function safeHref(href) {
  try {
    const u = new URL(href);
    return LINK_SCHEMES.has(u.protocol) ? u.href : null;
  } catch {
    return null;
  }
}

/** @param {string} href @param {(Node | string)[]} children */
function link(href, children) {
  const a = /** @type {HTMLAnchorElement} */ (node('a', children));
  a.href = href;
  a.target = '_blank';
  a.rel = 'noopener noreferrer';
  return a;
}

/**
 * Inline Markdown as nodes; a line break inside a paragraph stays one.
 * @param {string} text
 * @returns {(Node | string)[]}
 */
export function inline(text) {
  /** @type {(Node | string)[]} */
  const out = [];
  let at = 0;
  /** @param {string} s */
  const plain = (s) => {
    const lines = s.split('\n');
    lines.forEach((l, i) => {
      if (i) out.push(document.createElement('br'));
      if (l) out.push(l);
    });
  };
  for (const m of text.matchAll(INLINE)) {
    const start = m.index ?? 0;
    if (start < at) continue;
    plain(text.slice(at, start));
    at = start + m[0].length;
    if (m[2] !== undefined) out.push(node('code', [m[2].replace(/^ (.*) $/s, '$1')]));
    else if (m[3] !== undefined || m[4] !== undefined) out.push(node('strong', inline(m[3] ?? m[4] ?? '')));
    else if (m[5] !== undefined || m[6] !== undefined) out.push(node('em', inline(m[5] ?? m[6] ?? '')));
    else if (m[7] !== undefined) out.push(node('del', inline(m[7])));
    else if (m[8] !== undefined) {
      const href = safeHref(m[9] ?? '');
      if (href) out.push(link(href, inline(m[8])));
      else plain(m[0]);
    } else if (m[10] !== undefined) {
      const href = safeHref(m[10]);
      if (href) out.push(link(href, [m[10]]));
      else plain(m[10]);
    }
  }
  plain(text.slice(at));
  return out;
}

/** @param {string} line */
function cells(line) {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  return s.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

/** @param {string[]} lines the header, the rule and the rows */
function table(lines) {
  const align = cells(lines[1] ?? '').map((c) => (c.startsWith(':') && c.endsWith(':') ? 'center' : c.endsWith(':') ? 'right' : ''));
  /** @param {string} line @param {string} tag */
  const row = (line, tag) =>
    node('tr', cells(line).map((c, i) => {
      const cell = node(tag, inline(c));
      if (align[i]) cell.style.textAlign = align[i] ?? '';
      return cell;
    }));
  const t = node('table', [node('thead', [row(lines[0] ?? '', 'th')]), node('tbody', lines.slice(2).map((l) => row(l, 'td')))]);
  // A wide table scrolls by itself rather than widening the chat.
  const wrap = node('div', [t]);
  wrap.className = 'md-table';
  return wrap;
}

/**
 * The Markdown text as a fragment of DOM nodes.
 * @param {string} text
 * @returns {DocumentFragment}
 */
export function renderMarkdown(text) {
  const out = document.createDocumentFragment();
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  /** @type {string[]} */
  let para = [];
  const flush = () => {
    if (para.length) out.append(node('p', inline(para.join('\n'))));
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const body = [];
      const close = new RegExp(`^\\s{0,3}${fence[1]?.[0] === '`' ? '`' : '~'}{${fence[1]?.length ?? 3},}\\s*$`);
      for (i++; i < lines.length && !close.test(lines[i] ?? ''); i++) body.push(lines[i] ?? '');
      const code = node('code', [body.join('\n')]);
      if (fence[2]) code.dataset.lang = fence[2];
      out.append(node('pre', [code]));
      continue;
    }
    if (!line.trim()) {
      flush();
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      // The chat's own headings are h1-h3: the model's start below them.
      out.append(node(`h${Math.min(6, (heading[1]?.length ?? 1) + 3)}`, inline(heading[2] ?? '')));
      continue;
    }
    if (RULE.test(line)) {
      flush();
      out.append(node('hr'));
      continue;
    }
    if (line.includes('|') && TABLE_RULE.test(lines[i + 1] ?? '') && (lines[i + 1] ?? '').includes('-')) {
      flush();
      const rows = [line, lines[i + 1] ?? ''];
      for (i += 2; i < lines.length && (lines[i] ?? '').includes('|') && (lines[i] ?? '').trim(); i++) rows.push(lines[i] ?? '');
      i--;
      out.append(table(rows));
      continue;
    }
    const bullet = BULLET.exec(line);
    const numbered = bullet ? null : NUMBERED.exec(line);
    if (bullet || numbered) {
      flush();
      const ordered = !!numbered;
      const list = node(ordered ? 'ol' : 'ul');
      if (numbered && numbered[1] !== '1') /** @type {HTMLOListElement} */ (list).start = Number(numbered[1]);
      /** @type {string[]} */
      let item = [];
      const end = () => item.length && list.append(node('li', inline(item.join('\n'))));
      for (; i < lines.length; i++) {
        const l = lines[i] ?? '';
        const m = ordered ? NUMBERED.exec(l) : BULLET.exec(l);
        if (m) {
          end();
          item = [(ordered ? m[2] : m[1]) ?? ''];
        } else if (l.trim() && /^\s{2,}/.test(l)) item.push(l.trim()); // a continued item
        else break;
      }
      end();
      i--;
      out.append(list);
      continue;
    }
    if (QUOTE.test(line)) {
      flush();
      const quoted = [];
      for (; i < lines.length && QUOTE.test(lines[i] ?? ''); i++) quoted.push(QUOTE.exec(lines[i] ?? '')?.[1] ?? '');
      i--;
      out.append(node('blockquote', [renderMarkdown(quoted.join('\n'))]));
      continue;
    }
    para.push(line);
  }
  flush();
  return out;
}
