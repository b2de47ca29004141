// HTML to readable text: what a model needs from a page is its words and links, not its markup.
// htmlparser2's tokenizer does the parsing: it is a state machine that reads each character once,
// so a hostile page (thousands of unclosed `<a href`, `<script>` or `<!--`) costs linear time, and
// it decodes every named entity and the cp1252 numeric references as the HTML spec says. This
// module only decides what text comes out: headings as `#` lines, lists as `-` or `1.` items
// (indented when nested), links as `text (href)`, table rows as cells joined by ` | `, `pre` as it
// is, and no scripts, styles, navigation or footers. It is a lazy chunk (src/lazy-chunk.ts): loaded
// by the first page, not at start.
import { Parser } from 'htmlparser2';

/** Elements whose content is never shown (they hold code, metadata or site chrome). */
const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'svg', 'math', 'head', 'title', 'iframe', 'object', 'canvas', 'nav', 'footer', 'select', 'button']);
/** Elements that stand apart from their neighbours with a blank line. */
const PARAGRAPH = new Set(['p', 'blockquote', 'pre', 'table', 'figure', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'section', 'article', 'main', 'header', 'aside', 'details', 'dl', 'fieldset', 'form', 'address']);
/** Elements that start and end a line. */
const LINE = new Set(['div', 'li', 'tr', 'dt', 'dd', 'figcaption', 'summary', 'caption', 'label', 'option', 'legend', 'ul', 'ol']);

/** Links nested deeper than this are read as plain text: nobody nests links on purpose. */
const MAX_OPEN_LINKS = 32;

/**
 * The text being built, as pieces. Inspecting one growing string (endsWith, slice, a regex at its
 * end) would flatten it on every call, which is quadratic on a page of a million tiny text nodes.
 */
class Output {
  private pieces: string[] = [];
  length = 0;
  /** newlines at the end of the text, spaces after them not counted */
  private trailingNewlines = 0;
  private lastIsSpace = false;

  append(s: string): void {
    if (!s) return;
    this.pieces.push(s);
    this.length += s.length;
    // Spaces, then newlines, counted back from the end of the piece.
    let i = s.length;
    while (i > 0 && (s[i - 1] === ' ' || s[i - 1] === '\t')) i--;
    const spaces = s.length - i;
    let newlines = 0;
    while (i > 0 && s[i - 1] === '\n') {
      i--;
      newlines++;
    }
    if (i === 0 && spaces === 0) this.trailingNewlines += newlines;
    else if (i > 0 || newlines > 0) this.trailingNewlines = newlines;
    this.lastIsSpace = spaces > 0;
  }

  get atLineStart(): boolean {
    return this.length === 0 || (this.trailingNewlines > 0 && !this.lastIsSpace);
  }

  get endsWithSpace(): boolean {
    return this.lastIsSpace;
  }

  trimTrailingSpaces(): void {
    while (this.pieces.length) {
      const last = this.pieces[this.pieces.length - 1]!;
      // A loop, not /[ \t]+$/: that regex retries from every space of a run not at the end, which
      // is quadratic on a `pre` holding a long run of spaces (40,000 of them took half a second).
      let end = last.length;
      while (end > 0 && (last[end - 1] === ' ' || last[end - 1] === '\t')) end--;
      const trimmed = last.slice(0, end);
      this.length -= last.length - trimmed.length;
      if (trimmed) {
        this.pieces[this.pieces.length - 1] = trimmed;
        break;
      }
      this.pieces.pop();
    }
    this.lastIsSpace = false;
  }

  /** Ends the line; with `blank`, leaves one empty line after it. Never at the very start. */
  newline(blank: boolean): void {
    if (this.length === 0) return;
    this.trimTrailingSpaces();
    const want = blank ? 2 : 1;
    if (this.trailingNewlines < want) this.append('\n'.repeat(want - this.trailingNewlines));
  }

  /** Ends the line even when it is empty: two `br` in a row leave a blank line, as on screen. */
  lineBreak(): void {
    if (this.length === 0) return;
    this.trimTrailingSpaces();
    this.append('\n');
  }

  /** The text from `start` on, or undefined when it is longer than `max` (not worth building). */
  since(start: number, max: number): string | undefined {
    if (this.length - start > max) return undefined;
    let s = '';
    let pos = this.length;
    for (let i = this.pieces.length - 1; i >= 0 && pos > start; i--) {
      const p = this.pieces[i]!;
      pos -= p.length;
      s = (pos < start ? p.slice(start - pos) : p) + s;
    }
    return s;
  }

  toString(): string {
    return this.pieces.join('');
  }
}

interface OpenLink {
  href: string;
  /** where the link's text starts in the output */
  start: number;
}

interface OpenList {
  ordered: boolean;
  next: number;
}

export interface PageText {
  title: string;
  text: string;
  /** set when the page was not read to its end, saying why */
  stopped?: string;
}

/** Elements open at once before the rest of a page is left unread. */
export const MAX_DEPTH = 1000;
/** Input handed to the tokenizer between two turns of the event loop. */
const SLICE = 32 * 1024;
/** Output tidied between two turns of the event loop. */
const TIDY_SLICE = 256 * 1024;

interface Converter {
  parser: Parser;
  depth(): number;
  title(): string;
  /** the text as written, before `tidy` */
  raw(): string;
}

function converter(baseUrl: string | undefined): Converter {
  const out = new Output();
  let depth = 0;
  let title = '';
  let inTitle = 0;
  let skip = 0;
  let pre = 0;
  let cellInRow = 0;
  const links: OpenLink[] = [];
  const lists: OpenList[] = [];

  const text = (s: string): void => {
    if (pre) return out.append(s);
    let t = s.replace(/\s+/g, ' ');
    if (t.startsWith(' ') && (out.atLineStart || out.endsWithSpace)) t = t.slice(1);
    out.append(t);
  };
  const absolute = (href: string) => {
    if (!baseUrl) return href;
    try {
      return new URL(href, baseUrl).href;
    } catch {
      return href;
    }
  };

  const parser = new Parser(
    {
      onopentag(name, attrs) {
        depth++;
        if (name === 'title') inTitle++;
        if (SKIPPED.has(name)) skip++;
        if (skip) return;
        if (PARAGRAPH.has(name)) out.newline(true);
        else if (name === 'br') out.lineBreak();
        else if (LINE.has(name) || name === 'hr') out.newline(false);
        const heading = /^h([1-6])$/.exec(name);
        if (heading) out.append(`${'#'.repeat(Number(heading[1]))} `);
        else if (name === 'pre') pre++;
        else if (name === 'ul' || name === 'ol') lists.push({ ordered: name === 'ol', next: Number(attrs.start) || 1 });
        else if (name === 'li') {
          const list = lists.at(-1);
          out.append('  '.repeat(Math.min(Math.max(lists.length - 1, 0), 10)) + (list?.ordered ? `${list.next++}. ` : '- '));
        } else if (name === 'tr') cellInRow = 0;
        else if (name === 'td' || name === 'th') {
          if (cellInRow++ > 0) {
            out.trimTrailingSpaces();
            out.append(out.atLineStart ? '| ' : ' | ');
          }
        } else if (name === 'a' && attrs.href !== undefined && links.length < MAX_OPEN_LINKS) links.push({ href: attrs.href.trim(), start: out.length });
        else if (name === 'img' && attrs.alt?.trim()) text(` [image: ${attrs.alt.trim()}] `);
        else if (name === 'hr') out.append('---\n');
      },
      ontext(data) {
        if (inTitle && title.length < 1000) title += data;
        if (!skip) text(data);
      },
      onclosetag(name) {
        depth--;
        if (name === 'title' && inTitle) inTitle--;
        if (SKIPPED.has(name)) {
          if (skip) skip--;
          return;
        }
        if (skip) return;
        if (name === 'pre' && pre) pre--;
        else if ((name === 'ul' || name === 'ol') && lists.length) lists.pop();
        else if (name === 'a' && links.length) {
          const link = links.pop()!;
          const href = link.href;
          // Scripts, in-page anchors and links whose text is the address add nothing to read.
          if (href && !/^(javascript|data|vbscript):/i.test(href) && !href.startsWith('#') && out.length > link.start) {
            const shown = absolute(href);
            const label = out.since(link.start, shown.length + 2)?.trim();
            if (label !== '' && label !== href && label !== shown) out.append(` (${shown})`);
          }
        }
        if (PARAGRAPH.has(name)) out.newline(true);
        else if (LINE.has(name)) out.newline(false);
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  return {
    parser,
    depth: () => depth,
    title: () => title.replace(/\s+/g, ' ').trim(),
    raw: () => out.toString(),
  };
}

/**
 * Line ends trimmed, runs of blank lines cut to one, the whole trimmed. It pauses (yields) every
 * TIDY_SLICE characters: on a 1.6 MB page of `<h1>x` this pass in one go blocked for over 100 ms.
 * trimEnd, not /\s+$/: the regex is quadratic on a long run of spaces inside a `pre` line.
 */
function* tidy(raw: string): Generator<void, string, void> {
  const kept: string[] = [];
  let blank = true;
  let pause = TIDY_SLICE;
  for (let from = 0; from <= raw.length; ) {
    let end = raw.indexOf('\n', from);
    if (end < 0) end = raw.length;
    const line = raw.slice(from, end).trimEnd();
    if (line || !blank) kept.push(line);
    blank = line === '';
    from = end + 1;
    if (from >= pause) {
      pause = from + TIDY_SLICE;
      yield;
    }
  }
  yield;
  return kept.join('\n').trim();
}

// htmlparser2 keeps its open elements in an array it unshifts, so each open costs time linear in
// the depth: a page of 300,000 unclosed <div> would take seconds. Real pages nest a few dozen deep.
const depthNote = `the page nests elements more than ${MAX_DEPTH} deep; the rest of it was not read`;

/** The conversion in steps: it yields between slices of input and of tidying. */
function* convert(html: string, baseUrl: string | undefined): Generator<void, PageText, void> {
  const c = converter(baseUrl);
  let stopped: string | undefined;
  for (let i = 0; i < html.length; i += SLICE) {
    c.parser.write(html.slice(i, i + SLICE));
    if (c.depth() > MAX_DEPTH) {
      stopped = depthNote;
      break;
    }
    yield;
  }
  // Past the depth limit the slice may end inside a tag, which end() would flush as text ("<div").
  if (!stopped) c.parser.end();
  const raw = c.raw();
  yield;
  const text = yield* tidy(raw);
  return { title: c.title(), text, ...(stopped ? { stopped } : {}) };
}

/**
 * A page as text, converted in steps with a turn of the event loop between them, so a large page
 * never holds up the gateway's other work for long. Stops early on `signal`.
 */
export async function htmlToText(html: string, baseUrl?: string, signal?: AbortSignal): Promise<PageText> {
  const steps = convert(html, baseUrl);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await new Promise((r) => setImmediate(r));
    signal?.throwIfAborted();
  }
}

/** Short markup (a search result's title or snippet) as text, at once. */
export function snippetToText(html: string): string {
  const steps = convert(html, undefined);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value.text;
  }
}
