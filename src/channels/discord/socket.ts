// The WebSocket the gateway connection uses: Node's built-in one (global since Node 22). Measured:
// pinclaw runs on Node 24 everywhere (the executable, and `npm start`/`npm test` through
// scripts/dev-node.mjs; the addon needs Node-API 10, so Node 20 cannot run the gateway at all), so
// the `ws` package (about 45 KiB more in this chunk) would never be used: it is not bundled.

export interface Socket {
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export interface SocketEvents {
  message(text: string): void;
  close(code: number, reason: string): void;
}

type Ctor = new (url: string) => {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: string, fn: (ev: { data?: unknown; code?: number; reason?: string; message?: string }) => void): void;
};

export function openSocket(url: string, on: SocketEvents): Socket {
  const Impl = (globalThis as { WebSocket?: Ctor }).WebSocket;
  if (typeof Impl !== 'function') throw new Error(`this Node (${process.version}) has no built-in WebSocket; the Discord channel needs Node 22 or later (pinclaw ships Node 24)`);
  const ws = new Impl(url);
  let closed = false;
  const closeOnce = (code: number, reason: string) => {
    if (closed) return;
    closed = true;
    on.close(code, reason);
  };
  ws.addEventListener('message', (ev) => on.message(typeof ev.data === 'string' ? ev.data : String(ev.data)));
  ws.addEventListener('close', (ev) => closeOnce(ev.code ?? 1006, ev.reason ?? ''));
  // An error is followed by a close; the close carries what the reconnect needs.
  ws.addEventListener('error', (ev) => void ev);
  return {
    send: (d) => {
      try {
        ws.send(d);
      } catch {
        // not open (any more): the close event follows
      }
    },
    close: (code = 4000, reason = '') => {
      try {
        ws.close(code, reason);
      } catch {
        // already closing
      }
      // Treated as closed now: a peer that never answers the close must not hold the reconnect.
      closeOnce(code, reason || 'closed by pinclaw');
    },
  };
}
