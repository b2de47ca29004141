// Server-sent events from a byte stream (the chat completions stream; the Anthropic SDK parses its
// own). Yields each event's data, the "data:" lines joined. Per the SSE spec an event is dispatched
// only at its blank line, so an event cut off by the end of the stream is never yielded: a truncated
// stream shows up as a missing end marker, not as half a JSON object.
export async function* sseData(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending = '';
  let data: string[] = [];
  for await (const chunk of body) {
    pending += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let start = 0;
    let nl: number;
    // Scan by index and cut the buffer once per chunk: slicing per line would copy it per line.
    while ((nl = pending.indexOf('\n', start)) >= 0) {
      const end = nl > start && pending.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      const line = pending.slice(start, end);
      start = nl + 1;
      if (line === '') {
        if (data.length) yield data.join('\n');
        data = [];
      } else if (line.startsWith('data:')) {
        data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
      }
      // "event:", "id:", "retry:" and ":" comments carry nothing chat completions need.
    }
    pending = pending.slice(start);
  }
}
