// mcu_call and mcu_info: any command of the MCU protocol on a configured device, checked against the
// board's profile (reserved pins, capabilities), writes rate-limited per pin and audited as physical
// actions with the pin's value before and after, as GPIO writes are.
import type { Tool, ToolResult } from '../../tools/types.js';
import type { BoardProfile } from '../boards/schema.js';
import { McuError, type McuClient } from './client.js';
import { COMMANDS, type Command, type HelloInfo } from './messages.js';
import { McuPinError, resolvePin } from './pins.js';
import { defineTool } from '../../tools/define.js';

export interface McuDeviceHandle {
  name: string;
  /** raw devices are listed too, so a call on one can say what to use instead */
  kind?: 'mcu' | 'raw';
  /** /dev/ttyACM0 or socket://host:port */
  port: string;
  state(): string;
  /** the client while the device is connected and said hello */
  client(): McuClient | undefined;
  hello(): HelloInfo | undefined;
  profile(): BoardProfile | undefined;
  /** Waits up to ms for the link and the firmware's hello (a CLI call right after the port opened). */
  whenReady?(ms: number): Promise<void>;
  /**
   * Why the device cannot be used now and waiting will not help (its device file is missing, access
   * is denied), with the fix; undefined while it is there or coming back (a call then waits).
   */
  away?(): string | undefined;
}

/**
 * Why a tool of these devices cannot run at all now: every one of them is away. One device there is
 * enough to keep the tool listed; a call on an away one answers its reason (deviceAway).
 */
export function allAway(devices: readonly McuDeviceHandle[]): string | undefined {
  if (!devices.length) return undefined;
  const reasons: string[] = [];
  for (const d of devices) {
    const why = d.away?.();
    if (why === undefined) return undefined;
    reasons.push(why);
  }
  return reasons.join('; ');
}

export interface McuToolDeps {
  devices(): McuDeviceHandle[];
  /** per-pin write limit: a refusal, or undefined to go ahead (hardware.writeRateLimit) */
  writeLimiter?: (key: string) => string | undefined;
}

/** An Arduino resets when its port opens and its bootloader runs ~2 s: a call waits that long at most. */
const READY_WAIT_MS = 4000;

const WRITES: readonly Command[] = ['gpio_mode', 'gpio_write', 'pwm_write'];
const PIN = { type: 'string', minLength: 1, maxLength: 16, description: 'the board\'s pin name (D13, A0, PA5) or its number as text ("13")' } as const;

function err(content: string): ToolResult {
  return { content, isError: true };
}

function find(d: McuToolDeps, name: string): McuDeviceHandle | string {
  const all = d.devices();
  const dev = all.find((x) => x.name === name);
  if (!dev) return `no MCU device '${name}' (configured: ${all.map((x) => x.name).join(', ') || 'none'}; hardware.devices)`;
  if (dev.kind === 'raw') return `${name} is a raw device (hardware.devices kind raw): use serial_write and serial_read`;
  return dev;
}

function num(args: Record<string, unknown>, key: string, min: number, max: number): number {
  const v = args[key];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new McuPinError(`args.${key} must be an integer from ${min} to ${max}`);
  return v;
}

export function mcuTools(d: McuToolDeps): Tool[] {
  const info: Tool = defineTool({
    name: 'mcu_info',
    readOnly: true,
    description: 'What a microcontroller board on a serial port is: its connection state, firmware, board name and pins with their capabilities.',
    inputSchema: { type: 'object', properties: { device: { type: 'string', minLength: 1, maxLength: 64 } }, required: ['device'], additionalProperties: false },
    async execute(input) {
      const dev = find(d, (input).device);
      if (typeof dev === 'string') return err(dev);
      await dev.whenReady?.(READY_WAIT_MS);
      const h = dev.hello();
      if (!h) return err(`${dev.name} (${dev.port}): ${dev.state()}; no hello from the firmware yet`);
      const names = dev.profile();
      const pins = h.pins.map((p) => `${names?.gpio.lines.find((l) => l.offset === p.pin)?.name ?? p.pin}[${p.caps.join(',')}]`).join(' ');
      return { content: `${dev.name} (${dev.port}): ${dev.state()}; ${h.board}, firmware ${h.firmware}, protocol ${h.protocol}, ADC ${h.adcBits}-bit${names ? `, profile ${names.id}` : ''}\npins: ${pins}` };
    },
  });

  const call: Tool = defineTool({
    name: 'mcu_call',
    description: `Run one MCU protocol command on a board (docs/protocol.md): ${COMMANDS.join(', ')}. args by command: gpio_mode {pin, mode: input|output|input_pullup}, gpio_read {pin}, gpio_write {pin, value 0|1}, adc_read {pin}, pwm_write {pin, duty 0-255}, watch {pin, edges: off|rising|falling|both}, adc_watch {pin, low, high, intervalMs}.`,
    inputSchema: {
      type: 'object',
      properties: {
        device: { type: 'string', minLength: 1, maxLength: 64 },
        command: { type: 'string', enum: [...COMMANDS] },
        args: { type: 'object', properties: { pin: PIN }, description: 'the command\'s arguments' },
      },
      required: ['device', 'command'],
      additionalProperties: false,
    },
    sequential: true,
    physical: true,
    unavailable: () => allAway(d.devices().filter((x) => x.kind !== 'raw')),
    async execute(input) {
      const { device, command } = input;
      // The schema names pin; each command's other arguments (mode, edges, duty…) are checked below.
      const args: Record<string, unknown> = input.args ?? {};
      const dev = find(d, device);
      if (typeof dev === 'string') return err(dev);
      // Unavailable rather than "not connected": no wait would help, and the owner needs the fix.
      const away = dev.away?.();
      if (away !== undefined) return err(`mcu_call: ${dev.name} is unavailable: ${away}`);
      await dev.whenReady?.(READY_WAIT_MS);
      const client = dev.client();
      if (!client) return err(`${dev.name} (${dev.port}) is not connected: ${dev.state()}`);
      try {
        if (command === 'hello') return { content: JSON.stringify(await client.hello()) };
        if (command === 'ping') return { content: JSON.stringify(await client.ping()) };
        if (args.pin === undefined) return err(`mcu_call ${command}: args.pin is required`);
        if (typeof args.pin !== 'string' && typeof args.pin !== 'number') return err(`mcu_call ${command}: args.pin must be a pin name or number`);
        const p = resolvePin(dev.name, args.pin, command, dev.profile(), dev.hello());
        const key = `${dev.name}:${p.pin}`;
        if (WRITES.includes(command)) {
          const refused = d.writeLimiter?.(key);
          if (refused) return err(`${command} on ${dev.name} ${p.display} refused: ${refused}`);
        }
        switch (command) {
          case 'gpio_read':
            return { content: `${dev.name} ${p.display}: ${await client.gpioRead(p.pin)}` };
          case 'adc_read':
            return { content: `${dev.name} ${p.display}: ${await client.adcRead(p.pin)} (of ${2 ** (dev.hello()?.adcBits ?? 10) - 1})` };
          case 'gpio_write': {
            const value = num(args, 'value', 0, 1) as 0 | 1;
            // The level before, where the pin can be read (an output reads back its latch).
            const before = await client.gpioRead(p.pin).catch(() => null);
            await client.gpioWrite(p.pin, value);
            const after = await client.gpioRead(p.pin).catch(() => null);
            return { content: `${dev.name} ${p.display}: ${before ?? '?'} -> ${after ?? value}`, physical: { device: `${dev.name} ${p.display}`, before, after } };
          }
          case 'pwm_write': {
            const duty = num(args, 'duty', 0, 255);
            await client.pwmWrite(p.pin, duty);
            return { content: `${dev.name} ${p.display}: PWM duty ${duty}/255`, physical: { device: `${dev.name} ${p.display}`, after: duty } };
          }
          case 'gpio_mode': {
            const mode = args.mode;
            if (mode !== 'input' && mode !== 'output' && mode !== 'input_pullup') return err('mcu_call gpio_mode: args.mode must be input, output or input_pullup');
            await client.gpioMode(p.pin, mode);
            return { content: `${dev.name} ${p.display}: mode ${mode}`, physical: { device: `${dev.name} ${p.display}`, after: mode } };
          }
          case 'watch': {
            const edges = args.edges;
            if (edges !== 'off' && edges !== 'rising' && edges !== 'falling' && edges !== 'both') return err('mcu_call watch: args.edges must be off, rising, falling or both');
            await client.watch(p.pin, edges);
            return { content: `${dev.name} ${p.display}: watching ${edges} edges` };
          }
          case 'adc_watch': {
            const low = num(args, 'low', 0, 65535);
            const high = num(args, 'high', 0, 65535);
            const intervalMs = num(args, 'intervalMs', 0, 65535);
            await client.adcWatch(p.pin, low, high, intervalMs);
            return { content: `${dev.name} ${p.display}: ADC watch ${low}-${high} every ${intervalMs} ms` };
          }
        }
        return err(`mcu_call: unknown command '${String(command)}'`);
      } catch (e) {
        if (e instanceof McuError || e instanceof McuPinError) return err(e.message);
        throw e;
      }
    },
  });
  return [info, call];
}
