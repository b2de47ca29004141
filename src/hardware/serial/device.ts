// A managed serial device: one named owner of one port, that reopens the port when it comes back
// after the cable was pulled (or the TCP server restarted), and reports each change of state for
// status and doctor. Everything runs on unref'd timers and callbacks, never on a chain of promises:
// a failed open or write cannot leave later ones waiting on it, and an idle device does not keep
// the process alive.
import { existsSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { log } from '../../log.js';
import type { HostRoots } from '../boards/host-roots.js';
import { parseSerialAddress } from './address.js';
import { backoffDelay, type BackoffOptions } from './backoff.js';
import { isRetryable, lead, SerialError } from './errors.js';
import { openSerialLink } from './link.js';
import { checkBaud } from './link-device.js';
import { claimPort, type PortClaim } from './owners.js';
import type { SerialAddress, SerialDeviceState, SerialDeviceStatus, SerialLink, SerialStateChange } from './types.js';

export const DEFAULT_WRITE_TIMEOUT_MS = 5000;
/** A link that ended sooner than this after opening counts as a failed attempt for the backoff, so a
 *  server that accepts and at once hangs up is not redialled four times a second forever. */
const STABLE_MS = 2000;
/** When the watched device file reappears, the next attempt moves up to this soon. */
const SOON_MS = 50;

export interface SerialDeviceOptions {
  /** What the device is called in messages and events (the config's name for it). */
  name: string;
  /** A device path or socket://host:port. */
  port: string | SerialAddress;
  /** Line speed; required for device paths, ignored for socket://. */
  baud?: number;
  onData?: (bytes: Buffer) => void;
  onState?: (change: SerialStateChange) => void;
  /** Reopen after the link is lost: true (default: 250 ms doubling to 10 s), false, or the backoff. */
  reconnect?: boolean | BackoffOptions;
  /**
   * When the first open fails with something a later attempt can cure (missing, busy, refused),
   * keep trying in the background instead of throwing (a gateway starting before the board is
   * plugged in). Default false: openSerialDevice throws the first failure.
   */
  waitForDevice?: boolean;
  /** A write that has not reached the kernel by then is rejected; default 5000 ms. */
  writeTimeoutMs?: number;
  /** For socket://; default 5000 ms. */
  connectTimeoutMs?: number;
  roots?: HostRoots;
}

export interface SerialDevice {
  readonly name: string;
  readonly address: SerialAddress;
  readonly state: SerialDeviceState;
  status(): SerialDeviceStatus;
  /** Rejects at once when the device is not open (naming when the next attempt is), never queues. */
  write(bytes: Uint8Array): Promise<void>;
  /** Another data listener besides options.onData; returns its remover. */
  onData(listener: (bytes: Buffer) => void): () => void;
  /** Stops reconnecting and releases the port; idempotent. */
  close(): Promise<void>;
}

const errorOf = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

class ManagedDevice implements SerialDevice {
  private current: SerialDeviceState = 'connecting';
  private link: SerialLink | null = null;
  private openSince: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private nextAt: number | null = null;
  /** Failed attempts since the last open (reported). */
  private failures = 0;
  /** Failed attempts and short-lived links in a row (drives the backoff). */
  private streak = 0;
  private attempt: Promise<void> | null = null;
  private watcher: FSWatcher | null = null;
  private closing: Promise<void> | null = null;
  private lastError: Error | null = null;
  private bytesIn = 0;
  private bytesOut = 0;
  private readonly listeners = new Set<(bytes: Buffer) => void>();
  private readonly backoff: BackoffOptions | null;

  constructor(
    private readonly o: SerialDeviceOptions,
    readonly address: SerialAddress,
    private readonly claim: PortClaim,
  ) {
    this.backoff = o.reconnect === false ? null : o.reconnect === true || o.reconnect === undefined ? {} : o.reconnect;
    if (o.onData) this.listeners.add(o.onData);
  }

  get name(): string {
    return this.o.name;
  }

  get state(): SerialDeviceState {
    return this.current;
  }

  status(): SerialDeviceStatus {
    return {
      name: this.o.name,
      port: this.address.text,
      state: this.current,
      opened: this.link?.opened ?? null,
      openSince: this.openSince,
      lastError: this.lastError?.message ?? null,
      nextRetryInMs: this.nextAt === null ? null : Math.max(0, this.nextAt - Date.now()),
      failures: this.failures,
      bytesIn: this.bytesIn,
      bytesOut: this.bytesOut,
    };
  }

  onData(listener: (bytes: Buffer) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  write(bytes: Uint8Array): Promise<void> {
    const link = this.link;
    if (this.closing) {
      const closed = new SerialError('closed', `device ${this.o.name} is closed`, { port: this.address.text, device: this.o.name }, { cause: this.lastError ?? undefined });
      return Promise.reject(closed);
    }
    if (!link || this.current !== 'open') return Promise.reject(this.notConnected());
    const timeoutMs = this.o.writeTimeoutMs ?? DEFAULT_WRITE_TIMEOUT_MS;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(this.fail('write', `${lead(this)}write of ${bytes.length} bytes to ${this.address.text} did not finish within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      link.write(bytes).then(
        () => {
          clearTimeout(timer);
          this.bytesOut += bytes.length;
          resolve();
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err);
        },
      );
    });
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    this.clearTimer();
    this.unwatch();
    const link = this.link;
    this.link = null;
    this.openSince = null;
    await link?.close().catch(() => {
      // closing a port that already went away: it is closed either way
    });
    // An attempt under way sees `closing` when it ends and closes what it opened.
    await this.attempt;
    this.claim.release();
    this.setState('closed');
  }

  /** One open; resolves to the failure, or null once the device is open. Never rejects. */
  async connectOnce(): Promise<Error | null> {
    this.setState('connecting');
    let link: SerialLink;
    try {
      // A by-id link may point at another tty after a replug; that name must be ours too.
      this.claim.refresh();
      link = await openSerialLink(this.address, { baud: this.o.baud, name: this.o.name, connectTimeoutMs: this.o.connectTimeoutMs, roots: this.o.roots });
    } catch (err) {
      return errorOf(err);
    }
    if (this.closing) {
      await link.close().catch(() => {});
      return null;
    }
    try {
      this.claim.refresh();
    } catch (err) {
      await link.close().catch(() => {});
      return errorOf(err);
    }
    this.link = link;
    this.openSince = Date.now();
    this.failures = 0;
    this.lastError = null;
    link.onData((b) => this.deliver(b));
    link.onClose((reason) => this.linkEnded(link, reason));
    this.watch();
    this.setState('open');
    return null;
  }

  /** After a failed attempt: schedule the next, or give up for good. */
  failed(err: Error): void {
    if (this.closing) return;
    this.failures++;
    this.streak++;
    this.lastError = err;
    if (!this.backoff || !isRetryable(err)) return this.finish(err);
    this.schedule(backoffDelay(this.streak, this.backoff), err);
  }

  /** The device will not open again (reconnecting off, or a failure no retry cures). */
  finish(err: Error): void {
    this.lastError = err;
    this.clearTimer();
    this.unwatch();
    this.claim.release();
    this.closing = Promise.resolve();
    this.setState('closed', { error: err });
  }

  private linkEnded(link: SerialLink, reason: Error | null): void {
    if (link !== this.link) return;
    this.link = null;
    if (this.closing) return;
    const err = reason ?? this.fail('lost', `${lead(this)}${this.address.text} was closed`);
    this.lastError = err;
    const lived = this.openSince === null ? 0 : Date.now() - this.openSince;
    this.openSince = null;
    this.streak = lived >= STABLE_MS ? 1 : this.streak + 1;
    if (!this.backoff) return this.finish(err);
    this.schedule(backoffDelay(this.streak, this.backoff), err);
  }

  private schedule(delay: number, err: Error): void {
    this.arm(delay);
    // Each wait watches afresh: the directory (/dev/serial/by-id) may have gone and come back.
    this.unwatch();
    this.watch();
    this.setState('lost', { error: err, retryInMs: delay });
  }

  private arm(delay: number): void {
    this.clearTimer();
    this.nextAt = Date.now() + delay;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.nextAt = null;
      this.attempt = this.retry();
    }, delay);
    this.timer.unref();
  }

  private async retry(): Promise<void> {
    try {
      const err = await this.connectOnce();
      if (err) this.failed(err);
    } catch (err) {
      // connectOnce does not throw; a bug here must still not stop the retries
      this.failed(errorOf(err));
    } finally {
      this.attempt = null;
    }
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.nextAt = null;
  }

  /**
   * Watches the device file's directory: a file that disappears while open means the device is gone
   * even if the driver has not failed a read yet; one that appears while waiting means it is back.
   */
  private watch(): void {
    if (this.address.kind !== 'device' || this.watcher || this.closing) return;
    const path = this.address.path;
    const base = basename(path);
    try {
      this.watcher = watch(dirname(path), { persistent: false }, (_event, file) => {
        if (file === null || file === base) this.pathChanged(path);
      });
      this.watcher.on('error', () => this.unwatch());
    } catch {
      // the directory is not there (by-id with nothing plugged in): the timer alone retries
      this.watcher = null;
    }
  }

  private unwatch(): void {
    this.watcher?.close();
    this.watcher = null;
  }

  private pathChanged(path: string): void {
    const present = existsSync(path);
    if (this.current === 'open' && this.link && !present) {
      const link = this.link;
      this.linkEnded(link, this.fail('lost', `${lead(this)}lost ${path}: the device file disappeared`));
      void link.close().catch(() => {});
    } else if (this.current === 'lost' && this.timer && present && this.nextAt !== null && this.nextAt - Date.now() > SOON_MS) {
      this.arm(SOON_MS);
    }
  }

  private deliver(bytes: Buffer): void {
    this.bytesIn += bytes.length;
    for (const l of this.listeners) {
      try {
        l(bytes);
      } catch (err) {
        log.warn(`device ${this.o.name}: a data listener threw: ${errorOf(err).message}`);
      }
    }
  }

  private notConnected(): SerialError {
    const when =
      this.nextAt !== null
        ? `reconnecting, next try in ${Math.max(0, this.nextAt - Date.now())} ms`
        : this.current === 'connecting'
          ? 'connecting now'
          : 'not reconnecting';
    return new SerialError('not-connected', `device ${this.o.name} is not connected (${when})`, { port: this.address.text, device: this.o.name }, { cause: this.lastError ?? undefined });
  }

  private fail(kind: 'write' | 'lost', message: string): SerialError {
    return new SerialError(kind, message, { port: this.address.text, device: this.o.name });
  }

  private setState(state: SerialDeviceState, extra: { error?: Error; retryInMs?: number } = {}): void {
    this.current = state;
    const change: SerialStateChange = { device: this.o.name, port: this.address.text, state, failures: this.failures, ...extra };
    try {
      this.o.onState?.(change);
    } catch (err) {
      log.warn(`device ${this.o.name}: a state listener threw: ${errorOf(err).message}`);
    }
  }
}

const NAME = /^[^\s\p{Cc}]{1,64}$/u;

/**
 * Opens a named device and keeps it open. Throws a SerialError for a bad name, port or baud rate,
 * a port another device of this process owns, or (unless waitForDevice) a first open that fails.
 */
export async function openSerialDevice(options: SerialDeviceOptions): Promise<SerialDevice> {
  const name = options.name;
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new SerialError('options', `serial device name ${JSON.stringify(name)}: 1-64 characters, no spaces`, { port: String(options.port) });
  }
  let address: SerialAddress;
  try {
    address = typeof options.port === 'string' ? parseSerialAddress(options.port) : options.port;
  } catch (err) {
    if (err instanceof SerialError) throw new SerialError(err.kind, `device ${name}: ${err.message}`, { port: err.port, device: name }, { cause: err });
    throw err;
  }
  if (address.kind === 'device') checkBaud({ name, address }, options.baud);
  const claim = claimPort(name, address);
  const device = new ManagedDevice(options, address, claim);
  const err = await device.connectOnce();
  if (!err) return device;
  if (options.waitForDevice && options.reconnect !== false && isRetryable(err)) {
    device.failed(err);
    return device;
  }
  device.finish(err);
  throw err;
}
