// The front matter of a SKILL.md: the `key: value` lines between two `---` lines at the top. Hand-
// written rather than a YAML library because skills use a small subset and the prompt builder runs
// on every turn of a small board (the yaml package alone would add about as much start-up as the
// rest of the agent). The subset, as YAML 1.2 defines it: top-level keys with plain, 'single'- and
// "double"-quoted scalars (escapes, and values that go on over indented lines, folded), and the
// block scalars `|` (literal) and `>` (folded) with chomping (`-`, `+`) and an indentation digit.
// Values are the scalars' text, without YAML's type resolution (`version: 1.10` stays '1.10').
// Anything else (nested maps, sequences, flow collections, anchors, aliases, tags) is skipped for
// its key, never an error: a skill with odd front matter still loads with its directory's name.
// Every step is linear in the text: a hostile file cannot stall the turn.

/** Front matter is a few lines; an opening `---` not closed within this many is prose, not front matter. */
const MAX_LINES = 2000;
// `[\s\S]`, not `.`: a value may hold a line separator (U+2028) or a lone CR.
const KEY = /^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+([\s\S]*))?$/;
const BLOCK_HEADER = /^([|>])([1-9])?([+-])?([1-9])?$/;
const isMarker = (line: string | undefined) => line !== undefined && /^---[ \t]*$/.test(line);
// YAML's white space is the space and the tab; other Unicode spaces (a no-break space) are content.
const isSpace = (c: string | undefined) => c === ' ' || c === '\t';
const isBlank = (line: string) => /^[ \t]*$/.test(line);

function trimStartWhite(s: string): string {
  let from = 0;
  while (isSpace(s[from])) from++;
  return s.slice(from);
}

function trimWhite(s: string): string {
  const t = trimStartWhite(s);
  let to = t.length;
  while (to > 0 && isSpace(t[to - 1])) to--;
  return t.slice(0, to);
}

export function frontMatter(text: string): Record<string, string> {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const lines = source.split(/\r?\n/, MAX_LINES + 2);
  if (!isMarker(lines[0])) return {};
  let end = 1;
  while (end < lines.length && !isMarker(lines[end])) end++;
  // Without its closing line this is not front matter (as in every static site generator).
  if (end === lines.length) return {};
  const out: Record<string, string> = {};
  let i = 1;
  while (i < end) {
    const m = KEY.exec(lines[i]!);
    // The value's own lines: up to the next line that starts in the first column.
    let next = i + 1;
    while (next < end && (isBlank(lines[next]!) || isSpace(lines[next]![0]))) next++;
    // `key:` over `- item` lines in its own column is a sequence, not an empty value.
    const sequence = next < end && /^-(?:[ \t]|$)/.test(lines[next]!);
    if (m) {
      const value = scalar(m[2] ?? '', lines.slice(i + 1, next));
      if (value !== undefined && !(sequence && value === '' && trimWhite(stripComment(m[2] ?? '')) === '')) out[m[1]!] = value;
    }
    i = next;
  }
  return out;
}

/** The value after `key:` and its more-indented lines; undefined for what this reader skips. */
function scalar(first: string, more: string[]): string | undefined {
  const rest = trimWhite(stripComment(first));
  if (rest === '') {
    // `key:` alone: an empty value, or the value starts on the next line (then it must be a
    // scalar: a `- item` or `sub: key` line there makes it a sequence or a map).
    const at = more.findIndex((l) => !isBlank(l) && !trimWhite(l).startsWith('#'));
    if (at < 0) return '';
    // Trailing white space may be part of a quoted value (`"a \ ` + break), so only the start is trimmed.
    const line = trimStartWhite(more[at]!);
    const isQuoted = line.startsWith('"') || line.startsWith("'");
    if (!isQuoted && (/^[-?](?:[ \t]|$)/.test(line) || /:(?:[ \t]|$)/.test(stripComment(line)) || /^[|>]/.test(line))) return undefined;
    return scalar(line, more.slice(at + 1));
  }
  const header = BLOCK_HEADER.exec(rest);
  if (header) {
    const indent = header[2] ?? header[4];
    return blockScalar(more, header[1] === '>', header[3] as '+' | '-' | undefined, indent ? Number(indent) : undefined);
  }
  if (rest.startsWith('"') || rest.startsWith("'")) return quoted([trimStartWhite(first), ...more]);
  // An indicator that starts a flow collection, anchor, alias, tag, sequence, complex key or
  // reserved character: not a plain scalar.
  if (/^[[\]{},&*!|>%@`]/.test(rest) || /^[-?:](?:[ \t]|$)/.test(rest)) return undefined;
  return plain([first, ...more]);
}

/** The text before a comment: `#` after white space. (A search, not a `\s+#.*$` regex, which is quadratic on long runs of spaces.) */
function stripComment(line: string): string {
  if (line.startsWith('#')) return '';
  const at = line.search(/[ \t]#/);
  return at < 0 ? line : line.slice(0, at);
}

/**
 * Line folding of flow scalars: each line trimmed, neighbours joined by a space, each blank line
 * between them a newline. Blank lines at the end are not part of the value.
 */
function fold(lines: string[]): string {
  let text = '';
  let blanks = 0;
  let started = false;
  for (const raw of lines) {
    const line = trimWhite(raw);
    if (line === '') {
      if (started) blanks++;
      continue;
    }
    if (started) text += blanks ? '\n'.repeat(blanks) : ' ';
    text += line;
    blanks = 0;
    started = true;
  }
  return text;
}

function plain(lines: string[]): string {
  // A comment ends a plain scalar, also one on a line of its own.
  const kept: string[] = [];
  for (const line of lines) {
    const text = stripComment(line);
    if (isBlank(text) && !isBlank(line)) break;
    kept.push(text);
    if (text !== line) break;
  }
  return fold(kept);
}

const ESCAPES: Record<string, string> = {
  '0': '\0', a: '\x07', b: '\b', t: '\t', '\t': '\t', n: '\n', v: '\v', f: '\f', r: '\r', e: '\x1b', ' ': ' ',
  '"': '"', '/': '/', '\\': '\\', N: '\x85', _: '\xa0', L: '\u2028', P: '\u2029',
};
const HEX_DIGITS: Record<string, number> = { x: 2, u: 4, U: 8 };

/**
 * A quoted scalar over the value's lines (the first starts with the quote): escapes in "double"
 * quotes, `''` in 'single' ones, and the line folding of flow scalars (white space around a line
 * break dropped, a break a space, each blank line a newline; in double quotes `\` before the break
 * joins the lines without one). Undefined when it is not closed, has an unknown escape, or is
 * followed by more than a comment.
 */
function quoted(lines: string[]): string | undefined {
  const src = lines.join('\n');
  const q = src[0]!;
  let out = '';
  // Escaped white space stays even at the end of a line; trimming stops here.
  let keep = 0;
  let i = 1;
  for (;;) {
    if (i >= src.length) return undefined;
    const c = src[i]!;
    if (c === q) {
      if (q === "'" && src[i + 1] === "'") {
        out += "'";
        i += 2;
        continue;
      }
      i++;
      break;
    }
    if (c === '\\' && q === '"') {
      const e = src[i + 1];
      if (e === '\n') {
        // An escaped line break joins without a space; blank lines after it are still newlines.
        i += 2;
        for (;;) {
          while (isSpace(src[i])) i++;
          if (src[i] !== '\n') break;
          out += '\n';
          i++;
        }
        keep = out.length;
        continue;
      }
      const digits = e === undefined ? undefined : HEX_DIGITS[e];
      if (digits !== undefined) {
        const hex = src.slice(i + 2, i + 2 + digits);
        const code = /^[0-9a-fA-F]+$/.test(hex) && hex.length === digits ? parseInt(hex, 16) : NaN;
        if (!(code <= 0x10ffff)) return undefined;
        out += String.fromCodePoint(code);
        i += 2 + digits;
      } else {
        const decoded = e === undefined ? undefined : ESCAPES[e];
        if (decoded === undefined) return undefined;
        out += decoded;
        i += 2;
      }
      keep = out.length;
      continue;
    }
    if (c === '\n') {
      let cut = out.length;
      while (cut > keep && isSpace(out[cut - 1])) cut--;
      out = out.slice(0, cut);
      let breaks = 0;
      i++;
      for (;;) {
        while (isSpace(src[i])) i++;
        if (src[i] !== '\n') break;
        breaks++;
        i++;
      }
      out += breaks ? '\n'.repeat(breaks) : ' ';
      keep = out.length;
      continue;
    }
    out += c;
    i++;
  }
  // After the closing quote: white space and a comment on its line, then only blank or comment lines.
  const lineEnd = src.indexOf('\n', i);
  const tail = src.slice(i, lineEnd < 0 ? src.length : lineEnd);
  if (!isBlank(tail) && !(isSpace(tail[0]) && trimWhite(tail).startsWith('#'))) return undefined;
  if (lineEnd >= 0 && !src.slice(lineEnd + 1).split('\n').every((l) => isBlank(l) || trimWhite(l).startsWith('#'))) return undefined;
  return out;
}

/** Leading spaces: YAML indents with spaces only (a tab after them is content). */
function indentOf(line: string): number {
  let n = 0;
  while (line[n] === ' ') n++;
  return n;
}

function blockScalar(lines: string[], folded: boolean, chomp: '+' | '-' | undefined, explicit: number | undefined): string {
  let indent = explicit;
  const content: string[] = [];
  for (const line of lines) {
    const lead = indentOf(line);
    // An empty line: spaces only, no more of them than the indentation (more are content).
    if (lead === line.length && (indent === undefined || lead <= indent)) {
      content.push('');
      continue;
    }
    indent ??= lead;
    if (lead < indent || indent === 0) break;
    content.push(line.slice(indent));
  }
  // Trailing empty lines belong to the chomping, not to the text.
  let trailing = 0;
  while (content.length && content[content.length - 1] === '') {
    content.pop();
    trailing++;
  }
  if (content.length === 0) return chomp === '+' ? '\n'.repeat(trailing) : '';
  let text: string;
  if (!folded) text = content.join('\n');
  else {
    // Folding: neighbouring lines are joined by a space, each empty line between them becomes a
    // newline, and lines that start with white space ("more indented") keep their line breaks.
    text = '';
    let blanks = 0;
    let prev: 'normal' | 'more' | undefined;
    for (const line of content) {
      if (line === '') {
        blanks++;
        continue;
      }
      const kind = isSpace(line[0]) ? 'more' : 'normal';
      if (prev === undefined) text += '\n'.repeat(blanks);
      else if (prev === 'normal' && kind === 'normal') text += blanks ? '\n'.repeat(blanks) : ' ';
      else text += '\n'.repeat(blanks + 1);
      text += line;
      blanks = 0;
      prev = kind;
    }
  }
  if (chomp === '-') return text;
  if (chomp === '+') return `${text}\n${'\n'.repeat(trailing)}`;
  return `${text}\n`;
}
