// A stand-in Matrix homeserver on node:http (127.0.0.1, a random port), speaking the client-server
// API the Matrix channel uses: GET /sync as a long poll over one stream of positions (next_batch
// "s<n>"; an initial sync without since gives the rooms' state and latest event, not their history),
// PUT /rooms/<id>/send/m.room.message/<txnId> deduplicated per access token and transaction id (the
// same txnId answers the first event_id and stores nothing again, as the spec asks), PUT typing,
// POST /join of an invited room, GET joined_members, whoami, displayname, /versions; 401
// M_UNKNOWN_TOKEN for any other token, scriptable 429 M_LIMIT_EXCEEDED with retry_after_ms on sends,
// end-to-end encrypted rooms (m.room.encryption in their state, m.room.encrypted events), and a sync
// answer that can be held half-written (to kill the client while it receives).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export const TOKEN = 'syt_cGluY2xhdw_test';
export const BOT = '@pinclaw:hs.test';

export interface Call {
  method: string;
  path: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read the wire JSON freely
  body: any;
  status: number;
}

interface Ev {
  type: string;
  event_id: string;
  sender: string;
  state_key?: string;
  origin_server_ts: number;
  content: Record<string, unknown>;
}

interface Item {
  pos: number;
  room: string;
  kind: 'timeline' | 'invite';
  event: Ev;
}

interface Room {
  id: string;
  members: Set<string>;
  encrypted: boolean;
  invitedBy?: string;
}

export interface MatrixStandIn {
  url: string;
  calls: Call[];
  /** the events the bot created, once per transaction id */
  readonly sent: { room: string; txnId: string; eventId: string; body: string; content: Call['body'] }[];
  /** a room with these members besides the bot (joined), encrypted or not */
  room(id: string, members: string[], o?: { encrypted?: boolean }): void;
  /** an m.room.message m.text from `from` in `room`; returns its event id */
  message(room: string, from: string, text: string, o?: { mentions?: string[]; formatted?: string }): string;
  /** an m.room.encrypted event (ciphertext pinclaw cannot read) */
  encryptedMessage(room: string, from: string): string;
  /** `from` invites the bot into a new room of theirs */
  invite(room: string, from: string, o?: { encrypted?: boolean }): void;
  /** the next `n` sends answer 429 M_LIMIT_EXCEEDED with retry_after_ms */
  limit(n: number, retryAfterMs: number): void;
  /** the next sync answer that carries events is written half and held until the connection dies */
  stallNextSync(): void;
  /** the next send is stored, then not answered (the client is killed while it sends) */
  stallNextSend(): void;
  /** the since tokens of the syncs asked for, in order ('' for an initial sync) */
  readonly syncs: string[];
  readonly stalled: number;
  isJoined(room: string): boolean;
  waitFor(cond: () => boolean, ms?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startMatrix(): Promise<MatrixStandIn> {
  const calls: Call[] = [];
  const sent: MatrixStandIn['sent'] = [];
  const syncs: string[] = [];
  const items: Item[] = [];
  const rooms = new Map<string, Room>();
  const txns = new Map<string, string>();
  const waiters = new Set<() => void>();
  const sockets = new Set<Socket>();
  let pos = 0;
  let n = 0;
  let limited = 0;
  let retryAfterMs = 0;
  let stall = false;
  let stallSend = false;
  let stalled = 0;

  const newEvent = (sender: string, type: string, content: Record<string, unknown>, stateKey?: string): Ev => ({
    type, sender, content, event_id: `$ev${++n}:hs.test`, origin_server_ts: Date.now(), ...(stateKey !== undefined ? { state_key: stateKey } : {}),
  });
  const push = (room: string, kind: Item['kind'], event: Ev) => {
    items.push({ pos: ++pos, room, kind, event });
    for (const w of [...waiters]) w();
    return event.event_id;
  };
  const roomOf = (id: string) => {
    const r = rooms.get(id);
    if (!r) throw new Error(`no room ${id} in the stand-in`);
    return r;
  };

  function json(res: ServerResponse, call: Call, status: number, body: unknown): void {
    call.status = status;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  function syncBody(since: number | undefined): { next_batch: string; rooms: { join: Record<string, unknown>; invite: Record<string, unknown> } } {
    const join: Record<string, { timeline: { events: Ev[]; limited: boolean }; state: { events: Ev[] }; summary?: Record<string, number> }> = {};
    const invite: Record<string, { invite_state: { events: Ev[] } }> = {};
    const entry = (room: Room) => (join[room.id] ??= { timeline: { events: [], limited: false }, state: { events: [] } });
    const stateOf = (room: Room) => (room.encrypted ? [newEvent(room.invitedBy ?? '@admin:hs.test', 'm.room.encryption', { algorithm: 'm.megolm.v1.aes-sha2' }, '')] : []);
    if (since === undefined) {
      // Initial: every joined room with its state and its latest event; pending invites.
      for (const room of rooms.values()) {
        if (room.members.has(BOT)) {
          const e = entry(room);
          e.state.events.push(...stateOf(room));
          const last = items.filter((i) => i.room === room.id && i.kind === 'timeline').at(-1);
          if (last) e.timeline = { events: [last.event], limited: true };
          e.summary = { 'm.joined_member_count': room.members.size };
        } else if (room.invitedBy) invite[room.id] = { invite_state: { events: [newEvent(room.invitedBy, 'm.room.member', { membership: 'invite' }, BOT)] } };
      }
    } else {
      for (const i of items.filter((i) => i.pos > since)) {
        const room = roomOf(i.room);
        if (i.kind === 'invite') {
          if (!room.members.has(BOT)) invite[room.id] = { invite_state: { events: [i.event] } };
          continue;
        }
        if (!room.members.has(BOT)) continue;
        const e = entry(room);
        e.timeline.events.push(i.event);
        if (i.event.type === 'm.room.member') {
          e.summary = { 'm.joined_member_count': room.members.size };
          // The bot's own join brings the room's state.
          if (i.event.state_key === BOT) e.state.events.push(...stateOf(room));
        }
      }
    }
    return { next_batch: `s${pos}`, rooms: { join, invite } };
  }

  async function sync(req: IncomingMessage, res: ServerResponse, call: Call, q: URLSearchParams): Promise<void> {
    const since = q.get('since');
    syncs.push(since ?? '');
    const from = since === null ? undefined : Number(since.slice(1));
    if (from !== undefined && !(from >= 0)) return json(res, call, 400, { errcode: 'M_UNKNOWN_POS', error: 'Unknown position' });
    const timeout = Number(q.get('timeout') ?? 0);
    const has = () => from === undefined || items.some((i) => i.pos > from);
    if (!has() && timeout > 0) {
      await new Promise<void>((resolve) => {
        const done = () => (clearTimeout(timer), waiters.delete(done), resolve());
        const timer = setTimeout(done, timeout);
        waiters.add(done);
        req.socket.once('close', done);
      });
    }
    if (res.destroyed) return;
    const body = JSON.stringify(syncBody(from));
    if (stall && has() && from !== undefined) {
      stall = false;
      stalled++;
      call.status = 200;
      // Half the answer, then nothing: the client is killed while it receives.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
      res.write(body.slice(0, Math.floor(body.length / 2)));
      return;
    }
    call.status = 200;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  }

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://x');
    const call: Call = { method: req.method ?? '', path: url.pathname, body: text ? JSON.parse(text) : undefined, status: 0 };
    calls.push(call);
    const p = url.pathname;
    if (p === '/_matrix/client/versions') return json(res, call, 200, { versions: ['v1.10', 'v1.11'] });
    if (!p.startsWith('/_matrix/client/v3/')) return json(res, call, 404, { errcode: 'M_UNRECOGNIZED', error: 'Unrecognized request' });
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return json(res, call, 401, { errcode: 'M_UNKNOWN_TOKEN', error: 'Invalid access token passed.', soft_logout: false });
    const rest = p.slice('/_matrix/client/v3'.length).split('/').map(decodeURIComponent);
    // ['', 'rooms', roomId, 'send', 'm.room.message', txnId]
    if (p === '/_matrix/client/v3/sync' && req.method === 'GET') return sync(req, res, call, url.searchParams);
    if (p === '/_matrix/client/v3/account/whoami') return json(res, call, 200, { user_id: BOT, device_id: 'PINCLAWDEV' });
    if (rest[1] === 'profile') return json(res, call, 200, { displayname: 'Pinclaw' });
    if (rest[1] === 'join' && req.method === 'POST') {
      const room = rooms.get(rest[2]!);
      if (!room || (!room.invitedBy && !room.members.has(BOT))) return json(res, call, 403, { errcode: 'M_FORBIDDEN', error: 'You are not invited to this room.' });
      if (!room.members.has(BOT)) {
        room.members.add(BOT);
        push(room.id, 'timeline', newEvent(BOT, 'm.room.member', { membership: 'join' }, BOT));
      }
      return json(res, call, 200, { room_id: room.id });
    }
    if (rest[1] === 'rooms' && rest[3] === 'joined_members') {
      const room = roomOf(rest[2]!);
      return json(res, call, 200, { joined: Object.fromEntries([...room.members].map((m) => [m, {}])) });
    }
    if (rest[1] === 'rooms' && rest[3] === 'typing' && req.method === 'PUT') return json(res, call, 200, {});
    if (rest[1] === 'rooms' && rest[3] === 'send' && req.method === 'PUT') {
      if (limited > 0) {
        limited--;
        return json(res, call, 429, { errcode: 'M_LIMIT_EXCEEDED', error: 'Too Many Requests', retry_after_ms: retryAfterMs });
      }
      const room = roomOf(rest[2]!);
      if (!room.members.has(BOT)) return json(res, call, 403, { errcode: 'M_FORBIDDEN', error: 'not in the room' });
      const txnId = rest[5]!;
      const known = txns.get(`${TOKEN}/${txnId}`);
      if (known) return json(res, call, 200, { event_id: known });
      const ev = newEvent(BOT, rest[4]!, call.body as Record<string, unknown>);
      txns.set(`${TOKEN}/${txnId}`, ev.event_id);
      push(room.id, 'timeline', ev);
      sent.push({ room: room.id, txnId, eventId: ev.event_id, body: String(call.body?.body ?? ''), content: call.body });
      if (stallSend) {
        stallSend = false;
        stalled++;
        return;
      }
      return json(res, call, 200, { event_id: ev.event_id });
    }
    return json(res, call, 404, { errcode: 'M_UNRECOGNIZED', error: `not in the stand-in: ${req.method} ${p}` });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    sent,
    syncs,
    get stalled() {
      return stalled;
    },
    room(id, members, o = {}) {
      rooms.set(id, { id, members: new Set([BOT, ...members]), encrypted: o.encrypted ?? false, invitedBy: members[0] });
    },
    message(room, from, text, o = {}) {
      const content: Record<string, unknown> = { msgtype: 'm.text', body: text };
      if (o.mentions) content['m.mentions'] = { user_ids: o.mentions };
      if (o.formatted) Object.assign(content, { format: 'org.matrix.custom.html', formatted_body: o.formatted });
      return push(room, 'timeline', newEvent(from, 'm.room.message', content));
    },
    encryptedMessage(room, from) {
      return push(room, 'timeline', newEvent(from, 'm.room.encrypted', { algorithm: 'm.megolm.v1.aes-sha2', ciphertext: 'AwgAEnACgAkLmt6q', device_id: 'DEV', sender_key: 'k', session_id: 's' }));
    },
    invite(room, from, o = {}) {
      rooms.set(room, { id: room, members: new Set([from]), encrypted: o.encrypted ?? false, invitedBy: from });
      push(room, 'invite', newEvent(from, 'm.room.member', { membership: 'invite' }, BOT));
    },
    limit(count, ms) {
      limited = count;
      retryAfterMs = ms;
    },
    stallNextSync() {
      stall = true;
    },
    stallNextSend() {
      stallSend = true;
    },
    isJoined: (room) => rooms.get(room)?.members.has(BOT) ?? false,
    async waitFor(cond, ms = 15_000) {
      const end = Date.now() + ms;
      while (!cond()) {
        if (Date.now() > end) throw new Error(`condition not met within ${ms} ms`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () =>
      new Promise((r) => {
        for (const w of [...waiters]) w();
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
