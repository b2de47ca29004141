// The gateway's SSE writer on a real HTTP server on 127.0.0.1: events in order, keep-alive comments,
// and a client that stops reading is dropped with the server's buffer for it bounded.
import t from 'tap';
import { createServer, request, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { sseData } from '../src/agent/providers/sse.js';
import { frame, openSse, type SseOptions, type SseStream } from '../src/channels/http/sse-writer.js';

async function serve(o: SseOptions, onOpen: (s: SseStream, res: ServerResponse) => void) {
  const server = createServer((_req, res) => onOpen(openSse(res, o), res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

t.test('frames split data on every line end', async (t) => {
  t.equal(frame('x', { a: 1 }), 'event: x\ndata: {"a":1}\n\n');
  t.equal(frame('t', 'one\ntwo\r\nthree\rfour'), 'event: t\ndata: one\ndata: two\ndata: three\ndata: four\n\n');
});

t.test('a reading client gets every event in order, and keep-alive comments while idle', async (t) => {
  let stream: SseStream | undefined;
  let res: ServerResponse | undefined;
  const { server, port } = await serve({ keepAliveMs: 30 }, (s, r) => {
    stream = s;
    res = r;
    for (let i = 0; i < 100; i++) s.event('n', { i, text: `line ${i}\nsecond` });
  });
  t.teardown(() => server.close());
  const body = await new Promise<import('node:http').IncomingMessage>((resolve) => request({ port, path: '/' }, resolve).end());
  t.equal(body.headers['content-type'], 'text/event-stream');
  const raw: string[] = [];
  body.on('data', (c: Buffer) => raw.push(c.toString()));
  const got: unknown[] = [];
  // Read the events through the provider's parser; stop once two keep-alives have come after them.
  const until = new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if ((raw.join('').match(/^: keep-alive$/gm) ?? []).length >= 2) {
        clearInterval(check);
        resolve();
      }
    }, 10);
  });
  const reading = (async () => {
    for await (const d of sseData(body)) got.push(JSON.parse(d.split('\n')[0]!));
  })();
  await until;
  stream!.end();
  await reading;
  t.same(got.map((g) => (g as { i: number }).i), Array.from({ length: 100 }, (_, i) => i));
  t.equal(stream!.closed, true);
  t.equal(res!.listenerCount('drain'), 0, 'listeners removed on close');
  t.equal(stream!.event('late', {}), false, 'nothing is written after the end');
});

t.test('a client that stops reading: events dropped, buffer bounded, client disconnected once', async (t) => {
  const cap = 256 * 1024;
  const payload = 'x'.repeat(64 * 1024);
  const frameBytes = Buffer.byteLength(frame('big', { payload, i: 0 })) + 16;
  const slow: { dropped: number; bufferedBytes: number }[] = [];
  let maxBuffered = 0;
  let sent = 0;
  let refused = 0;
  const done = new Promise<SseStream>((resolve) => {
    void serve({ keepAliveMs: 20, maxBufferedBytes: cap, graceMs: 200, onSlowClient: (i) => slow.push(i) }, async (s, res) => {
      // Keep writing until the server gives up on the client.
      for (let i = 0; i < 5000 && !s.closed; i++) {
        if (s.event('big', { payload, i })) sent++;
        else refused++;
        maxBuffered = Math.max(maxBuffered, res.writableLength);
        await new Promise((r) => setTimeout(r, i % 20 === 0 ? 5 : 0));
      }
      resolve(s);
    }).then(({ server, port }) => {
      t.teardown(() => server.close());
      const c = connect(port, '127.0.0.1', () => {
        c.write(`GET / HTTP/1.1\r\nHost: x\r\n\r\n`);
        c.pause(); // and never read again
      });
      c.on('error', () => {});
      sock = c;
    });
  });
  let sock: import('node:net').Socket | undefined;
  const s = await done;
  // The client reads again only now: what the kernel held comes, then the end the server sent.
  const closedByServer = await new Promise<boolean>((resolve) => {
    sock!.on('close', () => resolve(true));
    sock!.resume();
  });
  t.ok(refused > 0, `${refused} events dropped, ${sent} written`);
  t.ok(maxBuffered <= cap + frameBytes, `at most ${maxBuffered} bytes buffered (cap ${cap} + one frame ${frameBytes})`);
  t.equal(slow.length, 1, 'told once');
  t.equal(slow[0]!.dropped, s.dropped);
  t.equal(s.closed, true);
  t.ok(closedByServer, 'the server closed the connection');
});
