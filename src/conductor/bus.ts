// The in-process event bus: what channels, the dashboard, /api/events and the CLI watch. One
// vocabulary: an event is the agent loop's own event plus the session it belongs to, or one of the
// conductor's and channels' events below; every payload carries its `type`, which is also its SSE
// event name, so every consumer reads the same object.
import { EventEmitter } from 'node:events';
import type { LoopEvent } from '../agent/loop.js';
import { errorMessage } from '../errors.js';
import { log } from '../log.js';

/** text_delta, retry (text streamed since that provider call began is void), tool_start, tool_output, tool_end */
type LoopBusEvents = { [E in LoopEvent as E['type']]: E & { sessionKey: string } };

interface OwnEvents {
  message_received: { type: 'message_received'; inboundId: number; sessionKey: string; channel: string; text: string };
  turn_start: { type: 'turn_start'; sessionKey: string; inboundIds: number[]; channel: string; chatId: string };
  turn_end: { type: 'turn_end'; sessionKey: string; inboundIds: number[]; ok: boolean; iterations: number; channel: string; chatId: string };
  reply: { type: 'reply'; sessionKey: string; outboundId: number; inboundId: number | null; channel: string; text: string; kind: 'reply' | 'notice' };
  /** a turn failed (the provider, a full disk...); not named `error`: an EventSource takes an event of that name for its own connection error */
  turn_error: { type: 'turn_error'; sessionKey?: string; message: string };
  /** the owner stopped the running turn (POST /api/chat/abort); its messages are done, not tried again */
  turn_aborted: { type: 'turn_aborted'; sessionKey: string; inboundIds: number[] };
  /** a tool waits for the owner's yes in an http chat: answer with POST /api/confirm */
  confirm_request: { type: 'confirm_request'; id: string; sessionKey: string; tool: string; summary: string; input: unknown; expiresAt: string; reason?: string };
  confirm_answer: { type: 'confirm_answer'; id: string; sessionKey: string; allowed: boolean; by: 'api' | 'timeout' };
  /** a channel's connection changed (up, down with the reason; the hardware channel: degraded with what failed) */
  channel_status: { type: 'channel_status'; channel: string; state: ChannelState; detail: string };
}

/** degraded: running, but a part failed (a hardware trigger, sensor or device); the detail names it */
export type ChannelState = 'starting' | 'up' | 'down' | 'degraded';

export type BusEvents = LoopBusEvents & OwnEvents;
export type BusEventName = keyof BusEvents;
export type BusEvent = BusEvents[BusEventName];

export interface Bus {
  on<K extends BusEventName>(name: K, fn: (e: BusEvents[K]) => void): () => void;
  /** every event, in order */
  onAny(fn: (e: BusEvent) => void): () => void;
  emit(e: BusEvent): void;
}

export function createBus(): Bus {
  const ee = new EventEmitter();
  ee.setMaxListeners(0);
  const any = new Set<(e: BusEvent) => void>();
  // A listener that throws is its own failure: it must not reach the emitter (a delivery pass, a
  // turn) nor keep the other listeners from the event.
  const call = (fn: (e: BusEvent) => void, e: BusEvent) => {
    try {
      fn(e);
    } catch (err) {
      log.warn(`a listener of the bus event '${e.type}' failed: ${errorMessage(err)}`);
    }
  };
  return {
    on(name, fn) {
      const wrapped = (e: BusEvent) => call(fn as (e: BusEvent) => void, e);
      ee.on(name, wrapped);
      return () => ee.off(name, wrapped);
    },
    onAny(fn) {
      any.add(fn);
      return () => any.delete(fn);
    },
    emit(e) {
      // EventEmitter throws on an 'error' event nobody listens to; here it is an ordinary event.
      if (ee.listenerCount(e.type) > 0) ee.emit(e.type, e);
      for (const fn of any) call(fn, e);
    },
  };
}
