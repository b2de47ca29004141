// What the Telegram stand-in (./telegram-api.ts) does to message text: the checks the Bot API server
// makes on an outgoing text (formatText), the entities Telegram finds in an incoming one, and the HTML
// parse mode, ported from TDLib's parse_html (td/telegram/MessageEntity.cpp), which is what the
// server runs for parse_mode=HTML. It walks the UTF-8 bytes like the original so the
// "at byte offset N" in the errors is the one Telegram reports, and counts UTF-16 units for entities.
// Quirks kept on purpose because a client sees them: an unknown named entity (`&nbsp;`) or a bare `&`
// stays literal text instead of failing; attributes other than the known ones are ignored; `</>`
// closes whatever is open; `<a>` without href links its own text when that text is a link.
// Not ported: fix_formatted_text's nesting repairs (entities are returned as parsed, sorted).
import type { MessageEntity } from '@grammyjs/types';

export class TelegramHtmlError extends Error {}
/** a text the Bot API refuses; the message is the description after "Bad Request: " */
export class TextRejected extends Error {}

const TAGS = new Set(['a', 'b', 'strong', 'i', 'em', 's', 'strike', 'del', 'u', 'ins', 'tg-spoiler', 'tg-emoji', 'tg-time', 'span', 'pre', 'code', 'blockquote']);
// TDLib's sort key after offset and length: wider entities first, then this priority.
const PRIORITY: Record<string, number> = { blockquote: 0, expandable_blockquote: 0, pre: 11, code: 20, date_time: 30, text_link: 49, bold: 90, italic: 91, underline: 92, strikethrough: 93, spoiler: 94, custom_emoji: 99 };

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a || c === 0 || c === 0x0b;
const isAlpha = (c: number): boolean => (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a;
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isHex = (c: number): boolean => isDigit(c) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);

interface Raw {
  type: string;
  offset: number;
  length: number;
  arg: string;
  date?: number;
}

export function parseTelegramHtml(html: string): { text: string; entities: MessageEntity[] } {
  const src = Buffer.from(html, 'utf8');
  // The C++ reads a NUL-terminated string; reading past the end as 0 keeps its loop conditions intact.
  const at = (i: number): number => src[i] ?? 0;
  const out: number[] = [];
  const raws: Raw[] = [];
  const open: { tag: string; arg: string; date: number; offset: number; begin: number }[] = [];
  let utf16 = 0;
  let surrogate = false;

  const decodeEntity = (pos: number): { code: number; next: number } | null => {
    let end = pos + 1;
    let code = 0;
    if (at(pos + 1) === 0x23 /* # */) {
      end++;
      if (at(pos + 2) === 0x78 /* x */) {
        end++;
        while (isHex(at(end))) code = code * 16 + parseInt(String.fromCharCode(at(end++)), 16);
      } else {
        while (isDigit(at(end))) code = code * 10 + at(end++) - 0x30;
      }
      if (code === 0 || code >= 0x10ffff || end - pos >= 10) return null;
    } else {
      while (isAlpha(at(end))) end++;
      const name = src.subarray(pos + 1, end).toString('latin1');
      const named: Record<string, number> = { lt: 0x3c, gt: 0x3e, amp: 0x26, quot: 0x22 };
      if (!(name in named)) return null;
      code = named[name] ?? 0;
    }
    return { code, next: at(end) === 0x3b /* ; */ ? end + 1 : end };
  };
  const appendCode = (into: number[], code: number, inText: boolean): void => {
    if (code >= 0xd800 && code <= 0xdfff) {
      // TDLib writes the lone surrogate and rejects the text after parsing (only in the text, not in an
      // attribute); a placeholder keeps the offsets right meanwhile.
      surrogate ||= inText;
      into.push(0xef, 0xbf, 0xbd);
      return;
    }
    into.push(...Buffer.from(String.fromCodePoint(code), 'utf8'));
  };

  for (let i = 0; i < src.length; i++) {
    const c = at(i);
    if (c === 0x26 /* & */) {
      const d = decodeEntity(i);
      if (d) {
        utf16 += d.code > 0xffff ? 2 : 1;
        appendCode(out, d.code, true);
        i = d.next - 1;
        continue;
      }
    }
    if (c !== 0x3c /* < */) {
      if ((c & 0xc0) !== 0x80) utf16 += c >= 0xf0 ? 2 : 1;
      out.push(c);
      continue;
    }

    const begin = i++;
    if (at(i) !== 0x2f /* / */) {
      while (!isSpace(at(i)) && at(i) !== 0x3e) i++;
      if (at(i) === 0) throw new TelegramHtmlError(`Unclosed start tag at byte offset ${begin}`);
      const tag = src.subarray(begin + 1, i).toString('utf8').toLowerCase();
      if (!TAGS.has(tag)) throw new TelegramHtmlError(`Unsupported start tag "${tag}" at byte offset ${begin}`);

      let arg = '';
      let date = 0;
      while (at(i) !== 0x3e) {
        while (at(i) !== 0 && isSpace(at(i))) i++;
        if (at(i) === 0x3e) break;
        const nameBegin = i;
        while (!isSpace(at(i)) && ![0x3d, 0x3e, 0x2f, 0x22, 0x27].includes(at(i))) i++;
        const attr = src.subarray(nameBegin, i).toString('utf8');
        if (!attr) throw new TelegramHtmlError(`Empty attribute name in the tag "${tag}" at byte offset ${begin}`);
        while (at(i) !== 0 && isSpace(at(i))) i++;
        if (at(i) !== 0x3d /* = */) {
          if (at(i) === 0) throw new TelegramHtmlError(`Unclosed start tag "${tag}" at byte offset ${begin}`);
          if (tag === 'blockquote' && attr === 'expandable') arg = '1';
          continue;
        }
        i++;
        while (at(i) !== 0 && isSpace(at(i))) i++;
        if (at(i) === 0) throw new TelegramHtmlError(`Unclosed start tag "${tag}" at byte offset ${begin}`);

        let value: string;
        const q = at(i);
        if (q !== 0x27 && q !== 0x22) {
          const tokenBegin = i;
          while (isAlpha(at(i)) || isDigit(at(i)) || at(i) === 0x2e || at(i) === 0x2d) i++;
          value = src.subarray(tokenBegin, i).toString('utf8').toLowerCase();
          if (!isSpace(at(i)) && at(i) !== 0x3e) throw new TelegramHtmlError(`Unexpected end of name token at byte offset ${tokenBegin}`);
        } else {
          i++;
          const bytes: number[] = [];
          while (at(i) !== 0 && at(i) !== q) {
            if (at(i) === 0x26) {
              const d = decodeEntity(i);
              if (d) {
                appendCode(bytes, d.code, false);
                i = d.next;
                continue;
              }
            }
            bytes.push(at(i++));
          }
          if (at(i) === q) i++;
          value = Buffer.from(bytes).toString('utf8');
        }
        if (at(i) === 0) throw new TelegramHtmlError(`Unclosed start tag at byte offset ${begin}`);

        if (tag === 'a' && attr === 'href') arg = value;
        else if (tag === 'code' && attr === 'class' && value.startsWith('language-')) arg = value.slice(9);
        else if (tag === 'span' && attr === 'class' && value.startsWith('tg-')) arg = value.slice(3);
        else if (tag === 'tg-emoji' && attr === 'emoji-id') arg = value;
        else if (tag === 'blockquote' && attr === 'expandable') arg = '1';
        else if (tag === 'tg-time' && attr === 'unix') date = /^-?\d+$/.test(value) ? Number(value) : 0;
        else if (tag === 'tg-time' && attr === 'format') arg = value;
      }
      if (tag === 'span' && arg !== 'spoiler') throw new TelegramHtmlError(`Tag "span" must have class "tg-spoiler" at byte offset ${begin}`);
      open.push({ tag, arg, date, offset: utf16, begin: out.length });
      continue;
    }

    if (open.length === 0) throw new TelegramHtmlError(`Unexpected end tag at byte offset ${begin}`);
    while (!isSpace(at(i)) && at(i) !== 0x3e) i++;
    const endTag = src.subarray(begin + 2, i).toString('utf8').toLowerCase();
    while (at(i) !== 0 && isSpace(at(i))) i++;
    if (at(i) !== 0x3e) throw new TelegramHtmlError(`Unclosed end tag at byte offset ${begin}`);
    const top = open[open.length - 1];
    if (!top) throw new TelegramHtmlError(`Unexpected end tag at byte offset ${begin}`);
    if (endTag && endTag !== top.tag) throw new TelegramHtmlError(`Unmatched end tag at byte offset ${begin}, expected "</${top.tag}>", found "</${endTag}>"`);
    if (utf16 > top.offset) closeEntity(top, utf16 - top.offset, out, raws);
    open.pop();
  }
  const unclosed = open[open.length - 1];
  if (unclosed) throw new TelegramHtmlError(`Can't find end tag corresponding to start tag "${unclosed.tag}"`);
  if (surrogate) throw new TelegramHtmlError('Text contains invalid Unicode characters after decoding HTML entities, check for unmatched surrogate code units');

  const priority = (r: Raw): number => (r.type === 'pre' && r.arg ? 10 : (PRIORITY[r.type] ?? 50));
  raws.sort((a, b) => a.offset - b.offset || b.length - a.length || priority(a) - priority(b));
  return { text: Buffer.from(out).toString('utf8'), entities: raws.map(toEntity) };
}

function closeEntity(top: { tag: string; arg: string; date: number; offset: number; begin: number }, length: number, out: number[], raws: Raw[]): void {
  const simple: Record<string, string> = { i: 'italic', em: 'italic', b: 'bold', strong: 'bold', s: 'strikethrough', strike: 'strikethrough', del: 'strikethrough', u: 'underline', ins: 'underline', 'tg-spoiler': 'spoiler', span: 'spoiler' };
  const offset = top.offset;
  const last = raws[raws.length - 1];
  const simpleType = simple[top.tag];
  if (simpleType) raws.push({ type: simpleType, offset, length, arg: '' });
  else if (top.tag === 'blockquote') raws.push({ type: top.arg ? 'expandable_blockquote' : 'blockquote', offset, length, arg: '' });
  else if (top.tag === 'tg-emoji') {
    if (!/^\d+$/.test(top.arg) || /^0+$/.test(top.arg)) throw new TelegramHtmlError('Invalid custom emoji identifier specified');
    raws.push({ type: 'custom_emoji', offset, length, arg: top.arg });
  } else if (top.tag === 'tg-time') {
    if (!/^([rR]|[tTdDwW]*)$/.test(top.arg)) throw new TelegramHtmlError('Invalid date format used');
    if (top.date > 0) raws.push({ type: 'date_time', offset, length, arg: top.arg, date: top.date });
  } else if (top.tag === 'a') {
    const url = checkedLink(top.arg || Buffer.from(out.slice(top.begin)).toString('utf8'));
    if (url !== undefined) raws.push({ type: 'text_link', offset, length, arg: url });
  } else if (top.tag === 'pre') {
    // <pre><code class="language-x">…</code></pre>: the inner code already closed with the same span.
    if (last && last.type === 'code' && last.offset === offset && last.length === length && last.arg) last.type = 'pre';
    else raws.push({ type: 'pre', offset, length, arg: '' });
  } else if (top.tag === 'code') {
    if (last && last.type === 'pre' && last.offset === offset && last.length === length && top.arg) last.arg = top.arg;
    else raws.push({ type: 'code', offset, length, arg: top.arg });
  }
}

function toEntity(r: Raw): MessageEntity {
  const base = { offset: r.offset, length: r.length };
  switch (r.type) {
    case 'pre':
      return r.arg ? { type: 'pre', ...base, language: r.arg } : { type: 'pre', ...base };
    case 'text_link':
      return { type: 'text_link', ...base, url: r.arg };
    case 'custom_emoji':
      return { type: 'custom_emoji', ...base, custom_emoji_id: r.arg };
    case 'date_time':
      return { type: 'date_time', ...base, unix_time: r.date ?? 0, date_time_format: r.arg as MessageEntity.DateTimeMessageEntity['date_time_format'] };
    default:
      return { type: r.type as MessageEntity.CommonMessageEntity['type'], ...base };
  }
}

/**
 * A light LinkManager::get_checked_link: http(s) links get a scheme and a path, tg:// and ton:// pass,
 * anything else (spaces, other schemes, no host) is not a link, and the entity is silently dropped.
 */
function checkedLink(raw: string): string | undefined {
  const m = /^(?:([a-zA-Z][a-zA-Z0-9+.-]*):\/\/)?([^/?#\s]*)(\S*)$/.exec(raw);
  if (!m) return undefined;
  const scheme = (m[1] ?? 'http').toLowerCase();
  if (scheme === 'tg' || scheme === 'ton' || scheme === 'tonsite') return raw;
  if (scheme !== 'http' && scheme !== 'https') return undefined;
  const host = (m[2] ?? '').toLowerCase();
  if (!/^([\p{L}\p{N}_-]+\.)+[\p{L}\p{N}-]{2,}(:\d{1,5})?$/u.test(host) && !/^(localhost|\d{1,3}(\.\d{1,3}){3})(:\d{1,5})?$/.test(host)) return undefined;
  const rest = m[3] ?? '';
  return `${scheme}://${host}${rest.startsWith('/') ? rest : `/${rest}`}`;
}

/** Telegram's own entity detection on incoming text, limited to what a bot acts on. */
export function detectEntities(text: string): MessageEntity[] {
  const found: MessageEntity[] = [];
  for (const m of text.matchAll(/(?<![\p{L}\p{N}_/<>])\/[a-zA-Z0-9_]{1,64}(?:@[a-zA-Z0-9_]{3,32})?(?![\p{L}\p{N}_/<>])/gu)) found.push({ type: 'bot_command', offset: m.index, length: m[0].length });
  for (const m of text.matchAll(/(?<![\p{L}\p{N}_])@[a-zA-Z0-9_]{2,32}(?![\p{L}\p{N}_])/gu)) {
    if (!found.some((e) => m.index >= e.offset && m.index < e.offset + e.length)) found.push({ type: 'mention', offset: m.index, length: m[0].length });
  }
  return found.sort((a, b) => a.offset - b.offset);
}

/** fix_formatted_text's trimming: any trailing whitespace, leading spaces and newlines before the first entity. */
export function trimFormatted(text: string, entities: MessageEntity[]): { text: string; entities: MessageEntity[] } {
  const end = text.replace(/\s+$/u, '').length;
  const kept = entities.filter((e) => e.offset < end).map((e) => (e.offset + e.length > end ? { ...e, length: end - e.offset } : e));
  const firstEntity = kept[0]?.offset ?? end;
  let start = 0;
  while (start < firstEntity && (text[start] === ' ' || text[start] === '\n')) start++;
  return { text: text.slice(start, end), entities: kept.map((e) => ({ ...e, offset: e.offset - start })) };
}

/**
 * What the server does to an outgoing text before sending it: parse, trim, check. Throws TextRejected
 * with the description after "Bad Request: ".
 */
export function formatText(raw: string, parseMode: string): { text: string; entities: MessageEntity[] } {
  if (!raw) throw new TextRejected('message text is empty');
  if (Buffer.byteLength(raw) > 1 << 15) throw new TextRejected('text is too long');
  const mode = parseMode.toLowerCase();
  let parsed = { text: raw, entities: [] as MessageEntity[] };
  if (mode === 'html') {
    try {
      parsed = parseTelegramHtml(raw);
    } catch (e) {
      if (e instanceof TelegramHtmlError) throw new TextRejected(`can't parse entities: ${e.message}`);
      throw e;
    }
  } else if (mode && mode !== 'none' && mode !== 'markdown' && mode !== 'markdownv2') throw new TextRejected('unsupported parse_mode');
  const out = trimFormatted(parsed.text, parsed.entities);
  if (!out.text) throw new TextRejected('text must be non-empty');
  // JS length is UTF-16 units, so an emoji counts 2. TDLib's own pre-check counts code points and the
  // server's count is not public; the stricter reading keeps a client that passes here safe there.
  if (out.text.length > 4096) throw new TextRejected('message is too long');
  return out;
}
