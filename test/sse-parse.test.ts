// The provider-side SSE parser against the WHATWG line and field rules, every chunk split, and the
// sizes a hostile server can send.
import t from 'tap';
import { MAX_EVENT_CHARS, SseEventTooLarge, sseData } from '../src/agent/providers/sse.js';

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
  t.same(await parse(['data: 12345\n\n', 'data: 12345\n\n'], 10), ['12345', '12345'], 'the count restarts with each event');
});
