// The in-process event bus: what channels and the dashboard watch. Typed by event name.
import { EventEmitter } from 'node:events';

export interface BusEvents {
  message_received: { inboundId: number; sessionKey: string; channel: string; text: string };
  turn_start: { sessionKey: string; inboundIds: number[] };
  turn_end: { sessionKey: string; inboundIds: number[]; ok: boolean; iterations: number };
  text_delta: { sessionKey: string; text: string };
  /** The provider call is being made again: text streamed since that call began is void. */
  retry: { sessionKey: string; attempt: number; delayMs: number; reason: string };
  tool_start: { sessionKey: string; id: string; name: string; input: unknown };
  tool_end: { sessionKey: string; id: string; name: string; isError: boolean; durationMs: number };
  /** a running tool's output (exec), redacted; the tool result that follows holds it again, capped */
  tool_output: { sessionKey: string; id: string; name: string; stream: 'stdout' | 'stderr'; text: string };
  reply: { sessionKey: string; outboundId: number; inboundId: number | null; channel: string; text: string; kind: 'reply' | 'notice' };
  error: { sessionKey?: string; message: string };
  /** a tool waits for the owner's yes in an http chat: answer with POST /api/confirm */
  confirm_request: { id: string; sessionKey: string; tool: string; summary: string; input: unknown; expiresAt: string };
  confirm_answer: { id: string; sessionKey: string; allowed: boolean; by: 'api' | 'timeout' };
}
export type BusEventName = keyof BusEvents;

export interface Bus {
  on<K extends BusEventName>(name: K, fn: (e: BusEvents[K]) => void): () => void;
  emit<K extends BusEventName>(name: K, e: BusEvents[K]): void;
}

export function createBus(): Bus {
  const ee = new EventEmitter();
  ee.setMaxListeners(0);
  // EventEmitter throws on an 'error' event nobody listens to; on this bus it is an ordinary event.
  ee.on('error', () => {});
  return {
    on(name, fn) {
      ee.on(name, fn);
      return () => ee.off(name, fn);
    },
    emit(name, e) {
      ee.emit(name, e);
    },
  };
}
