// The gateway's connection cap, as a real process on 127.0.0.1: idle sockets from one address beyond
// its share are closed at once, a full gateway makes room for a client holding fewer, a silent
// socket is closed after gateway.connections.firstRequestSeconds, and under a low open-files limit
// a flood of sockets cannot starve the model call of descriptors. Clients use several 127.0.0.x
// source addresses (every 127.0.0.0/8 address is local). The cap's arithmetic is unit-tested too.
import t, { type Test } from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { connectionCap, DEFAULT_MAX_CONNECTIONS, parseDescriptorLimit } from '../src/channels/http/connections.js';
import { startAnthropicServer, textReply } from './support/anthropic-server.js';
import { bundle, cleanEnv, start, tempDir } from './support/proc.js';

const TOKEN = 'tok-connections';

async function gateway(t: Test, env: Record<string, string>, prefix: string[] = []) {
  const home = tempDir();
  mkdirSync(join(home, 'workspace'), { recursive: true });
  writeFileSync(join(home, 'config.json'), JSON.stringify({ memory: { embedder: 'none' } }));
  const args = [process.execPath, bundle, 'gateway', '--port', '0'];
  const gw = start(prefix[0] ?? args[0]!, [...prefix.slice(1), ...(prefix.length ? args : args.slice(1))], { env: cleanEnv({ PINCLAW_HOME: home, PINCLAW_GATEWAY_TOKEN: TOKEN, ...env }) });
  t.teardown(() => void gw.child.kill('SIGKILL'));
  const url = (await gw.waitFor(/gateway listening on (http:\/\/[^\s]+)/))[1]!;
  return { ...gw, url, port: Number(new URL(url).port) };
}

interface Idle {
  sockets: Socket[];
  /** how many the server closed so far */
  closed(): number;
  /** resolves once `n` are closed; fails the wait after `ms` */
  untilClosed(n: number, ms?: number): Promise<void>;
}

/** Opens `n` sockets from `localAddress` that send nothing, resolving once all are connected. */
async function openIdle(t: Test, port: number, localAddress: string, n: number): Promise<Idle> {
  let closed = 0;
  const waiters = new Set<() => void>();
  const sockets = await Promise.all(
    Array.from({ length: n }, () => new Promise<Socket>((resolve, reject) => {
      const s = connect({ port, host: '127.0.0.1', localAddress });
      s.once('connect', () => resolve(s));
      s.once('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? undefined : reject(err)));
      s.once('close', () => {
        closed++;
        for (const w of waiters) w();
      });
    })),
  );
  t.teardown(() => sockets.forEach((s) => s.destroy()));
  return {
    sockets,
    closed: () => closed,
    untilClosed: (want, ms = 15_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${closed} of ${n} sockets from ${localAddress} closed, waited for ${want}`)), ms);
        const check = () => {
          if (closed < want) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      }),
  };
}

const authed = (url: string, path: string, init: RequestInit = {}) => fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${TOKEN}`, ...init.headers } });

/** The answer of `request` once the gateway has room again (a connection refused as full throws). */
async function untilAnswered(request: () => Promise<Response>, tries = 50): Promise<string> {
  for (let i = 1; ; i++) {
    try {
      return await (await request()).text();
    } catch (err) {
      if (i >= tries) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

function metric(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  if (!line) throw new Error(`no ${series} in /metrics`);
  return Number(line.slice(series.length + 1));
}

t.test('the cap: the descriptor limit read from /proc, half of it at most, a share per client', async (t) => {
  const limits = 'Limit                     Soft Limit           Hard Limit           Units     \nMax cpu time              unlimited            unlimited            seconds   \nMax open files            1024                 524288               files     \n';
  t.equal(parseDescriptorLimit(limits), 1024, 'the soft limit');
  t.equal(parseDescriptorLimit(limits.replace('1024 ', 'unlimited ')), undefined);
  t.equal(parseDescriptorLimit('nothing here'), undefined);
  t.same(connectionCap({ descriptorLimit: 1024 }), { max: DEFAULT_MAX_CONNECTIONS, perAddress: 64 });
  t.same(connectionCap({ descriptorLimit: 200 }), { max: 100, perAddress: 25 }, 'half of a low limit');
  t.same(connectionCap({ descriptorLimit: 200, max: 500 }), { max: 100, perAddress: 25, lowered: { wanted: 500, descriptorLimit: 200 } }, 'the owner\'s cap lowered, and said so');
  t.same(connectionCap({ descriptorLimit: 100_000, max: 500, perAddress: 600 }), { max: 500, perAddress: 500 }, 'a share never above the cap');
  t.same(connectionCap({}), { max: DEFAULT_MAX_CONNECTIONS, perAddress: 64 }, 'no limit known: the default');
  t.same(connectionCap({ descriptorLimit: 1, max: 1 }), { max: 1, perAddress: 1 });
});

t.test('sockets beyond a client\'s share are closed at once; the gateway still answers', async (t) => {
  const gw = await gateway(t, { PINCLAW_GATEWAY_CONNECTIONS_MAX: '8', PINCLAW_GATEWAY_CONNECTIONS_PER_ADDRESS: '4', PINCLAW_GATEWAY_CONNECTIONS_FIRST_REQUEST_SECONDS: '120' });
  const flood = await openIdle(t, gw.port, '127.0.0.2', 20);
  await flood.untilClosed(16);
  t.equal((await fetch(`${gw.url}/healthz`)).status, 200, '/healthz answers');
  t.equal((await authed(gw.url, '/api/sessions')).status, 200, 'an authenticated request answers');
  const metrics = await (await authed(gw.url, '/metrics')).text();
  t.equal(metric(metrics, 'pinclaw_gateway_refused_connections_total{reason="address"}'), 16, 'the 16 over the share, counted');
  t.equal(metric(metrics, 'pinclaw_gateway_connections_max'), 8);
  t.ok(metric(metrics, 'pinclaw_gateway_connections') >= 5, 'the flood\'s 4 and this request\'s');
  t.equal(flood.closed(), 16, 'the flood kept its share');
  t.match(gw.stderr(), /gateway: closed 1 new connection at once, the last because 127\.0\.0\.2 holds its share \(gateway\.connections\.perAddress 4\)/, 'the first refusal is logged, the rest counted');
  t.notMatch(gw.stderr(), /closed \d+ new connections/);
});

t.test('a full gateway lets a newcomer in by closing an idle socket, never a busy one', async (t) => {
  // The client holding the most gives up its oldest idle socket.
  const gw = await gateway(t, { PINCLAW_GATEWAY_CONNECTIONS_MAX: '4', PINCLAW_GATEWAY_CONNECTIONS_PER_ADDRESS: '4', PINCLAW_GATEWAY_CONNECTIONS_FIRST_REQUEST_SECONDS: '120' });
  const flood = await openIdle(t, gw.port, '127.0.0.2', 4);
  t.equal((await authed(gw.url, '/api/sessions')).status, 200, 'the owner gets in');
  await flood.untilClosed(1);
  t.equal(flood.closed(), 1, 'one of the flood\'s sockets made room');

  // Clients holding one each: the oldest socket that never sent a request goes.
  const gw2 = await gateway(t, { PINCLAW_GATEWAY_CONNECTIONS_MAX: '2', PINCLAW_GATEWAY_CONNECTIONS_PER_ADDRESS: '1', PINCLAW_GATEWAY_CONNECTIONS_FIRST_REQUEST_SECONDS: '120' });
  const older = await openIdle(t, gw2.port, '127.0.0.4', 1);
  const newer = await openIdle(t, gw2.port, '127.0.0.5', 1);
  t.equal((await fetch(`${gw2.url}/healthz`)).status, 200);
  await older.untilClosed(1);
  t.equal(newer.closed(), 0, 'the newer one stays');

  // Busy sockets (event streams) are never closed to make room: the newcomer is refused.
  const gw3 = await gateway(t, { PINCLAW_GATEWAY_CONNECTIONS_MAX: '2', PINCLAW_GATEWAY_CONNECTIONS_PER_ADDRESS: '2' });
  const streams = new AbortController();
  t.teardown(() => streams.abort());
  const events = await Promise.all([1, 2].map(() => authed(gw3.url, '/api/events', { signal: streams.signal })));
  t.same(events.map((e) => e.status), [200, 200]);
  const late = await openIdle(t, gw3.port, '127.0.0.6', 1);
  await late.untilClosed(1);
  streams.abort();
  const metrics = await untilAnswered(() => authed(gw3.url, '/metrics'));
  t.equal(metric(metrics, 'pinclaw_gateway_refused_connections_total{reason="full"}'), 1, 'refused as full');
  t.equal(metric(metrics, 'pinclaw_gateway_closed_connections_total{reason="evicted"}'), 0, 'no stream was cut');
});

t.test('a socket that sends no request is closed after firstRequestSeconds', async (t) => {
  const gw = await gateway(t, { PINCLAW_GATEWAY_CONNECTIONS_FIRST_REQUEST_SECONDS: '1' });
  const silent = await openIdle(t, gw.port, '127.0.0.7', 2);
  // One sends half a request and stalls inside its headers.
  silent.sockets[1]!.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
  await silent.untilClosed(2);
  const metrics = await (await authed(gw.url, '/metrics')).text();
  t.equal(metric(metrics, 'pinclaw_gateway_closed_connections_total{reason="timeout"}'), 2);
  // A request that takes its time once its headers are in is not cut: the connection is busy.
  const kept = await fetch(`${gw.url}/healthz`);
  t.equal(kept.status, 200);
});

t.test('under a low open-files limit a flood of sockets leaves the model call its descriptors', async (t) => {
  const srv = await startAnthropicServer(textReply('still here'));
  t.teardown(() => srv.close());
  // Node raises the soft limit to the hard one at start, so both are set: 200 descriptors.
  const gw = await gateway(t, { PINCLAW_GATEWAY_CONNECTIONS_MAX: '500', ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: srv.url }, ['prlimit', '--nofile=200:200']);
  t.match(gw.stderr(), /gateway\.connections\.max 500 lowered to 100: half the open-files limit \(200\)/, 'the lowered cap is named with the limit');
  // 300 idle sockets from 12 addresses: more than the process could hold.
  const floods = await Promise.all(Array.from({ length: 12 }, (_, i) => openIdle(t, gw.port, `127.0.1.${i + 1}`, 25)));
  const chat = await authed(gw.url, '/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'hello' }) });
  t.equal(chat.status, 200, 'the turn ran');
  t.match(await chat.json(), { reply: 'still here' });
  const metrics = await (await authed(gw.url, '/metrics')).text();
  t.ok(metric(metrics, 'pinclaw_gateway_connections') <= 100);
  t.ok(metric(metrics, 'pinclaw_gateway_refused_connections_total{reason="full"}') + metric(metrics, 'pinclaw_gateway_closed_connections_total{reason="evicted"}') >= 200, 'the sockets over the cap were closed');
  t.notMatch(gw.stderr(), /EMFILE/);
  t.equal(floods.length, 12);
});
