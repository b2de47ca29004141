// `pinclaw doctor --probe` as a real process against stand-ins on 127.0.0.1 that speak the services'
// wire formats: one request to the model provider (Anthropic: a one-token message; OpenAI-compatible:
// GET /models) and one getMe to Telegram; a right key and token pass, a wrong one fails naming what
// the service said, an unreachable one says so; the token never appears in the output; plain doctor
// makes no request.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { startAnthropicServer, textReply } from './support/anthropic-server.js';
import { startOpenAIServer } from './support/openai-server.js';
import { startTelegramApi } from './support/telegram-api.js';
import { cleanEnv, runPinclawAsync, tempDir } from './support/proc.js';

function homeWith(config: unknown): string {
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify(config));
  return home;
}

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

t.test('Anthropic: one one-token message; a wrong key fails with the API\'s words', async (t) => {
  const llm = await startAnthropicServer(textReply('p'), { apiKey: 'sk-right' });
  t.teardown(() => llm.close());
  const env = cleanEnv({ PINCLAW_HOME: tempDir(), ANTHROPIC_BASE_URL: llm.url });
  const plain = await runPinclawAsync(['doctor'], { env: { ...env, ANTHROPIC_API_KEY: 'sk-right' } });
  t.notMatch(plain.stdout, /probe/);
  t.equal(llm.requests.length, 0, 'plain doctor makes no request');

  const ok = await runPinclawAsync(['doctor', '--probe'], { env: { ...env, ANTHROPIC_API_KEY: 'sk-right' } });
  t.match(ok.stdout, /^ok    probe anthropic\/claude-sonnet-5-5: answered a one-token request in \d+ ms$/m);
  t.equal(llm.requests.length, 1, 'exactly one request');
  t.match(llm.requests[0]!.body, { model: 'claude-sonnet-5-5', max_tokens: 1 });

  const bad = await runPinclawAsync(['doctor', '--probe', '--json'], { env: { ...env, ANTHROPIC_API_KEY: 'sk-wrong' } });
  t.equal(bad.code, 1, 'a failed probe fails doctor');
  const report = JSON.parse(bad.stdout) as { ok: boolean; checks: { name: string; state: string; detail: string }[] };
  t.equal(report.ok, false);
  t.match(report.checks.find((c) => c.name.startsWith('probe ')), { name: 'probe anthropic/claude-sonnet-5-5', state: 'fail', detail: `HTTP 401: invalid x-api-key (${llm.url}/v1/messages)` });
});

t.test('OpenAI-compatible: GET /models, and whether it lists the model', async (t) => {
  const llm = await startOpenAIServer();
  t.teardown(() => llm.close());
  const listed = homeWith({ agent: { model: 'openai/stand-in' }, providers: { openai: { baseUrl: `${llm.url}/v1` } } });
  const ok = await runPinclawAsync(['doctor', '--probe'], { env: cleanEnv({ PINCLAW_HOME: listed }) });
  t.match(ok.stdout, /^ok    probe openai\/stand-in: the server answered in \d+ ms and lists stand-in$/m);
  t.match(llm.requests, [{ method: 'GET', path: '/v1/models' }], 'a free call, not a completion');
  const missing = homeWith({ agent: { model: 'openai/llama-9' }, providers: { openai: { baseUrl: `${llm.url}/v1` } } });
  const warn = await runPinclawAsync(['doctor', '--probe'], { env: cleanEnv({ PINCLAW_HOME: missing }) });
  t.match(warn.stdout, /^warn  probe openai\/llama-9: the server answered in \d+ ms but does not list llama-9 \(it lists stand-in\)$/m);
  const port = await closedPort();
  const down = homeWith({ agent: { model: 'openai/stand-in' }, providers: { openai: { baseUrl: `http://127.0.0.1:${port}/v1` } } });
  const r = await runPinclawAsync(['doctor', '--probe'], { env: cleanEnv({ PINCLAW_HOME: down }) });
  t.equal(r.code, 1);
  t.match(r.stdout, new RegExp(`^FAIL  probe openai/stand-in: cannot reach http://127\\.0\\.0\\.1:${port}/v1/models: ECONNREFUSED$`, 'm'));
});

t.test('Telegram: getMe names the bot; a wrong token fails with the way out, never printed', async (t) => {
  const tg = await startTelegramApi({ token: '424242:right-token' });
  t.teardown(() => tg.close());
  const right = homeWith({ channels: { telegram: { token: '424242:right-token', apiBaseUrl: tg.url } } });
  const ok = await runPinclawAsync(['doctor', '--probe'], { env: cleanEnv({ PINCLAW_HOME: right }) });
  t.match(ok.stdout, /^ok    probe telegram: the token is the bot @pinclaw_test_bot \(id 424242\), \d+ ms$/m);
  t.same(tg.calls.map((c) => c.method), ['getMe'], 'one getMe, nothing else');
  t.notMatch(ok.stdout + ok.stderr, /right-token/);
  const wrong = homeWith({ channels: { telegram: { token: '424242:wrong-token', apiBaseUrl: tg.url } } });
  const bad = await runPinclawAsync(['doctor', '--probe'], { env: cleanEnv({ PINCLAW_HOME: wrong }) });
  t.equal(bad.code, 1);
  t.match(bad.stdout, new RegExp(`^FAIL  probe telegram: Telegram refused the token \\(401 Unauthorized\\): get the right one from @BotFather, then pinclaw config set channels\\.telegram\\.token TOKEN \\(${tg.url.replace(/\./g, '\\.')}/bot…/getMe\\)$`, 'm'));
  t.notMatch(bad.stdout + bad.stderr, /wrong-token/, 'the token is not printed');
});

t.test('--probe is a flag of doctor only', async (t) => {
  const r = await runPinclawAsync(['status', '--probe'], { env: cleanEnv({ PINCLAW_HOME: tempDir() }) });
  t.equal(r.code, 2);
  t.match(r.stderr, /Unknown option '--probe'/);
});
