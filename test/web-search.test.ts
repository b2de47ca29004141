// web_search against real HTTP servers on loopback that speak the Brave Search and SearXNG JSON
// formats: the request on the wire, result formatting, every failure turned into a message naming the
// provider and the setting, the key kept out of all of it, and the tool present only when configured.
import t from 'tap';
import { writeFileSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { secretValues, createRedactor } from '../src/config/redact.js';
import { defaults, type PinclawConfig } from '../src/config/schema.js';
import { ConfigError } from '../src/errors.js';
import { resolvePaths } from '../src/paths.js';
import { builtinTools } from '../src/tools/builtin.js';
import { createRegistry } from '../src/tools/registry.js';
import type { Tool, ToolContext } from '../src/tools/types.js';
import { searchSettings, webSearchTools, type WebConfig } from '../src/tools/web/search.js';
import { cleanEnv, runPinclaw, runPinclawAsync, tempDir } from './support/proc.js';

const KEY = 'BSAtest-subscription-key-77aa19';
const ctx: ToolContext = { sessionKey: 's', channel: 'cli', chatId: 'local' };

interface Seen {
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
}

/** A server on 127.0.0.1 that records each request and answers through `handler`. */
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; base: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push({ path: url.pathname, query: url.searchParams, headers: req.headers });
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

function web(search: Partial<WebConfig['search']>, over: Partial<WebConfig> = {}): WebConfig {
  const d = defaults().web;
  return { ...d, ...over, search: { ...d.search, ...search } };
}

function only(tools: Tool[]): Tool {
  if (tools.length !== 1) throw new Error(`expected one tool, got ${tools.length}`);
  return tools[0]!;
}

/** A Brave answer in the API's shape: a `web` section holding `results`. */
function braveAnswer(n: number) {
  return {
    type: 'search',
    query: { original: 'x' },
    web: {
      type: 'search',
      results: Array.from({ length: n }, (_, i) => ({
        title: `Result <strong>${i + 1}</strong>`,
        url: `https://example.org/${i + 1}`,
        description: `About <strong>greenhouse</strong> sensors &amp; relays, page ${i + 1}.`,
        age: '2 days ago',
      })),
    },
  };
}

t.test('Brave: the request on the wire and the formatted results', async (t) => {
  const brave = await serve((_req, res) => json(res, 200, braveAnswer(3)));
  t.teardown(() => brave.server.close());
  const tool = only(webSearchTools(web({ provider: 'brave', apiKey: KEY, baseUrl: brave.base })));
  t.equal(tool.name, 'web_search');
  t.match(tool.description, /Brave Search/);

  const r = await tool.execute({ query: '  greenhouse sensors  ', count: 3 }, ctx);
  t.notOk(r.isError, r.content);
  t.equal(r.content, [
    '3 results for "greenhouse sensors" from Brave Search:',
    '',
    '1. Result 1',
    '   https://example.org/1',
    '   About greenhouse sensors & relays, page 1.',
    '',
    '2. Result 2',
    '   https://example.org/2',
    '   About greenhouse sensors & relays, page 2.',
    '',
    '3. Result 3',
    '   https://example.org/3',
    '   About greenhouse sensors & relays, page 3.',
  ].join('\n'));
  const req = brave.seen[0]!;
  t.equal(req.path, '/res/v1/web/search');
  t.equal(req.query.get('q'), 'greenhouse sensors', 'the query is trimmed and URL-encoded');
  t.equal(req.query.get('count'), '3');
  t.equal(req.headers['x-subscription-token'], KEY);
  t.equal(req.headers.accept, 'application/json');

  await tool.execute({ query: 'ä & b?' }, ctx);
  t.equal(brave.seen[1]!.query.get('q'), 'ä & b?', 'special characters survive the round trip');
  t.equal(brave.seen[1]!.query.get('count'), '5', 'count defaults to 5');
});

t.test('Brave: more results than asked are cut, none is not an error', async (t) => {
  let answer: unknown = braveAnswer(8);
  const brave = await serve((_req, res) => json(res, 200, answer));
  t.teardown(() => brave.server.close());
  const tool = only(webSearchTools(web({ provider: 'brave', apiKey: KEY, baseUrl: brave.base })));
  const two = await tool.execute({ query: 'q', count: 2 }, ctx);
  t.match(two.content, /^2 results for "q" from Brave Search:/);
  t.notMatch(two.content, /^3\. /m);
  // Brave leaves out the web section when nothing matched.
  answer = { type: 'search', query: { original: 'q' } };
  const none = await tool.execute({ query: 'nothing here' }, ctx);
  t.notOk(none.isError);
  t.equal(none.content, 'No results for "nothing here" from Brave Search.');
  answer = { web: { results: [{ title: '', url: 'https://a.example/', description: '' }, { title: 'no url' }] } };
  const bare = await tool.execute({ query: 'q' }, ctx);
  t.equal(bare.content, '1 result for "q" from Brave Search:\n\n1. (no title)\n   https://a.example/', 'an entry without a URL is skipped');
});

t.test('SearXNG: path prefix kept, format=json, no key sent, results cut to count', async (t) => {
  const searx = await serve((_req, res) => json(res, 200, {
    query: 'pi',
    number_of_results: 0,
    results: Array.from({ length: 7 }, (_, i) => ({ title: `Pi ${i + 1}`, url: `https://pi.example/${i + 1}`, content: i === 0 ? null : `snippet ${i + 1}`, engine: 'duckduckgo' })),
    answers: [],
    suggestions: [],
  }));
  t.teardown(() => searx.server.close());
  const tool = only(webSearchTools(web({ provider: 'searxng', baseUrl: `${searx.base}/searx/` })));
  const r = await tool.execute({ query: 'raspberry pi', count: 2 }, ctx);
  t.notOk(r.isError, r.content);
  t.equal(r.content, '2 results for "raspberry pi" from SearXNG:\n\n1. Pi 1\n   https://pi.example/1\n\n2. Pi 2\n   https://pi.example/2\n   snippet 2');
  const req = searx.seen[0]!;
  t.equal(req.path, '/searx/search');
  t.equal(req.query.get('q'), 'raspberry pi');
  t.equal(req.query.get('format'), 'json');
  t.equal(req.headers['x-subscription-token'], undefined);
});

t.test('failures name the provider and the setting, and never show the key', async (t) => {
  let reply: (res: ServerResponse) => void = (res) => json(res, 200, braveAnswer(1));
  const brave = await serve((_req, res) => reply(res));
  t.teardown(() => brave.server.close());
  const tool = only(webSearchTools(web({ provider: 'brave', apiKey: KEY, baseUrl: brave.base })));
  const attempt = async (r: (res: ServerResponse) => void) => {
    reply = r;
    const out = await tool.execute({ query: 'q' }, ctx);
    t.equal(out.isError, true, out.content);
    t.notOk(out.content.includes(KEY), 'the key is not in the message');
    return out.content;
  };

  t.equal(await attempt((res) => json(res, 401, { type: 'ErrorResponse', error: { code: 'UNAUTHORIZED' } })), 'web_search: the Brave API key was refused (401) (web.search.apiKey)');
  t.equal(
    await attempt((res) => json(res, 422, { type: 'ErrorResponse', error: { code: 'SUBSCRIPTION_TOKEN_INVALID', detail: 'The provided subscription token is invalid.' } })),
    'web_search: the Brave API key was refused (422: The provided subscription token is invalid.) (web.search.apiKey)',
  );
  t.equal(await attempt((res) => json(res, 429, { error: { code: 'RATE_LIMITED', detail: 'Request rate limit exceeded for plan.' } }, { 'retry-after': '2' })),
    'web_search: Brave Search rate-limited the search (429): Request rate limit exceeded for plan.; retry after 2 s (the plan of web.search.apiKey sets the limit)');
  t.equal(await attempt((res) => json(res, 503, 'upstream down')), `web_search: Brave Search failed with 503; try again later (${brave.base}/res/v1/web/search, web.search.baseUrl)`);
  t.equal(await attempt((res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html>captive portal</html>');
  }), `web_search: Brave Search did not answer with JSON (content-type text/html, 27 characters) at ${brave.base}/res/v1/web/search; check web.search.baseUrl`);
  t.equal(await attempt((res) => json(res, 200, { web: { results: 'nope' } })), `web_search: Brave Search answered JSON that is not a search result: the answer has no web.results list (${brave.base}/res/v1/web/search, web.search.baseUrl)`);
  // A server that repeats the token back in its complaint: the tool's own scrub removes it.
  t.equal(await attempt((res) => json(res, 400, { error: { code: 'BAD', detail: `bad request from ${KEY}` } })), `web_search: Brave Search answered 400: bad request from [redacted] (${brave.base}/res/v1/web/search, web.search.baseUrl)`);
  t.ok(brave.seen.every((s) => s.headers['x-subscription-token'] === KEY), 'every attempt carried the key in the header only');
});

t.test('a server that never answers times out; a closed port cannot be reached; a too-large answer is refused', async (t) => {
  const silent = await serve(() => undefined);
  t.teardown(() => {
    silent.server.closeAllConnections();
    silent.server.close();
  });
  const slow = only(webSearchTools(web({ provider: 'brave', apiKey: KEY, baseUrl: silent.base, timeoutMs: 300 })));
  const started = Date.now();
  const r = await slow.execute({ query: 'q' }, ctx);
  t.equal(r.content, 'web_search: Brave Search did not answer within 300 ms (web.search.timeoutMs)');
  t.ok(Date.now() - started < 3000, `stopped near the limit (${Date.now() - started} ms)`);
  const viaWeb = only(webSearchTools(web({ provider: 'brave', apiKey: KEY, baseUrl: silent.base }, { timeoutMs: 250 })));
  t.equal((await viaWeb.execute({ query: 'q' }, ctx)).content, 'web_search: Brave Search did not answer within 250 ms (web.timeoutMs)', 'without its own limit, web.timeoutMs applies');

  const gone = await serve(() => undefined);
  await new Promise<void>((r) => gone.server.close(() => r()));
  const closed = await only(webSearchTools(web({ provider: 'searxng', baseUrl: gone.base }))).execute({ query: 'q' }, ctx);
  t.equal(closed.content, `web_search: cannot reach SearXNG at ${gone.base}/search: ECONNREFUSED (web.search.baseUrl)`);

  const big = await serve((_req, res) => json(res, 200, { results: [{ title: 'x'.repeat(5000), url: 'https://x.example/' }] }));
  t.teardown(() => big.server.close());
  const capped = await only(webSearchTools(web({ provider: 'searxng', baseUrl: big.base }, { maxBytes: 2048 }))).execute({ query: 'q' }, ctx);
  t.equal(capped.content, 'web_search: the SearXNG answer is larger than 2048 bytes (web.maxBytes)');

  const ac = new AbortController();
  const pending = slow.execute({ query: 'q' }, { ...ctx, signal: ac.signal });
  setTimeout(() => ac.abort(), 50);
  t.equal((await pending).content, 'web_search: the search was stopped', 'the call stops when its signal aborts');
});

t.test('SearXNG without the JSON format enabled answers 403', async (t) => {
  const searx = await serve((_req, res) => {
    res.writeHead(403, { 'content-type': 'text/html' });
    res.end('Forbidden');
  });
  t.teardown(() => searx.server.close());
  const r = await only(webSearchTools(web({ provider: 'searxng', baseUrl: searx.base }))).execute({ query: 'q' }, ctx);
  t.equal(r.content, `web_search: the SearXNG instance at ${searx.base}/search refused the JSON format (403); its settings.yml must list json under search.formats (web.search.baseUrl)`);
});

t.test('through the registry: input bounds name the field, output is redacted', async (t) => {
  const brave = await serve((_req, res) => json(res, 200, braveAnswer(20)));
  t.teardown(() => brave.server.close());
  const config: PinclawConfig = { ...defaults(), web: web({ provider: 'brave', apiKey: KEY, baseUrl: brave.base }) };
  t.ok(secretValues(config, {}).includes(KEY), 'web.search.apiKey is one of the secrets the process redacts');
  const registry = createRegistry(webSearchTools(config.web), { redact: createRedactor(secretValues(config, {})) });
  const run = (input: unknown) => registry.call({ name: 'web_search', input }, ctx);

  for (const [input, problem] of [
    [{ query: 'q', count: 0 }, 'input.count: must be >= 1'],
    [{ query: 'q', count: 21 }, 'input.count: must be <= 20'],
    [{ query: 'q', count: 2.5 }, 'input.count: expected integer, got a non-integer number'],
    [{ query: '' }, 'input.query: must be at least 1 characters'],
    [{}, 'input.query: required'],
    [{ query: 'q', site: 'x' }, 'input.site: unknown field'],
  ] as const) {
    const r = await run(input);
    t.match(r, { outcome: 'error', rule: 'inputSchema' });
    t.equal(r.result.content, `invalid arguments for web_search: ${problem}`);
  }
  t.equal(brave.seen.length, 0, 'no invalid call reached the provider');
  const blank = await run({ query: '   ' });
  t.equal(blank.result.content, 'web_search: input.query is blank; say what to search for');

  const twenty = await run({ query: `find ${KEY}`, count: 20 });
  t.equal(twenty.outcome, 'ok');
  t.match(twenty.result.content, /^20 results for "find \[redacted\]" from Brave Search:/);
  t.match(twenty.result.content, /^20\. Result 20$/m);
  t.notOk(twenty.result.content.includes(KEY));
  t.equal(brave.seen[0]!.query.get('count'), '20');
});

t.test('configuration: absent unless configured, incomplete setups are configuration errors', async (t) => {
  const home = tempDir();
  const paths = resolvePaths({ home }, {});
  const names = (config: PinclawConfig) => builtinTools({ config, paths, env: {} }).map((tool) => tool.name);
  t.notOk(names(defaults()).includes('web_search'), 'not offered by default');
  t.equal(defaults().web.search.provider, 'none');
  t.ok(names({ ...defaults(), web: web({ provider: 'searxng', baseUrl: 'http://192.168.1.20:8080' }) }).includes('web_search'));
  t.ok(names({ ...defaults(), web: web({ provider: 'brave', apiKey: KEY }) }).includes('web_search'));

  const refused = (w: WebConfig, message: string) => {
    let caught: unknown;
    try {
      searchSettings(w);
    } catch (err) {
      caught = err;
    }
    t.ok(caught instanceof ConfigError, `a ConfigError: ${message}`);
    t.equal((caught as ConfigError).exitCode, 78);
    t.equal((caught as ConfigError).message, message);
  };
  refused(web({ provider: 'brave' }), 'web.search.apiKey: required when web.search.provider is "brave" (pinclaw config set web.search.apiKey KEY)');
  refused(web({ provider: 'searxng' }), 'web.search.baseUrl: required when web.search.provider is "searxng" (the instance\'s address, e.g. http://searx.lan:8080)');
  refused(web({ provider: 'searxng', baseUrl: 'searx.lan:8080' }), 'web.search.baseUrl: expected an http or https URL, found string "searx.lan:8080"');
  refused(web({ provider: 'searxng', baseUrl: 'not a url' }), 'web.search.baseUrl: expected an http or https URL, found string "not a url"');
  t.equal(searchSettings(web({ provider: 'brave', apiKey: KEY }))!.base.href, 'https://api.search.brave.com/', 'Brave defaults to its public API');
});

t.test('the CLI: tool list and tool run with an encrypted key against the stand-in', async (t) => {
  const brave = await serve((_req, res) => json(res, 200, braveAnswer(2)));
  t.teardown(() => brave.server.close());
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home });

  const listOf = async (e: NodeJS.ProcessEnv) => {
    const r = await runPinclawAsync(['tool', 'list', '--json'], { env: e });
    t.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as { name: string; allowed: boolean; rule: string }[];
  };
  t.notOk((await listOf(env)).some((l) => l.name === 'web_search'), 'unconfigured: not in the tool list');
  const unknown = await runPinclawAsync(['tool', 'run', 'web_search', '{"query":"x"}'], { env });
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /^pinclaw: unknown tool 'web_search'; available: /);

  writeFileSync(join(home, 'config.json'), JSON.stringify({ web: { search: { provider: 'brave', baseUrl: brave.base } } }));
  const missingKey = await runPinclawAsync(['tool', 'list'], { env });
  t.equal(missingKey.code, 78, 'brave without a key is a configuration error');
  t.match(missingKey.stderr, /web\.search\.apiKey: required when web\.search\.provider is "brave"/);

  const set = runPinclaw(['config', 'set', '--secret', 'web.search.apiKey', KEY], { env });
  t.equal(set.code, 0, set.stderr);
  const file = readFileSync(join(home, 'config.json'), 'utf8');
  t.match(file, /"apiKey": "enc:v1:/);
  t.notOk(file.includes(KEY), 'the key is stored encrypted');

  t.match((await listOf(env)).find((l) => l.name === 'web_search'), { allowed: true, rule: 'tools.profile standard' });
  const r = await runPinclawAsync(['tool', 'run', 'web_search', '{"query":"x"}'], { env });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^2 results for "x" from Brave Search:\n\n1\. Result 1\n {3}https:\/\/example\.org\/1\n/);
  t.equal(brave.seen.at(-1)!.headers['x-subscription-token'], KEY, 'the decrypted key reached the API');

  const searxConfig = join(home, 'searx.json');
  writeFileSync(searxConfig, JSON.stringify({ web: { search: { provider: 'searxng' } } }));
  const searxMissing = await runPinclawAsync(['tool', 'list'], { env: { ...env, PINCLAW_CONFIG: searxConfig } });
  t.equal(searxMissing.code, 78);
  t.match(searxMissing.stderr, /web\.search\.baseUrl: required when web\.search\.provider is "searxng"/);
});
