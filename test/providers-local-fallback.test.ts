// agent.fallback, the local model for when the internet is gone, against real stand-ins on
// 127.0.0.1: it answers when the primary cannot be reached (stopped, hanging, a name that does not
// resolve), never when the primary answered with an error; how it combines with agent.fallbacks;
// the note every channel's reply carries, with the replies waiting for channels that are down;
// and a half-set agent.fallback refused with the key named.
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { buildProvider } from '../src/agent/providers/index.js';
import { ErrorFactory, unreachableCode } from '../src/net/errors.js';
import { fallbackChain } from '../src/agent/providers/chain.js';
import { heuristicCount } from '../src/agent/tokens.js';
import { ensureWorkspace } from '../src/agent/workspace.js';
import { ProviderError, type Provider, type ProviderEvent, type ProviderRequest } from '../src/agent/types.js';
import { configProblems } from '../src/setup/config-checks.js';
import { defaults, type PinclawConfig } from '../src/config/schema.js';
import { createBus } from '../src/conductor/bus.js';
import { createConductor } from '../src/conductor/conductor.js';
import { ConfigError } from '../src/errors.js';
import { setLogSink } from '../src/log.js';
import { resolvePaths } from '../src/paths.js';
import { openDatabase } from '../src/store/db.js';
import { toolSet } from '../src/tools/types.js';
import * as A from './support/anthropic-server.js';
import * as O from './support/openai-server.js';
import { tempDir } from './support/proc.js';

const request: ProviderRequest = { model: 'ignored', system: 's', messages: [{ role: 'user', content: [{ type: 'text', text: 'is the garage door shut?' }] }], tools: [], maxTokens: 64 };
const logLines: string[] = [];
setLogSink((line) => logLines.push(line));
const waits: number[] = [];
const opts = { sleep: async (ms: number) => void waits.push(ms), random: () => 1 };

interface Setup {
  primaryUrl: string;
  localUrl: string;
  fallbacks?: string[];
  openaiUrl?: string;
  timeoutMs?: number;
  retries?: number;
}

function config(s: Setup): PinclawConfig {
  const c = defaults();
  Object.assign(c.agent, { retries: s.retries ?? 1, requestTimeoutMs: s.timeoutMs ?? 5000, fallbacks: s.fallbacks ?? [], fallback: { model: 'llama3', baseUrl: `${s.localUrl}/v1` } });
  Object.assign(c.providers.anthropic, { apiKey: 'sk-ant-primary', baseUrl: s.primaryUrl });
  if (s.openaiUrl) Object.assign(c.providers.openai, { apiKey: 'sk-openai', baseUrl: `${s.openaiUrl}/v1` });
  return c;
}

function built(c: PinclawConfig): Provider {
  const r = buildProvider(c, {}, opts);
  if ('missing' in r) throw new Error(`expected a provider, got: ${r.missing}`);
  return r.provider;
}

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  if (!(e instanceof ProviderError)) throw new Error(`expected a ProviderError, got ${String(e)}`);
  return e;
}

/** A URL where nothing listens: a stand-in started and stopped, so the port was just free. */
async function stoppedUrl(): Promise<string> {
  const s = await A.startAnthropicServer(A.textReply('never'));
  await s.close();
  return s.url;
}

async function local(t: Test, step: O.Step<O.OpenAIStep> = O.textReply('the door is shut (local)')) {
  const s = await O.startOpenAIServer(step);
  t.teardown(() => s.close());
  return s;
}

t.beforeEach(() => {
  waits.length = 0;
  logLines.length = 0;
});

t.test('classification: only "never reached" moves to the local model', async (t) => {
  for (const code of ['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT']) t.ok(unreachableCode(code), code);
  for (const code of ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', undefined]) t.notOk(unreachableCode(code), String(code));
  const f = new ErrorFactory('anthropic/c', ['sk-secret']);
  // fetch wraps the system error: "fetch failed" with the code on its cause.
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
  t.ok(f.network(new TypeError('fetch failed', { cause: refused })).unreachable, 'a refused connection under fetch\'s wrapper');
  t.notOk(f.network(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), 'stream interrupted').unreachable, 'a reset: the server was reached');
  t.ok(f.timeout(1000).unreachable, 'a request timeout');
  for (const status of [400, 401, 404, 429, 500, 503]) t.notOk(f.http(status, 'no', () => undefined).unreachable, `HTTP ${status}`);
  t.notOk(f.aborted().unreachable, 'the caller\'s abort');
  t.notOk(f.badStream('cut').unreachable, 'a broken stream');
  t.notOk(f.inStream('overloaded_error', 'busy', true).unreachable, 'an error inside a stream');
});

t.test('the chain is unreachable only when none of its providers was reached', async (t) => {
  const failing = (id: string, e: ProviderError): Provider => ({ id, complete: async () => { throw e; } });
  const policy = { retries: 0, baseMs: 1, maxMs: 1, ...opts };
  const down = (id: string) => new ProviderError(id, 'connection failed (ECONNREFUSED)', { retryable: true, unreachable: true });
  const e1 = await failure(fallbackChain([failing('a', down('a')), failing('b', down('b'))], policy).complete(request));
  t.ok(e1.unreachable, 'both unreachable');
  const e2 = await failure(fallbackChain([failing('a', down('a')), failing('b', new ProviderError('b', '401 invalid key', { status: 401, retryable: false }))], policy).complete(request));
  t.notOk(e2.unreachable, 'one answered 401');
});

t.test('the primary stopped (connection refused): the local stand-in answers, and the response says it did', async (t) => {
  const l = await local(t);
  const p = built(config({ primaryUrl: await stoppedUrl(), localUrl: l.url }));
  t.equal(p.id, 'anthropic/claude-sonnet-5-5 > local/llama3');
  const events: ProviderEvent[] = [];
  const res = await p.complete(request, (e) => events.push(e));
  t.same(res.content, [{ type: 'text', text: 'the door is shut (local)' }]);
  t.equal(res.answeredBy, 'local/llama3');
  t.equal(res.localModel, 'llama3');
  t.equal(l.requests.length, 1, 'the local server got the request');
  t.equal(waits.length, 1, 'the primary had its retry first (agent.retries 1)');
  const moved = events.filter((e) => e.type === 'retry').at(-1);
  t.match(moved, { type: 'retry', reason: /ECONNREFUSED.*no provider can be reached, asking the local model local\/llama3/ });
  t.ok(logLines.some((l) => /^warn: .*ECONNREFUSED.*asking the local model local\/llama3/.test(l)), 'a warning in the log');
});

t.test('the primary answering 400, 401 or 500: no fallback, the error exactly as without agent.fallback', async (t) => {
  const l = await local(t);
  for (const status of [400, 401, 500]) {
    const primary = await A.startAnthropicServer(A.errorReply(status));
    t.teardown(() => primary.close());
    const withLocal = await failure(built(config({ primaryUrl: primary.url, localUrl: l.url })).complete(request));
    const plain = config({ primaryUrl: primary.url, localUrl: l.url });
    plain.agent.fallback = {};
    const without = await failure(built(plain).complete(request));
    t.equal(withLocal.message, without.message, `${status}: the same error`);
    t.equal(withLocal.status, status);
    t.notOk(withLocal.unreachable);
  }
  t.equal(l.requests.length, 0, 'the local server was never asked');
});

t.test('the primary hanging: its request timeout moves to the local model', async (t) => {
  const primary = await A.startAnthropicServer(A.stall);
  t.teardown(() => primary.close());
  const l = await local(t);
  const res = await built(config({ primaryUrl: primary.url, localUrl: l.url, timeoutMs: 300, retries: 0 })).complete(request);
  t.equal(res.localModel, 'llama3');
  t.equal(primary.requests.length, 1, 'the primary was asked and did not answer');
  t.same(res.content, [{ type: 'text', text: 'the door is shut (local)' }]);
});

t.test('a name that does not resolve (DNS failure): the local model answers', async (t) => {
  const l = await local(t);
  const res = await built(config({ primaryUrl: 'http://api.pinclaw-test.invalid', localUrl: l.url, retries: 0 })).complete(request);
  t.equal(res.localModel, 'llama3');
  t.equal(res.answeredBy, 'local/llama3');
});

t.test('with agent.fallbacks: the local model only after every one of them was unreachable', async (t) => {
  const l = await local(t);
  const dead = await stoppedUrl();
  // The primary unreachable, the agent.fallbacks model answering 401: the internet is there, the error stands.
  const refusing = await O.startOpenAIServer(O.errorReply(401, 'invalid api key'));
  t.teardown(() => refusing.close());
  const e = await failure(built(config({ primaryUrl: dead, localUrl: l.url, fallbacks: ['openai/gpt-test'], openaiUrl: refusing.url, retries: 0 })).complete(request));
  t.match(e.message, /^all providers failed: anthropic\/claude-sonnet-5-5: connection failed \(ECONNREFUSED\).*; openai\/gpt-test: 401 invalid api key$/);
  t.equal(l.requests.length, 0);
  // Both unreachable: the local model.
  const res = await built(config({ primaryUrl: dead, localUrl: l.url, fallbacks: ['openai/gpt-test'], openaiUrl: await stoppedUrl(), retries: 0 })).complete(request);
  t.equal(res.localModel, 'llama3');
  t.equal(l.requests.length, 1);
});

t.test('the local model down too: one error naming both', async (t) => {
  const p = built(config({ primaryUrl: await stoppedUrl(), localUrl: await stoppedUrl(), retries: 0 }));
  const e = await failure(p.complete(request));
  t.match(e.message, /^anthropic\/claude-sonnet-5-5: connection failed \(ECONNREFUSED\).*; the local model local\/llama3 failed too: connection failed \(ECONNREFUSED\)/);
  t.equal(e.providerId, 'anthropic/claude-sonnet-5-5 > local/llama3');
});

t.test('the caller\'s abort is never handed to the local model', async (t) => {
  const primary = await A.startAnthropicServer(A.stall);
  t.teardown(() => primary.close());
  const l = await local(t);
  const ac = new AbortController();
  const pending = failure(built(config({ primaryUrl: primary.url, localUrl: l.url, retries: 0 })).complete({ ...request, signal: ac.signal }));
  while (primary.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
  ac.abort();
  t.match((await pending).message, /request aborted/);
  t.equal(l.requests.length, 0);
});

t.test('a half-set or malformed agent.fallback: an error naming the key and the way out', async (t) => {
  const c = defaults();
  c.providers.anthropic.apiKey = 'k';
  c.agent.fallback = { model: 'llama3' };
  t.throws(() => buildProvider(c, {}), new ConfigError('agent.fallback.baseUrl: agent.fallback.model is set (llama3) but no server; set the local server\'s URL including /v1 (e.g. http://192.168.1.20:11434/v1 for Ollama), or unset agent.fallback.model'));
  c.agent.fallback = { baseUrl: 'http://192.168.1.20:11434/v1' };
  t.throws(() => buildProvider(c, {}), { name: 'ConfigError', message: /^agent\.fallback\.model: agent\.fallback\.baseUrl is set \(http:\/\/192\.168\.1\.20:11434\/v1\) but no model; set .*pinclaw config set agent\.fallback\.model llama3/ });
  c.agent.fallback = { model: 'llama3', baseUrl: '192.168.1.20:11434' };
  t.throws(() => buildProvider(c, {}), new ConfigError('agent.fallback.baseUrl: expected an http(s) URL, found "192.168.1.20:11434"'));
  // The same problem stops start-up, and the config keeps what the owner set.
  const problems = await configProblems(c, { paths: resolvePaths({ home: tempDir() }), env: {} });
  t.ok(problems.includes('agent.fallback.baseUrl: expected an http(s) URL, found "192.168.1.20:11434"'), problems.join('\n'));
  t.same(c.agent.fallback, { model: 'llama3', baseUrl: '192.168.1.20:11434' });
});

t.test('a turn answered by the local model: the reply carries the note and the count of replies waiting for a down channel', async (t) => {
  const l = await local(t);
  const c = config({ primaryUrl: await stoppedUrl(), localUrl: l.url, retries: 0 });
  const provider = built(c);
  const dir = tempDir();
  const db = openDatabase(join(dir, 'pinclaw.db'));
  const workspace = join(dir, 'workspace');
  ensureWorkspace(workspace);
  const sent: string[] = [];
  let downTries = 0;
  const conductor = createConductor({
    db, config: c, workspace, provider: async () => provider, tools: toolSet([]), countTokens: heuristicCount, bus: createBus(),
    channels: [
      { name: 'chat', debounceMs: 0, send: async (o) => void sent.push(o.text) },
      { name: 'telegram', debounceMs: 0, send: async () => { downTries++; throw new Error('getaddrinfo EAI_AGAIN api.telegram.org'); } },
    ],
    deliveryRetryDelayMs: () => 60_000,
  });
  t.teardown(async () => {
    await conductor.stop(1000);
    db.close();
  });
  conductor.start();
  conductor.send({ channel: 'telegram', chatId: '42', text: 'the heater is on' });
  while (downTries === 0) await new Promise((r) => setTimeout(r, 5));
  const row = conductor.submit({ sessionKey: 'chat:me', channel: 'chat', chatId: 'me', sender: 'me', text: 'is the garage door shut?' });
  const out = await conductor.delivered(row.id);
  t.equal(out.text, 'the door is shut (local)\n\n(answered by the local model llama3 — the internet provider is unreachable; 1 reply waits for channels that are down (telegram 1))');
  t.same(sent, [out.text]);
});
