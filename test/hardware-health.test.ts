// Hardware health tells the truth: a trigger that cannot start and a board on a serial port that
// disappears make the gateway's hardware degraded, naming them, in /api/status (what the dashboard
// shows), /metrics and doctor; the board coming back recovers it. A real gateway, a real pty (socat).
import t from 'tap';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { trackSensors, watchHealth, type HardwareProblem } from '../src/hardware/health.js';
import { createSensorReader } from '../src/hardware/sensors/reader.js';
import type { I2cBackend } from '../src/hardware/i2c/types.js';
import { validateConfig } from '../src/config/validate.js';
import { bundle, cleanEnv, runPinclaw, start, tempDir } from './support/proc.js';

t.test('watchHealth: says nothing while healthy, each change once, and the recovery', async (t) => {
  let now: HardwareProblem[] = [];
  const heard: HardwareProblem[][] = [];
  let tick = () => {};
  const real = globalThis.setInterval;
  // The interval is driven by hand: the watcher is asked exactly when the test says.
  globalThis.setInterval = ((fn: () => void) => ((tick = fn), real(() => {}, 1 << 30))) as typeof setInterval;
  const stop = watchHealth(() => now, (p) => heard.push(p));
  globalThis.setInterval = real;
  t.teardown(stop);
  tick();
  t.same(heard, [], 'a healthy start is not news');
  now = [{ component: "trigger 'door'", reason: 'no GPIO chip' }];
  tick();
  tick();
  t.same(heard, [now], 'a failure, once');
  now = [];
  tick();
  t.same(heard.at(-1), [], 'the recovery');
  t.equal(heard.length, 2);
});

t.test('a sensor whose read fails is a problem until a read succeeds again', async (t) => {
  let ack = false;
  // The bus behind the I2cBackend interface: a device that does not answer, then does.
  const bus = {
    read: async (b: number, address: number) => {
      if (!ack) throw new Error(`EREMOTEIO: no ACK from 0x${address.toString(16)} on bus ${b}`);
      return Uint8Array.from([0, 25]);
    },
  } as Partial<I2cBackend> as I2cBackend;
  const sensors = validateConfig({ hardware: { sensors: [{ name: 'temp', bus: 1, address: 0x48, register: 0, length: 2 }] } }).config!.hardware.sensors;
  const failures = new Map<string, string>();
  const reader = trackSensors(createSensorReader({ sensors, i2c: () => bus }), failures);
  await t.rejects(reader.read('temp'));
  t.match([...failures], [['temp', /^sensor temp \(.*\): EREMOTEIO: no ACK from 0x48 on bus 1$/]]);
  await t.rejects(reader.read('nothing'));
  t.same([...failures.keys()], ['temp'], 'a name that is no sensor is not a failing sensor');
  ack = true;
  t.match(await reader.read('temp'), { name: 'temp', raw: 25 });
  t.same([...failures], [], 'recovered');
});

const socat = spawnSync('socat', ['-V'], { encoding: 'utf8' }).status === 0;

t.test('a trigger that cannot start and a serial board that vanishes: degraded with the reason everywhere, recovered when the board is back', { skip: socat ? false : 'socat is not installed' }, async (t) => {
  const dir = tempDir();
  const link = join(dir, 'modem');
  let pair: ChildProcess | undefined;
  const startPty = async () => {
    pair = spawn('socat', [`pty,raw,echo=0,link=${link}`, `pty,raw,echo=0,link=${join(dir, 'other')}`], { stdio: 'ignore' });
    for (let i = 0; i < 200 && !existsSync(link); i++) await new Promise((r) => setTimeout(r, 25));
  };
  const stopPty = async () => {
    const p = pair!;
    const gone = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    await gone;
  };
  await startPty();
  t.teardown(() => pair?.kill());

  const home = tempDir();
  const token = 'health-token-1234';
  // This machine has no GPIO chip: a Pi profile's trigger cannot start, exactly as on a Pi without its driver.
  writeFileSync(join(home, 'config.json'), JSON.stringify({
    board: { profile: 'rpi-3b' },
    hardware: {
      lines: [{ name: 'door', line: 'GPIO17', direction: 'input' }],
      triggers: [{ line: 'door', edge: 'falling', session: 'house', message: 'the door opened' }],
      // and no /dev/i2c-1 either: the sensor trigger's polls fail.
      sensorTriggers: [{ bus: 1, address: 0x48, register: 0, above: 30, session: 'house', message: 'it is hot', intervalMs: 500 }],
      devices: [{ name: 'modem', kind: 'raw', port: link }],
    },
  }));
  const env = cleanEnv({ PINCLAW_HOME: home, PINCLAW_GATEWAY_TOKEN: token });
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env });
  t.teardown(() => gw.child.kill());
  const url = (await gw.waitFor(/gateway listening on (http:\/\/\S+)/))[1]!;
  const auth = { headers: { authorization: `Bearer ${token}` } };
  const hardware = async () => ((await (await fetch(`${url}/api/status`, auth)).json()) as { channels: { channel: string; state: string; detail: string }[] }).channels.find((c) => c.channel === 'hardware');
  /** Polls /api/status until `ok` holds (the gateway looks every 2 s). */
  const until = async (ok: (h: { state: string; detail: string } | undefined) => boolean, what: string) => {
    for (let i = 0; i < 100; i++) {
      const h = await hardware();
      if (ok(h)) return h!;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`hardware never became ${what}: ${JSON.stringify(await hardware())}`);
  };

  // The trigger fails as it starts; the sensor trigger's first poll fails a moment later.
  const first = await until((h) => h?.state === 'degraded' && /sensor trigger/.test(h.detail), 'degraded by both');
  t.match(first.detail, /^trigger 'door': trigger on door: no GPIO chip on this machine \(no \/dev\/gpiochip\*\), but the board profile Raspberry Pi 3 Model B/);
  t.notMatch(first.detail, /modem/, 'the board on the pty works');
  t.match(first.detail, /; sensor trigger i2c-1 0x48 reg 0x00: \S/, 'the failing sensor polls too');
  await gw.waitFor(/channel hardware: degraded \(trigger 'door'/);

  const metrics = await (await fetch(`${url}/metrics`, auth)).text();
  t.match(metrics, /^pinclaw_hardware_degraded\{component="trigger 'door'",reason="trigger on door: no GPIO chip on this machine[^"]*"\} 1$/m);
  t.match(metrics, /^pinclaw_channel_up\{channel="hardware"\} 0$/m);

  const doctor = JSON.parse(runPinclaw(['doctor', '--json'], { env }).stdout) as { checks: { name: string; state: string; detail: string }[] };
  t.match(doctor.checks.find((c) => c.name === 'hardware'), { state: 'warn', detail: /^degraded since \S+: trigger 'door': trigger on door: no GPIO chip/ });

  // The board's port disappears (cable pulled): degraded, naming it; it comes back: only the trigger is left.
  await stopPty();
  const lost = await until((h) => /device 'modem'/.test(h?.detail ?? ''), 'degraded by the modem');
  t.match(lost.detail, new RegExp(`device 'modem': ${link.replace(/[/.]/g, '\\$&')}: (lost|connecting)`));
  t.match(await (await fetch(`${url}/metrics`, auth)).text(), /^pinclaw_hardware_degraded\{component="device 'modem'",reason="[^"]+"\} 1$/m);
  await startPty();
  const back = await until((h) => !/modem/.test(h?.detail ?? ''), 'rid of the modem');
  t.equal(back.state, 'degraded', 'the trigger still cannot start');
  t.notMatch(await (await fetch(`${url}/metrics`, auth)).text(), /component="device 'modem'"/, 'its gauge is gone');

  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0);
});
