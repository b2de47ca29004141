// A stand-in for Discord on node:http and the `ws` package: the REST side under /api/v10
// (GET /gateway/bot with session_start_limit, POST channels/<id>/messages with X-RateLimit-Bucket,
// -Remaining and -Reset-After headers and scriptable 429s per route or global, typing, message
// edits, interaction callbacks, attachment downloads; 401 for a wrong token) and the gateway v10
// (Hello, Identify → READY, Resume → replay after the given seq and RESUMED, heartbeats answered
// with acks unless withheld, op 7 and op 9 on demand, a socket dropped, close 4004 for a wrong token
// and 4014 when MESSAGE_CONTENT is not allowed). Dispatches are kept per session, so a resume
// replays what the client has not seen, as Discord does.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export const TOKEN = 'test-bot-token';
export const BOT = { id: '100000000000000001', username: 'pinbot', bot: true };
const MESSAGE_CONTENT = 1 << 15;

export interface RestCall {
  method: string;
  path: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read the wire JSON freely
  body: any;
  status: number;
}

export interface Person {
  id: string;
  username: string;
}

export interface DiscordStandIn {
  apiBaseUrl: string;
  calls: RestCall[];
  /** the messages the bot created (answered 200) */
  readonly sent: { channel: string; content: string; id: string; body: RestCall['body'] }[];
  /** gateway payloads received from the client */
  received: { op: number; d: unknown }[];
  readonly sockets: number;
  readonly identifies: number;
  readonly resumes: number;
  /** a MESSAGE_CREATE; returns the message id */
  message(m: { from: Person; text: string; channel?: string; guild?: string; mentionBot?: boolean; attachments?: { filename: string; size: number; contentType: string; bytes?: Buffer }[] }): string;
  /** a button click on a message the bot sent */
  click(customId: string, from: Person, channel: string): void;
  /** ends the socket without a close frame */
  drop(): void;
  /** op 7 */
  reconnect(): void;
  /** op 9 */
  invalidate(resumable: boolean): void;
  withholdAcks(on: boolean): void;
  /** the next `n` message creates answer 429 (`global` or the route's bucket) */
  limit(n: number, o?: { global?: boolean; retryAfter?: number }): void;
  /**
   * Message creates from now on share a real bucket of `size` requests per `resetAfter` seconds, its
   * state in the headers of every answer; a request the bucket has no room for gets a 429 and is
   * counted in `overdrawn` (a client that reads the headers never causes one).
   */
  bucket(size: number, resetAfter: number): void;
  overdrawn: number;
  /** the MESSAGE_CONTENT intent is not enabled for the app: identify with it closes 4014 */
  contentIntentAllowed: boolean;
  /** session_start_limit.remaining that GET /gateway/bot reports */
  identifyRemaining: number;
  /** on resume, replay every event of the session again (as if the saved seq were lost) */
  replayAll: boolean;
  waitFor(cond: () => boolean, ms?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startDiscord(o: { heartbeatMs?: number; identifyRemaining?: number } = {}): Promise<DiscordStandIn> {
  const hb = o.heartbeatMs ?? 1000;
  const calls: RestCall[] = [];
  const sent: DiscordStandIn['sent'] = [];
  const received: DiscordStandIn['received'] = [];
  const files = new Map<string, Buffer>();
  let nextId = 200000000000000000n;
  const snowflake = () => String(nextId++);
  let session: { id: string; events: { s: number; t: string; d: unknown }[] } | undefined;
  let live: WebSocket | undefined;
  let liveSession = false;
  let acks = true;
  let limited = 0;
  let limitOpts: { global?: boolean; retryAfter?: number } = {};
  let identifies = 0;
  let resumes = 0;
  let sockets = 0;
  let bucketRemaining = 5;
  let strict: { size: number; resetAfter: number; remaining: number; resetAt: number } | undefined;

  const server: Server = createServer((req, res) => void rest(req, res));
  const wss = new WebSocketServer({ server });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const base = `http://127.0.0.1:${port}`;

  async function rest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let text = '';
    for await (const c of req) text += String(c);
    const path = (req.url ?? '').replace(/^\/api\/v10/, '');
    const body = text ? JSON.parse(text) : undefined;
    const answer = (status: number, json?: unknown, headers: Record<string, string> = {}) => {
      calls.push({ method: req.method ?? '', path, body, status });
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(json === undefined ? '' : JSON.stringify(json));
    };
    if (path.startsWith('/attachments/')) {
      const f = files.get(path.slice('/attachments/'.length));
      res.writeHead(f ? 200 : 404);
      return void res.end(f ?? '');
    }
    if (req.headers.authorization !== `Bot ${TOKEN}`) return answer(401, { message: '401: Unauthorized', code: 0 });
    if (req.method === 'GET' && path === '/gateway/bot') {
      return answer(200, { url: `ws://127.0.0.1:${port}/gateway`, shards: 1, session_start_limit: { total: 1000, remaining: api.identifyRemaining, reset_after: 2000, max_concurrency: 1 } });
    }
    const m = /^\/channels\/(\d+)\/messages$/.exec(path);
    if (req.method === 'POST' && m) {
      if (limited > 0) {
        limited--;
        const after = limitOpts.retryAfter ?? 0.3;
        return answer(429, { message: 'You are being rate limited.', retry_after: after, global: !!limitOpts.global }, { 'x-ratelimit-bucket': `msg-${m[1]}`, 'x-ratelimit-remaining': '0', 'x-ratelimit-reset-after': String(after), ...(limitOpts.global ? { 'x-ratelimit-global': 'true' } : {}) });
      }
      if (strict) {
        const now = Date.now();
        if (now >= strict.resetAt) Object.assign(strict, { remaining: strict.size, resetAt: now + strict.resetAfter * 1000 });
        const headers = (remaining: number) => ({ 'x-ratelimit-bucket': `msg-${m[1]}`, 'x-ratelimit-remaining': String(remaining), 'x-ratelimit-reset-after': ((strict!.resetAt - now) / 1000).toFixed(3) });
        if (strict.remaining === 0) {
          api.overdrawn++;
          return answer(429, { message: 'You are being rate limited.', retry_after: (strict.resetAt - now) / 1000, global: false }, headers(0));
        }
        strict.remaining--;
        const id = snowflake();
        sent.push({ channel: m[1]!, content: body.content, id, body });
        return answer(200, { id, channel_id: m[1], content: body.content }, headers(strict.remaining));
      }
      const id = snowflake();
      sent.push({ channel: m[1]!, content: body.content, id, body });
      bucketRemaining = bucketRemaining > 0 ? bucketRemaining - 1 : 4;
      return answer(200, { id, channel_id: m[1], content: body.content }, { 'x-ratelimit-bucket': `msg-${m[1]}`, 'x-ratelimit-remaining': String(bucketRemaining), 'x-ratelimit-reset-after': '0.05' });
    }
    if (req.method === 'POST' && /^\/channels\/\d+\/typing$/.test(path)) return answer(204);
    if (req.method === 'PATCH' && /^\/channels\/\d+\/messages\/\d+$/.test(path)) return answer(200, { id: path.split('/').pop() });
    if (req.method === 'POST' && /^\/interactions\/\d+\/[^/]+\/callback$/.test(path)) return answer(204);
    return answer(404, { message: 'Unknown route', code: 0 });
  }

  const send = (ws: WebSocket | undefined, p: unknown) => ws?.readyState === 1 && ws.send(JSON.stringify(p));

  function dispatch(t: string, d: unknown): void {
    if (!session) session = { id: `sess-${snowflake()}`, events: [] };
    const ev = { s: session.events.length + 1, t, d };
    session.events.push(ev);
    if (liveSession) send(live, { op: 0, ...ev });
  }

  wss.on('connection', (ws) => {
    sockets++;
    live = ws;
    liveSession = false;
    send(ws, { op: 10, d: { heartbeat_interval: hb } });
    ws.on('message', (raw) => {
      const p = JSON.parse(String(raw)) as { op: number; d: { token?: string; intents?: number; session_id?: string; seq?: number } | number | null };
      received.push(p as { op: number; d: unknown });
      const d = (p.d ?? {}) as { token?: string; intents?: number; session_id?: string; seq?: number };
      if (p.op === 1) return void (acks && send(ws, { op: 11 }));
      if (p.op === 2) {
        identifies++;
        if (d.token !== TOKEN) return ws.close(4004, 'Authentication failed.');
        if ((d.intents! & MESSAGE_CONTENT) && !api.contentIntentAllowed) return ws.close(4014, 'Disallowed intent(s).');
        // A new session: what the old one kept is gone, as on Discord.
        session = { id: `sess-${snowflake()}`, events: [] };
        liveSession = true;
        dispatch('READY', { v: 10, user: BOT, session_id: session.id, resume_gateway_url: `ws://127.0.0.1:${port}/gateway`, guilds: [] });
        return;
      }
      if (p.op === 6) {
        resumes++;
        if (!session || d.session_id !== session.id) return send(ws, { op: 9, d: false });
        const from = api.replayAll ? 0 : d.seq ?? 0;
        for (const ev of session.events.filter((e) => e.s > from)) send(ws, { op: 0, ...ev });
        liveSession = true;
        session.events.push({ s: session.events.length + 1, t: 'RESUMED', d: {} });
        send(ws, { op: 0, ...session.events.at(-1)! });
      }
    });
    ws.on('close', () => {
      if (live === ws) (live = undefined), (liveSession = false);
    });
  });

  const api: DiscordStandIn = {
    apiBaseUrl: `${base}/api/v10`,
    calls,
    sent,
    received,
    get sockets() {
      return sockets;
    },
    get identifies() {
      return identifies;
    },
    get resumes() {
      return resumes;
    },
    contentIntentAllowed: true,
    identifyRemaining: o.identifyRemaining ?? 1000,
    replayAll: false,
    message(m) {
      const id = snowflake();
      const attachments = (m.attachments ?? []).map((a) => {
        const aid = snowflake();
        if (a.bytes) files.set(`${aid}/${a.filename}`, a.bytes);
        return { id: aid, filename: a.filename, size: a.size, content_type: a.contentType, url: `${base}/attachments/${aid}/${a.filename}` };
      });
      const mention = m.mentionBot ?? !!m.guild;
      dispatch('MESSAGE_CREATE', {
        id, type: 0, channel_id: m.channel ?? `3${m.from.id.slice(1)}`, ...(m.guild ? { guild_id: m.guild } : {}),
        author: { id: m.from.id, username: m.from.username },
        content: mention && m.text ? `<@${BOT.id}> ${m.text}` : m.text,
        mentions: mention ? [BOT] : [], attachments,
      });
      return id;
    },
    click(customId, from, channel) {
      dispatch('INTERACTION_CREATE', { id: snowflake(), token: `tok-${snowflake()}`, type: 3, channel_id: channel, data: { custom_id: customId, component_type: 2 }, user: { id: from.id, username: from.username } });
    },
    drop: () => live?.terminate(),
    reconnect: () => send(live, { op: 7, d: null }),
    invalidate: (resumable) => send(live, { op: 9, d: resumable }),
    withholdAcks: (on) => void (acks = !on),
    limit(n, opts = {}) {
      limited = n;
      limitOpts = opts;
    },
    bucket(size, resetAfter) {
      strict = { size, resetAfter, remaining: size, resetAt: 0 };
    },
    overdrawn: 0,
    async waitFor(cond, ms = 15_000) {
      const end = Date.now() + ms;
      while (!cond()) {
        if (Date.now() > end) throw new Error(`condition not met within ${ms} ms`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async close() {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return api;
}
