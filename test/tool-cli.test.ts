// `pinclaw tool` and `pinclaw audit` through the bundle: real processes, a real SQLite file, and a
// turn of `pinclaw agent` against the Anthropic stand-in taking the same registry path.
import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAnthropicServer, textReply, toolUseReply } from './support/anthropic-server.js';
import { cleanEnv, runPinclaw, runPinclawAsync, tempDir } from './support/proc.js';

interface AuditView {
  id: number;
  time: string;
  session: string;
  channel: string;
  chat: string;
  caller: string | null;
  tool: string;
  input: string;
  outcome: string;
  rule: string | null;
  detail: string | null;
  durationMs: number | null;
  outputBytes: number | null;
}

function audit(env: NodeJS.ProcessEnv, ...args: string[]): AuditView[] {
  const r = runPinclaw(['audit', '--json', ...args], { env });
  if (r.code !== 0) throw new Error(`audit failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as AuditView[];
}

t.test('tool list: every tool with its verdict and the rule', async (t) => {
  const env = cleanEnv({ PINCLAW_HOME: tempDir(), PINCLAW_TOOLS_PROFILE: 'minimal' });
  const r = runPinclaw(['tool', 'list', '--json'], { env });
  t.equal(r.code, 0, r.stderr);
  const list = JSON.parse(r.stdout) as { name: string; allowed: boolean; rule: string; reason?: string; description: string }[];
  t.match(list.find((l) => l.name === 'current_time'), { allowed: true, rule: 'tools.profile minimal', description: /current date and time/ });
  t.match(list.find((l) => l.name === 'web_fetch'), { allowed: false, reason: 'not in profile minimal; add it to tools.allow to allow it' });
  const text = runPinclaw(['tool', 'list'], { env: { ...env, PINCLAW_TOOLS_CONFIRM: '["current_time"]' } });
  t.match(text.stdout, /^current_time +allowed \(tools\.profile minimal\), asks first \(tools\.confirm\)$/m);
  t.match(text.stdout, /^web_fetch +denied: not in profile minimal/m);
  t.equal(runPinclaw(['tool', 'list', 'extra'], { env }).code, 2);
});

t.test('tool list: exec is in the standard profile inside an OS sandbox, opt-in without one', async (t) => {
  const env = cleanEnv({ PINCLAW_HOME: tempDir() });
  const list = (extra: NodeJS.ProcessEnv) => {
    const r = runPinclaw(['tool', 'list', '--json'], { env: { ...env, ...extra } });
    t.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as { name: string; allowed: boolean; rule: string; reason?: string }[]).find((l) => l.name === 'exec');
  };
  // This machine has Landlock (test/sandbox.test.ts runs it for real) and a working bubblewrap.
  t.match(list({}), { allowed: true, rule: 'tools.profile standard (sandboxed)' });
  t.match(list({ PINCLAW_SANDBOX_BACKEND: 'bubblewrap' }), { allowed: true, rule: 'tools.profile standard (sandboxed)' });
  t.match(list({ PINCLAW_SANDBOX_BACKEND: 'none' }), { allowed: false, reason: /only inside an OS sandbox, and sandbox\.backend is none: commands would run unconfined; add it to tools\.allow/ });
  t.match(list({ PINCLAW_SANDBOX_BACKEND: 'none', PINCLAW_TOOLS_ALLOW: '["exec"]' }), { allowed: true, rule: 'tools.allow' });
});

t.test('tool run: ok, invalid input, unknown tool, denied, confirmation; every call audited', async (t) => {
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home });
  const ok = runPinclaw(['tool', 'run', 'current_time', '{"timezone":"Asia/Tokyo"}'], { env });
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.stdout, /\(Asia\/Tokyo\)\nISO 8601 UTC: \d{4}-\d\d-\d\dT/);

  const bad = runPinclaw(['tool', 'run', 'current_time', '{"timezone":5}'], { env });
  t.equal(bad.code, 1);
  t.equal(bad.stderr, 'pinclaw: invalid arguments for current_time: input.timezone: expected string, got number\n');
  t.equal(runPinclaw(['tool', 'run', 'current_tim'], { env }).stderr, "pinclaw: unknown tool 'current_tim'; available: current_time, web_fetch, exec, read_file, write_file, edit_file, list_dir, glob, grep, send_message, memory_search, memory_get, memory_store, memory_forget, cron_add, cron_list, cron_remove, cron_pause, cron_resume, board_info\n");
  const notJson = runPinclaw(['tool', 'run', 'current_time', '{timezone'], { env });
  t.equal(notJson.code, 2);
  t.match(notJson.stderr, /the tool input must be JSON/);

  const denied = runPinclaw(['tool', 'run', 'current_time'], { env: { ...env, PINCLAW_TOOLS_DENY: '["current_time"]' } });
  t.equal(denied.code, 1);
  t.equal(denied.stderr, 'pinclaw: current_time refused: denied by tools.deny\n');

  const confirmEnv = { ...env, PINCLAW_TOOLS_CONFIRM: '["current_time"]' };
  const cannotAsk = runPinclaw(['tool', 'run', 'current_time'], { env: confirmEnv, input: 'y\n' });
  t.equal(cannotAsk.code, 1, 'a pipe is not a terminal: nobody can be asked');
  t.equal(cannotAsk.stderr, "pinclaw: current_time refused: it needs the owner's confirmation (tools.confirm) and channel cli has no way to ask; run with --yes, or from a terminal\n");
  const yes = runPinclaw(['tool', 'run', '--yes', '--json', 'current_time'], { env: confirmEnv });
  t.equal(yes.code, 0, yes.stderr);
  t.match(JSON.parse(yes.stdout), { outcome: 'ok', rule: 'tools.profile standard; confirmed (tools.confirm)', content: /ISO 8601 UTC/, truncated: false });

  // web_fetch's refusal repeats the URL: a long one makes a long output for the cap to cut.
  const long = `http://127.0.0.1:9/${'a'.repeat(400)}`;
  const capped = runPinclaw(['tool', 'run', '--json', 'web_fetch', JSON.stringify({ url: long })], { env: { ...env, PINCLAW_TOOLS_LIMITS: '[{"tool":"web_fetch","maxOutputBytes":256}]' } });
  const cut = JSON.parse(capped.stdout) as { outcome: string; truncated: boolean; outputBytes: number; content: string };
  t.match(cut, { outcome: 'error', truncated: true });
  t.ok(cut.outputBytes > 400, `the full size is reported (${cut.outputBytes})`);
  t.match(cut.content, new RegExp(`^web_fetch http://127\\.0\\.0\\.1:9/a+\\n\\[output truncated: the first 256 of ${cut.outputBytes} bytes are shown \\(tools\\.limits\\[0\\]\\.maxOutputBytes\\)\\]$`));

  const rows = audit(env);
  t.same(rows.map((r) => [r.tool, r.outcome, r.rule]), [
    ['current_time', 'ok', 'tools.profile standard'],
    ['current_time', 'error', 'inputSchema'],
    ['current_tim', 'error', null],
    ['current_time', 'denied', 'tools.deny'],
    ['current_time', 'denied', 'tools.confirm'],
    ['current_time', 'ok', 'tools.profile standard; confirmed (tools.confirm)'],
    ['web_fetch', 'error', 'tools.profile standard'],
  ]);
  t.match(rows[0], { session: 'cli:tool', channel: 'cli', chat: 'local', caller: 'owner', input: '{"timezone":"Asia/Tokyo"}', time: /^\d{4}-\d\d-\d\dT.*Z$/ });
  t.ok(rows[0]!.outputBytes! > 0 && rows[0]!.durationMs! >= 0, 'size and duration recorded');
  t.equal(rows[3]!.detail, 'current_time refused: denied by tools.deny');

  t.same(audit(env, '--tool', 'current_tim').map((r) => r.outcome), ['error']);
  t.same(audit(env, '--limit', '2').map((r) => r.id), [rows[5]!.id, rows[6]!.id], 'the newest rows, oldest first');
  t.same(audit(env, '--tool', 'web_fetch').map((r) => r.outputBytes), [cut.outputBytes]);
  t.equal(audit(env, '--since', '1h').length, 7);
  t.equal(audit(env, '--since', '2999-01-01T00:00:00Z').length, 0);
  t.equal(audit(env, '--since', rows[4]!.time).length, 3, 'an ISO time from a row includes that row');
  const badSince = runPinclaw(['audit', '--since', 'yesterday'], { env });
  t.equal(badSince.code, 2);
  t.match(badSince.stderr, /--since: expected a duration \(30s, 15m, 2h, 7d, 1w\) or an ISO time/);
  const text = runPinclaw(['audit', '--tool', 'current_time'], { env });
  t.match(text.stdout, /^\S+Z {2}denied {3}current_time {2}cli:local {2}\{\} {2}\[tools\.deny\] current_time refused: denied by tools\.deny$/m);
});

t.test('secrets never reach tool output, the audit log or the database file', async (t) => {
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home });
  const token = 'tok-plain-4411-zz';
  const key = 'sk-ant-api03-plaintext-key-998877';
  t.equal(runPinclaw(['config', 'set', '--secret', 'gateway.token', token], { env }).code, 0);
  t.equal(runPinclaw(['config', 'set', '--secret', 'providers.anthropic.apiKey', key], { env }).code, 0);
  t.equal(runPinclaw(['config', 'get', 'gateway.token'], { env }).stdout, '********\n');
  // The SSRF guard refuses the address and its message repeats the URL, secrets and all.
  const r = runPinclaw(['tool', 'run', 'web_fetch', JSON.stringify({ url: `http://127.0.0.1:9/?token=${token}&key=${key}` })], { env });
  t.equal(r.code, 1);
  t.match(r.stderr, /web_fetch http:\/\/127\.0\.0\.1:9\/\?token=\[redacted\]&key=\[redacted\]: .*SSRF/);
  const rows = audit(env);
  t.equal(rows[0]!.input, '{"url":"http://127.0.0.1:9/?token=[redacted]&key=[redacted]"}');
  for (const file of ['config.json', 'pinclaw.db', 'pinclaw.db-wal']) {
    const path = join(home, file);
    if (!existsSync(path)) continue;
    const bytes = readFileSync(path, 'latin1');
    t.notOk(bytes.includes(token), `${file} does not hold the token`);
    t.notOk(bytes.includes(key), `${file} does not hold the key`);
  }
});

t.test('a model turn takes the same path: denied tools are not offered, refused with the rule, audited', async (t) => {
  const srv = await startAnthropicServer(textReply('unused'));
  t.teardown(() => srv.close());
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: srv.url, PINCLAW_TOOLS_DENY: '["web_fetch"]' });
  srv.enqueue(toolUseReply([{ name: 'current_time', input: { timezone: 'UTC' } }, { name: 'web_fetch', input: { url: 'https://example.com/' } }]), textReply('It is noon.'));
  const r = await runPinclawAsync(['agent', '-m', 'what time is it?', '--session', 'ask'], { env });
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout, 'It is noon.\n');
  t.same(srv.requests[0]!.body.tools.map((x: { name: string }) => x.name), ['current_time', 'exec', 'read_file', 'write_file', 'edit_file', 'list_dir', 'glob', 'grep', 'send_message', 'memory_search', 'memory_get', 'memory_store', 'memory_forget', 'cron_add', 'cron_list', 'cron_remove', 'cron_pause', 'cron_resume', 'board_info'], 'web_fetch is not offered; exec is (inside the sandbox)');
  const results = srv.requests[1]!.body.messages.at(-1).content as { content: string; is_error?: boolean }[];
  t.match(results[0], { content: /ISO 8601 UTC/ });
  t.match(results[1], { content: 'web_fetch refused: denied by tools.deny', is_error: true });
  // current_time is read-only: one row, written when it ends (after the refusal's).
  t.match(audit(env), [
    { tool: 'web_fetch', outcome: 'denied', rule: 'tools.deny', session: 'ask' },
    { tool: 'current_time', outcome: 'ok', session: 'ask', channel: 'cli', chat: 'local', caller: 'owner' },
  ]);
});

t.test('a board profile without a usable GPIO chip: the GPIO tools are listed as unavailable with why, a call answers it', async (t) => {
  // This machine has no /dev/gpiochip*: exactly a Pi profile on the wrong machine (or a Pi without its driver).
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home });
  t.equal(runPinclaw(['config', 'set', 'board.profile', 'rpi-3b'], { env }).code, 0);
  const why = /^no GPIO chip on this machine \(no \/dev\/gpiochip\*\), but the board profile Raspberry Pi 3 Model B \(rpi-3b\) has pinctrl-bcm2835: if this is not a Raspberry Pi 3 Model B, set board\.profile to this machine's board or remove it \(`pinclaw board detect` says which board this is\); if it is, its GPIO driver is not loaded/;

  const r = runPinclaw(['tool', 'list', '--json'], { env });
  t.equal(r.code, 0, r.stderr);
  const list = JSON.parse(r.stdout) as { name: string; allowed: boolean; available: boolean; unavailable?: string }[];
  for (const name of ['gpio_read', 'gpio_write', 'gpio_watch']) t.match(list.find((l) => l.name === name), { allowed: true, available: false, unavailable: why }, name);
  t.match(list.find((l) => l.name === 'current_time'), { available: true });
  t.notOk('unavailable' in list.find((l) => l.name === 'current_time')!);
  t.match(runPinclaw(['tool', 'list'], { env }).stdout, /^gpio_write +allowed \(tools\.profile standard\); unavailable here: no GPIO chip on this machine/m);
  // The profile has I2C bus 1 and this machine has no /dev/i2c-*: the I2C tools say how to enable it.
  for (const name of ['i2c_scan', 'i2c_read', 'i2c_write']) {
    t.match(list.find((l) => l.name === name), { available: false, unavailable: /^no I2C bus on this machine \(no \/dev\/i2c-\*\): the Raspberry Pi 3 Model B \(rpi-3b\) profile has I2C bus 1 \(dtparam=i2c_arm=on: \/dev\/i2c-1\); enable it, load the i2c-dev module/ }, name);
  }
  const scan = runPinclaw(['tool', 'run', 'i2c_scan', '{"bus":1}'], { env });
  t.equal(scan.code, 1);
  t.match(scan.stderr, /^pinclaw: i2c_scan cannot run on this machine: no I2C bus on this machine .*dtparam=i2c_arm=on/);

  const run = runPinclaw(['tool', 'run', 'gpio_write', '{"line":"GPIO17","value":1}'], { env });
  t.equal(run.code, 1);
  t.match(run.stderr, /^pinclaw: gpio_write cannot run on this machine: no GPIO chip on this machine .*set board\.profile to this machine's board/);
  t.notMatch(run.stderr, /unknown tool/);
  t.match(audit(env, '--tool', 'gpio_write'), [{ tool: 'gpio_write', outcome: 'denied', rule: 'unavailable', input: '{"line":"GPIO17","value":1}', detail: /^gpio_write cannot run on this machine: no GPIO chip/ }]);

  // A model turn: not offered, named in the prompt with the reason; a call by name gets the reason and the turn goes on.
  const srv = await startAnthropicServer(textReply('unused'));
  t.teardown(() => srv.close());
  const agentEnv = { ...env, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: srv.url };
  srv.enqueue(toolUseReply([{ name: 'gpio_write', input: { line: 'GPIO17', value: 1 } }]), textReply('The relay cannot be switched: this machine has no GPIO chip.'));
  const turn = await runPinclawAsync(['agent', '-m', 'turn on GPIO17', '--session', 'relay'], { env: agentEnv });
  t.equal(turn.code, 0, turn.stderr);
  t.equal(turn.stdout, 'The relay cannot be switched: this machine has no GPIO chip.\n');
  const offered = srv.requests[0]!.body.tools.map((x: { name: string }) => x.name) as string[];
  t.notOk(offered.some((n) => n.startsWith('gpio_')), 'the GPIO tools are not offered');
  t.ok(offered.includes('board_info'));
  t.match(JSON.stringify(srv.requests[0]!.body.system), /GPIO tools \(gpio_read, gpio_write, gpio_watch\) are unavailable on this machine: no GPIO chip/);
  t.match(JSON.stringify(srv.requests[0]!.body.system), /I2C tools \(i2c_scan, i2c_read, i2c_write\) are unavailable on this machine: no I2C bus/);
  t.notOk(offered.some((n) => n.startsWith('i2c_')), 'nor the I2C tools');
  const results = srv.requests[1]!.body.messages.at(-1).content as { content: string; is_error?: boolean }[];
  t.match(results[0], { content: /^gpio_write cannot run on this machine: no GPIO chip on this machine/, is_error: true });
  t.match(audit(env, '--tool', 'gpio_write'), [{ outcome: 'denied', rule: 'unavailable' }, { outcome: 'denied', rule: 'unavailable', session: 'relay' }]);
  t.match(audit(env, '--tool', 'i2c_scan'), [{ outcome: 'denied', rule: 'unavailable' }]);
});
