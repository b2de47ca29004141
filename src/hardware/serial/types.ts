// The shapes the serial layer shares: what a port address is, what a link is, and what a managed
// device reports. Kept apart from the code so the link implementations and the device can import
// them without importing each other.
import type { HostRoots } from '../boards/host-roots.js';

/** A local serial device: a tty path, a /dev/serial/by-id link, or any absolute path to one. */
export interface DeviceAddress {
  kind: 'device';
  path: string;
  /** What to show people: the path as given. */
  text: string;
}

/** A serial port reached over TCP (ser2net, QEMU's -serial tcp:...,server), pyserial's socket:// URL. */
export interface SocketAddress {
  kind: 'socket';
  /** Without IPv6 brackets: what net.connect takes. */
  host: string;
  port: number;
  /** socket://host:port, IPv6 hosts in brackets. */
  text: string;
}

export type SerialAddress = DeviceAddress | SocketAddress;

/**
 * One open byte stream to a serial port. Reading starts with the first onData listener (so nothing
 * is lost before one exists); a device-path link notices a vanished device only while it reads.
 */
export interface SerialLink {
  readonly address: SerialAddress;
  /** What was opened: the device file a by-id link resolved to, or host:port. */
  readonly opened: string;
  readonly isOpen: boolean;
  /** Resolves once the bytes are handed to the kernel; rejects at once when the link is closed. */
  write(bytes: Uint8Array): Promise<void>;
  /** Returns a function that removes the listener. */
  onData(listener: (bytes: Buffer) => void): () => void;
  /**
   * Called once when the link ends: with null after close(), with the error otherwise (the cable
   * pulled, the TCP peer gone). A listener added after the end is called on the next tick.
   */
  onClose(listener: (reason: Error | null) => void): void;
  /** Idempotent; resolves when the port or socket is released. */
  close(): Promise<void>;
}

export interface SerialLinkOptions {
  /** Required for device paths (the line speed); ignored for socket:// (the server sets it). */
  baud?: number;
  /** The configured device name, so errors say which device failed. */
  name?: string;
  /** How long a socket:// connect may take; default 5000 ms. */
  connectTimeoutMs?: number;
  /** Where /dev and /proc are, for the port list and the busy-port holder search; default the host's. */
  roots?: HostRoots;
}

/**
 * connecting: an open attempt is under way; open: bytes flow; lost: not connected, a retry is
 * scheduled (after a dropped link or a failed attempt); closed: final (close(), or reconnecting off).
 */
export type SerialDeviceState = 'connecting' | 'open' | 'lost' | 'closed';

export interface SerialStateChange {
  device: string;
  port: string;
  state: SerialDeviceState;
  /** Why the device is not open (lost, closed after a failure). */
  error?: Error;
  /** With 'lost': when the next attempt starts. */
  retryInMs?: number;
  /** Failed attempts since the device was last open. */
  failures: number;
}

export interface SerialDeviceStatus {
  name: string;
  port: string;
  state: SerialDeviceState;
  /** The device file in use (a by-id link resolved) or host:port, while open. */
  opened: string | null;
  /** Epoch ms of the last successful open. */
  openSince: number | null;
  lastError: string | null;
  nextRetryInMs: number | null;
  failures: number;
  bytesIn: number;
  bytesOut: number;
}
