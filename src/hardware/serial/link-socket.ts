// A SerialLink over TCP for socket://host:port: ser2net's raw ports, QEMU's -serial tcp:...,server,
// a serial server on another machine. No line settings travel (the server owns the UART), so the
// baud rate is not used. Nagle is off: MCU frames are small and each waits for an answer.
import { connect, type Socket } from 'node:net';
import { lead, SerialError, socketOpenError, type FailureTarget } from './errors.js';
import { LinkEvents } from './link-events.js';
import type { SerialLink, SerialLinkOptions, SocketAddress } from './types.js';

export const DEFAULT_CONNECT_TIMEOUT_MS = 5000;
/** Keepalive probes start after this much silence, so a host that vanished is noticed eventually. */
const KEEPALIVE_MS = 10_000;
/** How long close() waits for the peer to finish the TCP close before dropping the socket. */
const CLOSE_GRACE_MS = 1000;

class SocketLink implements SerialLink {
  private readonly events: LinkEvents;
  private closedByUs = false;
  private closing: Promise<void> | undefined;
  private lastError: Error | null = null;
  readonly opened: string;

  constructor(
    private readonly socket: Socket,
    readonly address: SocketAddress,
    private readonly target: FailureTarget,
  ) {
    this.opened = address.text.slice('socket://'.length);
    this.events = new LinkEvents(target.name ? `device ${target.name}` : address.text);
    socket.on('error', (err) => {
      this.lastError = err;
    });
    socket.on('close', () => {
      if (this.closedByUs) return this.events.end(null);
      const why = this.lastError ? this.lastError.message : 'closed by the other end';
      this.events.end(new SerialError('lost', `${lead(target)}lost ${address.text}: ${why}`, { port: address.text, device: target.name }, { cause: this.lastError ?? undefined }));
    });
  }

  get isOpen(): boolean {
    return !this.events.hasEnded;
  }

  write(bytes: Uint8Array): Promise<void> {
    return this.events.write(this.socket, bytes, this.closedByUs || this.socket.destroyed, this.target, this.address.text);
  }

  onData(listener: (bytes: Buffer) => void): () => void {
    return this.events.listen(this.socket, listener);
  }

  onClose(listener: (reason: Error | null) => void): void {
    this.events.addClose(listener);
  }

  close(): Promise<void> {
    this.closedByUs = true;
    this.closing ??= new Promise<void>((resolve) => {
      if (this.socket.destroyed) {
        this.events.end(null);
        return resolve();
      }
      const timer = setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS);
      timer.unref();
      this.socket.once('close', () => {
        clearTimeout(timer);
        this.events.end(null);
        resolve();
      });
      // Unread input would keep the FIN from being seen; nobody wants it after close().
      this.socket.resume();
      this.socket.end();
    });
    return this.closing;
  }
}

export function openSocketLink(address: SocketAddress, options: SerialLinkOptions): Promise<SerialLink> {
  const target: FailureTarget = { name: options.name, address };
  const timeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const socket = connect({ host: address.host, port: address.port });
    const fail = (err: SerialError) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    const timer = setTimeout(() => fail(socketOpenError({ ...target, address }, new Error('connect timed out'), timeoutMs)), timeoutMs);
    timer.unref();
    const onError = (err: Error) => fail(socketOpenError({ ...target, address }, err));
    socket.once('error', onError);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      socket.setNoDelay(true);
      socket.setKeepAlive(true, KEEPALIVE_MS);
      resolve(new SocketLink(socket, address, target));
    });
  });
}
