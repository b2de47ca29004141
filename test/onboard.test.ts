// `pinclaw onboard`: non-interactive runs of the bundle (a valid config with the keys encrypted,
// idempotent to the byte, only the keys asked for changed, flags checked by name), the questions
// driven with injected answers, the interactive command on a real terminal (a pty through
// util-linux `script`): answered to the end, and stopped half way by end of input or Ctrl-C with the
// config left exactly as it was. And `pinclaw agent` without a provider: exit 78, pointing here.
import t, { type Test } from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../src/config/index.js';
import { loadBoardRegistry } from '../src/hardware/boards/registry.js';
import { OnboardInterrupted, applyOnboard, askAnswers, currentSetup, planOnboard, type AskContext, type Prompter } from '../src/ops/onboard.js';
import { resolvePaths } from '../src/paths.js';
import { waitForOwnerChat } from '../src/channels/telegram/owner-chat.js';
import { bundle, cleanEnv, runPinclaw, runPinclawAsync, tempDir } from './support/proc.js';
import { startTelegramApi } from './support/telegram-api.js';

const TOKEN = '123456789:AAHfx0_example-bot-token-0123456789';

function home(extra: Record<string, string> = {}) {
  const dir = tempDir();
  return { dir, config: join(dir, 'config.json'), env: cleanEnv({ PINCLAW_HOME: dir, ...extra }) };
}

t.test('non-interactive into an empty home: a valid config, the secrets encrypted, doctor at the end', async (t) => {
  const h = home();
  const r = await runPinclawAsync(['onboard', '--non-interactive', '--provider', 'anthropic', '--api-key', 'sk-ant-onboard-secret', '--telegram-token', TOKEN, '--telegram-allow', '42,@alice', '--board', 'rpi-4b', '--service', 'none'], { env: h.env });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /changes to .*config\.json:\n {2}agent\.model: \(unset\) -> anthropic\/claude-sonnet-5-5\n {2}providers\.anthropic\.apiKey: \(unset\) -> \(new, stored encrypted\)\n/);
  t.match(r.stdout, /^wrote .*config\.json \(5 changes\)$/m);
  t.match(r.stdout, /^ok +config: /m, "doctor's report follows");
  t.match(r.stdout, /^doctor: ok, with \d+ warnings? \([^)]*board[^)]*\); see above$/m, 'its warnings are named (no rpi-4b GPIO chip here)');
  const text = readFileSync(h.config, 'utf8');
  t.notMatch(text, /sk-ant-onboard-secret/, 'the API key is not in the file in clear');
  t.notMatch(text, /example-bot-token/, 'nor the bot token');
  const raw = JSON.parse(text) as { providers: { anthropic: { apiKey: string } }; channels: { telegram: { token: string; allowFrom: string[] } }; board: { profile: string } };
  t.match(raw.providers.anthropic.apiKey, /^enc:v1:/);
  t.match(raw.channels.telegram.token, /^enc:v1:/);
  t.same(raw.channels.telegram.allowFrom, ['42', '@alice']);
  t.equal(raw.board.profile, 'rpi-4b');
  const config = loadConfig(resolvePaths({ home: h.dir }), {});
  t.equal(config.providers.anthropic.apiKey, 'sk-ant-onboard-secret', 'it decrypts with the home key');
  t.equal(config.channels.telegram.token, TOKEN);
  t.equal((await runPinclawAsync(['config', 'validate'], { env: h.env })).code, 0);
  t.equal((await runPinclawAsync(['config', 'get', 'providers.anthropic.apiKey'], { env: h.env })).stdout, '********\n');
});

t.test('idempotent: the same answers leave config.json byte-identical; others change only their keys', async (t) => {
  const h = home();
  // Settings of the user's own, which onboarding must keep.
  writeFileSync(h.config, JSON.stringify({ gateway: { port: 8123 }, log: { level: 'debug' } }, null, 2) + '\n');
  const args = ['onboard', '--non-interactive', '--provider', 'anthropic', '--api-key', 'sk-ant-1', '--telegram-token', TOKEN, '--telegram-allow', '42', '--service', 'none'];
  t.equal((await runPinclawAsync(args, { env: h.env })).code, 0);
  const first = readFileSync(h.config);
  const key = readFileSync(join(h.dir, 'secret.key'));
  const again = await runPinclawAsync(args, { env: h.env });
  t.equal(again.code, 0, again.stderr);
  t.match(again.stdout, /already holds these settings; nothing was written/);
  t.notMatch(again.stdout, /changes to/);
  t.ok(readFileSync(h.config).equals(first), 'config.json is byte-identical after the second run');
  t.ok(readFileSync(join(h.dir, 'secret.key')).equals(key), 'the key file too');

  const other = await runPinclawAsync(['onboard', '--non-interactive', '--telegram-allow', '42,7', '--model', 'claude-haiku-5'], { env: h.env });
  t.equal(other.code, 0, other.stderr);
  t.match(other.stdout, /changes to .*:\n {2}agent\.model: anthropic\/claude-sonnet-5-5 -> anthropic\/claude-haiku-5\n {2}channels\.telegram\.allowFrom: \["42"\] -> \["42","7"\]\nwrote/);
  const before = JSON.parse(first.toString()) as Record<string, Record<string, unknown>>;
  const after = JSON.parse(readFileSync(h.config, 'utf8')) as Record<string, Record<string, unknown>>;
  t.same(after.gateway, { port: 8123 }, 'unrelated settings kept');
  t.same(after.log, { level: 'debug' });
  t.same(after.providers, before.providers, 'the stored key is untouched (same ciphertext)');
  t.equal((after.channels as { telegram: { token: string } }).telegram.token, (before.channels as { telegram: { token: string } }).telegram.token);

  // --api-key-env reads the key from the environment (not the command line); a new key replaces the old.
  const viaEnv = await runPinclawAsync(['onboard', '--non-interactive', '--provider', 'anthropic', '--api-key-env', 'MY_KEY'], { env: { ...h.env, MY_KEY: 'sk-ant-from-env' } });
  t.equal(viaEnv.code, 0, viaEnv.stderr);
  t.match(viaEnv.stdout, /providers\.anthropic\.apiKey: \(a stored secret\) -> \(new, stored encrypted\)/);
  t.equal(loadConfig(resolvePaths({ home: h.dir }), {}).providers.anthropic.apiKey, 'sk-ant-from-env');

  // A local OpenAI-compatible server: its URL and model, no key needed.
  const local = await runPinclawAsync(['onboard', '--non-interactive', '--provider', 'openai-compatible', '--base-url', 'http://127.0.0.1:11434/v1', '--model', 'llama3.2'], { env: h.env });
  t.equal(local.code, 0, local.stderr);
  const cfg = loadConfig(resolvePaths({ home: h.dir }), {});
  t.equal(cfg.agent.model, 'openai/llama3.2');
  t.equal(cfg.providers.openai.baseUrl, 'http://127.0.0.1:11434/v1');
  t.equal(cfg.providers.anthropic.apiKey, 'sk-ant-from-env', 'the other provider is left as it was');
});

t.test('flags are checked first, each error naming its flag; nothing is written', async (t) => {
  const h = home();
  const cases: [string[], RegExp][] = [
    [['--provider', 'antropic'], /--provider: unknown provider 'antropic' \(did you mean 'anthropic'\?\); known: anthropic, openai, openai-compatible/],
    [['--board', 'arduino-uno'], /--board: 'arduino-uno' is a mcu board, not one pinclaw runs on: it goes in hardware\.devices/],
    [['--timezone', 'Europe/Berln'], /--timezone: unknown time zone 'Europe\/Berln' \(did you mean 'Europe\/Berlin'\?\)/],
    [['--dashboard-lan', 'maybe'], /--dashboard-lan: expected yes or no, got 'maybe'/],
    [['--owner-chat', '@alice'], /--owner-chat: expected your Telegram chat id \(digits, as telegram:12345 or 12345\), got '@alice'/],
    [['--owner-chat', '42'], /--owner-chat: owner\.notify telegram:… needs the Telegram bot: give --telegram-token too/],
    [['--board', 'rpi4'], /--board: unknown board profile 'rpi4' \(did you mean 'rpi-4b'\?\); or auto/],
    [['--telegram-token', 'not-a-token'], /--telegram-token: not a bot token: expected the form 123456789:AAH…/],
    [['--telegram-allow', '42,bad name'], /--telegram-allow: not a Telegram user id or @username: 'bad name'/],
    [['--service', 'cron'], /--service: expected one of user, system, none, got 'cron'/],
    [['--base-url', 'localhost:11434'], /--base-url: expected an http\(s\) URL/],
    [['--api-key', 'a', '--api-key-env', 'B'], /--api-key and --api-key-env: give one of them/],
    [['--api-key-env', 'UNSET_VAR'], /--api-key-env: the environment variable UNSET_VAR is not set or empty/],
    [['--provider', 'anthropic'], /--api-key: --provider anthropic needs an API key: --api-key KEY, or --api-key-env VAR/],
    [['--provider', 'openai-compatible', '--model', 'm'], /--base-url: needed with --provider openai-compatible/],
    [['--provider', 'openai', '--api-key', 'k'], /--model: needed with --provider openai/],
  ];
  for (const [flags, re] of cases) {
    const r = await runPinclawAsync(['onboard', '--non-interactive', ...flags], { env: h.env });
    t.equal(r.code, 2, `${flags.join(' ')}: exit 2`);
    t.match(r.stderr, re);
    t.match(r.stderr, /usage: pinclaw onboard/);
  }
  t.notOk(existsSync(h.config), 'no config was written');
  t.notOk(existsSync(join(h.dir, 'secret.key')), 'no key was made');

  const piped = runPinclaw(['onboard'], { env: h.env, input: 'anthropic\n' });
  t.equal(piped.code, 2);
  t.match(piped.stderr, /^pinclaw: stdin is not a terminal; use --non-interactive with flags$/m);
  const broken = home();
  writeFileSync(broken.config, '{ "log": ');
  const b = await runPinclawAsync(['onboard', '--non-interactive', '--telegram-allow', '1'], { env: broken.env });
  t.equal(b.code, 78, 'a broken config is reported, not overwritten');
  t.equal(readFileSync(broken.config, 'utf8'), '{ "log": ');
});

/** A prompter with the answers given in advance; it records the questions and what was said. */
function scripted(answers: string[]): Prompter & { asked: string[]; said: string[] } {
  const asked: string[] = [];
  const said: string[] = [];
  return {
    asked,
    said,
    async ask(q) {
      asked.push(q);
      const a = answers.shift();
      if (a === undefined) throw new OnboardInterrupted('end of input');
      return a;
    },
    say: (l) => said.push(l),
  };
}

t.test('the questions with injected answers: defaults, answers asked again, the plan idempotent', async (t) => {
  const dir = tempDir();
  const paths = resolvePaths({ home: dir });
  const ctx = (raw: Record<string, unknown>): AskContext => ({ current: currentSetup(raw), env: {}, registry: () => loadBoardRegistry({}), flags: {}, serviceDefault: 'none', configFile: paths.config });
  const p = scripted(['openai-compatible', 'localhost', '', '', 'llama 3', 'llama3.2', '', 'Europe/Berln', 'Europe/Berlin', 'maybe', '', 'rpi4', 'arduino-uno', 'rpi-4b', 'maybe', '']);
  const answers = await askAnswers(p, ctx({}));
  t.same(answers, { provider: 'openai-compatible', baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2', board: 'rpi-4b', service: 'none', timezone: 'Europe/Berlin', dashboardLan: false });
  t.match(p.asked, [/^Model provider \(anthropic, openai, openai-compatible\) \[anthropic\]: $/, /^Server URL.*: $/, /^Server URL.*\[http:\/\/127\.0\.0\.1:11434\/v1\]: $/, /^API key for openai-compatible, stored encrypted \(Enter: none/, /^Model \(as the server names it\): $/, /^Model/, /^Telegram bot token .*\(Enter: no Telegram\)/, /^Time zone .*\[[^\]]+\]: $/, /^Time zone/, /^Open the dashboard to your LAN.*\(yes, no\) \[no\]: $/, /^Open the dashboard/, /^Board profile .*\[auto\]: $/, /^Board profile/, /^Board profile/, /^Run pinclaw as a systemd service \(user, system, none\) \[none\]: $/, /^Run pinclaw/]);
  t.match(p.said, [/^pinclaw onboard: sets up /, /^It asks, in order: the model provider.*the time zone; the dashboard on your LAN; the board; the service/, /expected an http\(s\) URL/, /a model name has no spaces/, /unknown time zone 'Europe\/Berln' \(did you mean 'Europe\/Berlin'\?\)/, /expected yes or no, got 'maybe'/, /unknown board profile 'rpi4' \(did you mean 'rpi-4b'\?\)/, /'arduino-uno' is a mcu board, not one pinclaw runs on: it goes in hardware\.devices .*this machine's board is one of [^;]*rpi-4b/, /expected one of user, system, none, got 'maybe'/]);

  const plan = planOnboard({}, answers, paths.secretKey, {});
  t.same(plan.changes.map((c) => c.key), ['agent.model', 'providers.openai.baseUrl', 'agent.timezone', 'board.profile']);
  t.equal(applyOnboard(paths, plan), true);
  const raw = JSON.parse(readFileSync(paths.config, 'utf8')) as Record<string, unknown>;
  t.same(planOnboard(raw, answers, paths.secretKey, {}).changes, [], 'the same answers again: nothing to change');
  t.equal(applyOnboard(paths, planOnboard(raw, answers, paths.secretKey, {})), false);

  // The next run offers what the file holds; an Anthropic key typed in is stored encrypted.
  const next = scripted(['anthropic', 'sk-ant-typed', '', '', '', '', '', '']);
  const a2 = await askAnswers(next, ctx(raw));
  t.match(next.asked[0], /\[openai-compatible\]: $/);
  t.match(next.asked.at(-4), /^Time zone.*\[Europe\/Berlin\]: $/);
  t.match(next.asked.at(-2), /\[rpi-4b\]: $/);
  t.same(a2, { provider: 'anthropic', apiKey: 'sk-ant-typed', model: 'claude-sonnet-5-5', board: 'rpi-4b', service: 'none', timezone: 'Europe/Berlin', dashboardLan: false });
  // Answers running out mid-way: the questions stop with OnboardInterrupted, and nothing was planned or written.
  await t.rejects(askAnswers(scripted(['anthropic']), ctx(raw)), /onboarding interrupted \(end of input\); nothing was written/);
  t.same(JSON.parse(readFileSync(paths.config, 'utf8')), raw);
});

/** The interactive command on a pseudo-terminal: util-linux `script` gives it one. */
function onTerminal(t: Test, env: NodeJS.ProcessEnv) {
  // Its own process group, so that a test that fails half way can end script and pinclaw together.
  const child = spawn('script', ['-qec', `${process.execPath} ${bundle} onboard`, '/dev/null'], { env: { ...env, TERM: 'dumb' }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  t.teardown(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  let out = '';
  let seen = 0;
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.resume();
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    exited,
    output: () => out,
    /** Waits for `re` in what was printed since the last match. */
    async expect(re: RegExp, timeoutMs = 30_000): Promise<void> {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const m = re.exec(out.slice(seen));
        if (m) {
          seen += m.index + m[0].length;
          return;
        }
        if (Date.now() > until) throw new Error(`timed out waiting for ${re}; output:\n${out}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    send: (text: string) => child.stdin!.write(text),
    end: () => child.stdin!.end(),
  };
}

const hasScript = spawnSync('script', ['--version']).status === 0;

t.test('interactive, on a terminal: answered to the end; secrets not echoed', { skip: hasScript ? false : 'util-linux script is not installed' }, async (t) => {
  const h = home();
  const term = onTerminal(t, h.env);
  await term.expect(/Model provider \(anthropic, openai, openai-compatible\) \[anthropic\]: $/m);
  term.send('\r');
  await term.expect(/API key for anthropic, stored encrypted: /);
  term.send('sk-ant-typed-secret\r');
  await term.expect(/Model \[claude-sonnet-5-5\]: /);
  term.send('\r');
  await term.expect(/Telegram bot token from @BotFather, stored encrypted \(Enter: no Telegram\): /);
  term.send('12345:short\r');
  await term.expect(/not a bot token/);
  await term.expect(/Telegram bot token/);
  term.send(`${TOKEN}\r`);
  await term.expect(/Telegram users who may talk to the bot.*: /);
  term.send('42, @alice\r');
  await term.expect(/Your Telegram chat, where door alerts.*: /);
  term.send('skip\r');
  await term.expect(/Time zone .*\[[^\]]+\]: /);
  term.send('Europe/Berlin\r');
  await term.expect(/Open the dashboard to your LAN.*\[no\]: /);
  term.send('yes\r');
  await term.expect(/Board profile .*\[auto\]: /);
  term.send('\r');
  await term.expect(/Run pinclaw as a systemd service \(user, system, none\) \[\w+\]: /);
  term.send('none\r');
  await term.expect(/Write these changes\? \[Y\/n\] /);
  term.send('\r');
  t.equal(await term.exited, 0, term.output());
  const out = term.output();
  t.match(out, /providers\.anthropic\.apiKey: \(unset\) -> \(new, stored encrypted\)/);
  t.match(out, /wrote .*config\.json \(7 changes\)/);
  t.match(out, /gateway\.token: \(unset\) -> \(new, stored encrypted\)/);
  t.match(out, /next steps:\r?\n/);
  const login = /dashboard: http:\/\/[^\s]+:7420\/.*\r?\n.*log in with the token ([A-Za-z0-9_-]{32}) \(shown this once/.exec(out);
  t.ok(login, 'the LAN URL and the login token are printed');
  t.match(out, /doctor: (ok, with \d+ warnings?|all checks passed)/);
  t.notMatch(out, /sk-ant-typed-secret/, 'the key was not echoed');
  t.notMatch(out, /example-bot-token/, 'nor the token');
  const config = loadConfig(resolvePaths({ home: h.dir }), {});
  t.equal(config.providers.anthropic.apiKey, 'sk-ant-typed-secret');
  t.same(config.channels.telegram.allowFrom, ['42', '@alice']);
  t.equal(config.gateway.host, '0.0.0.0');
  t.equal(config.gateway.token, login?.[1], 'the token printed is the one stored');
  t.notMatch(readFileSync(h.config, 'utf8'), new RegExp(login?.[1] ?? 'x'), 'stored encrypted');
  t.equal(config.agent.timezone, 'Europe/Berlin');
});

t.test('interactive, stopped half way (end of input, Ctrl-C): the config is exactly as it was', { skip: hasScript ? false : 'util-linux script is not installed' }, async (t) => {
  const h = home();
  t.equal((await runPinclawAsync(['onboard', '--non-interactive', '--provider', 'anthropic', '--api-key', 'sk-ant-before', '--telegram-allow', '9'], { env: h.env })).code, 0);
  const files = () => Object.fromEntries(readdirSync(h.dir).filter((f) => !f.startsWith('pinclaw.db')).map((f) => [f, readFileSync(join(h.dir, f), 'hex')]));
  const before = files();

  const eof = onTerminal(t, h.env);
  await eof.expect(/Model provider .*\[anthropic\]: /);
  eof.send('openai-compatible\r');
  await eof.expect(/Server URL.*: /);
  eof.send('http://127.0.0.1:8080/v1\r');
  await eof.expect(/API key for openai-compatible/);
  eof.end(); // stdin closes: the terminal gets an end of file
  t.equal(await eof.exited, 1);
  t.match(eof.output(), /pinclaw: onboarding interrupted \(end of input\); nothing was written/);
  t.same(files(), before, 'config.json and secret.key unchanged');

  const ctrlC = onTerminal(t, h.env);
  await ctrlC.expect(/Model provider .*\[anthropic\]: /);
  ctrlC.send('openai\r');
  await ctrlC.expect(/API key for openai/);
  ctrlC.send('sk-new\r');
  await ctrlC.expect(/Model.*: /);
  ctrlC.send('\x03');
  t.equal(await ctrlC.exited, 1);
  t.match(ctrlC.output(), /onboarding interrupted \(Ctrl-C\); nothing was written/);
  t.same(files(), before, 'unchanged after Ctrl-C too');

  const no = onTerminal(t, h.env);
  for (const [re, answer] of [[/Model provider/, 'openai-compatible'], [/Server URL/, ''], [/API key/, ''], [/Model/, 'qwen3'], [/Telegram bot token/, ''], [/Time zone/, ''], [/dashboard to your LAN/, ''], [/Board profile/, ''], [/systemd service/, 'none'], [/Write these changes\? \[Y\/n\] /, 'n']] as const) {
    await no.expect(re);
    no.send(`${answer}\r`);
  }
  t.equal(await no.exited, 1, 'declining the write is not a success');
  t.match(no.output(), /nothing was written; .*config\.json is as it was/);
  t.same(files(), before, 'unchanged when the write is declined');
});

t.test('pinclaw agent with no provider configured: exit 78 and the advice, naming onboard', async (t) => {
  const h = home();
  const r = await runPinclawAsync(['agent', '-m', 'hi'], { env: h.env });
  t.equal(r.code, 78);
  t.match(r.stderr, /^pinclaw: No model provider is configured\. Set ANTHROPIC_API_KEY, or run `pinclaw config set providers\.anthropic\.apiKey …`/);
  t.match(r.stderr, /Or run `pinclaw onboard` to set up a provider and its key\./);
  t.equal(r.stdout, '');
});

t.test("the owner's chat: learned from a message sent while onboarding waits, the bot answers there; Enter skips", async (t) => {
  const api = await startTelegramApi({ token: TOKEN });
  t.teardown(() => api.close());
  // A stranger's message from before the wait: it must not become the owner's chat.
  api.userMessage({ from: { id: 666, username: 'stranger' }, text: 'hello?' });
  const dir = tempDir();
  const paths = resolvePaths({ home: dir });
  const said: string[] = [];
  const answers = ['anthropic', 'sk-ant-x', '', TOKEN, '42', '', 'Europe/Berlin', 'no', 'auto', 'none'];
  let waitQuestion = false;
  const p: Prompter = {
    async ask(q, opts) {
      if (q === '') {
        // The line that would skip the wait: none is typed; the question is withdrawn when the message comes.
        waitQuestion = true;
        return new Promise<string>((resolve) => opts?.signal?.addEventListener('abort', () => resolve(''), { once: true }));
      }
      const a = answers.shift();
      if (a === undefined) throw new OnboardInterrupted('end of input');
      return a;
    },
    say(l) {
      said.push(l);
      // The owner writes to the bot once onboarding says so.
      if (/Send any message to @pinclaw_test_bot/.test(l)) setTimeout(() => api.userMessage({ from: { id: 4242, username: 'owner' }, text: 'hi bot' }), 50);
    },
  };
  const ctx: AskContext = {
    current: currentSetup({}), env: {}, registry: () => loadBoardRegistry({}), flags: {}, serviceDefault: 'none', configFile: paths.config,
    waitForOwner: (token, say, signal) => waitForOwnerChat({ apiBaseUrl: api.url, token: token!, say, signal, timeoutMs: 20_000, pollSeconds: 1 }),
  };
  const a = await askAnswers(p, ctx);
  t.ok(waitQuestion, 'Enter could skip while it waited');
  t.same(a.ownerChat, { chatId: '4242', userId: '4242' });
  t.same(a.telegramAllow, ['42', '4242'], "the owner's account joins the allow list");
  t.match(said, [/^pinclaw onboard/, /^It asks/, /^ {2}\(1 earlier update to the bot, from before this wait, is passed over\)$/, /Send any message to @pinclaw_test_bot from your own Telegram account now; waiting up to 20 s/, /got a message from @owner in chat 4242: owner\.notify will be telegram:4242/]);
  t.match(api.sent, [{ chatId: 4242, text: /^pinclaw: this chat \(4242\) will get your notifications/ }], 'the bot answered in the owner\'s chat, and nowhere else');
  const plan = planOnboard({}, a, paths.secretKey, {});
  t.ok(plan.changes.some((c) => c.key === 'owner.notify' && c.to === 'telegram:4242'));
  applyOnboard(paths, plan);
  t.equal(loadConfig(paths, {}).owner.notify, 'telegram:4242');

  // Enter while waiting: skipped, and the question comes again (skip ends it); nothing learned.
  const again: string[] = ['', 'skip'];
  const skipper: Prompter = {
    ask: async (q) => (q === '' ? '' : again.shift() ?? ''),
    say: () => undefined,
  };
  const sentBefore = api.sent.length;
  const ctx2: AskContext = { ...ctx, current: currentSetup({ channels: { telegram: { token: 'enc:v1:x' } } }) };
  const r = await (async () => {
    const ans = ['anthropic', '', '', '', '', ...['Europe/Berlin', 'no', 'auto', 'none']];
    const q: Prompter = {
      async ask(question, opts) {
        if (/^Your Telegram chat/.test(question) || question === '') return skipper.ask(question, opts);
        return ans.shift() ?? '';
      },
      say: () => undefined,
    };
    return askAnswers(q, { ...ctx2, current: { ...ctx2.current, anthropicKey: true } });
  })();
  t.equal(r.ownerChat, undefined, 'skipped: no owner chat');
  t.equal(api.sent.length, sentBefore, 'and nothing was sent');

  // A refused token is said in words, not thrown.
  t.match(await waitForOwnerChat({ apiBaseUrl: api.url, token: '999:wrong-token-wrong-token-wrong-token', say: () => undefined, timeoutMs: 2000 }), { failed: /Telegram refused the bot token \(401 Unauthorized\)/ });
});

t.test('non-interactive: --owner-chat, --timezone and --dashboard-lan; the gateway then listens on the LAN only with its token', async (t) => {
  const h = home();
  const r = await runPinclawAsync(['onboard', '--non-interactive', '--telegram-token', TOKEN, '--owner-chat', 'telegram:4242', '--timezone', 'Europe/Berlin', '--dashboard-lan', 'yes'], { env: h.env });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /owner\.notify: \(unset\) -> telegram:4242/);
  t.match(r.stdout, /gateway\.token: \(unset\) -> \(new, stored encrypted\)/);
  t.match(r.stdout, /gateway\.host: \(unset\) -> 0\.0\.0\.0/);
  const token = /log in with the token ([A-Za-z0-9_-]{32}) \(shown this once/.exec(r.stdout)?.[1];
  t.ok(token, 'the login token is printed once');
  t.match(r.stdout, /notifications \(triggers, cron jobs, the heartbeat\) go to telegram:4242 \(owner\.notify\)/);
  const config = loadConfig(resolvePaths({ home: h.dir }), {});
  t.equal(config.gateway.token, token);
  t.equal(config.agent.timezone, 'Europe/Berlin');
  t.notMatch(readFileSync(h.config, 'utf8'), new RegExp(token ?? 'x'), 'the token is stored encrypted');
  // Again: nothing changes, and no new token is made.
  const again = await runPinclawAsync(['onboard', '--non-interactive', '--telegram-token', TOKEN, '--owner-chat', '4242', '--timezone', 'Europe/Berlin', '--dashboard-lan', 'yes'], { env: h.env });
  t.match(again.stdout, /already holds these settings; nothing was written/);
  t.match(again.stdout, /log in with your gateway\.token/);
  // --json: the URLs, and a token made now, are in the output (once).
  const json = await runPinclawAsync(['--json', 'onboard', '--non-interactive', '--dashboard-lan', 'yes'], { env: home().env });
  t.equal(json.code, 0, json.stderr);
  const out = JSON.parse(json.stdout) as { dashboard: { urls: string[]; token?: string } };
  t.match(out.dashboard, { urls: Array, token: /^[A-Za-z0-9_-]{32}$/ });
  // Back to loopback: the token stays (nothing the owner set is dropped).
  const off = await runPinclawAsync(['onboard', '--non-interactive', '--dashboard-lan', 'no'], { env: h.env });
  t.match(off.stdout, /gateway\.host: 0\.0\.0\.0 -> 127\.0\.0\.1/);
  t.equal(loadConfig(resolvePaths({ home: h.dir }), {}).gateway.token, token);
});

t.test("interactive, on a terminal: Enter waits for the owner's message to the bot, which ends the wait", { skip: hasScript ? false : 'util-linux script is not installed' }, async (t) => {
  const api = await startTelegramApi({ token: TOKEN });
  t.teardown(() => api.close());
  const h = home({ PINCLAW_ONBOARD_WAIT_SECONDS: '30' });
  // A home with the bot already set up, talking to the stand-in.
  t.equal((await runPinclawAsync(['onboard', '--non-interactive', '--telegram-token', TOKEN, '--telegram-allow', '42'], { env: h.env })).code, 0);
  t.equal((await runPinclawAsync(['config', 'set', 'channels.telegram.apiBaseUrl', api.url], { env: h.env })).code, 0);
  const term = onTerminal(t, h.env);
  for (const [re, answer] of [[/Model provider/, 'openai-compatible'], [/Server URL/, ''], [/API key/, ''], [/Model/, 'qwen3'], [/Telegram bot token.*\(Enter: keep the stored token\)/, ''], [/Telegram users/, '']] as const) {
    await term.expect(re);
    term.send(`${answer}\r`);
  }
  await term.expect(/Your Telegram chat.*\(Enter: message the bot now/);
  term.send('\r');
  await term.expect(/Send any message to @pinclaw_test_bot from your own Telegram account now/);
  api.userMessage({ from: { id: 4242, username: 'owner' }, text: 'hello' });
  await term.expect(/got a message from @owner in chat 4242/);
  for (const [re, answer] of [[/Time zone/, 'UTC'], [/dashboard to your LAN/, ''], [/Board profile/, ''], [/systemd service/, 'none'], [/Write these changes\? \[Y\/n\] /, '']] as const) {
    await term.expect(re);
    term.send(`${answer}\r`);
  }
  t.equal(await term.exited, 0, term.output());
  t.match(term.output(), /owner\.notify: \(unset\) -> telegram:4242/);
  t.match(term.output(), /channels\.telegram\.allowFrom: \["42"\] -> \["42","4242"\]/);
  const config = loadConfig(resolvePaths({ home: h.dir }), {});
  t.equal(config.owner.notify, 'telegram:4242');
  t.match(api.sent, [{ chatId: 4242, text: /will get your notifications/ }]);
});
