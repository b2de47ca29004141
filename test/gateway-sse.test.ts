// The gateway's SSE writer on a real HTTP server on 127.0.0.1: events in order, keep-alive comments,
// a client that stops reading is dropped with the server's buffer for it bounded, a client that
// catches up is told what it missed, and nothing (timer, listener) outlives the response.
import t from 'tap';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { sseData } from '../src/agent/providers/sse.js';
import { frame, openSse, type SseOptions, type SseStream } from '../src/channels/http/sse-writer.js';

// The timers the writer makes, seen through the globals it calls: a timer made while `recording`
// stays in `live` until it is cleared.
const live = new Set<unknown>();
let recording = false;
const real = { setInterval, setTimeout, clearInterval, clearTimeout };
const remember = <T>(h: T): T => {
  if (recording) live.add(h);
  return h;
};
globalThis.setInterval = ((cb: () => void, ms?: number) => remember(real.setInterval(cb, ms))) as typeof setInterval;
globalThis.setTimeout = Object.assign((cb: () => void, ms?: number) => remember(real.setTimeout(cb, ms)), real.setTimeout) as typeof setTimeout;
globalThis.clearInterval = ((h: NodeJS.Timeout | undefined) => (live.delete(h), real.clearInterval(h))) as typeof clearInterval;
globalThis.clearTimeout = ((h: NodeJS.Timeout | undefined) => (live.delete(h), real.clearTimeout(h))) as typeof clearTimeout;
t.teardown(() => Object.assign(globalThis, real));

function recorded<T>(fn: () => T): T {
  recording = true;
  try {
    return fn();
  } finally {
    recording = false;
  }
}

const watched = ['close', 'finish', 'drain'] as const;
const listeners = (res: ServerResponse) => watched.map((e) => res.listenerCount(e));

interface Opened {
  stream: SseStream;
  res: ServerResponse;
  /** listener counts on the response before the writer touched it */
  before: number[];
}

async function serve(o: SseOptions) {
  let opened!: (x: Opened) => void;
  const first = new Promise<Opened>((r) => (opened = r));
  const server = createServer((_req, res) => {
    const before = listeners(res);
    opened({ stream: recorded(() => openSse(res, o)), res, before });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  return { port: (server.address() as AddressInfo).port, first };
}

function get(port: number): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => request({ port, host: '127.0.0.1', path: '/' }, resolve).on('error', reject).end());
}

/** A raw client that sends its request and never reads; resolves once the server has answered. */
function stalledClient(port: number): Socket {
  const c = connect(port, '127.0.0.1', () => {
    c.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    c.pause();
  });
  c.on('error', () => {});
  return c;
}

/** Resolves true when the socket closes; false if it is still open after `ms`, so a failure is reported rather than hung. */
function closes(c: Socket, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (c.destroyed) return resolve(true);
    const giveUp = real.setTimeout(() => resolve(false), ms);
    c.on('close', () => {
      real.clearTimeout(giveUp);
      resolve(true);
    });
    c.resume(); // what the kernel held comes, then the end the server sent
  });
}

const tick = () => new Promise((r) => setImmediate(r));

t.test('frames split data on every line end; a bad event name is refused', async (t) => {
  t.equal(frame('x', { a: 1 }), 'event: x\ndata: {"a":1}\n\n');
  t.equal(frame('t', 'one\ntwo\r\nthree\rfour'), 'event: t\ndata: one\ndata: two\ndata: three\ndata: four\n\n');
  t.equal(frame('u', undefined), 'event: u\ndata: null\n\n');
  t.throws(() => frame('a\nevent: b', {}), /SSE event name "a\\nevent: b": expected a non-empty name without line breaks/);
  t.throws(() => frame('', {}), /expected a non-empty name/);
});

t.test('options are checked, with the option named', async (t) => {
  const server = createServer((_req, res) => {
    try {
      openSse(res, { keepAliveMs: 0 });
      res.end('opened');
    } catch (err) {
      res.writeHead(500).end((err as Error).message);
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  const res = await get((server.address() as AddressInfo).port);
  t.equal(res.statusCode, 500);
  let body = '';
  for await (const c of res) body += String(c);
  t.equal(body, 'SSE option keepAliveMs: expected a positive number, got 0');
});

t.test('a reading client gets every event in order, and keep-alive comments while idle', async (t) => {
  const { port, first } = await serve({ keepAliveMs: 30 });
  const body = await get(port);
  const { stream, res, before } = await first;
  t.equal(body.headers['content-type'], 'text/event-stream');
  t.equal(live.size, 1, 'the keep-alive timer runs');
  for (let i = 0; i < 100; i++) stream.event('n', { i, text: `line ${i}\nsecond` });
  const raw: string[] = [];
  body.on('data', (c: Buffer) => raw.push(c.toString()));
  const got: { i: number; text: string }[] = [];
  const reading = (async () => {
    for await (const d of sseData(body)) got.push(JSON.parse(d) as { i: number; text: string });
  })();
  // Wait for two keep-alives after the last event, then end.
  const afterLast = () => raw.join('').split('"i":99')[1] ?? '';
  while ((afterLast().match(/^: keep-alive$/gm) ?? []).length < 2) await new Promise((r) => real.setTimeout(r, 10));
  recorded(() => stream.end());
  await reading;
  t.same(
    got.map((g) => g.i),
    Array.from({ length: 100 }, (_, i) => i),
  );
  t.equal(got[7]!.text, 'line 7\nsecond', 'a value with a line break survives the trip');
  while (!stream.closed) await tick();
  t.equal(live.size, 0, 'no timer left');
  t.same(listeners(res), before, 'no listener left');
  t.equal(stream.event('late', {}), false, 'nothing is written after the end');
  t.equal(stream.dropped, 0);
});

t.test('a client that goes away: the stream closes and leaves nothing behind', async (t) => {
  const { port, first } = await serve({ keepAliveMs: 20 });
  const body = await get(port);
  const { stream, res, before } = await first;
  t.ok(stream.event('n', { i: 0 }));
  body.destroy();
  while (!stream.closed) await new Promise((r) => real.setTimeout(r, 5));
  t.equal(live.size, 0, 'the keep-alive timer is cleared');
  t.same(listeners(res), before, 'no listener left');
  t.equal(stream.event('n', { i: 1 }), false);
});

t.test('a client that stops reading: events dropped, buffer bounded, client disconnected once', async (t) => {
  const cap = 256 * 1024;
  const payload = 'x'.repeat(64 * 1024);
  // one event frame, its number up to 4 digits, and the dropped notice that may go with it
  const frameBytes = Buffer.byteLength(frame('big', { payload, i: 9999 }) + frame('dropped', { count: 9999 }));
  const slow: { dropped: number; bufferedBytes: number }[] = [];
  const { port, first } = await serve({ keepAliveMs: 20, maxBufferedBytes: cap, graceMs: 200, onSlowClient: (i) => slow.push(i) });
  const client = stalledClient(port);
  const { stream, res, before } = await first;
  let maxBuffered = 0;
  let sent = 0;
  let refused = 0;
  // Keep writing until the server gives up on the client (5000 x 64 KiB is far beyond any socket buffer).
  for (let i = 0; i < 5000 && !stream.closed; i++) {
    if (stream.event('big', { payload, i })) sent++;
    else refused++;
    maxBuffered = Math.max(maxBuffered, res.writableLength);
    await new Promise((r) => real.setTimeout(r, i % 20 === 0 ? 5 : 0));
  }
  t.ok(stream.closed, 'the server gave up on the client');
  t.ok(refused > 0, `${refused} events dropped, ${sent} written`);
  t.ok(maxBuffered > 0 && maxBuffered <= cap + frameBytes, `at most ${maxBuffered} bytes buffered (cap ${cap} + one frame ${frameBytes})`);
  t.equal(slow.length, 1, 'told once');
  t.equal(slow[0]!.dropped, stream.dropped);
  t.equal(stream.dropped, refused);
  t.ok(await closes(client, 10_000), 'the server closed the connection');
  t.equal(live.size, 0, 'no timer left');
  t.same(listeners(res), before, 'no listener left');
});

t.test('a client that falls behind and catches up is told how many events it missed', async (t) => {
  const cap = 256 * 1024;
  const payload = 'x'.repeat(64 * 1024);
  const slow: unknown[] = [];
  const { port, first } = await serve({ keepAliveMs: 60_000, maxBufferedBytes: cap, graceMs: 60_000, onSlowClient: (i) => slow.push(i) });
  const body = await get(port); // not read yet: once its small buffer is full, the socket stops
  const { stream, res } = await first;
  let written = 0;
  // Fill the kernel's buffers and then ours; stop at the first event that does not fit. One event
  // per turn of the event loop: Node corks a response's writes within one tick, so a burst would
  // look full before the kernel had been offered anything.
  for (let i = 0; i < 5000; i++) {
    await new Promise((r) => real.setTimeout(r, 0));
    if (!stream.event('n', { i, payload })) break;
    written++;
  }
  t.ok(written < 5000, `the buffer filled after ${written} events`);
  for (let i = 0; i < 10; i++) t.equal(stream.event('n', { i: written + 1 + i, payload }), false, `event ${written + 1 + i} dropped`);
  t.equal(stream.dropped, 11);
  const got: { i?: number; count?: number }[] = [];
  const reading = (async () => {
    for await (const d of sseData(body)) got.push(JSON.parse(d) as { i?: number; count?: number });
  })();
  while (res.writableLength > 0) await new Promise((r) => real.setTimeout(r, 5));
  t.ok(stream.event('n', { i: 'after' }), 'the next event goes through');
  recorded(() => stream.end());
  await reading;
  t.same(
    got.slice(0, written).map((g) => g.i),
    Array.from({ length: written }, (_, i) => i),
    'the events before the drop, in order',
  );
  t.same(got.slice(written), [{ count: 11 }, { i: 'after' }], 'then how many were dropped, then the next event');
  t.same(slow, [], 'a client that caught up in time is not disconnected');
});

t.test('an ended stream the client never takes is cut after the grace period', async (t) => {
  const cap = 64 * 1024;
  const slow: { dropped: number; bufferedBytes: number }[] = [];
  const { port, first } = await serve({ keepAliveMs: 60_000, maxBufferedBytes: cap, graceMs: 100, onSlowClient: (i) => slow.push(i) });
  const client = stalledClient(port);
  const { stream, res, before } = await first;
  const payload = 'y'.repeat(16 * 1024);
  // One event per turn of the event loop (see above), until the kernel's buffers and ours are full.
  for (let i = 0; i < 50_000; i++) {
    await new Promise((r) => real.setTimeout(r, 0));
    if (!stream.event('n', { i, payload })) break;
  }
  t.ok(res.writableLength > cap / 2, `${res.writableLength} bytes are waiting for the client`);
  recorded(() => stream.end());
  // The client reads nothing until the server has given up on it.
  for (let i = 0; i < 2000 && !stream.closed; i++) await new Promise((r) => real.setTimeout(r, 5));
  t.equal(stream.closed, true, 'the server gave up on the client');
  t.ok(await closes(client, 10_000), 'the server closed the connection');
  t.equal(slow.length, 1, 'told once');
  t.ok(slow[0]!.bufferedBytes > 0 && slow[0]!.bufferedBytes <= cap + 32 * 1024, `${slow[0]!.bufferedBytes} bytes were left unsent`);
  t.equal(live.size, 0, 'no timer left');
  t.same(listeners(res), before, 'no listener left');
});
