// The agent's replies are Markdown; Telegram takes a small HTML subset and at most 4096 characters
// a message, counted on the text left once it has parsed the tags and entities. So the reply is
// lexed with marked and rendered here token by token (marked's own HTML would use tags Telegram
// rejects), into lines made of runs of text with their open tags. A message is cut between those
// lines, or between words or characters of one that is too long, and the tags open at a cut are
// closed before it and reopened after it. Each line also knows where its markdown starts, so every
// part carries its own source as the plain-text fallback.
// This file is a lazy chunk (src/lazy-chunk.ts): it must import nothing from src/.
import { Lexer, type MarkedToken, type Token, type Tokens } from 'marked';

export interface TelegramPart {
  /** Telegram HTML (parse_mode 'HTML') of this part. */
  html: string;
  /** The markdown source of the same part, to send as plain text when Telegram rejects the HTML. */
  text: string;
}

interface Tag { readonly name: string; readonly open: string; readonly close: string }
interface Run { readonly text: string; readonly tags: readonly Tag[] }
/** A block that, cut, starts the next part again: a code fence (reopened), a table (its header). */
interface Frame { head: Run[][]; headVis: number; headSrc: string; tailSrc: string }
/**
 * What a part is made of: a line, or a word or a slice of a line too long for a part. `sep` is the
 * visible text before it, dropped when a part starts there; `level` says how good a cut there is.
 * Its markdown runs from `src` to the next atom's; `probe` is text expected on its source line, to
 * find that line (containers re-indent their content), and `span` the lines it takes there.
 */
interface Atom { runs: Run[]; vis: number; sep: string; level: number; src: number; probe: string; span?: number; frame?: Frame }

const GLUE = 0, HARD = 1, SPACE = 2, LINE = 3, BLOCK = 4;
const MIN_LIMIT = 16;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
export function escapeHtml(s: string): string {
  return /[&<>"]/.test(s) ? s.replace(/[&<>"]/g, (c) => ESCAPES[c] ?? c) : s;
}

// The named entities a model plausibly writes; any other stays as typed (and is then escaped).
const NAMED: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', copy: '©', reg: '®', trade: '™',
  hellip: '…', mdash: '—', ndash: '–', lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”', laquo: '«',
  raquo: '»', bull: '•', middot: '·', deg: '°', plusmn: '±', times: '×', divide: '÷', euro: '€',
  pound: '£', yen: '¥', cent: '¢', sect: '§', para: '¶', larr: '←', rarr: '→', uarr: '↑', darr: '↓',
  harr: '↔', le: '≤', ge: '≥', ne: '≠', minus: '−', infin: '∞',
};
// Telegram knows only these four named entities (and every numeric one).
const TELEGRAM_NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"' };

function decodeEntities(s: string, names = NAMED): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]{1,31}));/g, (m, dec?: string, hex?: string, name?: string) => {
    if (name !== undefined) return names[name] ?? m;
    const cp = dec !== undefined ? Number.parseInt(dec, 10) : Number.parseInt(hex ?? '', 16);
    return cp > 0 && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) ? String.fromCodePoint(cp) : '\ufffd';
  });
}

const visibleText = (html: string): string => decodeEntities(html.replace(/<[^>]*>/g, ''), TELEGRAM_NAMED);

/** The length Telegram counts against its limit: UTF-16 code units of the text after parsing. */
export function visibleLength(html: string): number {
  return visibleText(html).length;
}

const tag = (name: string, open = `<${name}>`): Tag => ({ name, open, close: `</${name}>` });
// Telegram nests none of these in itself; a <b> inside a <b> (a bold heading) adds nothing.
const within = (tags: readonly Tag[], name: string): readonly Tag[] =>
  tags.some((t) => t.name === name) ? tags : [...tags, tag(name)];
const SAFE_URL = /^(?:https?:|tg:|mailto:)/i;
// A stretch of a line that is likely spelled the same in the markdown (no syntax, no entity).
const probeOf = (s: string): string => /^[^&<>\\*_~`[\]()!|#\n]{1,24}/.exec(s.trimStart())?.[0]?.trimEnd() ?? '';
const isLow = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

// Columns line up in a phone's monospace font only if wide characters count twice.
const WIDE = /[\p{Emoji_Presentation}\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{20000}-\u{3fffd}]/u;
const ZERO = /[\p{M}\u200b-\u200f\u2060\ufe0e\ufe0f]/u;
function width(s: string): number {
  if (/^[\x20-\x7e]*$/.test(s)) return s.length;
  let w = 0;
  for (const ch of s) w += ZERO.test(ch) ? 0 : WIDE.test(ch) ? 2 : 1;
  return w;
}
function pad(s: string, w: number, align: Tokens.TableCell['align']): string {
  const gap = Math.max(0, w - width(s));
  if (align === 'right') return ' '.repeat(gap) + s;
  if (align === 'center') return ' '.repeat(gap >> 1) + s + ' '.repeat(gap - (gap >> 1));
  return s + ' '.repeat(gap);
}

/** Inline tokens as unformatted text: a <pre> (a table) can hold no other tag. */
function plain(tokens: readonly Token[]): string {
  let s = '';
  for (const tok of tokens) {
    const t = tok as MarkedToken;
    if (t.type === 'text') s += t.tokens ? plain(t.tokens) : decodeEntities(t.raw);
    else if (t.type === 'escape' || t.type === 'codespan') s += t.text;
    else if (t.type === 'html') s += decodeEntities(t.text);
    else if (t.type === 'image') s += t.text || t.href;
    else if (t.type === 'link' && t.autolink) s += t.text;
    else if (t.type === 'br') s += ' ';
    else if ('tokens' in t && t.tokens) s += plain(t.tokens);
  }
  return s;
}

class Builder {
  readonly atoms: Atom[] = [];
  private sep = '';
  private level = BLOCK;
  private ctx: readonly Tag[] = [];
  private indent = '';
  private lead: string | null = null; // a list item's bullet, for the item's first line

  constructor(private readonly md: string) {}

  document(): void {
    const md = this.md;
    let off = 0;
    for (const tok of new Lexer({ gfm: true }).lex(md)) {
      // The top-level raws tile the source; the search only guards against a marked that changes that.
      const start = md.startsWith(tok.raw, off) ? off : Math.max(off, md.indexOf(tok.raw, off));
      const end = Math.min(md.length, start + tok.raw.length);
      const first = this.atoms.length;
      this.pend(BLOCK);
      this.blocks([tok], BLOCK);
      for (let i = first, line = start; i < this.atoms.length; i++) {
        const a = this.atoms[i]!;
        line = a.src = i === first ? start : locate(md, line, a.probe, end);
        for (let k = a.span ?? 1; k > 0; k--) line = nextLine(md, line, end);
      }
      off = end;
    }
    if (this.atoms[0]) this.atoms[0].src = 0;
  }

  private pend(level: number): void {
    this.level = level;
    this.sep = level === BLOCK ? '\n\n' : '\n';
  }

  private line(probe: string): Atom {
    const a: Atom = { runs: [], vis: 0, sep: this.atoms.length ? this.sep : '', level: this.level, src: 0, probe };
    this.atoms.push(a);
    this.pend(LINE);
    return a;
  }

  /** A line of text: its indentation or bullet first, inside the open containers. */
  private open(): void {
    this.line('');
    this.put(this.lead ?? this.indent, this.ctx, false);
    this.lead = null;
  }

  private put(text: string, tags: readonly Tag[], probe: boolean): void {
    const a = this.atoms[this.atoms.length - 1]!;
    a.runs.push({ text, tags });
    a.vis += text.length;
    if (probe && !a.probe) a.probe = probeOf(text);
  }

  private text(s: string, tags: readonly Tag[]): void {
    s.split('\n').forEach((piece, k) => {
      if (k) this.open();
      if (piece) this.put(piece, tags, true);
    });
  }

  private blocks(tokens: readonly Token[], between: number): void {
    let first = true;
    for (const tok of tokens) {
      const t = tok as MarkedToken;
      if (t.type === 'space' || t.type === 'def') continue;
      if (t.type === 'checkbox') this.lead = (this.lead ?? this.indent) + (t.checked ? '☑ ' : '☐ ');
      else {
        if (!first) this.pend(between);
        first = false;
        this.block(t);
      }
    }
  }

  private block(t: MarkedToken): void {
    switch (t.type) {
      case 'heading': this.open(); this.inline(t.tokens, within(this.ctx, 'b')); return;
      case 'paragraph': this.open(); this.inline(t.tokens, this.ctx); return;
      case 'text': this.open(); if (t.tokens) this.inline(t.tokens, this.ctx); else this.text(decodeEntities(t.text), this.ctx); return;
      case 'html': this.open(); this.text(decodeEntities(t.text.replace(/\n+$/, '')), this.ctx); return;
      case 'hr': this.open(); this.put('———', this.ctx, false); return;
      case 'code': this.code(t); return;
      case 'table': this.table(t); return;
      case 'list': this.list(t); return;
      case 'blockquote': {
        const saved = this.ctx;
        this.ctx = within(saved, 'blockquote');
        this.blocks(t.tokens, BLOCK);
        this.ctx = saved;
        return;
      }
      default: if (t.raw.trim()) { this.open(); this.text(t.raw.trim(), this.ctx); }
    }
  }

  private list(t: Tokens.List): void {
    const saved = this.indent;
    let n = typeof t.start === 'number' ? t.start : 1;
    t.items.forEach((item, k) => {
      if (k) this.pend(LINE);
      this.lead = saved + (t.ordered ? `${n++}. ` : '• ');
      this.indent = saved + '  ';
      this.blocks(item.tokens, LINE);
      if (this.lead !== null) this.open(); // an empty item still shows its bullet
      this.indent = saved;
    });
  }

  private code(t: Tokens.Code): void {
    if (this.lead !== null) this.open(); // the bullet cannot go inside the <pre>
    const lang = /^[\w+#.-]+/.exec((t.lang ?? '').trim())?.[0] ?? '';
    const fence = t.codeBlockStyle === 'indented' ? '' : (/^ *(`{3,}|~{3,})/.exec(t.raw)?.[1] ?? '```');
    const frame: Frame = { head: [], headVis: 0, headSrc: fence && `${fence}${lang}\n`, tailSrc: fence && `\n${fence}` };
    const tags = [...this.ctx, tag('pre'), tag('code', lang ? `<code class="language-${escapeHtml(lang)}">` : '<code>')];
    t.text.split('\n').forEach((ln, k) => {
      const a = this.line(k === 0 && fence ? fence : probeOf(ln));
      a.frame = frame;
      if (k === 0 && fence) a.span = 2;
      this.put(ln, tags, false);
    });
  }

  private table(t: Tokens.Table): void {
    if (this.lead !== null) this.open();
    const rows = [t.header, ...t.rows].map((r) => r.map((c) => plain(c.tokens).replace(/\s+/g, ' ').trim()));
    const widths = t.header.map((_, j) => Math.max(1, ...rows.map((r) => width(r[j] ?? ''))));
    const fmt = (r: string[]): string => widths.map((w, j) => pad(r[j] ?? '', w, t.align[j] ?? null)).join(' | ').trimEnd();
    const lines = [fmt(rows[0]!), widths.map((w) => '-'.repeat(w)).join('-+-'), ...rows.slice(1).map(fmt)];
    const tags = [...this.ctx, tag('pre')];
    const head = lines.slice(0, 2).map((text) => [{ text, tags }]);
    const headSrc = t.raw.split('\n').slice(0, 2).join('\n') + '\n';
    const frame: Frame = { head, headVis: lines[0]!.length + lines[1]!.length + 2, headSrc, tailSrc: '' };
    lines.forEach((text, k) => {
      const cells = k === 1 ? [] : rows[Math.max(0, k - 1)]!;
      const a = this.line(probeOf(cells.find((c) => probeOf(c)) ?? ''));
      a.frame = frame;
      if (k === 1 || k === 2) a.level = GLUE; // a header alone in a part says nothing
      this.put(text, tags, false);
    });
  }

  private inline(tokens: readonly Token[], tags: readonly Tag[]): void {
    for (const tok of tokens) {
      const t = tok as MarkedToken;
      switch (t.type) {
        case 'strong': this.inline(t.tokens, within(tags, 'b')); break;
        case 'em': this.inline(t.tokens, within(tags, 'i')); break;
        case 'del': this.inline(t.tokens, within(tags, 's')); break;
        case 'codespan': this.text(t.text.replace(/\n/g, ' '), within(tags, 'code')); break;
        case 'br': this.open(); break;
        case 'escape': this.text(t.text, tags); break;
        case 'html': this.text(decodeEntities(t.text), tags); break;
        // marked already decodes numeric references in text; its raw is decoded here once, whole.
        case 'text': if (t.tokens) this.inline(t.tokens, tags); else this.text(decodeEntities(t.raw), tags); break;
        case 'link': case 'image': {
          // Autolinks are literal: marked leaves their references alone, and so does this.
          const href = t.type === 'link' && t.autolink ? t.href : decodeEntities(t.href);
          const safe = SAFE_URL.test(href) && !tags.some((x) => x.name === 'a');
          const inner = safe ? [...tags, tag('a', `<a href="${escapeHtml(href)}">`)] : tags;
          if (t.type === 'image') this.text(t.text || (safe ? href : ''), inner);
          else if (t.autolink) this.text(t.text, inner);
          else this.inline(t.tokens, inner);
          break;
        }
        default: this.text(t.raw, tags);
      }
    }
  }
}

const nextLine = (md: string, at: number, end: number): number => Math.min(end, md.indexOf('\n', at) + 1 || end);

/** Start of the source line a rendered line comes from: the line `from`, or one a little further that holds its probe. */
function locate(md: string, from: number, probe: string, end: number): number {
  if (!probe || from >= end) return from;
  let stop = from;
  for (let k = 0; k < 8; k++) stop = nextLine(md, stop, end);
  const p = md.slice(from, stop).indexOf(probe);
  return p < 0 ? from : md.lastIndexOf('\n', from + p - 1) + 1;
}

/**
 * Splits a line at its spaces. A word's source is found among the line's source words (which start
 * after each space): the nearest next one that holds the word's probe, else simply the next one.
 */
function words(a: Atom, md: string, end: number): Atom[] {
  const out: Atom[] = [{ ...a, runs: [], vis: 0 }];
  for (const r of a.runs) {
    r.text.split(' ').forEach((piece, k) => {
      if (k) out.push({ runs: [], vis: 0, sep: ' ', level: SPACE, src: 0, probe: '', frame: a.frame });
      const w = out[out.length - 1]!;
      if (piece || !w.runs.length) w.runs.push({ text: piece, tags: r.tags });
      w.vis += piece.length;
    });
  }
  const starts = [a.src];
  const start = (j: number): number => {
    for (let p = starts[starts.length - 1]!; starts.length <= j; starts.push(p = Math.min(end, p + 1))) {
      while (p < end && md.charCodeAt(p) !== 32) p++;
    }
    return starts[j]!;
  };
  // The first word is matched too (its source starts the line whatever it is) so that source words
  // with nothing visible, like a quote's '>', are skipped.
  let j = -1;
  out.forEach((w, i) => {
    const probe = probeOf(w.runs.map((r) => r.text).join(''));
    let next = j + 1;
    for (let k = j + 1; probe && k <= j + 6 && start(k) < end; k++) {
      if (md.slice(start(k), start(k + 1)).includes(probe)) { next = k; break; }
    }
    j = next;
    if (i) w.src = start(j);
  });
  return out;
}

/** Cuts an atom into n pieces that each fit, in its text and in its source alike, never in a surrogate pair. */
function slices(w: Atom, md: string, end: number, lv: number, ls: number): Atom[] {
  const text = w.runs.map((r) => r.text).join('');
  const len = end - w.src;
  const n = Math.max(1, Math.ceil(text.length / (lv - 1)), Math.ceil(len / (ls - 1)));
  const cut = (s: string, at: number): number => (isLow(s.charCodeAt(at)) ? at + 1 : at);
  // Where the text is its own markdown (code, plain words; a line end or a closing fence may follow)
  // both are cut at the same places. Else text that fits stays whole: only its markdown (a long
  // link address, say) needs cutting.
  const own = md.startsWith(text, w.src) && len - text.length <= 8;
  const at = [0];
  for (let k = 1; k <= n; k++) at.push(k === n || (!own && text.length <= lv) ? text.length : Math.max(at[k - 1]!, cut(text, Math.round((k * text.length) / n))));
  let src = at.map((p, k) => (k === n ? end : w.src + p));
  if (!own || src.some((s, k) => k > 0 && s - src[k - 1]! > ls)) {
    src = at.map((_, k) => (k === 0 ? w.src : k === n ? end : Math.min(end, cut(md, w.src + Math.round((k * len) / n)))));
  }
  const out: Atom[] = [];
  for (let k = 0; k < n; k++) {
    const from = at[k]!, to = at[k + 1]!;
    const runs: Run[] = [];
    let pos = 0;
    for (const r of w.runs) {
      const lo = Math.max(from, pos), hi = Math.min(to, pos + r.text.length);
      if (hi > lo) runs.push({ text: r.text.slice(lo - pos, hi - pos), tags: r.tags });
      pos += r.text.length;
    }
    out.push(k === 0 ? { ...w, runs, vis: to - from } : { runs, vis: to - from, sep: '', level: HARD, src: src[k]!, probe: '', frame: w.frame });
  }
  return out;
}

/** Splits the atoms too big for a part alone, with a cut frame's repeated head and tail in it. */
function fit(atoms: Atom[], md: string, limit: number): Atom[] {
  const out: Atom[] = [];
  atoms.forEach((a, i) => {
    const end = atoms[i + 1]?.src ?? md.length;
    const f = a.frame;
    const lv = limit - (f?.headVis ?? 0), ls = limit - (f ? f.headSrc.length + f.tailSrc.length : 0);
    if (a.vis <= lv && end - a.src <= ls) return void out.push(a);
    const ws = words(a, md, end);
    ws.forEach((w, k) => {
      const wend = ws[k + 1]?.src ?? end;
      if (w.vis <= lv && wend - w.src <= ls) out.push(w);
      else out.push(...slices(w, md, wend, lv, ls));
    });
  });
  return out;
}

function assemble(input: Atom[], md: string, limit: number): TelegramPart[] {
  if (!Number.isInteger(limit) || limit < MIN_LIMIT) throw new RangeError(`limit must be an integer of at least ${MIN_LIMIT}, not ${limit}`);
  for (const { frame: f } of input) {
    // A head that takes half the room would leave parts that are mostly head.
    if (f && f.headVis > limit / 2) { f.head = []; f.headVis = 0; }
    if (f && f.headSrc.length + f.tailSrc.length > limit / 2) { f.headSrc = ''; f.tailSrc = ''; }
  }
  const atoms = fit(input, md, limit);
  const n = atoms.length;
  const blank = atoms.map((a) => a.runs.every((r) => !/\S/.test(r.text)));
  const srcAt = (i: number): number => (i < n ? atoms[i]!.src : md.length);
  // The frame that continues across a cut before atom i, if any.
  const cont = (i: number): Frame | undefined => {
    const f = i > 0 && i < n ? atoms[i]!.frame : undefined;
    return f && f === atoms[i - 1]!.frame ? f : undefined;
  };
  const parts: TelegramPart[] = [];
  for (let a = 0; a < n;) {
    const head = cont(a);
    const headSrc = head?.headSrc.length ?? 0;
    // Blank atoms at either end of a part are not sent, so they cost nothing visible there.
    let vis = -1, pending = 0, c = a, best = a + 1, bestLevel = -1;
    for (; c < n; c++) {
      const x = atoms[c]!;
      if (c > a && x.level >= bestLevel) { best = c; bestLevel = x.level; }
      const tail = cont(c + 1)?.tailSrc.length ?? 0;
      if (c > a && headSrc + srcAt(c + 1) - srcAt(a) + tail > limit) break;
      if (blank[c]) { if (vis >= 0) pending += x.sep.length + x.vis; continue; }
      const v = vis < 0 ? (head?.headVis ?? 0) + x.vis : vis + pending + x.sep.length + x.vis;
      if (c > a && v > limit) break;
      vis = v;
      pending = 0;
    }
    const end = c >= n ? n : best;
    const part = render(atoms, blank, a, end, head, cont(end), md.slice(srcAt(a), srcAt(end)));
    if (part) parts.push(part);
    a = end;
  }
  return parts;
}

function render(atoms: Atom[], blank: boolean[], a: number, c: number, head: Frame | undefined, tail: Frame | undefined, src: string): TelegramPart | undefined {
  const core = src.replace(/^(?:[ \t]*\n)+/, '').trimEnd();
  const text = core && (head?.headSrc ?? '') + core + (tail?.tailSrc ?? '');
  while (a < c && blank[a]) a++;
  while (c > a && blank[c - 1]) c--;
  // Nothing visible to send: the markdown under it, if any, renders to nothing (or is a slice of a
  // link's address longer than a part) and is left out of the fallback too.
  if (a >= c) return undefined;
  let html = '';
  let open: readonly Tag[] = [];
  const move = (tags: readonly Tag[], sep: string): void => {
    let k = 0;
    while (k < open.length && k < tags.length && open[k] === tags[k]) k++;
    for (let i = open.length - 1; i >= k; i--) html += open[i]!.close;
    html += sep;
    for (let i = k; i < tags.length; i++) html += tags[i]!.open;
    open = tags;
  };
  const emit = (runs: readonly Run[], sep: string): void => {
    if (!runs.length) html += sep;
    for (let k = 0; k < runs.length; k++) {
      move(runs[k]!.tags, k ? '' : sep);
      html += escapeHtml(runs[k]!.text);
    }
  };
  head?.head.forEach((line, k) => emit(line, k ? '\n' : ''));
  for (let k = a; k < c; k++) emit(atoms[k]!.runs, k > a ? atoms[k]!.sep : head?.head.length ? '\n' : '');
  move([], '');
  return { html, text: text || visibleText(html) };
}

/** Telegram HTML for a markdown reply, cut into messages of at most `limit` visible characters. */
export function telegramParts(markdown: string, limit = 4096): TelegramPart[] {
  const md = markdown.replace(/\r\n?/g, '\n');
  const b = new Builder(md);
  b.document();
  return assemble(b.atoms, md, limit);
}

/** Text that is not markdown, cut the same way: between paragraphs, lines, words, characters. */
export function plainParts(text: string, limit = 4096): string[] {
  const md = text.replace(/\r\n?/g, '\n');
  const atoms: Atom[] = [];
  let off = 0, gap = false;
  for (const line of md.split('\n')) {
    if (!/\S/.test(line)) gap = atoms.length > 0;
    else {
      atoms.push({ runs: [{ text: line, tags: [] }], vis: line.length, sep: atoms.length ? (gap ? '\n\n' : '\n') : '', level: gap ? BLOCK : LINE, src: off, probe: '' });
      gap = false;
    }
    off += line.length + 1;
  }
  if (atoms[0]) atoms[0].src = 0;
  return assemble(atoms, md, limit).map((p) => p.text);
}
