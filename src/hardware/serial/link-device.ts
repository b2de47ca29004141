// A SerialLink over a local tty, through the serialport packages. They are imported on first use,
// so a process that never opens a port never loads the native addon; in the bundle and the single
// executable, scripts/build.mjs replaces @serialport/bindings-cpp's node-gyp-build call with
// src/native/loader.ts ('serialport' addon: a dev tree's prebuild, or the copy embedded in the
// executable). @serialport/stream + @serialport/bindings-cpp rather than the serialport package:
// the same classes without its ten parsers and mock binding in the bundle.
import { realpathSync, statSync, type Stats } from 'node:fs';
import type { SerialPortStream } from '@serialport/stream';
import type { LinuxBindingInterface } from '@serialport/bindings-cpp';
import { HOST_ROOTS } from '../boards/host-roots.js';
import { deviceOpenError, lead, pathWithTarget, SerialError, type FailureTarget } from './errors.js';
import { LinkEvents } from './link-events.js';
import type { DeviceAddress, SerialLink, SerialLinkOptions } from './types.js';

interface SerialportModules {
  Stream: typeof SerialPortStream;
  binding: LinuxBindingInterface;
}

/** A CommonJS package's export, whether the loader gave named exports or only `default`. */
function exported<T>(mod: unknown, name: string): T | undefined {
  const m = mod as Record<string, unknown> & { default?: Record<string, unknown> };
  return (m[name] ?? m.default?.[name]) as T | undefined;
}

let loading: Promise<SerialportModules> | undefined;

/** The packages, loaded once; a failure (addon not built, wrong ABI) is kept and reported on every open. */
export function loadSerialport(): Promise<SerialportModules> {
  loading ??= Promise.all([import('@serialport/stream'), import('@serialport/bindings-cpp')]).then(([s, b]) => {
    const Stream = exported<typeof SerialPortStream>(s, 'SerialPortStream');
    const binding = exported<LinuxBindingInterface>(b, 'LinuxBinding');
    if (!Stream || !binding) throw new Error('@serialport/stream or @serialport/bindings-cpp lacks SerialPortStream/LinuxBinding');
    return { Stream, binding };
  });
  return loading;
}

function fileKind(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFile()) return 'a regular file';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isBlockDevice()) return 'a block device';
  return 'not a character device';
}

class DeviceLink implements SerialLink {
  readonly events: LinkEvents;
  private closedByUs = false;
  private closing: Promise<void> | undefined;
  private lastError: Error | null = null;

  constructor(
    private readonly stream: SerialPortStream<LinuxBindingInterface>,
    readonly address: DeviceAddress,
    readonly opened: string,
    private readonly target: FailureTarget,
  ) {
    this.events = new LinkEvents(target.name ? `device ${target.name}` : address.text);
    // Errors after the open (a failed close, a write error the stream re-emits) must not crash the
    // process as unhandled 'error' events; they are kept as the reason if the port then ends.
    stream.on('error', (err: Error) => {
      this.lastError = err;
      if (!stream.isOpen && !stream.opening && !stream.closing) this.ended(err);
    });
    // 'close' carries a DisconnectedError when the stream closed itself (a read or write failed:
    // the cable was pulled, the pty's other side went away); after our close() it carries null.
    stream.on('close', (err?: Error | null) => this.ended(err ?? null));
  }

  get isOpen(): boolean {
    return !this.events.hasEnded;
  }

  private ended(err: Error | null): void {
    if (this.closedByUs) return this.events.end(null);
    const cause = err ?? this.lastError;
    const why = cause ? cause.message : 'the port closed';
    this.events.end(new SerialError('lost', `${lead(this.target)}lost ${pathWithTarget(this.address.path, this.opened)}: ${why}`, { port: this.address.text, device: this.target.name }, { cause }));
  }

  write(bytes: Uint8Array): Promise<void> {
    return this.events.write(this.stream, bytes, this.closedByUs, this.target, this.address.text);
  }

  onData(listener: (bytes: Buffer) => void): () => void {
    return this.events.listen(this.stream, listener);
  }

  onClose(listener: (reason: Error | null) => void): void {
    this.events.addClose(listener);
  }

  close(): Promise<void> {
    this.closedByUs = true;
    this.closing ??= new Promise<void>((resolve) => {
      if (this.events.hasEnded || !this.stream.isOpen) {
        this.events.end(null);
        return resolve();
      }
      // The callback comes with an error only when the port was already gone; closed either way.
      this.stream.close(() => {
        this.events.end(null);
        resolve();
      });
    });
    return this.closing;
  }
}

export function checkBaud(target: FailureTarget, baud: number | undefined): number {
  const port = target.address.text;
  if (baud === undefined) throw new SerialError('options', `${lead(target)}${port} needs a baud rate (for example 115200, what the firmware uses)`, { port, device: target.name });
  if (!Number.isInteger(baud) || baud <= 0 || baud > 20_000_000) throw new SerialError('options', `${lead(target)}baud rate ${baud} for ${port} is not a positive whole number of bits per second`, { port, device: target.name });
  return baud;
}

export async function openDeviceLink(address: DeviceAddress, options: SerialLinkOptions): Promise<SerialLink> {
  const roots = options.roots ?? HOST_ROOTS;
  const target: FailureTarget = { name: options.name, address };
  const baudRate = checkBaud(target, options.baud);
  // Checked here rather than left to the addon: a missing or wrong file is told apart without
  // loading native code, and a by-id link is resolved for the messages and the holder search.
  let file: string;
  let st: Stats;
  try {
    file = realpathSync(address.path);
    st = statSync(file);
  } catch (err) {
    throw deviceOpenError(target, address.path, null, err, roots);
  }
  if (!st.isCharacterDevice()) {
    throw new SerialError('not-a-tty', `${lead(target)}${pathWithTarget(address.path, file)} is not a serial port (${fileKind(st)})`, { port: address.text, device: options.name });
  }
  let mods: SerialportModules;
  try {
    mods = await loadSerialport();
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new SerialError('unavailable', `${lead(target)}cannot open ${address.text}: the serialport addon cannot be loaded: ${why}`, { port: address.text, device: options.name }, { cause: err });
  }
  // lock: flock(LOCK_EX|LOCK_NB) after open, so a second pinclaw (or anything else that locks) is
  // refused instead of both reading half of the bytes.
  let stream: SerialPortStream<LinuxBindingInterface>;
  try {
    stream = new mods.Stream({ binding: mods.binding, path: address.path, baudRate, lock: true, autoOpen: false });
    await new Promise<void>((resolve, reject) => stream.open((err) => (err ? reject(err) : resolve())));
  } catch (err) {
    throw deviceOpenError(target, address.path, file, err, roots);
  }
  return new DeviceLink(stream, address, file, target);
}
