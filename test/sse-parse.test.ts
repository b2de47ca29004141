// The provider-side SSE parser against the WHATWG line and field rules, every chunk split, and the
// sizes a hostile server can send.
import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openaiProvider } from '../src/agent/providers/openai.js';
import { MAX_EVENT_CHARS, SseEventTooLarge, sseData } from '../src/agent/providers/sse.js';
import { ProviderError } from '../src/agent/types.js';

async function parse(chunks: (string | Uint8Array)[], max?: number): Promise<string[]> {
  async function* body() {
    yield* chunks;
  }
  const out: string[] = [];
  for await (const d of sseData(body(), max)) out.push(d);
  return out;
}

const stream = 'data: one\r\n\r\ndata:two\rdata: 2b\r\rdata\n\n: comment\nevent: x\nid: 7\ndata:  three\n\n\ufeffdata: é€😀\r\n\r\ndata: cut off';

t.test('line ends CRLF, LF and lone CR; fields with and without colon; comments', async (t) => {
  // The BOM in the middle is not at the stream's start: that line's field is "\ufeffdata", ignored.
  t.same(await parse([stream]), ['one', 'two\n2b', '', ' three']);
  t.same(await parse(['\ufeffdata: x\n\n']), ['x'], 'a BOM at the start is dropped');
  t.same(await parse(['data: a\ndata\ndata: b\n\n']), ['a\n\nb'], '`data` alone adds an empty line');
  t.same(await parse(['data: no blank line at the end']), [], 'an event without its blank line is never dispatched');
  t.same(await parse(['data: x\r', '\n', '\r', '\ndata: y\n\n']), ['x', 'y'], 'CR at a chunk end, LF at the next start: one line end');
  t.same(await parse(['data: x\r', '\r']), ['x'], 'CR then CR: a line and a blank line');
  t.same(await parse(['data: x\r', '', '\n', 'data: y\n\n']), ['x\ny'], 'an empty chunk between the CR and its LF changes nothing');
  t.same(await parse([Buffer.from('data: x\r'), Uint8Array.of(), Buffer.from('\ndata: y\n\n')]), ['x\ny'], 'nor does an empty byte chunk');
});

t.test('one BOM at the start of the stream is dropped, in bytes or text', async (t) => {
  const bom = Buffer.from('\ufeffdata: x\n\n');
  t.same(await parse([bom]), ['x']);
  t.same(await parse([bom.subarray(0, 1), bom.subarray(1, 2), bom.subarray(2)]), ['x'], 'a BOM split across chunks');
  t.same(await parse([Buffer.from('\ufeff\ufeffdata: x\n\ndata: y\n\n')]), ['y'], 'only one: a second BOM starts the field name');
  t.same(await parse(['\ufeff\ufeffdata: x\n\ndata: y\n\n']), ['y'], 'the same for text chunks');
  t.same(await parse(['', '\ufeffdata: x\n\n']), ['x'], 'an empty first chunk is not the start');
});

t.test('every split of the stream gives the unsplit result', async (t) => {
  const s = stream.replace(/\ufeff/, '') + '\n\n';
  const whole = await parse([s]);
  t.same(whole, ['one', 'two\n2b', '', ' three', 'é€😀', 'cut off'], 'reference');
  const bytes = Buffer.from(s);
  for (let i = 1; i < bytes.length; i++) {
    const a = await parse([bytes.subarray(0, i), bytes.subarray(i)]);
    if (JSON.stringify(a) !== JSON.stringify(whole)) t.fail(`split at byte ${i}: ${JSON.stringify(a)}`);
    const b = await parse([s.slice(0, i), s.slice(i)]);
    if (JSON.stringify(b) !== JSON.stringify(whole)) t.fail(`split at char ${i}: ${JSON.stringify(b)}`);
  }
  const byteWise = await parse([...bytes].map((b) => Uint8Array.of(b)));
  t.same(byteWise, whole, 'one byte at a time, multi-byte characters split');
  let pairs = 0;
  for (let i = 1; i < bytes.length; i++) {
    for (let j = i + 1; j < bytes.length; j++, pairs++) {
      const c = await parse([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]);
      if (JSON.stringify(c) !== JSON.stringify(whole)) t.fail(`split at bytes ${i} and ${j}: ${JSON.stringify(c)}`);
    }
  }
  t.ok(pairs > 1000, `${pairs} three-way splits checked`);
  t.pass(`${bytes.length - 1} splits checked`);
});

t.test('a 4 MB line in 1 KiB chunks arrives whole', async (t) => {
  const big = 'x'.repeat(4 * 1024 * 1024);
  const bytes = Buffer.from(`data: ${big}\n\ndata: after\n\n`);
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += 1024) chunks.push(bytes.subarray(i, i + 1024));
  const out = await parse(chunks);
  t.equal(out.length, 2);
  t.equal(out[0]!.length, big.length);
  t.equal(out[1], 'after');
});

t.test('an event over the cap is refused with the cap named', async (t) => {
  t.equal(MAX_EVENT_CHARS, 16 * 1024 * 1024);
  await t.rejects(parse(['data: ' + 'x'.repeat(2000) + '\n\n'], 1000), new SseEventTooLarge(1000));
  await t.rejects(parse(['data: 123456\n', 'data: 123456\n'], 10), /exceeded 10 characters/, 'many data lines count together');
  await t.rejects(parse(['x'.repeat(600), 'x'.repeat(600)], 1000), /exceeded 1000 characters/, 'so does a line that never ends');
  await t.rejects(parse(['data: 123456\n', 'xxxxx'], 10), /exceeded 10 characters/, 'data lines and the unfinished line count together');
  t.same(await parse(['data: 12345\n\n', 'data: 12345\n\n'], 10), ['12345', '12345'], 'the count restarts with each event');
});

t.test('the OpenAI-compatible provider gives up on an endless event and closes the connection', async (t) => {
  // A server that sends one data line and never ends it: 64 KiB at a time, up to 4x the cap, after
  // which it ends the response itself (and the parser would see a stream without its event).
  const piece = 'x'.repeat(64 * 1024);
  let written = 0;
  let serverClosed!: Promise<number>;
  const server = createServer((_req, res) => {
    serverClosed = new Promise((resolve) => res.on('close', () => resolve(written)));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: ');
    const more = () => {
      while (!res.destroyed && written < 4 * MAX_EVENT_CHARS) {
        written += piece.length;
        if (!res.write(piece)) return void res.once('drain', more);
      }
      res.end();
    };
    more();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  const { port } = server.address() as AddressInfo;
  const error = await openaiProvider('m', { baseUrl: `http://127.0.0.1:${port}/v1`, timeoutMs: 60_000 })
    .complete({ model: 'm', system: 's', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], tools: [], maxTokens: 16 })
    .then(
      () => undefined,
      (err: unknown) => err,
    );
  t.ok(error instanceof ProviderError, 'a ProviderError');
  t.equal((error as ProviderError).retryable, false, 'not asked again: the same request would break the cap again');
  t.match((error as Error).message, `bad stream: a server-sent event exceeded ${MAX_EVENT_CHARS} characters`);
  const sent = await serverClosed;
  t.ok(sent < 4 * MAX_EVENT_CHARS, `the client closed the connection after ${sent} bytes`);
});
