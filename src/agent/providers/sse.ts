// Server-sent events from a byte stream (the chat completions stream; the Anthropic SDK parses its
// own), by the WHATWG rules: lines end in CRLF, LF or a lone CR (a CR at the end of one chunk and an
// LF at the start of the next are one line end); `field:value` with one leading space of the value
// dropped, a line without a colon is a field with an empty value (`data` alone adds an empty line of
// data), a line starting with ':' is a comment; one BOM at the stream's start is dropped. Yields each
// event's data, its data lines joined with '\n'. An event is dispatched only at its blank line, so an
// event cut off by the end of the stream is never yielded: a truncated stream shows up as a missing
// end marker, not as half a JSON object. Each character is scanned once (a line's start waits in
// pieces until its end arrives), and one event may hold at most MAX_EVENT_CHARS, so a server cannot
// make the parser quadratic or its memory unbounded.
export const MAX_EVENT_CHARS = 16 * 1024 * 1024;

export class SseEventTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`a server-sent event exceeded ${limit} characters; the stream was abandoned`);
  }
}

const CR = 13;
const LF = 10;
const COLON = 58;
const SPACE = 32;
const BOM = 0xfeff;

export async function* sseData(body: AsyncIterable<Uint8Array | string>, maxEventChars = MAX_EVENT_CHARS): AsyncGenerator<string> {
  // ignoreBOM: the BOM is dropped below, once, for byte and string chunks alike; the decoder's own
  // dropping would make a stream that starts with two BOMs lose both.
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  // The start of a line whose end has not arrived yet, in pieces: a line fed in small chunks is
  // joined once, when it ends, and never searched again.
  let partial: string[] = [];
  let partialChars = 0;
  let atStart = true;
  let lastWasCr = false;
  let data: string[] = [];
  // The data lines of this event so far, each with its '\n': with partialChars, what the cap limits.
  let dataChars = 0;

  /** One complete line; returns the event's data when the line is the blank one that dispatches it. */
  const line = (text: string): string | undefined => {
    if (text === '') {
      const out = data.length ? data.join('\n') : undefined;
      data = [];
      dataChars = 0;
      return out;
    }
    const colon = text.indexOf(':');
    if (colon === 0) return undefined; // a comment
    // "event:", "id:", "retry:" carry nothing chat completions need.
    if (colon < 0 ? text !== 'data' : colon !== 4 || !text.startsWith('data')) return undefined;
    const value = colon < 0 ? '' : text.charCodeAt(colon + 1) === SPACE ? text.slice(colon + 2) : text.slice(colon + 1);
    dataChars += value.length + 1;
    if (dataChars > maxEventChars) throw new SseEventTooLarge(maxEventChars);
    data.push(value);
    return undefined;
  };

  for await (const chunk of body) {
    let text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    // An empty chunk (or one that only began a multi-byte character) says nothing about a CR before it.
    if (text.length === 0) continue;
    let start = 0;
    if (atStart) {
      atStart = false;
      if (text.charCodeAt(0) === BOM) start = 1;
    }
    // An LF that completes a CRLF split across chunks ends no further line.
    if (lastWasCr && text.charCodeAt(start) === LF) start++;
    lastWasCr = false;
    // The next CR and LF at or after `start`; each is searched again only once `start` has passed
    // it, so a chunk of many LF lines and no CR is searched for a CR once, not once per line.
    let cr = text.indexOf('\r', start);
    let lf = text.indexOf('\n', start);
    for (;;) {
      if (cr >= 0 && cr < start) cr = text.indexOf('\r', start);
      if (lf >= 0 && lf < start) lf = text.indexOf('\n', start);
      const end = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
      if (end < 0) break;
      let whole: string;
      if (partial.length) {
        partial.push(text.slice(start, end));
        whole = partial.join('');
        partial = [];
        partialChars = 0;
      } else whole = text.slice(start, end);
      const out = line(whole);
      if (out !== undefined) yield out;
      start = end + 1;
      if (text.charCodeAt(end) === CR) {
        if (start === text.length) lastWasCr = true;
        else if (text.charCodeAt(start) === LF) start++;
      }
    }
    if (start < text.length) {
      partial.push(start === 0 ? text : text.slice(start));
      partialChars += text.length - start;
      if (dataChars + partialChars > maxEventChars) throw new SseEventTooLarge(maxEventChars);
    }
  }
}
