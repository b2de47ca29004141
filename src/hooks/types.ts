// What the rest of pinclaw sees of command hooks; the implementation is a lazy chunk (engine.ts).
import type { HookEvent } from '../config/hooks.js';
import type { ToolHooks } from '../tools/hooks.js';

/** Where an event happens: the session and the chat, as the hook's JSON and its audit row name them. */
export interface HookPlace {
  sessionKey: string;
  channel: string;
  chatId: string;
}

/** The event-specific part of a hook's input: the text of a message or reply, a trigger's details. */
export interface EventPayload {
  text?: string;
  trigger?: unknown;
  [key: string]: unknown;
}

/** What the hooks of a non-tool event decided. */
export interface EventVerdict {
  block?: { reason: string; rule: string };
  /** context for the model (SessionStart), joined from every hook that gave some */
  context?: string;
  /** MessageSending: the reply as a hook rewrote it (updatedInput.text) */
  text?: string;
}

export type MessageEvent = Exclude<HookEvent, 'PreToolUse' | 'PostToolUse'>;

export interface Hooks extends ToolHooks {
  /** Whether any hook is configured for the event: callers skip the work of building its input otherwise. */
  has(event: HookEvent): boolean;
  /** Never throws: a failing hook is judged by its onFailure. */
  fire(event: MessageEvent, place: HookPlace, payload: EventPayload, signal?: AbortSignal): Promise<EventVerdict>;
}
