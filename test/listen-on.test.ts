// listenOn (src/net/listen-on.ts): an IPv4 literal is bound without Node's name lookup, anything
// else through it; either way the server listens, answers, and reports a port in use as Node does.
import t from 'tap';
import dns from 'node:dns';
import { createServer as createHttpServer, get } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { listenOn } from '../src/net/listen-on.js';

/** Counts dns.lookup calls while `fn` runs (net looks names up through the module's own function). */
async function countingLookups<T>(fn: () => Promise<T>): Promise<{ value: T; lookups: string[] }> {
  const original = dns.lookup;
  const lookups: string[] = [];
  (dns as { lookup: unknown }).lookup = (host: string, ...rest: unknown[]) => {
    lookups.push(host);
    return (original as (...a: unknown[]) => unknown)(host, ...rest);
  };
  try {
    return { value: await fn(), lookups };
  } finally {
    dns.lookup = original;
  }
}

const listening = (server: Server, port: number, host: string) =>
  new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject);
    listenOn(server, port, host, () => resolve(server.address() as AddressInfo));
  });

const fetchText = (port: number) =>
  new Promise<string>((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: '/' }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });

t.test('an IPv4 literal: bound without a name lookup, and the server answers', async (t) => {
  const server = createHttpServer((_req, res) => res.end('ok'));
  t.teardown(() => server.close());
  const { value: addr, lookups } = await countingLookups(() => listening(server, 0, '127.0.0.1'));
  t.same(lookups, [], 'no dns.lookup');
  t.equal(addr.address, '127.0.0.1');
  t.equal(addr.family, 'IPv4');
  t.ok(addr.port > 0);
  t.ok(server.listening);
  t.equal(await fetchText(addr.port), 'ok');
});

t.test('a name goes through the lookup as before', async (t) => {
  const server = createHttpServer((_req, res) => res.end('named'));
  t.teardown(() => server.close());
  const { value: addr, lookups } = await countingLookups(() => listening(server, 0, 'localhost'));
  t.same(lookups, ['localhost']);
  t.ok(addr.port > 0);
});

t.test('a port in use: the error Node gives, with its code, syscall, address and port', async (t) => {
  const blocker = createServer();
  const taken = await listening(blocker, 0, '127.0.0.1');
  t.teardown(() => blocker.close());
  const server = createServer();
  const err = await new Promise<NodeJS.ErrnoException & { address?: string; port?: number }>((resolve) => {
    server.once('error', resolve);
    listenOn(server, taken.port, '127.0.0.1', () => t.fail('listened on a port in use'));
  });
  t.equal(err.code, 'EADDRINUSE');
  t.equal(err.syscall, 'listen');
  t.equal(err.address, '127.0.0.1');
  t.equal(err.port, taken.port);
  t.equal(err.message, `listen EADDRINUSE: address already in use 127.0.0.1:${taken.port}`, 'as Node words it for listen(port, host)');
  t.notOk(server.listening);
});

t.test('an address this machine does not have: the error of the bind, as Node gives it', async (t) => {
  // 192.0.2.1 is TEST-NET-1 (RFC 5737): never a local address.
  const server = createServer();
  const err = await new Promise<NodeJS.ErrnoException & { address?: string; port?: number }>((resolve) => {
    server.once('error', resolve);
    listenOn(server, 0, '192.0.2.1', () => t.fail('listened on an address that is not here'));
  });
  t.equal(err.code, 'EADDRNOTAVAIL');
  t.equal(err.syscall, 'listen');
  t.equal(err.address, '192.0.2.1');
  t.equal(err.message, 'listen EADDRNOTAVAIL: address not available 192.0.2.1', 'as Node words it (no port for port 0)');
  t.equal(err.port, undefined);
});
