// What the gateway holds of a channel that reaches an outside service (Telegram, Signal, Discord, Matrix):
// the adapter the conductor delivers through, started and stopped by the gateway, and what it is
// built from. Types only: each channel's code stays in its own lazy chunk.
import type { Bus } from '../conductor/bus.js';
import type { ChannelAdapter, Conductor } from '../conductor/conductor.js';
import type { PinclawConfig } from '../config/schema.js';
import type { Db } from '../store/db.js';

export interface ExternalChannel extends ChannelAdapter {
  /** connects, then receives in the background; a service that is down is retried, not thrown */
  start(conductor: Conductor): Promise<void>;
  stop(): Promise<void>;
}

export interface ExternalChannelOptions {
  config: PinclawConfig;
  db: Db;
  bus: Bus;
  workspace: string;
  /** the gateway's home (named in the pairing hint when not the default) */
  home?: string;
}
