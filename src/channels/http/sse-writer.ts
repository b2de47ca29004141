// One server-sent-events stream to one HTTP client, bounded. The rule, in full:
// - An event is written only if the bytes Node already holds for this client (res.writableLength)
//   plus its frame stay within maxBufferedBytes; an empty buffer takes any one frame, so the buffer
//   never exceeds the cap plus one frame. Otherwise the event is dropped and counted, and the next
//   event that fits goes out preceded by a `dropped` event ({"count": N}), written together with it,
//   so the client knows it missed N.
// - A client that has had its events dropped for graceMs without a single write getting through in
//   between is disconnected (res.destroy()) and reported once through onSlowClient. The check runs
//   at each event and at each keep-alive tick. Nothing is sent first: the client is not reading, so
//   a last `event: error` would only join the backlog that is being thrown away.
// - end() ends the response; if the client does not take what is left within graceMs, it is
//   disconnected the same way, so an ended stream cannot hold a socket and its buffer forever.
// - A `: keep-alive` comment goes out every keepAliveMs while nothing is waiting, so proxies and NATs
//   keep an idle stream open and the client can tell a dead connection from a quiet one.
// Every timer and listener is removed when the response closes, whoever closed it.
import type { ServerResponse } from 'node:http';

export interface SseOptions {
  /** default 15 s */
  keepAliveMs?: number;
  /** bytes held for the client above which events are dropped; default 1 MiB */
  maxBufferedBytes?: number;
  /** how long a client may go on losing events (or not take an ended stream) before it is disconnected; default 30 s */
  graceMs?: number;
  /** told once when the client is disconnected for being too slow */
  onSlowClient?(info: { dropped: number; bufferedBytes: number }): void;
}

export interface SseStream {
  /** false when the event was not written (dropped, or the stream is ended or closed); throws on a name with a line break */
  event(name: string, data: unknown): boolean;
  /** ends the response once what is buffered is written; a client that does not take it within graceMs is cut */
  end(): void;
  /** true once the response is over (all of it handed to the OS, closed by either side, or cut) and its timers and listeners are gone */
  readonly closed: boolean;
  /** events dropped while the client was over the cap */
  readonly dropped: number;
}

/** An event frame: data split on line ends, as the format requires (JSON has none, text may). A string is sent as it is, anything else as JSON. */
export function frame(name: string, data: unknown): string {
  // A line end in the name would end the field and let the rest pose as fields of its own.
  if (name === '' || /[\r\n]/.test(name)) throw new Error(`SSE event name ${JSON.stringify(name)}: expected a non-empty name without line breaks`);
  const text = typeof data === 'string' ? data : (JSON.stringify(data) ?? 'null');
  return `event: ${name}\n${text.split(/\r\n|\r|\n/).map((l) => `data: ${l}\n`).join('')}\n`;
}

function positive(name: keyof SseOptions, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`SSE option ${name}: expected a positive number, got ${value}`);
  return value;
}

export function openSse(res: ServerResponse, o: SseOptions = {}): SseStream {
  const keepAliveMs = positive('keepAliveMs', o.keepAliveMs, 15_000);
  const cap = positive('maxBufferedBytes', o.maxBufferedBytes, 1024 * 1024);
  const graceMs = positive('graceMs', o.graceMs, 30_000);
  let closed = false;
  let ended = false;
  let dropped = 0;
  let unannounced = 0;
  // When the current run of dropped events began; cleared by any write that gets through.
  let losingSince: number | undefined;

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  // Node holds the headers back until the first write: a client waiting for them before it does
  // anything else (a dashboard opening /api/events, then chatting) would wait forever.
  res.flushHeaders();

  const cleanup = () => {
    closed = true;
    clearInterval(timer);
    clearTimeout(endTimer);
    res.off('close', cleanup);
    res.off('finish', onFinish);
  };
  const disconnect = () => {
    const bufferedBytes = res.writableLength;
    cleanup();
    res.destroy();
    o.onSlowClient?.({ dropped, bufferedBytes });
  };
  const tooSlow = (now: number): boolean => {
    if (losingSince === undefined || now - losingSince < graceMs) return false;
    disconnect();
    return true;
  };
  // Everything was handed to the OS: an ended stream needs no watching any more.
  const onFinish = () => cleanup();
  // writableLength also counts what Node corks within one tick, so a burst of more than the cap in
  // one tick is cut too, even for a fast client: at 1 MiB per tick that is not a real stream.
  const write = (text: string): boolean => {
    if (res.writableLength > 0 && res.writableLength + Buffer.byteLength(text) > cap) return false;
    res.write(text);
    return true;
  };

  const timer = setInterval(() => {
    if (closed || tooSlow(Date.now())) return;
    // A client that has taken everything is reading, whatever it lost before.
    if (res.writableLength === 0) {
      losingSince = undefined;
      // A ping queued behind a backlog says nothing the backlog does not.
      res.write(': keep-alive\n\n');
    }
  }, keepAliveMs);
  timer.unref();
  let endTimer: NodeJS.Timeout | undefined;
  res.on('close', cleanup);
  res.on('finish', onFinish);

  return {
    event(name, data) {
      const text = frame(name, data);
      if (closed || ended) return false;
      // The count of missed events goes with the next event that fits, never alone: a small notice
      // squeezed in while the events themselves still do not fit would be one more frame per drop.
      if (write(unannounced ? frame('dropped', { count: unannounced }) + text : text)) {
        unannounced = 0;
        losingSince = undefined;
        return true;
      }
      dropped++;
      unannounced++;
      const now = Date.now();
      losingSince ??= now;
      tooSlow(now);
      return false;
    },
    end() {
      if (closed || ended) return;
      ended = true;
      clearInterval(timer);
      res.end();
      // 'finish' (all handed to the OS) or 'close' clears this; a client that never reads gets neither.
      if (!res.writableFinished) {
        endTimer = setTimeout(disconnect, graceMs);
        endTimer.unref();
      }
    },
    get closed() {
      return closed;
    },
    get dropped() {
      return dropped;
    },
  };
}
