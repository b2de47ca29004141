// How many connections the gateway holds open, and for how long a silent one. Every socket is a file
// descriptor and some memory (15 000 idle sockets took 117 MB; about 1 000 used up a 1024 descriptor
// limit, and then the model calls, SQLite and the serial port failed with EMFILE). So the gateway
// holds at most `max` connections, well below the descriptor limit, at most `perAddress` of them
// from one client (an IPv4 address or an IPv6 /64, as guard.ts counts them), and closes a connection
// that has not sent a whole request within `firstRequestMs`. A connection over a limit is closed at
// once; when the gateway is full, an idle connection of the client holding the most, or else a
// connection that never sent a request, is closed to let the newcomer in, so that a flood of idle
// sockets cannot keep the owner out. Only connections all busy with requests fill it for good.
import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { clientKey } from './guard.js';

/** The cap when the owner sets none: plenty for a dashboard, a few API clients and event streams. */
export const DEFAULT_MAX_CONNECTIONS = 256;
export const DEFAULT_FIRST_REQUEST_MS = 10_000;
/** Refusals are logged at most this often (a flood must not flood the log too). */
const LOG_EVERY_MS = 60_000;

export interface ConnectionOptions {
  /** Connections held at once; absent: DEFAULT_MAX_CONNECTIONS, or less when the descriptor limit is low. */
  max?: number;
  /** Connections one client may hold; absent: a quarter of `max`. */
  perAddress?: number;
  /** A connection that has not sent a whole request's headers within this is closed. */
  firstRequestMs?: number;
  /** The process's descriptor limit; absent: read from /proc/self/limits. */
  descriptorLimit?: number;
}

export interface ConnectionStatus {
  open: number;
  max: number;
  perAddress: number;
  /** Connections closed on arrival since start: the gateway full, or the client over its share. */
  refused: { full: number; address: number };
  /** Idle connections closed to make room for a client holding fewer, since start. */
  evicted: number;
  /** Connections closed for sending no request in time, since start. */
  timedOut: number;
}

/** The soft limit on open files from the text of /proc/self/limits; undefined when unknown or unlimited. */
export function parseDescriptorLimit(limits: string): number | undefined {
  const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(limits);
  return m && m[1] !== 'unlimited' ? Number(m[1]) : undefined;
}

/** The process's soft descriptor limit (Node has no getrlimit; Linux shows it in /proc). */
export function descriptorLimit(): number | undefined {
  try {
    return parseDescriptorLimit(readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    return undefined;
  }
}

export interface ConnectionCap {
  max: number;
  perAddress: number;
  /** Set when the owner's `max` was lowered to fit the descriptor limit (worth a warning). */
  lowered?: { wanted: number; descriptorLimit: number };
}

/**
 * The cap: half the descriptor limit at most, the other half left to SQLite, the memory index,
 * model and channel connections, serial ports, GPIO lines and logs; never more than the owner set.
 */
export function connectionCap(o: { max?: number; perAddress?: number; descriptorLimit?: number }): ConnectionCap {
  const allowed = o.descriptorLimit === undefined ? Infinity : Math.max(1, Math.floor(o.descriptorLimit / 2));
  const wanted = o.max ?? DEFAULT_MAX_CONNECTIONS;
  const max = Math.min(wanted, allowed);
  const perAddress = Math.min(max, o.perAddress ?? Math.max(1, Math.ceil(max / 4)));
  return { max, perAddress, ...(o.max !== undefined && max < o.max ? { lowered: { wanted: o.max, descriptorLimit: o.descriptorLimit! } } : {}) };
}

interface Conn {
  socket: Socket;
  key: string;
  /** Requests on it not yet answered: a connection with none may be closed to make room. */
  inFlight: number;
  sentRequest: boolean;
}

export class ConnectionLimiter {
  readonly max: number;
  readonly perAddress: number;
  private readonly firstRequestMs: number;
  private readonly byClient = new Map<string, Set<Conn>>();
  private readonly conns = new Map<Socket, Conn>();
  private readonly refused = { full: 0, address: 0 };
  private evicted = 0;
  private timedOut = 0;
  private loggedAt = -Infinity;
  private refusedSinceLog = 0;

  /** `warn` hears of refused connections: the first, then at most once a minute with the count. */
  constructor(cap: ConnectionCap, firstRequestMs = DEFAULT_FIRST_REQUEST_MS, private readonly warn?: (msg: string) => void) {
    this.max = cap.max;
    this.perAddress = cap.perAddress;
    this.firstRequestMs = firstRequestMs;
  }

  /** Limits `server`'s connections from now on. */
  attach(server: Server): void {
    // A request still sending its headers later on a kept-alive connection gets the same time.
    server.headersTimeout = this.firstRequestMs;
    server.on('connection', (socket: Socket) => this.admit(socket));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.started(req, res));
  }

  status(): ConnectionStatus {
    return { open: this.conns.size, max: this.max, perAddress: this.perAddress, refused: { ...this.refused }, evicted: this.evicted, timedOut: this.timedOut };
  }

  private admit(socket: Socket): void {
    const key = clientKey(socket.remoteAddress);
    const mine = this.byClient.get(key);
    const held = mine?.size ?? 0;
    if (held >= this.perAddress) {
      this.refused.address++;
      return this.refuse(socket, `${key || 'a client'} holds its share (gateway.connections.perAddress ${this.perAddress})`);
    }
    if (this.conns.size >= this.max && !this.makeRoom(held)) {
      this.refused.full++;
      return this.refuse(socket, `the gateway holds its cap of busy connections (gateway.connections.max ${this.max})`);
    }
    const c: Conn = { socket, key, inFlight: 0, sentRequest: false };
    this.conns.set(socket, c);
    if (mine) mine.add(c);
    else this.byClient.set(key, new Set([c]));
    // Node closes a connection that stalls inside its headers (headersTimeout), not one that sends
    // nothing at all: that one is closed here. The http server destroys a socket whose timeout
    // fires with nobody listening for it on the request, the response or the server.
    socket.setTimeout(this.firstRequestMs);
    socket.once('timeout', () => {
      if (!c.sentRequest) this.timedOut++;
    });
    socket.once('close', () => this.closed(c));
  }

  private refuse(socket: Socket, why: string): void {
    socket.destroy();
    this.refusedSinceLog++;
    const now = Date.now();
    if (!this.warn || now - this.loggedAt < LOG_EVERY_MS) return;
    this.warn(`gateway: closed ${this.refusedSinceLog} new connection${this.refusedSinceLog === 1 ? '' : 's'} at once${this.loggedAt === -Infinity ? '' : ' in the last minute'}, the last because ${why}; /metrics counts them`);
    this.loggedAt = now;
    this.refusedSinceLog = 0;
  }

  /**
   * Closes one connection to let a client holding `held` in: an idle one of the client holding the
   * most, if it would still hold more than the newcomer; else the oldest that never sent a request
   * (it is worth least, and would time out soon anyway). Runs only when the gateway is full.
   */
  private makeRoom(held: number): boolean {
    let busiest: Set<Conn> | undefined;
    for (const set of this.byClient.values()) if (set.size > held + 1 && (!busiest || set.size > busiest.size)) busiest = set;
    // Sets and Maps iterate in insertion order: the oldest connection comes first.
    const victim = (busiest && [...busiest].find((c) => c.inFlight === 0)) ?? [...this.conns.values()].find((c) => !c.sentRequest);
    if (!victim) return false;
    this.evicted++;
    this.closed(victim);
    victim.socket.destroy();
    return true;
  }

  private started(req: IncomingMessage, res: ServerResponse): void {
    const c = this.conns.get(req.socket);
    if (!c) return;
    if (!c.sentRequest) {
      c.sentRequest = true;
      req.socket.setTimeout(0);
    }
    c.inFlight++;
    res.once('close', () => c.inFlight--);
  }

  private closed(c: Conn): void {
    if (this.conns.get(c.socket) !== c) return;
    this.conns.delete(c.socket);
    const set = this.byClient.get(c.key);
    set?.delete(c);
    if (set?.size === 0) this.byClient.delete(c.key);
  }
}
