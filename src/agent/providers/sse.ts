// Server-sent events from a byte stream (the chat completions stream; the Anthropic SDK parses its
// own), by the WHATWG rules: lines end in CRLF, LF or a lone CR (a CR at the end of one chunk and an
// LF at the start of the next are one line end); `field:value` with one leading space of the value
// dropped, a line without a colon is a field with an empty value (`data` alone adds an empty line of
// data), a line starting with ':' is a comment; a leading BOM is dropped. Yields each event's data,
// its data lines joined with '\n'. An event is dispatched only at its blank line, so an event cut off
// by the end of the stream is never yielded: a truncated stream shows up as a missing end marker, not
// as half a JSON object. Each character is scanned once (a line's start waits in pieces until its
// end arrives), and one event may hold at most MAX_EVENT_CHARS, so a server cannot make the parser quadratic or unbounded.
export const MAX_EVENT_CHARS = 16 * 1024 * 1024;

export class SseEventTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`a server-sent event exceeded ${limit} characters; the stream was abandoned`);
  }
}

export async function* sseData(body: AsyncIterable<Uint8Array | string>, maxEventChars = MAX_EVENT_CHARS): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  // The start of a line whose end has not arrived yet, in pieces: a line fed in small chunks is
  // joined once, when it ends, and never searched again.
  let partial: string[] = [];
  let partialChars = 0;
  let first = true;
  let lastWasCr = false;
  let data: string[] = [];
  let eventChars = 0;

  function* line(text: string): Generator<string> {
    if (text === '') {
      if (data.length) yield data.join('\n');
      data = [];
      eventChars = 0;
      return;
    }
    const colon = text.indexOf(':');
    if (colon === 0) return; // a comment
    const field = colon < 0 ? text : text.slice(0, colon);
    // "event:", "id:", "retry:" carry nothing chat completions need.
    if (field !== 'data') return;
    const value = colon < 0 ? '' : text.charCodeAt(colon + 1) === 32 ? text.slice(colon + 2) : text.slice(colon + 1);
    eventChars += value.length + 1;
    if (eventChars > maxEventChars) throw new SseEventTooLarge(maxEventChars);
    data.push(value);
  }

  for await (const chunk of body) {
    let text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    if (first && text.length) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    // An LF that completes a CRLF split across chunks ends no further line.
    if (lastWasCr && text.charCodeAt(0) === 10) text = text.slice(1);
    lastWasCr = false;
    let start = 0;
    const ends = lineEnds(text);
    for (;;) {
      const end = ends.next(start);
      if (end < 0) break;
      const piece = text.slice(start, end);
      if (partial.length) {
        partial.push(piece);
        yield* line(partial.join(''));
        partial = [];
        partialChars = 0;
      } else yield* line(piece);
      if (text.charCodeAt(end) === 13) {
        if (end + 1 === text.length) lastWasCr = true;
        else if (text.charCodeAt(end + 1) === 10) {
          start = end + 2;
          continue;
        }
      }
      start = end + 1;
    }
    if (start < text.length) {
      partial.push(text.slice(start));
      partialChars += text.length - start;
      if (partialChars > maxEventChars) throw new SseEventTooLarge(maxEventChars);
    }
  }
}

/**
 * The next CR or LF at or after a position, for one buffer. Each kind is searched again only once
 * the position has passed the last one found, so a buffer of many LF lines and no CR is not
 * searched to its end for a CR on every line.
 */
function lineEnds(s: string): { next(from: number): number } {
  let cr = -2;
  let lf = -2;
  return {
    next(from) {
      if (cr !== -1 && cr < from) cr = s.indexOf('\r', from);
      if (lf !== -1 && lf < from) lf = s.indexOf('\n', from);
      if (cr < 0) return lf;
      if (lf < 0) return cr;
      return Math.min(cr, lf);
    },
  };
}
