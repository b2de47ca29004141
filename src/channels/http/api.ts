// The gateway's API routes: POST /api/chat (JSON, or server-sent events with Accept:
// text/event-stream), POST /api/chat/abort (stops a session's running turn), GET /api/events (the
// bus as server-sent events), and GET/POST /api/confirm (the tool confirmations waiting in http
// chats). The open event streams are kept, so that a stopping gateway tells them and closes them at
// once instead of waiting out its drain for them.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Bus, BusEvent } from '../../conductor/bus.js';
import type { ChannelAdapter, Conductor } from '../../conductor/conductor.js';
import { errorMessage, PinclawError } from '../../errors.js';
import { DiskFullError } from '../../store/disk.js';
import { log } from '../../log.js';
import type { Confirmations } from './confirmations.js';
import { openSse, type SseOptions, type SseStream } from './sse-writer.js';
import { HttpError, readJson, sendJson, type ApiHandler } from './io.js';

/**
 * Replies reach the waiting request through `delivered`; a reply nobody waits for stays in the
 * session. Confirmations are asked on the bus and answered with POST /api/confirm.
 */
export function httpChannel(confirmations?: Confirmations): ChannelAdapter {
  return { name: 'http', debounceMs: 0, send: async () => {}, ...(confirmations ? { confirm: (chatId, request) => confirmations.ask(chatId, request) } : {}) };
}

/** The SSE event a stopping gateway sends on every open stream before it closes them. */
export const STOPPING_EVENT = 'gateway_stopping';

export type ApiRoutes = ApiHandler & {
  /**
   * The gateway is stopping: every open stream gets `gateway_stopping`; the live streams
   * (/api/events) end now, the chat streams once their turn is over or `endAll` is called.
   */
  stopping(): void;
  /** Ends every stream still open (after the turns' drain). */
  endAll(): void;
};

function sse(res: ServerResponse, path: string, o: SseOptions): SseStream {
  return openSse(res, {
    ...o,
    onSlowClient: ({ dropped, bufferedBytes }) => log.warn(`${path}: disconnected a client that stopped reading (${dropped} events dropped, ${bufferedBytes} bytes left unsent)`),
  });
}

function parseSession(body: unknown): string {
  const session = body && typeof body === 'object' ? (body as { session?: unknown }).session : undefined;
  if (typeof session !== 'string' || session === '') throw new HttpError(400, 'session: expected the key of the session whose turn to stop, e.g. {"session": "dashboard"}');
  return session;
}

/** The bus as server-sent events: the event's type is the SSE event name, the event itself the data. */
function subscribe(bus: Bus, filter: (e: BusEvent) => boolean, stream: SseStream): () => void {
  return bus.onAny((e) => void (filter(e) && stream.event(e.type, e)));
}

function parseChat(body: unknown): { session: string; text: string } {
  if (!body || typeof body !== 'object') throw new HttpError(400, 'body must be a JSON object {"session": string, "text": string}');
  const { session, text } = body as { session?: unknown; text?: unknown };
  if (typeof text !== 'string' || text.trim() === '') throw new HttpError(400, 'text: expected a non-empty string');
  if (session !== undefined && (typeof session !== 'string' || session === '')) throw new HttpError(400, 'session: expected a non-empty string');
  return { session: (session as string | undefined) ?? 'http:main', text };
}

function parseAnswer(body: unknown): { id: string; allow: boolean } {
  if (!body || typeof body !== 'object') throw new HttpError(400, 'body must be a JSON object {"id": string, "allow": boolean}');
  const { id, allow } = body as { id?: unknown; allow?: unknown };
  if (typeof id !== 'string' || id === '') throw new HttpError(400, 'id: expected the id of a confirm_request event');
  if (typeof allow !== 'boolean') throw new HttpError(400, 'allow: expected true or false');
  return { id, allow };
}

export function apiRoutes(conductor: Conductor, bus: Bus, metrics?: () => string, confirmations?: Confirmations, sseOptions: SseOptions = {}): ApiRoutes {
  const open = new Map<SseStream, 'live' | 'chat'>();
  let stopping = false;
  const track = (stream: SseStream, kind: 'live' | 'chat', res: ServerResponse) => {
    open.set(stream, kind);
    res.on('close', () => open.delete(stream));
    // A chat stream opened while the gateway stops is told at once (its turn waits for the next start).
    if (stopping) stream.event(STOPPING_EVENT, {});
  };
  const handler = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    if (path === '/metrics' && req.method === 'GET' && metrics) {
      const text = metrics();
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return true;
    }
    if (path === '/api/chat' && req.method === 'POST') {
      const { session, text } = parseChat(await readJson(req));
      let row;
      try {
        row = conductor.submit({ sessionKey: session, channel: 'http', chatId: session, sender: 'api', text });
      } catch (err) {
        throw new HttpError(err instanceof DiskFullError ? 503 : err instanceof PinclawError ? 413 : 500, errorMessage(err));
      }
      // A turn that could not be saved rejects: a full disk is 503 (it passes once space returns).
      const failed = (err: unknown) => new HttpError(err instanceof DiskFullError ? 503 : 500, errorMessage(err));
      if ((req.headers.accept ?? '').includes('text/event-stream')) {
        const stream = sse(res, path, sseOptions);
        track(stream, 'chat', res);
        // The turn's own reply is written below, once; a message send_message sent during the turn
        // (a reply to no inbound message) is passed on as it is delivered.
        const off = subscribe(bus, (e) => 'sessionKey' in e && e.sessionKey === session && (e.type !== 'reply' || e.inboundId === null), stream);
        res.on('close', off);
        try {
          const out = await conductor.delivered(row.id);
          stream.event('reply', { reply: out.text, kind: out.kind });
        } catch (err) {
          const e = failed(err);
          stream.event('turn_error', { status: e.status, message: e.message });
        } finally {
          off();
        }
        stream.end();
      } else {
        const out = await conductor.delivered(row.id).catch((err: unknown) => {
          throw failed(err);
        });
        sendJson(res, 200, { reply: out.text, kind: out.kind });
      }
      return true;
    }
    if (path === '/api/confirm' && confirmations) {
      if (req.method === 'GET') {
        sendJson(res, 200, { pending: confirmations.pending() });
        return true;
      }
      if (req.method === 'POST') {
        const { id, allow } = parseAnswer(await readJson(req));
        if (!confirmations.answer(id, allow)) throw new HttpError(404, `no confirmation ${id} is waiting: answered already, expired, or never asked`);
        sendJson(res, 200, { id, allowed: allow });
        return true;
      }
    }
    if (path === '/api/chat/abort' && req.method === 'POST') {
      const session = parseSession(await readJson(req));
      if (!conductor.abort(session)) throw new HttpError(409, `no turn is running in session ${session}: it ended already, or has not started`);
      sendJson(res, 200, { session, aborted: true });
      return true;
    }
    if (path === '/api/events' && req.method === 'GET') {
      // Refused rather than opened and closed: an EventSource retries an ended stream by itself, and
      // would flicker between open and stopping until the gateway is gone.
      if (stopping) throw new HttpError(503, 'the gateway is stopping');
      const stream = sse(res, path, sseOptions);
      const off = subscribe(bus, () => true, stream);
      res.on('close', off);
      track(stream, 'live', res);
      return true;
    }
    return false;
  };
  return Object.assign(handler, {
    stopping() {
      stopping = true;
      for (const [stream, kind] of open) {
        stream.event(STOPPING_EVENT, {});
        if (kind === 'live') stream.end();
      }
    },
    endAll() {
      for (const stream of open.keys()) stream.end();
    },
  });
}
