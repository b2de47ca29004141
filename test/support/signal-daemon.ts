// A stand-in for `signal-cli -a ACCOUNT daemon --http` (signal-cli-jsonrpc(5)) on node:http:
// POST /api/v1/rpc answers JSON-RPC (send, sendTyping, sendReceipt) and records each call;
// GET /api/v1/events?account=… streams `event:receive` with `data:{"envelope":…,"account":…}`
// written the way the daemon writes them (no space after the colon), a `:` keep-alive, an `id:` per
// event and a replay after Last-Event-ID (all kept events when the id is unknown, as after a daemon
// restart); GET /api/v1/check answers 200. Envelopes are built in the daemon's JSON
// (JsonMessageEnvelope, JsonDataMessage, JsonAttachment, JsonMention, JsonGroupInfo), attachments are
// written into a directory like the daemon's attachments/, and faults can be scripted: a stream cut
// off inside an event, RPC errors, the daemon down.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { tempDir } from './proc.js';

export interface RpcCall {
  method: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read the wire JSON freely
  params: any;
  fault?: boolean;
}

export interface Person {
  number?: string;
  uuid: string;
  name?: string;
}

export interface MessageInput {
  from: Person;
  text?: string;
  groupId?: string;
  mentions?: { who: { number?: string; uuid: string }; at: number }[];
  attachments?: { bytes: Buffer; filename?: string; contentType: string }[];
  quote?: { author: string; id: number };
  timestamp?: number;
}

export interface SignalDaemon {
  url: string;
  account: string;
  attachmentsDir: string;
  calls: RpcCall[];
  /** the send calls that were answered with a timestamp */
  sent: { params: RpcCall['params']; timestamp: number }[];
  /** how many event streams are open */
  readonly streams: number;
  /** the Last-Event-ID header of each events request, in order ('' without one) */
  lastEventIds: string[];
  message(m: MessageInput): { timestamp: number; id: number };
  /** an envelope exactly as given (receipts, typing, sync messages) */
  raw(envelope: Record<string, unknown>): number;
  /** the next event is written only in part, then every stream is cut */
  truncateNext(): void;
  /** forgets the event ids, as a restarted daemon does: the next reconnect gets every kept event again */
  forgetIds(): void;
  /** the next `n` calls of `method` fail with this JSON-RPC error */
  fail(method: string, error: { code: number; message: string }, n?: number): void;
  /** stops listening (the daemon is down) / listens again on the same port */
  down(): Promise<void>;
  up(): Promise<void>;
  waitFor(cond: () => boolean, ms?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startSignalDaemon(o: { account?: string; keepAliveMs?: number; port?: number } = {}): Promise<SignalDaemon> {
  const account = o.account ?? '+15550000001';
  const attachmentsDir = join(tempDir('signal-daemon-'), 'attachments');
  mkdirSync(attachmentsDir, { recursive: true });
  const calls: RpcCall[] = [];
  const sent: SignalDaemon['sent'] = [];
  const lastEventIds: string[] = [];
  const kept: { id: number; text: string }[] = [];
  const open = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  const faults = new Map<string, { error: { code: number; message: string }; n: number }>();
  let epoch = 0;
  let nextId = 1;
  let clock = 1_700_000_000_000;
  let truncate = false;
  let server: Server;
  let port = o.port ?? 0;

  const frame = (e: { id: number; text: string }) => `id:${epoch}-${e.id}\nevent:receive\ndata:${e.text}\n\n`;

  function push(envelope: Record<string, unknown>): number {
    const e = { id: nextId++, text: JSON.stringify({ envelope, account }) };
    kept.push(e);
    for (const res of open) {
      if (truncate) {
        const f = frame(e);
        res.write(f.slice(0, Math.floor(f.length / 2)));
        res.socket?.destroy();
      } else res.write(frame(e));
    }
    if (truncate) {
      truncate = false;
      open.clear();
    }
    return e.id;
  }

  async function rpc(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number; method: string; params: RpcCall['params'] };
    const fault = faults.get(body.method);
    const answer = (x: Record<string, unknown>) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, ...x }));
    };
    if (fault && fault.n > 0) {
      fault.n--;
      calls.push({ method: body.method, params: body.params, fault: true });
      return answer({ error: { ...fault.error, data: null } });
    }
    // As the daemon's argument parser: sendReceipt takes one recipient, send and sendTyping a list or one.
    if (body.method === 'sendReceipt' && typeof body.params?.recipient !== 'string') {
      calls.push({ method: body.method, params: body.params, fault: true });
      return answer({ error: { code: -32602, message: 'recipient must be a single value', data: null } });
    }
    calls.push({ method: body.method, params: body.params });
    if (body.method === 'send') {
      const timestamp = ++clock;
      sent.push({ params: body.params, timestamp });
      const to = body.params.groupId ? [] : [].concat(body.params.recipient);
      return answer({ result: { timestamp, results: (to.length ? to : ['+15550000009']).map((r: string) => ({ recipientAddress: { number: r.startsWith('+') ? r : null, uuid: r.startsWith('+') ? null : r }, type: 'SUCCESS' })) } });
    }
    return answer({ result: {} });
  }

  function events(req: IncomingMessage, res: ServerResponse) {
    const q = new URL(req.url ?? '/', 'http://x').searchParams.get('account');
    if (q !== null && q !== account) {
      res.writeHead(400);
      return res.end();
    }
    const last = String(req.headers['last-event-id'] ?? '');
    lastEventIds.push(last);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    // After a known id: what came since. An unknown id (another epoch: a restarted daemon) or none:
    // every kept event, as signal-cli does.
    const m = /^(\d+)-(\d+)$/.exec(last);
    const after = m && Number(m[1]) === epoch ? Number(m[2]) : last ? 0 : Infinity;
    for (const e of kept) if (e.id > after) res.write(frame(e));
    open.add(res);
    const ka = setInterval(() => res.write(':\n'), o.keepAliveMs ?? 200);
    res.on('close', () => (clearInterval(ka), open.delete(res)));
  }

  async function listen() {
    server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path === '/api/v1/rpc' && req.method === 'POST') return void rpc(req, res);
      if (path === '/api/v1/events' && req.method === 'GET') return events(req, res);
      if (path === '/api/v1/check' && req.method === 'GET') return void (res.writeHead(200), res.end());
      res.writeHead(404);
      res.end();
    });
    server.on('connection', (s) => (sockets.add(s), s.on('close', () => sockets.delete(s))));
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  }
  async function down() {
    for (const s of sockets) s.destroy();
    open.clear();
    await new Promise<void>((r) => server.close(() => r()));
  }
  await listen();

  const d: SignalDaemon = {
    url: `http://127.0.0.1:${port}`,
    account,
    attachmentsDir,
    calls,
    sent,
    get streams() {
      return open.size;
    },
    lastEventIds,
    message(m) {
      const timestamp = m.timestamp ?? ++clock;
      const attachments = (m.attachments ?? []).map((a, i) => {
        const id = `${timestamp.toString(36)}${i}.${a.contentType.split('/')[1] ?? 'bin'}`;
        writeFileSync(join(attachmentsDir, id), a.bytes);
        return { contentType: a.contentType, filename: a.filename ?? null, id, size: a.bytes.length, width: null, height: null, caption: null, uploadTimestamp: timestamp };
      });
      const dataMessage = {
        timestamp,
        message: m.text ?? null,
        expiresInSeconds: 0,
        viewOnce: false,
        ...(m.mentions?.length ? { mentions: m.mentions.map((x) => ({ name: x.who.number ?? x.who.uuid, number: x.who.number ?? null, uuid: x.who.uuid, start: x.at, length: 1 })) } : {}),
        ...(attachments.length ? { attachments } : {}),
        ...(m.quote ? { quote: { id: m.quote.id, author: m.quote.author, authorNumber: m.quote.author, authorUuid: null, text: '', attachments: [] } } : {}),
        ...(m.groupId ? { groupInfo: { groupId: m.groupId, groupName: 'Family', revision: 3, type: 'DELIVER' } } : {}),
      };
      const id = push({
        source: m.from.number ?? m.from.uuid, sourceNumber: m.from.number ?? null, sourceUuid: m.from.uuid, sourceName: m.from.name ?? null,
        sourceDevice: 1, timestamp, serverReceivedTimestamp: timestamp + 40, serverDeliveredTimestamp: timestamp + 45, dataMessage,
      });
      return { timestamp, id };
    },
    raw: push,
    truncateNext: () => void (truncate = true),
    forgetIds: () => void epoch++,
    fail: (method, error, n = 1) => void faults.set(method, { error, n }),
    down,
    up: listen,
    async waitFor(cond, ms = 20_000) {
      const until = Date.now() + ms;
      while (!cond()) {
        if (Date.now() > until) throw new Error(`condition not met within ${ms} ms; calls: ${JSON.stringify(calls.map((c) => c.method))}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: down,
  };
  return d;
}
