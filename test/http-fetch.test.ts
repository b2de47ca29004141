// fetch() over node:http (src/net/http-fetch.ts) against real servers on 127.0.0.1, with Node's own
// fetch (undici) as the reference wherever both can be asked the same thing: what reaches the server,
// what the caller reads back, redirects, compression, streaming, aborts, failures and TLS checks. And
// that no module of src/ calls the global fetch, whose WebAssembly parser would stay in memory.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, LookupFunction } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setDefaultCACertificates } from 'node:tls';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import t from 'tap';
import { fetchOverNodeHttp, requestOverNodeHttp } from '../src/net/http-fetch.js';
import { cleanEnv, moduleRecorder, runPinclawAsync, tempDir } from './support/proc.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

async function serve(handler: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

const close = (s: Server) => new Promise<void>((r) => {
  s.closeAllConnections();
  s.close(() => r());
});

/** What a request looked like on the wire, without what may differ between two clients by design. */
function wire(s: Seen): { method: string; url: string; contentType: string | undefined; length: string | undefined; custom: string | undefined; body: string } {
  const type = s.headers['content-type'];
  const boundary = type?.match(/boundary=(.*)$/)?.[1];
  const body = s.body.toString('latin1');
  return {
    method: s.method,
    url: s.url,
    contentType: boundary ? type!.replace(boundary, 'B') : type,
    length: boundary ? undefined : s.headers['content-length'],
    custom: s.headers['x-custom'] as string | undefined,
    body: boundary ? body.replaceAll(boundary, 'B') : body,
  };
}

t.test('a request reaches the server as Node fetch sends it, for every kind of body', async (t) => {
  const srv = await serve((_q, res) => res.end('ok'));
  t.teardown(() => close(srv.server));
  const form = new FormData();
  form.append('field', 'välue');
  form.append('file', new Blob([new Uint8Array([0, 1, 2, 255])], { type: 'audio/ogg' }), 'note.ogg');
  const inits: [string, () => RequestInit][] = [
    ['no body', () => ({})],
    ['a string', () => ({ method: 'POST', body: 'héllo' })],
    ['JSON with its type', () => ({ method: 'POST', headers: { 'content-type': 'application/json', 'x-custom': 'a b' }, body: JSON.stringify({ a: [1, 'ü'] }) })],
    ['URLSearchParams', () => ({ method: 'POST', body: new URLSearchParams({ q: 'a&b', r: 'ü' }) })],
    ['bytes', () => ({ method: 'PUT', body: new Uint8Array([1, 2, 3, 0, 255]) })],
    ['a Blob', () => ({ method: 'POST', body: new Blob(['blob body'], { type: 'text/x-test' }) })],
    ['FormData with a file', () => ({ method: 'POST', body: form })],
    ['an empty POST', () => ({ method: 'POST' })],
    ['DELETE', () => ({ method: 'DELETE', headers: { 'x-custom': '1' } })],
  ];
  for (const [what, init] of inits) {
    const ours = await fetchOverNodeHttp(`${srv.url}/p?x=1`, init());
    t.equal(await ours.text(), 'ok', `${what}: the answer`);
    const theirs = await fetch(`${srv.url}/p?x=1`, init());
    await theirs.text();
    const [a, b] = srv.seen.splice(0);
    t.same(wire(a!), wire(b!), `${what}: the same request as Node's fetch`);
  }
  const twice = await fetchOverNodeHttp(srv.url, { headers: [['X-Custom', 'a'], ['x-custom', ' b ']] });
  await twice.text();
  const theirs = await fetch(srv.url, { headers: [['X-Custom', 'a'], ['x-custom', ' b ']] });
  await theirs.text();
  const [a2, b2] = srv.seen.splice(0);
  t.equal(a2!.headers['x-custom'], 'a, b', 'a field given twice, in any case, is joined and trimmed');
  t.equal(a2!.headers['x-custom'], b2!.headers['x-custom'], '(as Node fetch sends it)');
  const last = await fetchOverNodeHttp(srv.url, { headers: { 'user-agent': 'pinclaw-test', accept: 'text/plain' } });
  await last.text();
  const h = srv.seen.at(-1)!.headers;
  t.equal(h['user-agent'], 'pinclaw-test', 'a caller\'s user-agent is kept');
  t.equal(h['accept'], 'text/plain', 'a caller\'s accept is kept');
  t.equal(h['accept-encoding'], 'gzip, deflate, br', 'compressed answers are accepted');
});

t.test('the answer: status, headers with repeated fields, body; null-body statuses and HEAD', async (t) => {
  const srv = await serve((req, res) => {
    if (req.url === '/created') {
      res.writeHead(201, 'Made It', [['Set-Cookie', 'a=1'], ['Set-Cookie', 'b=2'], ['X-One', 'x'], ['Content-Type', 'application/json']]);
      res.end('{"id":7}');
    } else if (req.url === '/none') {
      res.writeHead(204);
      res.end();
    } else if (req.url === '/cached') {
      res.writeHead(304, { etag: '"v1"' });
      res.end();
    } else if (req.url === '/missing') {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('no such thing');
    } else {
      res.writeHead(200, { 'content-length': '5' });
      res.end(req.method === 'HEAD' ? undefined : 'hello');
    }
  });
  t.teardown(() => close(srv.server));
  const r = await fetchOverNodeHttp(`${srv.url}/created`, { method: 'POST', body: '{}' });
  t.equal(r.status, 201);
  t.equal(r.statusText, 'Made It');
  t.ok(r.ok);
  t.same(r.headers.getSetCookie(), ['a=1', 'b=2'], 'each Set-Cookie apart');
  t.equal(r.headers.get('x-one'), 'x');
  t.same(await r.json(), { id: 7 });
  t.equal(r.url, `${srv.url}/created`, 'the url is the one asked for');
  t.equal(r.redirected, false);
  const none = await fetchOverNodeHttp(`${srv.url}/none`);
  t.equal(none.status, 204);
  t.equal(none.body, null, 'a 204 has no body');
  const cached = await fetchOverNodeHttp(`${srv.url}/cached`);
  t.equal(cached.status, 304);
  t.equal(cached.headers.get('etag'), '"v1"');
  const missing = await fetchOverNodeHttp(`${srv.url}/missing`);
  t.equal(missing.ok, false);
  t.equal(missing.status, 404);
  t.equal(await missing.text(), 'no such thing', 'an error answer is a Response, not a rejection');
  const head = await fetchOverNodeHttp(`${srv.url}/h`, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-length'), '5');
  t.equal(await head.text(), '', 'HEAD: no body');
  // The keep-alive connection still works after all of these.
  t.equal(await (await fetchOverNodeHttp(`${srv.url}/again`)).text(), 'hello');
});

t.test('the Response reads as undici\'s: each way to read the body, once; clones; a byte order mark; headers', async (t) => {
  const srv = await serve((req, res) => {
    if (req.url === '/none') {
      res.writeHead(204);
      res.end();
      return;
    }
    res.writeHead(200, [['Content-Type', 'application/json; charset=utf-8'], ['Set-Cookie', 'b=2'], ['X-Z', 'z'], ['Set-Cookie', 'a=1'], ['X-A', 'one'], ['x-a', 'two']]);
    // A byte order mark, then JSON with text in several scripts.
    res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"text":"héllo ✓ 日本","n":[1,2]}')]));
  });
  t.teardown(() => close(srv.server));
  const both = async () => [await fetchOverNodeHttp(`${srv.url}/j`), await fetch(`${srv.url}/j`)] as const;
  /** What reading a response one way gives (or how it fails), and what it says after. */
  const read = async (r: Response, how: 'text' | 'json' | 'arrayBuffer' | 'bytes' | 'blob' | 'body'): Promise<unknown> => {
    const before = r.bodyUsed;
    let got: unknown;
    if (how === 'blob') {
      const b = await r.blob();
      got = { type: b.type, text: await b.text() };
    } else if (how === 'arrayBuffer') got = [...new Uint8Array(await r.arrayBuffer())];
    else if (how === 'bytes') got = [...(await r.bytes())];
    else if (how === 'body') {
      let text = '';
      for await (const c of r.body! as unknown as AsyncIterable<Uint8Array>) text += Buffer.from(c).toString('latin1');
      got = text;
    } else got = await r[how]();
    const again = await r.text().then((v) => ({ ok: v }), (err: Error) => ({ threw: err.name }));
    return { before, got, after: r.bodyUsed, again, bodyAfter: r.body === null ? 'null' : typeof r.body?.getReader };
  };
  for (const how of ['text', 'json', 'arrayBuffer', 'bytes', 'blob', 'body'] as const) {
    const [ours, theirs] = await both();
    t.same(await read(ours, how), await read(theirs, how), `${how}(): the same value, then used`);
  }
  const [ours, theirs] = await both();
  t.same([...ours.headers], [...theirs.headers], 'the same fields in the same order, set-cookie apart');
  t.same(ours.headers.getSetCookie(), theirs.headers.getSetCookie());
  t.equal(ours.type, theirs.type === 'basic' ? 'default' : theirs.type, 'a constructed response\'s type');
  // A clone reads the same body as the original, each once.
  const copy = ours.clone();
  const theirCopy = theirs.clone();
  t.same([await copy.json(), await ours.json()], [await theirCopy.json(), await theirs.json()], 'a clone and its original both read the body');
  t.throws(() => ours.clone(), TypeError, 'no clone of a used body');
  const [first] = await both();
  const reader = first.body!.getReader();
  await reader.read();
  t.equal(first.bodyUsed, true, 'a body a reader has read from is used');
  await t.rejects(first.text(), TypeError);
  const none = await fetchOverNodeHttp(`${srv.url}/none`);
  const theirNone = await fetch(`${srv.url}/none`);
  t.same([await none.text(), await none.text(), none.bodyUsed], [await theirNone.text(), await theirNone.text(), theirNone.bodyUsed], 'a null body reads as empty, again and again');
  const [fresh] = await both();
  t.equal(fresh.bodyUsed, false);
  fresh.body!.cancel();
  t.equal(fresh.bodyUsed, true, 'a cancelled body is used');
});

t.test('gzip, deflate and br answers are decoded, as Node fetch decodes them; a broken one fails', async (t) => {
  const text = 'pinclaw '.repeat(2000);
  const srv = await serve((req, res) => {
    const coding = req.url!.slice(1);
    const body = coding === 'gzip' ? gzipSync(text) : coding === 'deflate' ? deflateSync(text) : coding === 'br' ? brotliCompressSync(text) : coding === 'broken' ? Buffer.from('not gzip at all') : Buffer.from(text);
    res.writeHead(200, coding === 'identity' ? {} : { 'content-encoding': coding === 'broken' ? 'gzip' : coding });
    res.end(body);
  });
  t.teardown(() => close(srv.server));
  for (const coding of ['gzip', 'deflate', 'br', 'identity']) {
    const ours = await (await fetchOverNodeHttp(`${srv.url}/${coding}`)).text();
    const theirs = await (await fetch(`${srv.url}/${coding}`)).text();
    t.equal(ours, text, `${coding}: decoded`);
    t.equal(ours, theirs, `${coding}: as Node's fetch`);
  }
  const broken = await fetchOverNodeHttp(`${srv.url}/broken`);
  await t.rejects(broken.text(), 'a body that is not what its Content-Encoding says fails to read');
});

t.test('redirects: followed as the Fetch standard says, credentials kept to their origin, manual and error modes', async (t) => {
  const other = await serve((_q, res) => res.end('elsewhere'));
  t.teardown(() => close(other.server));
  const srv = await serve((req, res) => {
    const m = req.url!.match(/^\/(\d{3})(\/.*)?$/);
    if (m) {
      res.writeHead(Number(m[1]), { location: m[2] ?? '/end' });
      res.end();
    } else if (req.url === '/away') {
      res.writeHead(302, { location: `${other.url}/there` });
      res.end();
    } else if (req.url === '/loop') {
      res.writeHead(302, { location: '/loop' });
      res.end();
    } else if (req.url === '/nowhere') {
      res.writeHead(302);
      res.end();
    } else res.end(`end ${req.method}`);
  });
  t.teardown(() => close(srv.server));
  for (const [status, method] of [['301', 'GET'], ['302', 'GET'], ['303', 'GET'], ['307', 'POST'], ['308', 'POST']] as const) {
    const r = await fetchOverNodeHttp(`${srv.url}/${status}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"x":1}' });
    t.equal(await r.text(), `end ${method}`, `${status}: followed with ${method}`);
    t.equal(r.redirected, true);
    t.equal(r.url, `${srv.url}/end`, `${status}: the url is where it ended`);
    const sent = srv.seen.at(-1)!;
    t.equal(sent.body.toString(), method === 'POST' ? '{"x":1}' : '', `${status}: the body ${method === 'POST' ? 'sent again' : 'dropped'}`);
    t.equal(sent.headers['content-type'], method === 'POST' ? 'application/json' : undefined, `${status}: its type with it`);
    const theirs = await fetch(`${srv.url}/${status}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"x":1}' });
    t.equal(await theirs.text(), `end ${method}`, `${status}: as Node's fetch`);
  }
  const away = await fetchOverNodeHttp(`${srv.url}/away`, { headers: { authorization: 'Bearer secret', 'x-custom': 'kept' } });
  t.equal(await away.text(), 'elsewhere');
  t.equal(other.seen.at(-1)!.headers.authorization, undefined, 'authorization is not sent to another origin');
  t.equal(other.seen.at(-1)!.headers['x-custom'], 'kept', 'other headers are');
  const manual = await fetchOverNodeHttp(`${srv.url}/302`, { redirect: 'manual' });
  t.equal(manual.status, 302, 'manual: the redirect itself');
  t.equal(manual.headers.get('location'), '/end');
  await t.rejects(fetchOverNodeHttp(`${srv.url}/302`, { redirect: 'error' }), { name: 'TypeError', message: 'fetch failed', cause: { message: /redirected \(302\)/ } });
  await t.rejects(fetchOverNodeHttp(`${srv.url}/loop`), { name: 'TypeError', cause: { message: /more than 20 redirects/ } });
  await t.rejects(fetchOverNodeHttp(`${srv.url}/nowhere`), { cause: { message: /without a Location/ } });
});

t.test('a streamed answer is readable before it ends (server-sent events)', async (t) => {
  let finish: () => void = () => {};
  const srv = await serve((_q, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: first\n\n');
    finish = () => res.end('data: last\n\n');
  });
  t.teardown(() => close(srv.server));
  const r = await fetchOverNodeHttp(srv.url, { headers: { accept: 'text/event-stream' } });
  const reader = r.body!.getReader();
  const first = await reader.read();
  t.equal(Buffer.from(first.value!).toString(), 'data: first\n\n', 'the first event arrives while the answer is still open');
  finish();
  let rest = '';
  for (let c = await reader.read(); !c.done; c = await reader.read()) rest += Buffer.from(c.value).toString();
  t.equal(rest, 'data: last\n\n');
});

t.test('aborts: before the request, while waiting for the answer, while reading it; the reason is what rejects', async (t) => {
  const closed: string[] = [];
  const srv = await serve((req, res) => {
    req.socket.once('close', () => closed.push(req.url!));
    if (req.url === '/body') {
      res.writeHead(200);
      res.write('part');
    }
    // otherwise: never answers
  });
  t.teardown(() => close(srv.server));
  const before = new AbortController();
  before.abort();
  await t.rejects(fetchOverNodeHttp(`${srv.url}/x`, { signal: before.signal }), { name: 'AbortError' }, 'already aborted');
  await t.rejects(fetchOverNodeHttp(`${srv.url}/wait`, { signal: AbortSignal.timeout(150) }), { name: 'TimeoutError' }, 'a timeout while waiting for the head');
  const during = new AbortController();
  const r = await fetchOverNodeHttp(`${srv.url}/body`, { signal: during.signal });
  const reader = r.body!.getReader();
  t.equal(Buffer.from((await reader.read()).value!).toString(), 'part');
  during.abort();
  await t.rejects(reader.read(), { name: 'AbortError' }, 'reading the rest rejects with the reason');
  for (let i = 0; i < 50 && closed.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
  t.same(closed.sort(), ['/body', '/wait'], 'the server sees both connections closed');
});

t.test('failures: refused, a bad protocol, a server that stops sending, a dropped connection', async (t) => {
  const srv = await serve((req, res) => {
    if (req.url === '/stall') {
      res.writeHead(200);
      res.write('a');
    } else if (req.url === '/drop') {
      res.writeHead(200, { 'content-length': '100' });
      res.write('short');
      setTimeout(() => req.socket.destroy(), 20);
    }
  });
  t.teardown(() => close(srv.server));
  const spare = createHttpServer();
  await new Promise<void>((r) => spare.listen(0, '127.0.0.1', r));
  const port = (spare.address() as AddressInfo).port;
  await close(spare);
  await t.rejects(fetchOverNodeHttp(`http://127.0.0.1:${port}/`), { name: 'TypeError', message: 'fetch failed', cause: { code: 'ECONNREFUSED' } }, 'refused, as Node fetch says it');
  await t.rejects(fetch(`http://127.0.0.1:${port}/`), { name: 'TypeError', message: 'fetch failed', cause: { code: 'ECONNREFUSED' } }, '(Node fetch)');
  await t.rejects(fetchOverNodeHttp('ftp://127.0.0.1/'), { name: 'TypeError', cause: { message: /ftp: URLs are not supported/ } });
  await t.rejects(fetchOverNodeHttp('not a url'), TypeError, 'a string that is no URL');
  await t.rejects(fetchOverNodeHttp(`${srv.url}/x`, { headers: { 'x-bad': 'a\nb' } }), TypeError, 'a header value with a line break, as Headers refuses it');
  await t.rejects(fetch(`${srv.url}/x`, { headers: { 'x-bad': 'a\nb' } }), TypeError, '(Node fetch)');
  await t.rejects(fetchOverNodeHttp(`${srv.url}/x`, { method: 'GET', body: 'x' }), TypeError, 'a GET with a body');
  await t.rejects(fetchOverNodeHttp(`http://u:p@127.0.0.1:1/`), TypeError, 'credentials in the URL');
  const stalled = await fetchOverNodeHttp(`${srv.url}/stall`, {}, { connectMs: 10_000, idleMs: 200 });
  await t.rejects(stalled.text(), { code: 'UND_ERR_BODY_TIMEOUT' }, 'a body that stops coming ends after the idle limit');
  await t.rejects(fetchOverNodeHttp(`${srv.url}/never`, {}, { connectMs: 10_000, idleMs: 200 }), { name: 'TypeError', cause: { code: 'UND_ERR_BODY_TIMEOUT' } }, 'so does a head that never comes');
  const dropped = await fetchOverNodeHttp(`${srv.url}/drop`);
  await t.rejects(dropped.text(), 'a body cut short fails to read');
});

t.test('a pinned lookup: the connection goes to the address the caller checked; destroy closes it', async (t) => {
  let closed!: () => void;
  const sawClose = new Promise<void>((r) => (closed = r));
  const srv = await serve((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('first part');
    // Never ends: only the client's destroy ends the exchange.
    req.socket.once('close', closed);
  });
  t.teardown(() => close(srv.server));
  const port = new URL(srv.url).port;
  const asked: string[] = [];
  // A name under .invalid never resolves (RFC 6761): reaching the server proves no lookup of Node's was made.
  const lookup = ((host: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    asked.push(host);
    if (opts?.all) cb(null, [{ address: '127.0.0.1', family: 4 }]);
    else cb(null, '127.0.0.1', 4);
  }) as unknown as LookupFunction;
  const answer = await requestOverNodeHttp(`http://pinned.invalid:${port}/x`, {}, { connectMs: 5000, idleMs: 5000, lookup });
  t.same({ status: answer.status, asked, host: srv.seen[0]?.headers.host }, { status: 200, asked: ['pinned.invalid'], host: `pinned.invalid:${port}` });
  const first: Buffer = await new Promise((r) => answer.body!.once('data', r));
  t.equal(first.toString(), 'first part');
  answer.destroy();
  await sawClose;
  t.pass('the server saw the connection closed');
  await t.rejects(requestOverNodeHttp(`http://pinned.invalid:${port}/x`, {}, { connectMs: 5000, idleMs: 5000 }), { cause: { code: /ENOTFOUND|EAI_AGAIN/ } }, 'without the pin the name does not resolve');
});

t.test('https: the certificate is checked; a trusted one works', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pinclaw-http-fetch-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { cwd: dir, stdio: 'ignore' });
  const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
  const server = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (_q, res) => res.end('secure'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => close(server));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  await t.rejects(fetchOverNodeHttp(url), { name: 'TypeError', cause: { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' } }, 'a certificate nobody vouches for is refused');
  setDefaultCACertificates([cert]);
  t.equal(await (await fetchOverNodeHttp(url)).text(), 'secure', 'trusted once its CA is');
});

t.test('node:https and node:tls are loaded by the first https: request, not by an http: one', async (t) => {
  // A real process (the dev bundle): this test's own process has both loaded already.
  const server = createHttpServer((_q, res) => res.end('<title>plain</title><p>over http</p>'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.5', r));
  t.teardown(() => close(server));
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ web: { allowedHosts: ['127.0.0.5'] } }));
  const recorder = moduleRecorder(home);
  const port = (server.address() as AddressInfo).port;
  const fetched = async (scheme: string) => {
    const r = await runPinclawAsync(['tool', 'run', 'web_fetch', JSON.stringify({ url: `${scheme}://127.0.0.5:${port}/` })], { env: cleanEnv({ PINCLAW_HOME: home, NODE_OPTIONS: recorder.nodeOptions }) });
    return { ...r, tlsModules: recorder.loaded().filter((m) => /^NativeModule (https|tls)$/.test(m)) };
  };
  const plain = await fetched('http');
  t.equal(plain.code, 0, plain.stderr);
  t.match(plain.stdout, /over http/);
  t.same(plain.tlsModules, [], 'an http: request loads neither');
  // The same server does not speak TLS: the request fails, but only after loading them.
  const secure = await fetched('https');
  t.equal(secure.code, 1);
  t.match(secure.stderr, /web_fetch https:\/\/127\.0\.0\.5:\d+\/: /);
  t.same(secure.tlsModules.sort(), ['NativeModule https', 'NativeModule tls'], 'an https: request loads both');
});

t.test('no module of src/ calls the global fetch (its WebAssembly parser would stay in memory)', async (t) => {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) {
        const code = readFileSync(path, 'utf8')
          .split('\n')
          .filter((l) => !l.trimStart().startsWith('//') && !l.trimStart().startsWith('*'))
          .join('\n');
        if (/(?<![.\w])fetch\(|globalThis\.fetch\b/.test(code)) found.push(path);
      }
    }
  };
  walk(join(import.meta.dirname, '..', 'src'));
  t.same(found, [], 'use httpFetch from src/net/fetch.ts');
  t.ok(readdirSync(join(import.meta.dirname, '..', 'src', 'channels')).length > 3, 'the walk reached the channels');
});
