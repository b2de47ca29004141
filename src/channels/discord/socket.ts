// The WebSocket the gateway connection uses: the `ws` package, not Node's built-in WebSocket. Node's
// is undici's, whose handshake goes through undici's fetch and its HTTP parser compiled to
// WebAssembly, which stays loaded for the life of the process (what src/net/fetch.ts avoids for every
// HTTP request); `ws` shakes hands with a node:http upgrade. Measured: the executable's gateway with
// Discord connected to its stand-in (test/support/discord-gateway.ts), RssAnon 12 s after identify
// 18.1-18.3 MiB with Node's WebSocket against 17.7-18.1 with `ws` (three rounds each), 18.2 against
// 17.8-17.9 after 75 s. (A bare Node 24 client under V8's default flags showed more, 4.4 MiB; the
// executable's flags and the gateway's own use of node:http leave less to save.) `ws` is about 47 KiB
// of this lazy chunk, loaded only by a gateway with channels.discord.token.
import WebSocket from 'ws';

export interface Socket {
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export interface SocketEvents {
  message(text: string): void;
  close(code: number, reason: string): void;
}

/** Discord's own limit for a gateway payload is 4096 bytes sent; what it sends (a large guild's GUILD_CREATE) can be megabytes. */
const MAX_PAYLOAD = 64 * 1024 * 1024;
/** A handshake that hangs (a proxy that never answers) ends here and is retried with the backoff. */
const HANDSHAKE_MS = 30_000;

export function openSocket(url: string, on: SocketEvents): Socket {
  const ws = new WebSocket(url, { maxPayload: MAX_PAYLOAD, handshakeTimeout: HANDSHAKE_MS });
  let closed = false;
  const closeOnce = (code: number, reason: string) => {
    if (closed) return;
    closed = true;
    on.close(code, reason);
  };
  // A Buffer under ws's default binaryType; fragments or an ArrayBuffer only under other settings.
  ws.on('message', (data: WebSocket.RawData) => on.message((Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString('utf8')));
  ws.on('close', (code: number, reason: Buffer) => closeOnce(code, reason.toString('utf8')));
  // An error is followed by a close (ws emits one after a failed handshake too); the close carries
  // what the reconnect needs, and the error's listener keeps it from being thrown as uncaught.
  ws.on('error', () => undefined);
  return {
    send: (d) => {
      if (ws.readyState !== WebSocket.OPEN) return; // not open (any more): the close event follows
      ws.send(d);
    },
    close: (code = 4000, reason = '') => {
      try {
        ws.close(code, reason);
      } catch {
        // already closing, or a code ws refuses: end the connection without a close frame
        ws.terminate();
      }
      // Treated as closed now: a peer that never answers the close must not hold the reconnect.
      closeOnce(code, reason || 'closed by pinclaw');
    },
  };
}
