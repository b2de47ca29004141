// README.md's "Hardware in five minutes", run as written: the commands between its recipe markers
// go through sh with `pinclaw` on PATH (the bundle), against a home that `pinclaw onboard` set up
// with the Telegram stand-in on 127.0.0.1. Then the config they wrote runs the way the gateway runs
// it (the GPIO service, the trigger runner, the Telegram channel, the conductor and the policy), on
// the in-memory GPIO chip: this machine has no Pi header, and the sysfs twin cannot set the pull-up
// the recipe asks for. A door edge reaches the owner's chat with no model call; "switch the relay on"
// from that chat drives GPIO17 without a confirmation, as tools.controlChats says.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../src/config/index.js';
import { createBus } from '../src/conductor/bus.js';
import { createRuntime } from '../src/setup/runtime.js';
import { createTelegramChannel } from '../src/channels/telegram/channel.js';
import { loadBoardRegistry } from '../src/hardware/boards/registry.js';
import { createGpioService } from '../src/hardware/gpio/service.js';
import { gpioTools } from '../src/hardware/gpio/tools.js';
import { startTriggers } from '../src/hardware/triggers/runner.js';
import { resolvePaths } from '../src/paths.js';
import { ownerTarget } from '../src/scheduler/targets.js';
import { openDatabase } from '../src/store/db.js';
import { fakeGpioChip } from './support/fake-gpio-chip.js';
import { bundle, cleanEnv, root, runPinclaw, tempDir } from './support/proc.js';
import { reply, scriptedProvider } from './support/scripted-provider.js';
import { startTelegramApi } from './support/telegram-api.js';

const TOKEN = '123456789:AAHfx0_example-bot-token-0123456789';
const OWNER = 4242;

/** The shell lines of the README's recipe: the sh block between the markers, as written. */
function recipe(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = /<!-- recipe:start -->\n```sh\n([\s\S]*?)```\n<!-- recipe:end -->/.exec(readme);
  if (!block) throw new Error('README.md has no recipe block between <!-- recipe:start --> and <!-- recipe:end -->');
  return block[1]!;
}

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

t.test("the README's hardware recipe, as written: the door tells the owner on Telegram, the owner's chat switches the relay", async (t) => {
  const api = await startTelegramApi({ token: TOKEN });
  t.teardown(() => api.close());
  // The owner wrote to the bot while onboarding waited (Telegram lets a bot write only to such chats).
  api.addChat({ id: OWNER, type: 'private', first_name: 'Owner' });
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home });
  // What onboarding leaves: the bot, the owner's chat (learned, here given), a Pi's board profile.
  const onboard = runPinclaw(['onboard', '--non-interactive', '--telegram-token', TOKEN, '--telegram-allow', String(OWNER), '--owner-chat', String(OWNER), '--board', 'rpi-3b', '--timezone', 'UTC'], { env });
  t.equal(onboard.code, 0, onboard.stderr);
  t.equal(runPinclaw(['config', 'set', 'channels.telegram.apiBaseUrl', api.url], { env }).code, 0);

  const bin = join(home, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'pinclaw'), `#!/bin/sh\nexec "${process.execPath}" "${bundle}" "$@"\n`);
  chmodSync(join(bin, 'pinclaw'), 0o755);
  const script = join(home, 'recipe.sh');
  writeFileSync(script, recipe());
  const ran = runPinclawShell(script, { ...env, PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` });
  t.equal(ran.code, 0, `the recipe runs as written:\n${ran.stdout}\n${ran.stderr}`);
  t.match(ran.stdout, /^set hardware\.lines\nset hardware\.triggers\nset tools\.controlChats\nok: /);

  const paths = resolvePaths({ home });
  const config = loadConfig(paths, {});
  t.same(config.tools.controlChats, ['cli:local', `telegram:${OWNER}`], "the owner's chat became a control chat");
  t.same(ownerTarget(config), { channel: 'telegram', chatId: String(OWNER) });

  // The gateway's parts over that config.
  const chip = fakeGpioChip();
  const board = loadBoardRegistry().get('rpi-3b')!.profile;
  const gpio = createGpioService({ backend: chip.backend, board, reserved: new Map(), hardware: config.hardware });
  t.teardown(() => gpio.close());
  t.same(gpio.claimOutputs(), [], 'the relay is claimed as an output');
  const db = openDatabase(paths.database);
  const bus = createBus();
  const telegram = createTelegramChannel({ config, db, bus, workspace: paths.workspace });
  const provider = scriptedProvider([reply([{ type: 'tool_use', id: 'w1', name: 'gpio_write', input: { line: 'relay', value: 1 } }]), reply('The relay is on.')]);
  const rt = createRuntime({ db, config, paths, env: {}, channels: [telegram], bus, provider, extraTools: gpioTools({ gpio, confirm: config.hardware.confirm, boardInfo: () => board.name }) });
  rt.conductor.start();
  await telegram.start(rt.conductor);
  const runner = startTriggers({
    triggers: config.hardware.triggers,
    sensorTriggers: config.hardware.sensorTriggers,
    submit: (m) => rt.conductor.submit(m),
    knownChannels: ['telegram'],
    owner: ownerTarget(config),
    notify: (m) => rt.conductor.send(m),
    timezone: config.agent.timezone,
    watchEdges: (line, onEdge, onError) =>
      gpio.watchEdges(line, 'both', (err, events) => {
        if (err) return onError(err);
        for (const e of events) onEdge({ edge: e.edge, timestampNs: e.timestampNs, value: e.edge === 'rising' ? 1 : 0, seqno: e.lineSeqno });
      }),
    readSensor: async () => 0,
  });
  t.teardown(async () => {
    runner.stop();
    await telegram.stop();
    await rt.conductor.stop(1000);
    db.close();
  });

  // The door opens (the contact opens, the pull-up lifts GPIO27), and closes again half a second later.
  const now = process.hrtime.bigint();
  chip.drive(27, 1, now);
  chip.drive(27, 0, now + 500_000_000n);
  await until('both door texts reach the owner', () => api.sent.filter((m) => /^Door /.test(m.text)).length === 2);
  t.match(api.sent.filter((m) => /^Door /.test(m.text)), [
    { chatId: OWNER, text: /^Door opened \(\d\d:\d\d\)$/ },
    { chatId: OWNER, text: /^Door closed \(\d\d:\d\d\)$/ },
  ]);
  t.equal(provider.requests.length, 0, 'no model call for the door');

  // The owner asks for the relay from their chat: gpio_write runs at once, no confirmation asked.
  t.equal(chip.lines[17]!.value, 0, 'the relay is off before');
  api.userMessage({ from: { id: OWNER, username: 'owner' }, text: 'switch the relay on' });
  await until('the reply', () => api.sent.some((m) => m.text === 'The relay is on.'));
  t.equal(chip.lines[17]!.value, 1, 'GPIO17 is high: the relay is on');
  t.equal(provider.requests.length, 2, 'one turn: the tool call and the answer');
  t.notOk(api.sent.some((m) => /confirm|allow|yes/i.test(m.text)), 'nobody was asked to confirm');
});

/** sh -e on the script: the recipe's lines must all succeed. */
function runPinclawShell(script: string, env: NodeJS.ProcessEnv): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync('sh', ['-e', script], { env, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
