// web_fetch against real HTTP servers on loopback: readable text, caps, redirects, and the SSRF guard
// (a literal loopback address, a name that resolves to 127.0.0.1, a redirect to a private address).
import t from 'tap';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { fetchPage, webFetchTool, type WebSettings } from '../src/tools/web/fetch.js';
import { isPublicAddress } from '../src/tools/web/ssrf.js';

async function serve(host: string, handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; base: string }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, host, r));
  return { server, base: `http://${host}:${(server.address() as AddressInfo).port}` };
}

const settings = (over: Partial<WebSettings> = {}): WebSettings => ({ allowedHosts: [], maxBytes: 1 << 20, timeoutMs: 5000, maxRedirects: 5, ...over });

t.test('address classification', async (t) => {
  for (const a of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00:ec2::254', '::ffff:127.0.0.1', '::ffff:10.0.0.1']) {
    t.notOk(isPublicAddress(a), `${a} is not public`);
  }
  for (const a of ['1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8']) t.ok(isPublicAddress(a), `${a} is public`);
});

t.test('the SSRF guard refuses loopback by address, by name, and after a redirect', async (t) => {
  let hits = 0;
  const inner = await serve('127.0.0.1', (_req, res) => {
    hits++;
    res.end('internal secret');
  });
  // 127.0.0.2 is allowed explicitly (a trusted LAN host, say) and redirects to the private one.
  const outer = await serve('127.0.0.2', (_req, res) => {
    res.writeHead(302, { location: `${inner.base}/admin` });
    res.end();
  });
  t.teardown(() => {
    inner.server.close();
    outer.server.close();
  });
  await t.rejects(fetchPage(`${inner.base}/`, settings()), /refused by the SSRF guard: 127\.0\.0\.1 resolves to 127\.0\.0\.1/);
  const port = new URL(inner.base).port;
  await t.rejects(fetchPage(`http://localhost:${port}/`, settings()), /refused by the SSRF guard: localhost resolves to (127\.0\.0\.1|::1)/);
  await t.rejects(fetchPage(`${outer.base}/`, settings({ allowedHosts: ['127.0.0.2'] })), /refused by the SSRF guard: 127\.0\.0\.1/);
  t.equal(hits, 0, 'the private server was never reached');
  await t.rejects(fetchPage('file:///etc/passwd', settings()), /only http and https/);
});

t.test('readable text, redirects followed, caps applied, through the tool', async (t) => {
  const site = await serve('127.0.0.3', (req, res) => {
    if (req.url === '/old') {
      res.writeHead(301, { location: '/page' });
      return res.end();
    }
    if (req.url === '/loop') {
      res.writeHead(302, { location: '/loop' });
      return res.end();
    }
    if (req.url === '/cp1252') {
      res.writeHead(200, { 'content-type': 'text/html' });
      // No charset in the header: the meta tag names it, and the bytes are windows-1252.
      return res.end(Buffer.concat([Buffer.from('<meta charset="windows-1252"><p>'), Buffer.from([0x93, 0x63, 0x61, 0x66, 0xe9, 0x94, 0x20, 0x80, 0x35])]));
    }
    if (req.url === '/cp1252-header') {
      // The header names the charset; a meta tag that says otherwise comes second.
      res.writeHead(200, { 'content-type': 'text/html; charset=windows-1252' });
      return res.end(Buffer.concat([Buffer.from('<meta charset="utf-8"><p>'), Buffer.from([0x93, 0x63, 0x61, 0x66, 0xe9, 0x94, 0x20, 0x96, 0x20, 0x99])]));
    }
    if (req.url === '/bom') {
      // A UTF-8 byte-order mark wins over a header that says windows-1252.
      res.writeHead(200, { 'content-type': 'text/html; charset=windows-1252' });
      return res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<p>caf\u00e9 \u2013 \u20ac</p>')]));
    }
    if (req.url === '/klingon-html') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end('<meta charset="klingon"><p>Qapla\'</p>');
    }
    if (req.url === '/klingon') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=klingon' });
      return res.end('tlhIngan Hol');
    }
    if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return res.end('x'.repeat(50_000));
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<html><head><title>Greenhouse &amp; Co</title><style>p{}</style></head><body><script>alert(1)</script><h1>Sensors</h1><p>Temperature: 21&#176;C</p><a href="/more">more</a></body></html>');
  });
  t.teardown(() => site.server.close());
  const s = settings({ allowedHosts: ['127.0.0.3'], maxBytes: 10_000 });
  const page = await fetchPage(`${site.base}/old`, s);
  t.equal(page.url, `${site.base}/page`);
  t.equal(page.title, 'Greenhouse & Co');
  t.equal(page.text, `# Sensors\n\nTemperature: 21°C\n\nmore (${site.base}/more)`, 'headings marked, links made absolute');
  await t.rejects(fetchPage(`${site.base}/loop`, s), /more than 5 redirects/);
  t.equal((await fetchPage(`${site.base}/cp1252`, s)).text, '\u201ccaf\u00e9\u201d \u20ac5', 'windows-1252 named by a meta tag');
  t.equal((await fetchPage(`${site.base}/cp1252-header`, s)).text, '\u201ccaf\u00e9\u201d \u2013 \u2122', 'windows-1252 named by the header');
  t.equal((await fetchPage(`${site.base}/bom`, s)).text, 'caf\u00e9 \u2013 \u20ac', 'the BOM decides');
  const unknownMeta = await fetchPage(`${site.base}/klingon-html`, s);
  t.same({ text: unknownMeta.text, notes: unknownMeta.notes }, { text: "Qapla'", notes: ['unknown charset "klingon"; read as UTF-8'] });
  const klingon = await webFetchTool(s).execute({ url: `${site.base}/klingon` }, { sessionKey: 's', channel: 'c', chatId: 'c' });
  t.match(klingon.content, /tlhIngan Hol\n\n\[unknown charset "klingon"; read as UTF-8\]$/, 'an unknown charset is read as UTF-8 and said');
  const big = await fetchPage(`${site.base}/big`, s);
  t.equal(big.text.length, 10_000);
  t.ok(big.truncated);
  const tool = webFetchTool(s);
  const r = await tool.execute({ url: `${site.base}/big`, maxChars: 100 }, { sessionKey: 's', channel: 'c', chatId: 'c' });
  t.match(r.content, /\[cut at 100 characters\] \[download stopped at 10000 bytes\]$/);
  const refused = await webFetchTool(settings()).execute({ url: `${site.base}/page` }, { sessionKey: 's', channel: 'c', chatId: 'c' });
  t.equal(refused.isError, true);
  t.match(refused.content, /refused by the SSRF guard/);
});

t.test('compressed pages are decoded and capped by what they hold; a cut download closes its connection; a failed connection says why', async (t) => {
  // 2 MB of text in about 2 KB: the cap must apply to the decoded bytes, or a small answer could unpack without bound.
  const bomb = gzipSync(Buffer.from('y'.repeat(2_000_000)));
  let endlessClosed!: () => void;
  const closed = new Promise<void>((r) => (endlessClosed = r));
  const site = await serve('127.0.0.4', (req, res) => {
    if (req.url === '/gzip') {
      t.match(req.headers['accept-encoding'], /gzip/, 'compression is offered');
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      return res.end(bomb);
    }
    if (req.url === '/br-html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'br' });
      return res.end(brotliCompressSync(Buffer.from('<title>Packed</title><p>caf\u00e9</p>')));
    }
    // Sends more than the cap and never ends: only the client's closing ends the exchange.
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('z'.repeat(20_000));
    req.socket.once('close', endlessClosed);
  });
  t.teardown(() => site.server.close());
  const s = settings({ allowedHosts: ['127.0.0.4'], maxBytes: 10_000 });
  const packed = await fetchPage(`${site.base}/gzip`, s);
  t.same({ length: packed.text.length, truncated: packed.truncated, head: packed.text.slice(0, 3) }, { length: 10_000, truncated: true, head: 'yyy' });
  const br = await fetchPage(`${site.base}/br-html`, s);
  t.same({ title: br.title, text: br.text }, { title: 'Packed', text: 'caf\u00e9' }, 'brotli decoded before the charset and the HTML reader');
  const endless = await fetchPage(`${site.base}/endless`, s);
  t.equal(endless.text.length, 10_000);
  await closed;
  t.pass('the server saw the connection closed after the cap');
  // A port nobody listens on: the message names the cause, not the transport's "fetch failed".
  const probe = await serve('127.0.0.4', (_req, res) => res.end());
  const deadPort = new URL(probe.base).port;
  await new Promise<void>((r) => probe.server.close(() => r()));
  const refused = await webFetchTool(s).execute({ url: `http://127.0.0.4:${deadPort}/` }, { sessionKey: 's', channel: 'c', chatId: 'c' });
  t.equal(refused.isError, true);
  t.match(refused.content, new RegExp(`^web_fetch http://127\\.0\\.0\\.4:${deadPort}/: connect ECONNREFUSED 127\\.0\\.0\\.4:${deadPort}$`));
});
