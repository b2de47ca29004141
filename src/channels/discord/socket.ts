// The WebSocket the gateway connection uses: Node's built-in one where the runtime has it (Node 22+,
// the shipped executable's Node 24), else the `ws` package (Node 20 has it only behind
// --experimental-websocket; `npm start` and the tests run there). Both speak the WHATWG interface
// used here; `ws` is bundled into the Discord chunk only, never the main bundle.
import { WebSocket as WsSocket } from 'ws';

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

export const builtInWebSocket = (): boolean => typeof (globalThis as { WebSocket?: unknown }).WebSocket === 'function';

export function openSocket(url: string, on: SocketEvents): Socket {
  const Impl = (builtInWebSocket() ? (globalThis as unknown as { WebSocket: Ctor }).WebSocket : (WsSocket as unknown as Ctor));
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
