// pinclaw's own host stack (hardware.devices → the serial layer → the MCU client → mcu_call) against
// the reference firmware running in QEMU's netduinoplus2 (STM32F405), over socket:// as an emulator
// or ser2net gives it: the two halves written from docs/protocol.md meet here. The firmware's own
// tests (pins for real in simavr, injected garbage) are test/firmware.test.ts.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { cleanEnv, root, runPinclawAsync, tempDir } from './support/proc.js';
import { freePort } from './support/free-port.js';

const elf = join(root, 'dist', 'firmware', 'stm32-netduinoplus2.elf');
const qemu = spawnSync('qemu-system-arm', ['--version']).status === 0;
const build = spawnSync(process.execPath, [join(root, 'scripts', 'build-firmware.mjs')], { encoding: 'utf8', timeout: 240_000 });
const reason = !qemu ? 'qemu-system-arm is not installed' : !existsSync(elf) ? `the firmware was not built: ${build.stdout}${build.stderr}`.slice(0, 300) : null;


t.test('mcu_info and mcu_call from a pinclaw process to the STM32 firmware in QEMU', { skip: reason && !process.env.CI ? reason : false }, async (t) => {
  if (reason) return void t.fail(`unavailable on CI: ${reason}`);
  const port = await freePort();
  // QEMU is the TCP server (USART1 = the first -serial), as ser2net would be; pinclaw dials it.
  const vm = spawn('qemu-system-arm', ['-M', 'netduinoplus2', '-kernel', elf, '-nographic', '-monitor', 'none', '-serial', `tcp:127.0.0.1:${port},server=on,wait=off`], { stdio: 'ignore' });
  t.teardown(() => vm.kill());
  for (let i = 0; i < 200; i++) {
    const up = await new Promise<boolean>((r) => {
      const c = connect(port, '127.0.0.1');
      c.once('connect', () => (c.destroy(), r(true)));
      c.once('error', () => r(false));
    });
    if (up) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ hardware: { devices: [{ name: 'board', port: `socket://127.0.0.1:${port}`, timeoutMs: 1000 }] } }));
  writeFileSync(join(home, 'steps.json'), JSON.stringify([
    { tool: 'mcu_info', input: { device: 'board' } },
    { tool: 'mcu_call', input: { device: 'board', command: 'gpio_write', args: { pin: 'PA5', value: 1 } } },
    { tool: 'mcu_call', input: { device: 'board', command: 'gpio_read', args: { pin: 'PA5' } } },
    { tool: 'mcu_call', input: { device: 'board', command: 'gpio_write', args: { pin: 'PA9', value: 1 } } },
    { tool: 'mcu_call', input: { device: 'board', command: 'ping' } },
  ]));
  const r = await runPinclawAsync(['__tool-script', join(home, 'steps.json')], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(r.code, 0, r.stderr);
  const out = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { content: string; isError: boolean });
  t.match(out[0]!.content, /^board \(socket:\/\/127\.0\.0\.1:\d+\): open; qemu-netduinoplus2, firmware \d+\.\d+\.\d+, protocol 1, ADC 12-bit, profile qemu-netduinoplus2\npins: .*PA5\[/, 'the hello names the board, and its profile is found by that name');
  t.equal(out[1]!.content, 'board PA5 (pin 5): 0 -> 1', 'a write with the level before and after (the firmware keeps a shadow: QEMU has no STM32 GPIO)');
  t.equal(out[2]!.content, 'board PA5 (pin 5): 1');
  t.match(out[3], { isError: true, content: /PA9 \(pin 9\) refused: reserved on qemu-netduinoplus2: USART1/ }, "the profile's reserved UART pin is refused before the firmware sees it");
  t.match(JSON.parse(out[4]!.content) as unknown, { framesBad: 0 }, 'ping: no bad frames on the link');
});
