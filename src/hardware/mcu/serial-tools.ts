// serial_list, serial_write and serial_read: the raw side of hardware.devices, for devices that speak
// their own language (a GPS, a Modbus adapter, an Arduino sketch of someone else's). serial_write is
// a physical action like gpio_write; serial_read never waits past its timeout.
import type { Tool, ToolResult } from '../../tools/types.js';
import { describePorts, listSerialPorts } from '../serial/index.js';
import type { ManagedDevice } from './devices.js';
import { allAway } from './tools.js';
import { defineTool } from '../../tools/define.js';

const MAX_WRITE = 4096;

function err(content: string): ToolResult {
  return { content, isError: true };
}

function shown(b: Buffer): string {
  // Text when it is text, hex when it is not: the model must not get mojibake.
  const printable = b.every((x) => x === 9 || x === 10 || x === 13 || (x >= 32 && x < 127));
  return printable ? JSON.stringify(b.toString('latin1')) : `hex ${b.toString('hex').replace(/(..)(?!$)/g, '$1 ')}`;
}

export function serialTools(devices: () => ManagedDevice[]): Tool[] {
  const find = (name: string) => devices().find((d) => d.name === name);
  const unknown = (name: string) => err(`no device '${name}' (configured: ${devices().map((d) => d.name).join(', ') || 'none'}; hardware.devices)`);
  // The raw devices: listed unavailable, with each one's reason, while all of them are away.
  const rawAway = () => allAway(devices().filter((d) => d.kind === 'raw'));
  const awayError = (tool: string, d: ManagedDevice) => {
    const why = d.away();
    return why === undefined ? undefined : err(`${tool}: ${d.name} is unavailable: ${why}`);
  };

  const list: Tool = defineTool({
    name: 'serial_list',
    readOnly: true,
    description: 'The serial ports of this machine (with USB ids and stable /dev/serial/by-id names) and the configured devices with their state.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    async execute() {
      const ports = describePorts(listSerialPorts());
      const devs = devices().map((d) => `${d.name} (${d.kind}, ${d.port}): ${d.state()}`);
      return { content: `ports:\n${ports || 'none'}\ndevices:\n${devs.join('\n') || 'none configured (hardware.devices)'}` };
    },
  });

  const write: Tool = defineTool({
    name: 'serial_write',
    description: 'Send bytes to a raw device of hardware.devices. encoding: utf8 (default), hex ("01 ff") or base64.',
    inputSchema: {
      type: 'object',
      properties: {
        device: { type: 'string', minLength: 1, maxLength: 64 },
        data: { type: 'string', minLength: 1, maxLength: MAX_WRITE * 3 },
        encoding: { type: 'string', enum: ['utf8', 'hex', 'base64'] },
      },
      required: ['device', 'data'],
      additionalProperties: false,
    },
    sequential: true,
    physical: true,
    unavailable: rawAway,
    async execute(input) {
      const { device, data, encoding = 'utf8' } = input;
      const d = find(device);
      if (!d) return unknown(device);
      if (d.kind !== 'raw') return err(`${device} speaks the MCU protocol: use mcu_call (serial_write is for raw devices)`);
      const away = awayError('serial_write', d);
      if (away) return away;
      const s = d.serial();
      if (!s) return err(`${device} (${d.port}): ${d.state()}`);
      let bytes: Buffer;
      if (encoding === 'hex') {
        const clean = data.replace(/[\s:]/g, '');
        if (!/^([0-9a-fA-F]{2})+$/.test(clean)) return err('serial_write: data is not hex (pairs of 0-9a-f, spaces allowed)');
        bytes = Buffer.from(clean, 'hex');
      } else bytes = Buffer.from(data, encoding);
      if (bytes.length > MAX_WRITE) return err(`serial_write: ${bytes.length} bytes; at most ${MAX_WRITE} at a time`);
      try {
        await s.write(bytes);
      } catch (e) {
        return err(`serial_write ${device}: ${(e as Error).message}`);
      }
      return { content: `${device}: wrote ${bytes.length} bytes`, physical: { device: `${device} (${d.port})`, wrote: bytes.length } };
    },
  });

  const read: Tool = defineTool({
    name: 'serial_read',
    description: 'Read what a raw device sent: returns at once when `until` (a text, e.g. "\\n") has arrived, else after timeoutMs with what came.',
    inputSchema: {
      type: 'object',
      properties: {
        device: { type: 'string', minLength: 1, maxLength: 64 },
        until: { type: 'string', minLength: 1, maxLength: 64 },
        timeoutMs: { type: 'integer', minimum: 1, maximum: 30000 },
      },
      required: ['device', 'timeoutMs'],
      additionalProperties: false,
    },
    sequential: true,
    unavailable: rawAway,
    async execute(input, ctx) {
      const { device, until, timeoutMs } = input;
      const d = find(device);
      if (!d) return unknown(device);
      if (d.kind !== 'raw') return err(`${device} speaks the MCU protocol: use mcu_call (serial_read is for raw devices)`);
      const away = awayError('serial_read', d);
      if (away) return away;
      let got = Buffer.alloc(0);
      const marker = until === undefined ? undefined : Buffer.from(until, 'utf8');
      await new Promise<void>((resolve) => {
        const take = () => {
          got = Buffer.concat([got, d.takeReceived()]);
          if (marker && got.includes(marker)) finish();
        };
        const finish = () => {
          clearTimeout(timer);
          off();
          ctx.signal?.removeEventListener('abort', finish);
          resolve();
        };
        const timer = setTimeout(finish, timeoutMs);
        const off = d.onReceived(take);
        ctx.signal?.addEventListener('abort', finish, { once: true });
        take();
      });
      if (!got.length) return { content: `${device}: nothing within ${timeoutMs} ms` };
      return { content: `${device}: ${got.length} bytes${marker && !got.includes(marker) ? ` (no ${JSON.stringify(until)} within ${timeoutMs} ms)` : ''}: ${shown(got)}` };
    },
  });
  return [list, write, read];
}
