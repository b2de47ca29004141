// `pinclaw status` as a real process on a real home: with no gateway (down, what the home tells
// offline), with a running gateway found where it listens (also with --port 0) and asked through its
// API with the token, the provider's last answer and failure as the gateway and `pinclaw agent`
// recorded them (no model call by status itself), the queue and the last errors; a broken config
// still gives a report. --json carries the same. Also: one-shot commands print no info log lines
// unless --verbose.
import t, { type Test } from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorReply, startAnthropicServer, textReply } from './support/anthropic-server.js';
import { bundle, cleanEnv, runPinclawAsync, start, tempDir } from './support/proc.js';

interface Report {
  gateway: { state: string; url: string; pid?: number; version?: string; detail: string };
  provider: { models: string[]; credentials: boolean; lastOk?: { at: string; provider: string }; lastError?: { at: string; error: string } };
  channels: { source: string; list: { channel: string; state: string }[] };
  queue: { inbound: Record<string, number> } | null;
  errors: { where: string; error: string }[];
  config: { keysSet: number; problems: string[] };
}

async function gateway(t: Test, env: NodeJS.ProcessEnv) {
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env });
  t.teardown(() => gw.child.kill('SIGKILL'));
  const url = (await gw.waitFor(/gateway listening on (http:\/\/\S+)/))[1]!;
  return { gw, url };
}

t.test('no gateway: status says it is down and what the home tells; exit 1', async (t) => {
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home });
  const r = await runPinclawAsync(['status'], { env });
  t.equal(r.code, 1, 'down is exit 1, so a script can ask');
  const llm = await startAnthropicServer(textReply('this costs money'));
  t.teardown(() => llm.close());
  const withKey = await runPinclawAsync(['status'], { env: { ...env, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: llm.url } });
  t.match(withKey.stdout, /^model     anthropic\/\S+; no call made yet$/m);
  t.equal(llm.requests.length, 0, 'status makes no model call');
  t.match(r.stdout, /^gateway   DOWN: no gateway runs for this home \(http:\/\/127\.0\.0\.1:7420: connection refused\); start it: pinclaw gateway, or pinclaw service install$/m);
  t.match(r.stdout, /^model     anthropic\/\S+; No model provider is configured/m);
  t.match(r.stdout, /^channels  none recorded yet/m);
  t.match(r.stdout, /^queue     no database yet$/m);
  t.match(r.stdout, /^errors    none recorded$/m);
  t.match(r.stdout, new RegExp(`^config    ${join(home, 'config.json')} \\(none: defaults\\)$`, 'm'));
  t.equal(r.stderr, '');
});

t.test('a running gateway is asked; provider outcomes, queue and errors come from what was recorded', async (t) => {
  const llm = await startAnthropicServer(textReply('fine, thanks'));
  t.teardown(() => llm.close());
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ gateway: { token: 'status-test-token' } }));
  const env = cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: llm.url, PINCLAW_AGENT_RETRY_BASE_MS: '10' });

  // A turn that is answered, then one the provider refuses: both are recorded in the home.
  const ok = await runPinclawAsync(['agent', '-m', 'how are you?'], { env });
  t.equal(ok.code, 0, ok.stderr);
  llm.enqueue(errorReply(401, { message: 'invalid x-api-key' }));
  const bad = await runPinclawAsync(['agent', '-m', 'and now?'], { env });
  t.not(bad.code, 0);
  const calls = llm.requests.length;
  const before = await runPinclawAsync(['status'], { env });
  t.match(before.stdout, /^model     anthropic\/\S+; last answer \S+ \(anthropic\/\S+\); last failure \S+: .*invalid x-api-key/m, 'recorded by pinclaw agent, read with no gateway');
  t.match(before.stdout, /^queue     inbound 1 pending, 0 processing, 1 done, 0 failed; replies waiting: none$/m);
  t.match(before.stdout, /^errors    \S+ turn in cli:main: .*invalid x-api-key/m);

  const { gw, url } = await gateway(t, env);
  // The refused message waits in the queue for the next `pinclaw agent` of its session (cli:main).
  const report = async (e = env) => JSON.parse((await runPinclawAsync(['status', '--json'], { env: e })).stdout) as Report;
  const r = await runPinclawAsync(['status'], { env });
  t.equal(r.code, 0, r.stderr);
  t.equal(llm.requests.length, calls, 'no model call since: not by the gateway, not by status');
  t.match(r.stdout, new RegExp(`^gateway   up at ${url.replace(/[.]/g, '\\.')} \\(pid ${gw.child.pid}, pinclaw \\d+\\.\\d+\\.\\d+, up \\d+s, [\\d.]+ MiB\\)$`, 'm'), 'found where --port 0 put it, and its API answered with the token');
  t.match(r.stdout, /^model     anthropic\/\S+; last answer \S+ \(anthropic\/\S+\); last failure \S+: .*invalid x-api-key/m);
  t.match(r.stdout, /^channels  http: up \(ready\)/m);
  t.match(r.stdout, /^queue     inbound 1 pending, 0 processing, 1 done, 0 failed; replies waiting: none$/m, 'the counts from the gateway\'s API');
  t.match(r.stdout, /^errors    \S+ turn in cli:main: .*invalid x-api-key/m);
  t.match(r.stdout, /^config    .*config\.json \(1 key set; pinclaw config show\)$/m);

  const j = await report();
  t.match(j.gateway, { state: 'up', url, pid: gw.child.pid, version: /^\d+\.\d+\.\d+/, detail: '' });
  t.match(j.channels, { source: 'gateway' });
  t.match(j.provider, { credentials: true, lastOk: { provider: /^anthropic\// }, lastError: { error: /invalid x-api-key/ } });
  t.ok(j.provider.lastError!.at > j.provider.lastOk!.at, 'the failure came after the answer');

  // Without the token the API is closed: the report says so and reads the rest from the database.
  const noToken = JSON.parse((await runPinclawAsync(['status', '--json'], { env: { ...env, PINCLAW_GATEWAY_TOKEN: 'wrong-token' } })).stdout) as Report;
  t.match(noToken.gateway, { state: 'up', detail: /its \/api\/status did not answer \(HTTP 401\); the rest is from the database/ });
  t.match(noToken.queue, { inbound: { done: 1, pending: 1 } }, 'the same counts, from the database');

  gw.child.kill('SIGKILL');
  await gw.exited;
  const down = await runPinclawAsync(['status'], { env });
  t.equal(down.code, 1);
  t.match(down.stdout, /^gateway   DOWN: no gateway runs for this home/m);
  t.match(down.stdout, /^channels  http: down \(was up when the gateway last ran/m, 'the recorded channels are not shown as up');
});

t.test('a broken config still gives a report, its problems named', async (t) => {
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ gateway: { prot: 1 } }));
  const r = await runPinclawAsync(['status', '--json'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(r.code, 1);
  const j = JSON.parse(r.stdout) as Report;
  t.match(j.config.problems, [/gateway\.prot: unknown key \(did you mean 'port'\?\)/]);
  t.equal(j.gateway.state, 'down');
  const usage = await runPinclawAsync(['status', 'now'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(usage.code, 2);
  t.match(usage.stderr, /unexpected argument 'now'\nusage: pinclaw status \[--json\]/);
});

t.test('one-shot commands print no info log lines unless --verbose', async (t) => {
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home, PINCLAW_MEMORY_EMBEDDER: 'none' });
  mkdirSync(join(home, 'workspace'), { recursive: true });
  writeFileSync(join(home, 'workspace', 'MEMORY.md'), '# Notes\nThe fuse box is behind the coat rack.\n');
  const quiet = await runPinclawAsync(['memory', 'search', 'fuse box'], { env });
  t.equal(quiet.code, 0, quiet.stderr);
  t.match(quiet.stdout, /MEMORY\.md:1-2\t# Notes The fuse box/);
  t.equal(quiet.stderr, '', 'the memory indexed the file, and said nothing about it');
  writeFileSync(join(home, 'workspace', 'MEMORY.md'), '# Notes\nThe fuse box is behind the coat rack.\nThe meter is in the cellar.\n');
  const loud = await runPinclawAsync(['--verbose', 'memory', 'search', 'fuse box'], { env });
  t.equal(loud.code, 0, loud.stderr);
  t.match(loud.stdout, /MEMORY\.md:1-3\t# Notes The fuse box/, 'the same answer');
  t.equal(loud.stderr, 'info: memory: indexed MEMORY.md\n', 'with --verbose the runtime says what it did');
  const warnStill = await runPinclawAsync(['memory', 'search', 'fuse box'], { env: { ...env, PINCLAW_LOG_LEVEL: 'error' } });
  t.equal(warnStill.code, 0);
  t.equal(warnStill.stderr, '', 'a quieter configured level stays quieter');
});
