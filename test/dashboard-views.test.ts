// The dashboard's admin views (Home, Cron, Pairings, Logs, Config) in Chromium, at a desktop width
// (1280) and a phone's (390). The server is the gateway's own parts wired as gateway-command wires
// them (the runtime's tool registry with its policy and audit, the http confirmations, the real
// SQLite store, the config file), in this process, because the Home view needs a GPIO chip and this
// machine has none: the chip is test/support/fake-gpio.ts behind the GpioBackend interface. A
// screenshot of every view at both widths is written to .cache/screenshots/dashboard-views/.
import t, { type Test } from 'tap';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiRoutes, httpChannel } from '../src/channels/http/api.js';
import { createConfirmations } from '../src/channels/http/confirmations.js';
import { startHttpServer } from '../src/channels/http/server.js';
import { checkConfigSet } from '../src/setup/config-checks.js';
import { recordWrites } from '../src/setup/hardware.js';
import { loadConfig } from '../src/config/index.js';
import { createBus } from '../src/conductor/bus.js';
import { createRuntime } from '../src/setup/runtime.js';
import { loadBoardRegistry } from '../src/hardware/boards/registry.js';
import { createGpioService } from '../src/hardware/gpio/service.js';
import { gpioTools } from '../src/hardware/gpio/tools.js';
import { log, recentLog } from '../src/log.js';
import { resolvePaths } from '../src/paths.js';
import { queryAudit } from '../src/store/audit.js';
import { openDatabase } from '../src/store/db.js';
import { listPairings, requestPairing, approvePairing } from '../src/store/pairing.js';
import { recordReading } from '../src/store/readings.js';
import { trackSensors } from '../src/hardware/health.js';
import type { I2cBackend } from '../src/hardware/i2c/types.js';
import { createSensorReader } from '../src/hardware/sensors/reader.js';
import { validateConfig } from '../src/config/validate.js';
import { fakeGpioChip } from './support/fake-gpio-chip.js';

const loadedSensors = (sensors: unknown[]) => validateConfig({ hardware: { sensors } }).config!.hardware.sensors;
import { bundle, cleanEnv, root, start, tempDir } from './support/proc.js';

const TOKEN = 'tok-views-5678';
const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(root, '.cache', 'screenshots', 'dashboard-views');

async function server(t: Test) {
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test' });
  writeFileSync(join(home, 'config.json'), JSON.stringify({
    gateway: { token: TOKEN },
    memory: { embedder: 'none' },
    agent: { model: 'anthropic/claude-sonnet-5-5' },
    hardware: {
      lines: [{ name: 'porch_light', line: 'GPIO17', direction: 'output' }, { name: 'door', line: 'GPIO27', direction: 'input' }],
      sensors: [
        { name: 'shed', bus: 1, address: 72, register: 0, length: 2, signed: true, scale: 0.00390625, unit: '°C' },
        { name: 'attic', bus: 1, address: 73, register: 0, length: 2, unit: '°C' },
      ],
    },
  }, null, 2));
  const paths = resolvePaths({}, env);
  const config = loadConfig(paths, env);
  const db = openDatabase(paths.database);
  const fake = fakeGpioChip();
  const gpio = createGpioService({ backend: fake.backend, board: loadBoardRegistry().get('rpi-3b')!.profile, reserved: new Map(), hardware: config.hardware });
  gpio.claimOutputs();
  // As src/setup/hardware.ts does for the gateway: every value written to a line goes to the ring.
  recordWrites(gpio, { onReading: (kind, name, value) => recordReading(db, kind, name, value) });
  const bus = createBus();
  const confirmations = createConfirmations(bus, 60_000);
  const channels = [httpChannel(confirmations)];
  const { conductor, tools } = createRuntime({ db, config, paths, env, channels, bus, extraTools: gpioTools({ gpio, confirm: config.hardware.confirm, boardInfo: () => 'a Raspberry Pi 3 Model B (fake chip)' }) });
  const srv = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    token: TOKEN,
    api: apiRoutes(conductor, bus, undefined, confirmations),
    web: {
      db,
      dashboard: {
        startedAt: Date.now(),
        // As src/cli/gateway-command.ts fills it in.
        admin: {
          config,
          paths,
          env,
          callTool: (call, ctx) => tools.call(call, ctx),
          confirm: (chatId, request) => confirmations.ask(chatId, request),
          gpio,
          channels: [...channels.map((c) => c.name), 'cron'],
          submit: (msg) => conductor.submit(msg),
          recentLog: () => recentLog,
          checkConfigSet: (key, valueText) => checkConfigSet(key, valueText, { paths, env }),
        },
      },
    },
  });
  t.teardown(async () => {
    await srv.close(100);
    gpio.close();
    db.close();
  });
  return { url: srv.url, db, gpio, fake, paths, home };
}

const bearer = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

t.test('the readings ring stays bounded per source, newest kept', async (t) => {
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  for (let i = 0; i < 50; i++) recordReading(db, 'sensor', 'shed', i, 1_000 + i, 10);
  recordReading(db, 'line', 'shed', 7, 5_000, 10);
  const rows = db.prepare(`select at, value from readings where kind = 'sensor' and name = 'shed' order by at`).all() as { at: number; value: number }[];
  t.equal(rows.length, 10, 'ten rows after fifty writes with a cap of ten');
  t.same(rows.map((r) => r.value), [40, 41, 42, 43, 44, 45, 46, 47, 48, 49], 'the newest ten');
  t.equal((db.prepare(`select count(*) as n from readings where kind = 'line'`).get() as { n: number }).n, 1, 'a line of the same name is its own source');
  recordReading(db, 'sensor', 'shed', Number.NaN, 9_000, 10);
  t.equal((db.prepare(`select count(*) as n from readings where kind = 'sensor'`).get() as { n: number }).n, 10, 'a reading that is not a number is not kept');
});

t.test("the sensors' reader puts good readings in the ring, failed reads nowhere", async (t) => {
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  let ack = false;
  // The bus behind the I2cBackend interface: a device that does not answer, then does.
  const bus = {
    read: async (b: number, address: number) => {
      if (!ack) throw new Error(`EREMOTEIO: no ACK from 0x${address.toString(16)} on bus ${b}`);
      return Uint8Array.from([0, 50]);
    },
  } as Partial<I2cBackend> as I2cBackend;
  const sensors = loadedSensors([{ name: 'shed', bus: 1, address: 0x48, register: 0, length: 2, scale: 0.5 }]);
  // As src/setup/hardware.ts wires it for the gateway.
  const reader = trackSensors(createSensorReader({ sensors, i2c: () => bus }), new Map(), (r) => recordReading(db, 'sensor', r.name, r.value));
  await t.rejects(reader.read('shed'));
  t.equal((db.prepare('select count(*) as n from readings').get() as { n: number }).n, 0, 'a failed read leaves no reading');
  ack = true;
  await reader.read('shed');
  t.match(db.prepare('select kind, name, value from readings').all(), [{ kind: 'sensor', name: 'shed', value: 25 }], 'the scaled value');
});

t.test('bad input to the admin routes: a clear message, nothing written', async (t) => {
  const s = await server(t);
  const post = (path: string, body: unknown) => fetch(`${s.url}${path}`, { method: 'POST', headers: bearer, body: JSON.stringify(body) });
  const get = (path: string) => fetch(`${s.url}${path}`, { headers: bearer });

  let res = await post('/api/home/lines/garage', { value: 1 });
  t.equal(res.status, 404);
  t.match((await res.json()).error, /^no line 'garage' in hardware\.lines \(lines: porch_light, door\); nothing was written$/);
  res = await post('/api/home/lines/door', { value: 1 });
  t.equal(res.status, 400);
  t.match((await res.json()).error, /^door is an input line \(GPIO27\): it can be read, not switched; nothing was written/);
  res = await post('/api/home/lines/porch_light', { value: 'on' });
  t.equal(res.status, 400);
  t.match((await res.json()).error, /^value: expected 0 or 1, got "on"; nothing was written$/);
  t.equal(s.gpio.read('porch_light').value, 0, 'the line was not written');
  t.equal(queryAudit(s.db, {}).filter((r) => r.tool === 'gpio_write').length, 0, 'no tool call was even tried');

  res = await get('/api/readings?sensor=cellar');
  t.equal(res.status, 404);
  t.match((await res.json()).error, "no sensor 'cellar' in hardware.sensors (sensors: shed, attic)");
  res = await get('/api/readings?sensor=attic');
  t.equal(res.status, 200);
  t.same((await res.json()).readings, [], 'a sensor with no readings: an empty list, the page says so');

  const configBefore = readFileSync(s.paths.config, 'utf8');
  res = await post('/api/config', { key: 'agent.fallbacks', value: 'gpt' });
  t.equal(res.status, 400);
  t.match((await res.json()).error, /agent\.fallbacks.*an array as JSON.*"gpt".*was not changed/s);
  res = await post('/api/config', { key: 'heartbeat.every', value: 'sometimes' });
  t.equal(res.status, 400);
  t.match((await res.json()).error, /heartbeat\.every/);
  res = await post('/api/config', { key: 'gateway.host', value: '0.0.0.0' });
  t.equal(res.status, 400);
  t.match((await res.json()).error, /^key: expected one of agent\.model, .*other keys are set with pinclaw config set KEY VALUE$/);
  t.equal(readFileSync(s.paths.config, 'utf8'), configBefore, 'the config file is byte-identical');

  res = await post('/api/cron', { cron: '61 * * * *', message: 'hello' });
  t.equal(res.status, 400);
  t.match((await res.json()).error, /^cron: /);
  res = await post('/api/cron/99/pause', {});
  t.equal(res.status, 400);
  t.match((await res.json()).error, /no job #99/);
  t.same((await (await get('/api/cron')).json()).jobs, [], 'no job was added');

  res = await post('/api/pairings/approve', { code: 'ZZZZZZZZ' });
  t.equal(res.status, 400);
  t.match((await res.json()).error, 'no pairing request has the code ZZZZZZZZ');
  res = await post('/api/pairings/revoke', { channel: 'telegram', id: '1' });
  t.equal(res.status, 404);
});

t.test('the gateway (the bundle) serves the admin views from its lazy chunk, with its own parts', async (t) => {
  t.ok(statSync(join(root, 'dist', 'lazy', 'dashboard-admin.cjs')).isFile(), 'the build wrote the chunk');
  const home = tempDir();
  mkdirSync(join(home, 'workspace'), { recursive: true });
  writeFileSync(join(home, 'config.json'), JSON.stringify({ gateway: { token: TOKEN }, memory: { embedder: 'none' } }));
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' }) });
  const url = (await gw.waitFor(/listening on (http:\/\/\S+)/))[1]!;
  t.teardown(async () => {
    gw.child.kill('SIGTERM');
    await gw.exited;
  });
  const get = async (path: string) => {
    const res = await fetch(`${url}${path}`, { headers: bearer });
    t.equal(res.status, 200, `${path}: 200`);
    return (await res.json()) as Record<string, unknown>;
  };
  const h = await get('/api/home');
  t.same([h.lines, h.sensors], [[], []], 'no named lines or sensors on this machine');
  t.match(h.board, { throttling: String, disk: { path: home, freeBytes: Number } }, 'the board facts of this machine');
  const logs = (await get('/api/logs')).lines as { text: string }[];
  t.ok(logs.some((l) => /^gateway listening on http:/.test(l.text)), "the gateway's own log lines");
  t.match(((await get('/api/config')).keys as { key: string }[]).map((k) => k.key), ['agent.model', 'agent.fallbacks'], 'the form keys');
  t.same((await get('/api/cron')).jobs, [], 'the scheduler chunk answers too');
  const before = readFileSync(join(home, 'config.json'), 'utf8');
  const res = await fetch(`${url}/api/config`, { method: 'POST', headers: bearer, body: JSON.stringify({ key: 'heartbeat.every', value: 'sometimes' }) });
  t.equal(res.status, 400, 'a heartbeat that is not a duration is refused as config set refuses it');
  t.match((await res.json()).error, /heartbeat\.every/);
  t.equal(readFileSync(join(home, 'config.json'), 'utf8'), before, 'nothing written');
});

const noBrowser = existsSync(CHROMIUM) || process.env.CI ? false : `${CHROMIUM} is missing: the browser test needs Debian's chromium`;

for (const width of [1280, 390]) {
  t.test(`in Chromium at ${width} px: Home, Cron, Pairings, Logs, Config`, { skip: noBrowser }, async (t) => {
    const { chromium } = await import('playwright-core');
    const s = await server(t);
    // 24 hours of the shed's temperature, as the gateway's sampler would have left them.
    const now = Date.now();
    for (let i = 0; i < 48; i++) recordReading(s.db, 'sensor', 'shed', 12 + 4 * Math.sin(i / 6), now - (47 - i) * 30 * 60_000);
    requestPairing(s.db, 'telegram', '4242', 'alice');
    const bob = requestPairing(s.db, 'telegram', '5151', 'bob');
    approvePairing(s.db, bob.code);

    mkdirSync(SHOTS, { recursive: true });
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    t.teardown(() => browser.close());
    const phone = width < 600;
    const context = await browser.newContext(phone ? { viewport: { width, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : { viewport: { width, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    // Chromium logs every refused fetch; the refusals provoked here are expected, and so is the 401
    // of the page asking whether it is logged in before the login.
    const expected = /^Failed to load resource: the server responded with a status of (400|404)|^Failed to load resource: the server responded with a status of 401 \(Unauthorized\)$/;
    page.on('console', (m) => void ((m.type() === 'error' || m.type() === 'warning') && !expected.test(m.text()) ? problems.push(`console ${m.type()}: ${m.text()}`) : undefined));
    page.on('pageerror', (e) => void problems.push(`page error: ${e.message}`));
    const shot = async (view: string) => {
      const file = join(SHOTS, `${view}-${width}.png`);
      await page.screenshot({ path: file, fullPage: true });
      t.ok(statSync(file).size > 5000, `${view}: screenshot written (${file})`);
      const scroll = await page.evaluate(() => document.documentElement.scrollWidth);
      t.ok(scroll <= width, `${view}: nothing wider than the screen (${scroll} px)`);
    };

    await page.goto(s.url);
    await page.fill('#token', TOKEN);
    await page.click('#login-form button[type=submit]');
    await page.locator('#app').waitFor();

    // ---- Home: a switch asks for the owner's yes, switches, and leaves a physical audit row.
    await page.click('.tabs button[data-tab=home]');
    const light = page.locator('#home-lines li', { hasText: 'porch_light' });
    await light.locator('.state', { hasText: 'off' }).waitFor();
    t.match(await page.locator('#home-lines li', { hasText: 'door' }).textContent(), /read only/, 'an input line has no switch');
    t.equal(await page.locator('#home-lines li', { hasText: 'door' }).locator('button').count(), 0);
    const trace = page.locator('#home-sensors li', { hasText: 'shed' }).locator('svg.plot polyline.trace');
    await trace.waitFor();
    t.equal((await trace.getAttribute('points'))!.trim().split(/\s+/).length, 48, 'the plot has a point per reading');
    await page.locator('#home-sensors li', { hasText: 'attic' }).locator('p', { hasText: 'no readings yet' }).waitFor();
    t.match(await page.locator('#home-board').textContent(), /Temperature.*Throttling.*Disk.*GB free of/s, 'the board facts');

    await light.locator('button', { hasText: 'Turn on' }).click();
    const question = page.locator('#home-confirm .confirm', { hasText: 'gpio_write wants your yes' });
    await question.waitFor();
    t.match(await question.textContent(), /porch_light/, 'the question names the line');
    await shot('home-confirm');
    t.equal(s.gpio.read('porch_light').value, 0, 'nothing is written before the yes');
    await question.locator('button', { hasText: 'Allow' }).click();
    await page.locator('#home-note', { hasText: /porch_light: .*0 -> 1/ }).waitFor();
    await light.locator('.state', { hasText: 'on' }).waitFor();
    t.equal(s.gpio.read('porch_light').value, 1, 'the line is on');
    const audit = queryAudit(s.db, {}).filter((r) => r.tool === 'gpio_write');
    t.equal(audit.length, 1, 'one audit row for the switch');
    t.match(audit[0], { outcome: 'ok', channel: 'http', session_key: 'dashboard-home', rule: /confirmed/ }, 'confirmed by the owner, in the Home view\'s own session');
    t.match(JSON.parse(audit[0]!.physical!), { before: 0, after: 1 }, 'the physical record: before and after');
    await light.locator('svg.plot polyline.trace').waitFor({ state: 'attached' });
    t.same(s.db.prepare(`select value from readings where kind = 'line' and name = 'porch_light'`).all(), [{ value: 1 }], "the write is in the line's ring, and plotted");
    await shot('home');

    // The owner says no: nothing changes, and the page says why.
    await light.locator('button', { hasText: 'Turn off' }).click();
    await question.locator('button', { hasText: 'Deny' }).click();
    await page.locator('#home-note.error', { hasText: 'porch_light not switched: gpio_write refused: the owner said no' }).waitFor();
    t.equal(s.gpio.read('porch_light').value, 1, 'still on after a no');
    // A switch of an input line (a stale page, a hand-made request): refused in the page's note.
    // The page's own module (a URL the browser resolves, not a file of this repository).
    await page.evaluate(async (url) => ((await import(url)) as { switchLine(name: string, value: number): Promise<void> }).switchLine('door', 1), '/assets/home.js');
    await page.locator('#home-note.error', { hasText: 'door is an input line' }).waitFor();
    await page.evaluate(async (url) => ((await import(url)) as { switchLine(name: string, value: number): Promise<void> }).switchLine('garage', 1), '/assets/home.js');
    await page.locator('#home-note.error', { hasText: "no line 'garage' in hardware.lines (lines: porch_light, door); nothing was written" }).waitFor();
    await shot('home-refused');
    t.equal(queryAudit(s.db, {}).filter((r) => r.tool === 'gpio_write').length, 2, 'the refused switches never reached the registry: only the allowed and the denied call are audited');

    // The audit pane shows the physical row highlighted.
    await page.click('.tabs button[data-tab=audit]');
    await page.locator('#audit-table tbody tr.physical', { hasText: 'gpio_write' }).first().waitFor();

    // ---- Cron: add, a bad expression, pause/resume, run now, history.
    await page.click('.tabs button[data-tab=cron]');
    await page.locator('#cron-list li', { hasText: 'No jobs yet.' }).waitFor();
    await page.fill('#cron-expr', '0 7 * * *');
    await page.fill('#cron-message', 'Water the tomatoes?');
    await page.click('#cron-form button[type=submit]');
    await page.locator('#cron-note', { hasText: /^Added job #1/ }).waitFor();
    await page.fill('#cron-expr', '0 25 * * *');
    await page.fill('#cron-message', 'never');
    await page.click('#cron-form button[type=submit]');
    await page.locator('#cron-note.error', { hasText: /^cron: / }).waitFor();
    t.equal(await page.locator('#cron-list li.job').count(), 1, 'the bad expression added nothing');
    await shot('cron-refused');
    const job = page.locator('#cron-list li.job', { hasText: '#1' });
    await job.locator('button', { hasText: 'Pause' }).click();
    await job.locator('.badge', { hasText: 'paused' }).waitFor();
    await job.locator('button', { hasText: 'Resume' }).click();
    await job.locator('.badge', { hasText: 'active' }).waitFor();
    await job.locator('button', { hasText: 'Run now' }).click();
    await page.locator('#cron-note', { hasText: 'Job #1 runs now' }).waitFor();
    await page.locator('#cron-list li.job', { hasText: '#1' }).locator('button', { hasText: 'History' }).click();
    await page.locator('#cron-list .runs li', { hasText: 'manual' }).waitFor();
    await shot('cron');

    // ---- Pairings: approve the waiting one, revoke a paired one.
    await page.click('.tabs button[data-tab=pairings]');
    const alice = page.locator('#pairings-pending li', { hasText: 'alice' });
    await alice.waitFor();
    await page.locator('#pairings-paired li', { hasText: 'bob' }).waitFor();
    await shot('pairings');
    await alice.locator('button', { hasText: 'Approve' }).click();
    await page.locator('#pairings-note', { hasText: 'approved telegram alice' }).waitFor();
    await page.locator('#pairings-paired li', { hasText: 'alice' }).waitFor();
    await page.locator('#pairings-paired li', { hasText: 'bob' }).locator('button', { hasText: 'Revoke' }).click();
    await page.locator('#pairings-note', { hasText: 'revoked telegram bob' }).waitFor();
    t.same(listPairings(s.db).map((p) => [p.label, p.state]), [['alice', 'approved']], 'alice paired, bob gone');

    // ---- Logs: live lines, secrets scrubbed as the logger scrubs them.
    await page.click('.tabs button[data-tab=logs]');
    log.warn(`views-test: a line that names the token ${TOKEN}`);
    const line = page.locator('#logs-list li.warn', { hasText: 'views-test: a line that names the token' });
    await line.waitFor();
    t.notMatch(await line.textContent(), TOKEN, 'the token is scrubbed');
    log.info('views-test: a later line');
    await page.locator('#logs-list li', { hasText: 'views-test: a later line' }).waitFor();
    await shot('logs');

    // ---- Config: a wrong type refused with the reason, a good value saved as config set saves it.
    await page.click('.tabs button[data-tab=config]');
    const fallbacks = page.locator('#config-form form', { hasText: 'agent.fallbacks' });
    await fallbacks.waitFor();
    const before = readFileSync(s.paths.config, 'utf8');
    await fallbacks.locator('input').fill('gpt');
    await fallbacks.locator('button', { hasText: 'Save' }).click();
    await fallbacks.locator('p.error', { hasText: /an array as JSON/ }).waitFor();
    t.equal(readFileSync(s.paths.config, 'utf8'), before, 'nothing written');
    const zone = page.locator('#config-form form', { hasText: 'agent.timezone' });
    await zone.locator('input').fill('Europe/Berlin');
    await zone.locator('button', { hasText: 'Save' }).click();
    await zone.locator('p[role=status]', { hasText: 'saved' }).waitFor();
    t.equal(JSON.parse(readFileSync(s.paths.config, 'utf8')).agent.timezone, 'Europe/Berlin', 'written to the file');
    const token = page.locator('#config-form form', { hasText: 'channels.telegram.token' });
    t.equal(await token.locator('input').inputValue(), '', 'a secret is never sent to the page');
    await token.locator('input').fill('123456:ABC-telegram');
    await token.locator('button', { hasText: 'Save' }).click();
    await token.locator('p[role=status]', { hasText: 'stored encrypted' }).waitFor();
    t.notMatch(readFileSync(s.paths.config, 'utf8'), '123456:ABC-telegram', 'the secret is encrypted in the file');
    await shot('config');
    t.ok(await fallbacks.locator('p.error', { hasText: /an array as JSON/ }).isVisible(), 'the refusal stays in the page (a re-render for the screenshot keeps the form)');

    t.same(problems, [], 'no console errors, CSP violations or page errors');
  });
}
