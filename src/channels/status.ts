// Each channel's connection state, as the channels report it on the bus: live for /metrics and the
// dashboard, and kept in the state table so `pinclaw doctor` (another process) can show it too.
import type { Bus, ChannelState } from '../conductor/bus.js';
import { errorMessage } from '../errors.js';
import { log } from '../log.js';
import type { Db } from '../store/db.js';
import { outboundBacklog } from '../store/queue.js';
import { getState, setState } from '../store/state.js';

export const CHANNEL_STATUS_KEY = 'channels.status';

export interface ChannelStatus {
  channel: string;
  state: ChannelState;
  detail: string;
  /** ISO time of the last change */
  since: string;
}

export interface ChannelStatusTracker {
  list(): ChannelStatus[];
  stop(): void;
}

/** Channels that need no connection (http, hardware) are up from the start; the others say so themselves. */
export function trackChannelStatus(bus: Bus, db: Db, channels: readonly { name: string; connects?: boolean }[]): ChannelStatusTracker {
  const now = () => new Date().toISOString();
  const map = new Map<string, ChannelStatus>(channels.map((c) => [c.name, { channel: c.name, state: c.connects ? 'starting' : 'up', detail: c.connects ? 'starting' : 'ready', since: now() }]));
  const save = () => {
    try {
      setState(db, CHANNEL_STATUS_KEY, JSON.stringify({ at: now(), pid: process.pid, channels: [...map.values()] }));
    } catch (err) {
      log.warn(`could not record the channels' status: ${errorMessage(err)}`);
    }
  };
  save();
  const off = bus.on('channel_status', (e) => {
    const before = map.get(e.channel);
    if (before && before.state === e.state && before.detail === e.detail) return;
    map.set(e.channel, { channel: e.channel, state: e.state, detail: e.detail, since: before?.state === e.state ? before.since : now() });
    if (before?.state !== e.state) log.info(`channel ${e.channel}: ${e.state} (${e.detail})`);
    save();
  });
  return { list: () => [...map.values()], stop: off };
}

/** What the last gateway recorded, with each channel's undelivered replies; for doctor. */
export function recordedChannelStatus(db: Db): { at: string; pid: number; channels: ChannelStatus[]; backlog: ReturnType<typeof outboundBacklog> } | undefined {
  const text = getState(db, CHANNEL_STATUS_KEY);
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as { at: string; pid: number; channels: ChannelStatus[] };
    return { ...parsed, backlog: outboundBacklog(db) };
  } catch {
    return undefined;
  }
}
