// Shared plumbing of the stand-in API servers: a real HTTP server on 127.0.0.1 that records every
// request and answers from a per-test script (or a default reply when the script is empty).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Recorded {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read the wire JSON freely
  body: any;
}

export type Step<R> = R | ((req: Recorded) => R | Promise<R>);

export interface StandIn<R> {
  url: string;
  requests: Recorded[];
  enqueue(...steps: Step<R>[]): void;
  /** connections accepted so far: a client that keeps its connection alive opens one for many calls */
  connections(): number;
  /** resolves when the server has received `n` requests in total; fails after `ms` (default 60 s) naming how many came */
  received(n: number, ms?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startStandIn<R>(answer: (res: ServerResponse, reply: R, req: Recorded) => void | Promise<void>, defaultStep: Step<R>): Promise<StandIn<R>> {
  const script: Step<R>[] = [];
  const requests: Recorded[] = [];
  const sockets = new Set<Socket>();
  const waiters: { n: number; resolve: () => void }[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // recorded as text
    }
    const rec: Recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
    requests.push(rec);
    for (const w of waiters.filter((w) => requests.length >= w.n)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
    const step = script.shift() ?? defaultStep;
    const reply = typeof step === 'function' ? await (step as (r: Recorded) => R | Promise<R>)(rec) : step;
    await answer(res, reply, rec);
  });
  let accepted = 0;
  server.on('connection', (s) => {
    accepted++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    connections: () => accepted,
    enqueue: (...steps) => void script.push(...steps),
    // A deadline, so a request that never comes fails its test with a reason instead of hanging
    // until the runner's timeout.
    received: (n, ms = 60_000) =>
      new Promise((resolve, reject) => {
        if (requests.length >= n) return resolve();
        const w = {
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(w), 1);
          reject(new Error(`the stand-in received ${requests.length} of ${n} requests within ${ms} ms`));
        }, ms);
        waiters.push(w);
      }),
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

export function sseWrite(res: ServerResponse, event: string | null, data: unknown): void {
  res.write(`${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
}

/** Splits a string into `n` roughly equal pieces, so clients see real fragmentation. */
export function pieces(s: string, n: number): string[] {
  const size = Math.max(1, Math.ceil(s.length / n));
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out.length ? out : [''];
}
