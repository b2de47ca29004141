// The daemon's event stream (GET /api/v1/events?account=…): server-sent events, `event:receive`
// with `data:{"envelope":…,"account":…}`, a `:` keep-alive every 15 s, and, in newer daemons, an
// `id:` per event that a reconnect hands back as Last-Event-ID to get what it missed. One
// connection; the caller (./receiver.ts) reconnects.

export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/** The largest event taken: an envelope is a few KiB; a daemon that sends more is not trusted. */
export const MAX_EVENT_CHARS = 4 * 1024 * 1024;

/**
 * The events of a byte stream, by the WHATWG rules that matter here: lines end in LF, CRLF or CR;
 * `field:value` with one leading space dropped; a line starting with ':' is a comment (the keep-alive,
 * reported through onActivity like every chunk); an event is dispatched at its blank line only, so an
 * event cut off by a truncated stream is never yielded.
 */
export async function* sseEvents(body: AsyncIterable<Uint8Array>, onActivity: () => void): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buf = '';
  let id: string | undefined;
  let event = '';
  let data: string[] = [];
  for await (const chunk of body) {
    onActivity();
    buf += decoder.decode(chunk, { stream: true });
    for (;;) {
      const m = /\r\n|\r|\n/.exec(buf);
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
      if (!m || (m[0] === '\r' && m.index === buf.length - 1)) break;
      const line = buf.slice(0, m.index);
      buf = buf.slice(m.index + m[0].length);
      if (line === '') {
        if (data.length) yield { ...(id !== undefined ? { id } : {}), event: event || 'message', data: data.join('\n') };
        event = '';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
      if (field === 'data') data.push(value);
      else if (field === 'event') event = value;
      else if (field === 'id') id = value;
    }
    if (buf.length + data.reduce((n, d) => n + d.length, 0) > MAX_EVENT_CHARS) throw new Error(`the daemon sent an event of more than ${MAX_EVENT_CHARS} characters; the stream was abandoned`);
  }
}
