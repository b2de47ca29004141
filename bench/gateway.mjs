// npm run bench:gateway [-- --duration S] [--rounds N] [--connections N] [--chat-concurrency N] [--build] [--json]
// Throughput of the built gateway (`pinclaw gateway --port 0`, a child process) against a bare
// node:http server answering the same /healthz JSON, both driven by the same keep-alive client loop
// in one run, so the ratio shows what pinclaw adds rather than how fast this machine is. Also full
// chat turns per second (POST /api/chat through the durable queue) against a provider that answers
// at once, and /healthz while turns run: a turn must not stall the server (target >= 1000 req/s).
// It never asserts: it prints numbers and whether the one target is met.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cleanupOnExit, listeningUrl, cpuSeconds } from './support/lib.mjs';
import { Worker } from 'node:worker_threads';
import { Pool } from 'undici';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bundle = join(root, 'dist', 'pinclaw.cjs');
const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '10' },
    'chat-concurrency': { type: 'string', default: '8' },
    build: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const durationMs = positiveNumber(values.duration, '--duration') * 1000;
const rounds = positiveNumber(values.rounds, '--rounds');
const connections = positiveNumber(values.connections, '--connections');
const chatConcurrency = positiveNumber(values['chat-concurrency'], '--chat-concurrency');
const WARMUP_MS = 1000;
const TARGET_HEALTHZ_UNDER_LOAD = 1000;
const LISTEN_TIMEOUT_MS = 30_000;

// Progress goes to stderr so that `--json` leaves stdout parseable.
const note = (msg) => process.stderr.write(`${msg}\n`);
const warnings = [];
const warn = (msg) => {
  warnings.push(msg);
  note(`warning: ${msg}`);
};

function positiveNumber(text, flag) {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) fail(`${flag} wants a positive number, got '${text}'`);
  return n;
}

function fail(msg) {
  process.stderr.write(`bench:gateway: ${msg}\n`);
  process.exit(1);
}

// --- cleanup -------------------------------------------------------------------------------------
const { children, tempDirs } = cleanupOnExit();

// --- the bundle ----------------------------------------------------------------------------------
if (values.build || !existsSync(bundle)) {
  note('bundling (node scripts/build.mjs --quiet)...');
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--quiet'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) fail('the build failed');
}

// --- the provider --------------------------------------------------------------------------------
// OpenAI chat completions as SSE, answered as soon as the request body is in. It runs in a worker
// thread so that its event loop does not queue behind the load loop's: a slow stand-in would be
// counted as a slow turn.
const PROVIDER = `
const { createServer } = require('node:http');
const { parentPort } = require('node:worker_threads');
let ids = 0;
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.method !== 'POST' || !req.url.startsWith('/v1/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ error: { message: 'no route', type: 'invalid_request_error', param: null, code: null } }));
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const id = 'chatcmpl-' + ++ids;
    const created = Math.floor(Date.now() / 1000);
    const model = body.model;
    const usage = { prompt_tokens: 40, completion_tokens: 1, total_tokens: 41 };
    const chunk = (delta, finish_reason = null) => 'data: ' + JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, logprobs: null, finish_reason }] }) + '\\n\\n';
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ id, object: 'chat.completion', created, model, choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content: 'pong' } }], usage }));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    let out = chunk({ role: 'assistant', content: '' }) + chunk({ content: 'pong' }) + chunk({}, 'stop');
    if (body.stream_options && body.stream_options.include_usage === true) out += 'data: ' + JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage }) + '\\n\\n';
    res.end(out + 'data: [DONE]\\n\\n');
  });
});
server.keepAliveTimeout = 30000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
parentPort.on('message', () => server.close(() => process.exit(0)));
`;
const provider = new Worker(PROVIDER, { eval: true });
const providerUrl = `http://127.0.0.1:${await new Promise((res, rej) => {
  provider.once('message', res);
  provider.once('error', rej);
})}`;

// --- the servers ---------------------------------------------------------------------------------
// The bare server answers /healthz the way the gateway's sendJson does (same headers, same body, same
// keep-alive timeout), so the ratio is pinclaw's routing and wrapping, not a different response.
const BARE_SERVER = `const http=require('http');const body=JSON.stringify({status:'ok'});` +
  `const s=http.createServer((q,r)=>{r.writeHead(200,{'content-type':'application/json','content-length':Buffer.byteLength(body)});r.end(body);});` +
  `s.keepAliveTimeout=5000;` +
  `s.listen(0,'127.0.0.1',()=>process.stderr.write('listening on http://127.0.0.1:'+s.address().port+'\\n'));` +
  `process.on('SIGTERM',()=>{s.close(()=>process.exit(0));s.closeAllConnections();});`;

// Ambient PINCLAW_* (a log level, a config elsewhere, a rate limit) would make the run measure
// something other than a default gateway.
const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PINCLAW_') && k !== 'NOTIFY_SOCKET' && !k.startsWith('OPENAI_') && !k.startsWith('ANTHROPIC_')));
const home = mkdtempSync(join(tmpdir(), 'pinclaw-bench-gateway-'));
tempDirs.add(home);
const token = randomBytes(24).toString('hex');
const gatewayEnv = {
  ...baseEnv,
  PINCLAW_HOME: home,
  PINCLAW_GATEWAY_TOKEN: token,
  PINCLAW_AGENT_MODEL: 'openai/bench',
  OPENAI_BASE_URL: `${providerUrl}/v1`,
};

// Every load client comes from 127.0.0.1, so a per-client rate limit (the gateway's default is to
// be 50/s, burst 100) would measure the limiter, not the server. The key is used only once the
// schema has it: an unknown key in config.json is an error, and an env variable for a key the
// schema lacks is ignored, so probing with `config get` keeps this runnable before and after.
const rateLimitKeys = [['gateway.rateLimit.perSecond', '1000000'], ['gateway.rateLimit.burst', '1000000']];
const envVarFor = (path) => ['PINCLAW', ...path.split('.').map((s) => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase())].join('_');
const rateLimit = [];
for (const [key, value] of rateLimitKeys) {
  const r = spawnSync(process.execPath, [bundle, 'config', 'get', key], { env: gatewayEnv, encoding: 'utf8', timeout: 30_000 });
  if (r.status === 0) {
    gatewayEnv[envVarFor(key)] = value;
    rateLimit.push(`${envVarFor(key)}=${value}`);
  }
}
note(rateLimit.length ? `per-client rate limit raised: ${rateLimit.join(' ')}` : 'note: this gateway has no gateway.rateLimit keys; running without a per-client limit');

function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

async function startServer(label, args, env) {
  const child = track(spawn(process.execPath, args, { env, cwd: root, stdio: ['ignore', 'ignore', 'pipe'] }));
  const out = listeningUrl(child, LISTEN_TIMEOUT_MS, label);
  const url = await out.url;
  // Keep draining stderr (a full pipe would block the server) but only keep the tail for errors.
  child.stderr.on('data', out.trim);
  return { label, child, url, stderr: out.stderr };
}

async function stopServer(s) {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return warn(`${s.label}: had already exited (${s.child.exitCode ?? s.child.signalCode}): ${s.stderr().trim()}`);
  const exited = new Promise((res) => s.child.once('exit', (code, signal) => res(code ?? signal)));
  s.child.kill('SIGTERM');
  const timer = setTimeout(() => s.child.kill('SIGKILL'), 10_000);
  const code = await exited;
  clearTimeout(timer);
  if (code !== 0) warn(`${s.label}: exited ${code} after SIGTERM: ${s.stderr().trim().split('\n').at(-1)}`);
}


// --- the load loop -------------------------------------------------------------------------------
const pools = new Set();
function pool(url, n) {
  // pipelining 1: one request at a time per connection, as browsers and most clients send them.
  const p = new Pool(url, { connections: n, pipelining: 1, keepAliveTimeout: 4_000 });
  pools.add(p);
  return p;
}

/**
 * `n` loops, each sending its next request when the last one's body is read, until `ms` have
 * passed. Counts only 2xx answers as done; anything else is an error and is reported.
 */
async function load(p, n, ms, request, check = () => true) {
  const latencies = [];
  let errors = 0;
  let firstError;
  const end = performance.now() + ms;
  const loop = async (worker) => {
    for (let i = 0; performance.now() < end; i++) {
      const t0 = performance.now();
      try {
        const { statusCode, body } = await p.request(request(worker, i));
        const text = await body.text();
        if (statusCode >= 200 && statusCode < 300 && check(text)) latencies.push(performance.now() - t0);
        else {
          errors++;
          firstError ??= `${statusCode} ${text.slice(0, 200)}`;
        }
      } catch (e) {
        errors++;
        firstError ??= e.message;
      }
    }
  };
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  await Promise.all(Array.from({ length: n }, (_, w) => loop(w)));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { done: latencies.length, errors, firstError, seconds, perSecond: latencies.length / seconds, latencies, clientCpu: (cpu.user + cpu.system) / 1e6 / seconds };
}

/** `load` with the server's CPU share over the same stretch, so a client-bound figure shows as such. */
async function measure(server, run) {
  const c0 = cpuSeconds(server.child.pid);
  const r = await run();
  const c1 = cpuSeconds(server.child.pid);
  return { ...r, serverCpu: c0 === null || c1 === null ? null : (c1 - c0) / r.seconds };
}

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const rank = (s, q) => (s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] : null); // nearest rank
const median = (xs) => {
  const s = sorted(xs);
  return s.length ? (s.length % 2 ? s[s.length >> 1] : (s[(s.length >> 1) - 1] + s[s.length >> 1]) / 2) : null;
};
function summary(r) {
  const s = sorted(r.latencies);
  const serverCpu = r.serverCpu ?? null;
  // CPU per request is the fairer comparison when the load loop, not the server, sets the pace: two
  // servers held to the same rate by the client differ only in what each request costs them.
  const serverUsPerRequest = serverCpu === null || !r.perSecond ? null : (serverCpu / r.perSecond) * 1e6;
  return { perSecond: r.perSecond, done: r.done, errors: r.errors, p50Ms: rank(s, 0.5), p99Ms: rank(s, 0.99), clientCpu: r.clientCpu, serverCpu, serverUsPerRequest };
}

const healthz = () => ({ path: '/healthz', method: 'GET' });
const isOk = (text) => text === '{"status":"ok"}';
let sessionSeq = 0;
const chatHeaders = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
// A new session for every turn: a session reused across thousands of turns would grow its history
// (and its prompt) as the run goes on, and the figure would depend on the duration.
const chat = () => ({ path: '/api/chat', method: 'POST', headers: chatHeaders, body: JSON.stringify({ session: `bench-${++sessionSeq}`, text: 'ping' }) });
const isPong = (text) => {
  try {
    const r = JSON.parse(text);
    return r.reply === 'pong' && r.kind === 'reply';
  } catch {
    return false;
  }
};

// --- run -----------------------------------------------------------------------------------------
note(`bundle: dist/pinclaw.cjs; ${process.version}; ${connections} connections; ${rounds} rounds of ${durationMs / 1000} s`);
const bare = await startServer('bare server', ['-e', BARE_SERVER], baseEnv);
const gateway = await startServer('gateway', [bundle, 'gateway', '--port', '0'], gatewayEnv);
const servers = { bare, gateway };
const healthPools = { bare: pool(bare.url, connections), gateway: pool(gateway.url, connections) };
const chatPool = pool(gateway.url, chatConcurrency);

// (a) /healthz alone, the two servers alternating and the first one changing each round, so a
// noisy stretch hits both instead of skewing one.
const idle = { bare: [], gateway: [] };
for (const key of ['bare', 'gateway']) await load(healthPools[key], connections, WARMUP_MS, healthz, isOk);
for (let round = 0; round < rounds; round++) {
  for (const key of round % 2 ? ['gateway', 'bare'] : ['bare', 'gateway']) {
    idle[key].push(summary(await measure(servers[key], () => load(healthPools[key], connections, durationMs, healthz, isOk))));
  }
  note(`healthz round ${round + 1}/${rounds}: bare ${idle.bare.at(-1).perSecond.toFixed(0)} req/s, gateway ${idle.gateway.at(-1).perSecond.toFixed(0)} req/s`);
}

// (b) chat turns alone, and the provider called straight by the same loop: the ceiling a turn could
// reach if pinclaw added nothing.
const providerPool = pool(providerUrl, chatConcurrency);
const providerRequest = () => ({
  path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'bench', stream: true, messages: [{ role: 'user', content: 'ping' }] }),
});
await load(chatPool, chatConcurrency, WARMUP_MS, chat, isPong);
const chatAlone = summary(await measure(gateway, () => load(chatPool, chatConcurrency, durationMs * 2, chat, isPong)));
note(`chat: ${chatAlone.perSecond.toFixed(0)} turns/s`);
const providerDirect = summary(await load(providerPool, chatConcurrency, durationMs, providerRequest, (text) => text.endsWith('data: [DONE]\n\n')));

// (c) /healthz while turns run without pause; the chat loop runs a little longer on both sides so
// every /healthz request is made under load.
const chatDuring = load(chatPool, chatConcurrency, durationMs * 2 + 1000, chat, isPong);
await new Promise((r) => setTimeout(r, 500));
const underLoad = summary(await measure(gateway, () => load(healthPools.gateway, connections, durationMs * 2, healthz, isOk)));
const chatUnderLoad = summary(await chatDuring);
// The gateway's CPU in that stretch is mostly the turns', so per /healthz request it means nothing.
underLoad.serverUsPerRequest = null;
note(`healthz during turns: ${underLoad.perSecond.toFixed(0)} req/s`);

for (const p of pools) await p.close();
await stopServer(gateway);
await stopServer(bare);
provider.postMessage('stop');
await new Promise((r) => provider.once('exit', r));

// --- report --------------------------------------------------------------------------------------
for (const [name, r] of [['healthz bare', idle.bare], ['healthz gateway', idle.gateway], ['chat', [chatAlone]], ['provider direct', [providerDirect]], ['healthz during turns', [underLoad]], ['chat during healthz load', [chatUnderLoad]]]) {
  const errors = r.reduce((n, x) => n + x.errors, 0);
  if (errors) warn(`${name}: ${errors} request(s) failed`);
}
const med = (rs, f) => median(rs.map(f));
const idleStats = Object.fromEntries(Object.entries(idle).map(([k, rs]) => [k, {
  perSecond: med(rs, (r) => r.perSecond), p50Ms: med(rs, (r) => r.p50Ms), p99Ms: med(rs, (r) => r.p99Ms),
  clientCpu: med(rs, (r) => r.clientCpu), serverCpu: med(rs, (r) => r.serverCpu), serverUsPerRequest: med(rs, (r) => r.serverUsPerRequest), rounds: rs,
}]));
const ratios = {
  healthzThroughput: idleStats.gateway.perSecond / idleStats.bare.perSecond,
  healthzP50: idleStats.gateway.p50Ms / idleStats.bare.p50Ms,
  healthzP99: idleStats.gateway.p99Ms / idleStats.bare.p99Ms,
  healthzServerCpuPerRequest: idleStats.gateway.serverUsPerRequest === null ? null : idleStats.gateway.serverUsPerRequest / idleStats.bare.serverUsPerRequest,
  chatVsProvider: chatAlone.perSecond / providerDirect.perSecond,
  underLoadVsIdle: underLoad.perSecond / idleStats.gateway.perSecond,
};
const meets = underLoad.perSecond >= TARGET_HEALTHZ_UNDER_LOAD;

if (values.json) {
  const strip = (s) => ({ ...s, rounds: s.rounds?.map(({ latencies, ...r }) => r) });
  process.stdout.write(`${JSON.stringify({
    node: process.version, connections, chatConcurrency, durationMs, rounds, rateLimit,
    healthz: { bare: strip(idleStats.bare), gateway: strip(idleStats.gateway) },
    chat: chatAlone, providerDirect, healthzDuringTurns: underLoad, chatDuringHealthz: chatUnderLoad,
    ratios, target: { healthzDuringTurnsPerSecond: TARGET_HEALTHZ_UNDER_LOAD, meets }, warnings,
  }, null, 2)}\n`);
} else {
  const fmt = (x, digits = 0) => (x === null || x === undefined ? 'n/a' : x.toFixed(digits));
  const pct = (x) => (x === null || x === undefined ? 'n/a' : `${(x * 100).toFixed(0)}%`);
  const table = (head, rows) => {
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const line = (cells) => cells.map((c, i) => (i ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
    return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
  };
  const row = (label, s) => [label, fmt(s.perSecond), fmt(s.p50Ms, 2), fmt(s.p99Ms, 2), pct(s.clientCpu), pct(s.serverCpu), fmt(s.serverUsPerRequest, 1)];
  const out = [];
  out.push(`gateway: dist/pinclaw.cjs vs a bare node:http server, ${process.version}, ${connections} keep-alive connections, median of ${rounds} rounds of ${durationMs / 1000} s`);
  out.push('');
  out.push(table(['measure', 'req/s', 'p50 ms', 'p99 ms', 'client CPU', 'server CPU', 'server µs/req'], [
    row('GET /healthz, bare node:http', idleStats.bare),
    row('GET /healthz, gateway', idleStats.gateway),
    row(`POST /api/chat, ${chatConcurrency} at a time`, chatAlone),
    row(`provider direct, ${chatConcurrency} at a time`, providerDirect),
    row('GET /healthz during turns', underLoad),
    row('  the turns meanwhile', chatUnderLoad),
  ]));
  out.push('');
  out.push(table(['ratio', 'value'], [
    ['healthz req/s, gateway / bare', `${ratios.healthzThroughput.toFixed(2)}x`],
    ['healthz p50, gateway / bare', `${ratios.healthzP50.toFixed(2)}x`],
    ['healthz p99, gateway / bare', `${ratios.healthzP99.toFixed(2)}x`],
    ['healthz server CPU per request, gateway / bare', ratios.healthzServerCpuPerRequest === null ? 'n/a' : `${ratios.healthzServerCpuPerRequest.toFixed(2)}x`],
    ['chat turns/s / provider direct req/s', `${ratios.chatVsProvider.toFixed(3)}x`],
    ['healthz req/s during turns / idle', `${ratios.underLoadVsIdle.toFixed(2)}x`],
  ]));
  out.push('');
  out.push(`target: GET /healthz during turns >= ${TARGET_HEALTHZ_UNDER_LOAD} req/s: ${fmt(underLoad.perSecond)} req/s, ${meets ? 'meets target' : 'MISSES target'}`);
  out.push('client and server CPU are shares of one core over the measurement (the provider thread counts as client); a client near 100%');
  out.push('means the load loop, not the server, set the pace, and server µs/req is then the better comparison');
  if (warnings.length) out.push('', `${warnings.length} warning(s) during the run; see above`);
  process.stdout.write(`${out.join('\n')}\n`);
}
