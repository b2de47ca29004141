// One server-sent-events stream to one HTTP client, bounded. Events are written only while the
// bytes Node holds for this client (res.writableLength) stay under a cap: a client that stops
// reading makes the gateway drop its events (counted, and announced with a `dropped` event once it
// reads again) instead of buffering them without bound, and a client that stays over the cap for
// longer than a grace period is disconnected. A comment line every keepAliveMs keeps proxies and
// NATs from closing an idle stream and lets the client notice a dead connection.
import type { ServerResponse } from 'node:http';

export interface SseOptions {
  /** default 15 s */
  keepAliveMs?: number;
  /** bytes held for the client above which events are dropped; default 1 MiB */
  maxBufferedBytes?: number;
  /** how long a client may stay over the cap before it is disconnected; default 30 s */
  graceMs?: number;
  /** told once when the client is disconnected for being too slow */
  onSlowClient?(info: { dropped: number; bufferedBytes: number }): void;
}

export interface SseStream {
  /** false when the event was not written (dropped, or the stream is closed) */
  event(name: string, data: unknown): boolean;
  /** ends the response once what is buffered is written */
  end(): void;
  readonly closed: boolean;
  /** events dropped while the client was over the cap */
  readonly dropped: number;
}

/** An event frame: data split on line ends, as the format requires (JSON has none, text may). */
export function frame(name: string, data: unknown): string {
  const text = typeof data === 'string' ? data : JSON.stringify(data) ?? 'null';
  return `event: ${name}\n${text.split(/\r\n|\r|\n/).map((l) => `data: ${l}\n`).join('')}\n`;
}

export function openSse(res: ServerResponse, o: SseOptions = {}): SseStream {
  const keepAliveMs = o.keepAliveMs ?? 15_000;
  const cap = o.maxBufferedBytes ?? 1024 * 1024;
  const graceMs = o.graceMs ?? 30_000;
  let closed = false;
  let dropped = 0;
  let unannounced = 0;
  let overSince: number | undefined;

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  // Node holds the headers back until the first write: a client waiting for them before it does
  // anything else (a dashboard opening /api/events, then chatting) would wait forever.
  res.flushHeaders();

  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(timer);
    res.off('close', close);
    res.off('drain', onDrain);
  };
  const tooSlow = (now: number) => {
    if (overSince === undefined || now - overSince < graceMs) return false;
    const bufferedBytes = res.writableLength;
    close();
    // Nothing more can reach a client that does not read; the socket goes, and its buffer with it.
    res.destroy();
    o.onSlowClient?.({ dropped, bufferedBytes });
    return true;
  };
  const onDrain = () => {
    overSince = undefined;
  };
  const write = (text: string) => {
    const bytes = Buffer.byteLength(text);
    // An empty buffer takes any one frame, so a large event is late, never lost for its size alone.
    if (res.writableLength > 0 && res.writableLength + bytes > cap) return false;
    res.write(text);
    return true;
  };

  const timer = setInterval(() => {
    if (closed || tooSlow(Date.now())) return;
    // A ping queued behind a backlog says nothing the backlog does not.
    if (res.writableLength === 0) res.write(': keep-alive\n\n');
  }, keepAliveMs);
  timer.unref();
  res.on('close', close);
  res.on('drain', onDrain);

  return {
    event(name, data) {
      if (closed) return false;
      const now = Date.now();
      if (tooSlow(now)) return false;
      if (unannounced && write(frame('dropped', { count: unannounced }))) unannounced = 0;
      if (!unannounced && write(frame(name, data))) return true;
      dropped++;
      unannounced++;
      overSince ??= now;
      return false;
    },
    end() {
      if (closed) return;
      close();
      res.end();
    },
    get closed() {
      return closed;
    },
    get dropped() {
      return dropped;
    },
  };
}
