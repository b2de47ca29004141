// The boards and devices of hardware.devices, kept connected: each is a managed serial device
// (src/hardware/serial: reconnects when the cable comes back); an `mcu` device gets a protocol client
// that says hello whenever the link opens (after the board's reset time), so the tools always know
// which firmware and pins they talk to, and its events are handed on. A `raw` device is only bytes,
// for serial_write and serial_read. One device failing never stops another.
import type { PinclawConfig } from '../../config/schema.js';
import { errorMessage } from '../../errors.js';
import { log as defaultLog, type Logger } from '../../log.js';
import type { BoardRegistry } from '../boards/registry.js';
import type { BoardProfile } from '../boards/schema.js';
import { existsSync } from 'node:fs';
import { openSerialDevice, SerialError, type SerialDevice } from '../serial/index.js';
import { createMcuClient, type McuClient } from './client.js';
import type { HelloInfo, McuEvent } from './messages.js';
import type { McuDeviceHandle } from './tools.js';

export type DeviceConfig = PinclawConfig['hardware']['devices'][number];

export interface ManagedDevice extends McuDeviceHandle {
  kind: 'mcu' | 'raw';
  away(): string | undefined;
  whenReady(ms: number): Promise<void>;
  serial(): SerialDevice | undefined;
  /** bytes received since the last serial_read (raw devices), capped */
  takeReceived(): Buffer;
  onReceived(listener: () => void): () => void;
}

export interface McuDevicesOptions {
  devices: readonly DeviceConfig[];
  registry: Pick<BoardRegistry, 'get'>;
  onEvent?: (device: string, e: McuEvent) => void;
  /** after each hello (the link opened or came back): where watches are set up again */
  onHello?: (device: string, hello: HelloInfo) => void;
  /** waits for a board's bootloader after the port opens (tests make it short) */
  resetWaitMs?: (profile: BoardProfile | undefined, port: string) => number;
  log?: Pick<Logger, 'info' | 'warn'>;
}

/** What a raw device keeps for serial_read, at most. */
const RECEIVE_CAP = 64 * 1024;

export async function startMcuDevices(o: McuDevicesOptions): Promise<{ devices: ManagedDevice[]; close(): Promise<void> }> {
  const log = o.log ?? defaultLog;
  const out: ManagedDevice[] = [];
  for (const cfg of o.devices) {
    if (!cfg.name || !cfg.port) {
      log.warn('hardware.devices: an entry without name or port is skipped');
      continue;
    }
    const name = cfg.name;
    const port = cfg.port;
    const configured = cfg.board ? o.registry.get(cfg.board)?.profile : undefined;
    if (cfg.board && !configured) log.warn(`hardware.devices ${name}: unknown board profile '${cfg.board}'; the firmware's hello decides`);
    let serial: SerialDevice | undefined;
    let client: McuClient | undefined;
    let hello: HelloInfo | undefined;
    let profile: BoardProfile | undefined = configured;
    let state = 'connecting';
    let received = Buffer.alloc(0);
    const receivedListeners = new Set<() => void>();
    const readyWaiters = new Set<() => void>();
    let generation = 0;
    /** why the last open failed or the link ended, until it opens again */
    let failure: Error | undefined;
    const ready = () => readyWaiters.forEach((w) => w());

    const greet = async (gen: number) => {
      const wait = o.resetWaitMs ? o.resetWaitMs(profile, port) : port.startsWith('socket://') ? 0 : (profile?.serial?.readyAfterMs ?? 2000);
      if (wait) await new Promise((r) => setTimeout(r, wait).unref());
      if (gen !== generation || !client) return;
      try {
        hello = await client.hello();
        profile = configured ?? o.registry.get(hello.board)?.profile;
        state = 'open';
        ready();
        o.onHello?.(name, hello);
        log.info(`${name} (${port}): ${hello.board}, firmware ${hello.firmware}${profile ? `, profile ${profile.id}` : ''}`);
      } catch (err) {
        state = `open, but the firmware did not say hello: ${errorMessage(err)}`;
        log.warn(`${name} (${port}): ${state}`);
      }
    };

    try {
      serial = await openSerialDevice({
        name,
        port,
        baud: cfg.baud,
        waitForDevice: true,
        onData: (bytes) => {
          if (cfg.kind !== 'raw') return;
          received = Buffer.concat([received, bytes]);
          if (received.length > RECEIVE_CAP) received = received.subarray(received.length - RECEIVE_CAP);
          receivedListeners.forEach((l) => l());
        },
        onState: (c) => {
          generation++;
          hello = undefined;
          if (c.state === 'open') failure = undefined;
          else if (c.error) failure = c.error;
          if (c.state === 'open') {
            state = cfg.kind === 'raw' ? 'open' : 'open, waiting for hello';
            if (cfg.kind === 'raw') ready();
            if (cfg.kind === 'mcu') void greet(generation);
          } else {
            state = c.state === 'connecting' || c.state === 'lost' ? `${c.state}${c.error ? ` (${c.error.message})` : ''}${c.retryInMs !== undefined ? `, next try in ${c.retryInMs} ms` : ''}` : c.state;
          }
        },
      });
    } catch (err) {
      state = `cannot open: ${errorMessage(err)}`;
      log.warn(`hardware.devices ${name}: ${state}`);
    }
    /**
     * Away: what no wait cures, as opposed to a board resetting or a socket:// server restarting
     * (a call then waits for it). A device file that is missing now, access to it denied since the
     * last attempt, or a port that will not be tried again. Looked at on each ask, so the tool is
     * available again the moment the file is back.
     */
    const away = (): string | undefined => {
      if (!serial) return state;
      if (serial.state === 'open') return undefined;
      if (serial.state === 'closed') return `${port}: ${failure?.message ?? 'closed'}`;
      if (!(failure instanceof SerialError)) return undefined;
      if (failure.kind === 'not-found' && serial.address.kind === 'device' && !existsSync(serial.address.path)) return failure.message;
      if (failure.kind === 'permission') return failure.message;
      return undefined;
    };
    if (serial && cfg.kind === 'mcu') {
      client = createMcuClient(serial, { device: name, timeoutMs: cfg.timeoutMs, onEvent: (e) => o.onEvent?.(name, e) });
      if (serial.state === 'open') {
        state = 'open, waiting for hello';
        void greet(generation);
      }
    }
    out.push({
      name,
      port,
      kind: cfg.kind,
      state: () => state,
      away,
      client: () => (hello ? client : undefined),
      hello: () => hello,
      profile: () => profile,
      serial: () => serial,
      whenReady: (ms) =>
        new Promise<void>((resolve) => {
          if ((cfg.kind === 'raw' && serial?.state === 'open') || hello) return resolve();
          const done = () => {
            clearTimeout(timer);
            readyWaiters.delete(done);
            resolve();
          };
          const timer = setTimeout(done, ms);
          readyWaiters.add(done);
        }),
      takeReceived() {
        const r = received;
        received = Buffer.alloc(0);
        return r;
      },
      onReceived(l) {
        receivedListeners.add(l);
        return () => receivedListeners.delete(l);
      },
    });
  }
  return {
    devices: out,
    async close() {
      for (const d of out) {
        try {
          await d.serial()?.close();
        } catch {
          // closing what is gone already
        }
      }
    },
  };
}
