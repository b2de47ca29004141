// OpenClaw's transcript events (one JSON object a line in a .jsonl file up to 2026.7; the same
// object in transcript_events.event_json from 2026.8) → pinclaw messages. The format is pi's
// session log: a {"type":"session",...} header, then {"type":"message","message":{"role",
// "content"}} lines among others (model_change, thinking_level_change, custom...). Only what the
// user and the assistant said is brought: tool calls and results name tools pinclaw may not have,
// and a model fed another runtime's tool ids would be handed calls it never made.
import type { Message } from '../../agent/types.js';
import { isObject } from './source.js';

/** The most recent messages a session keeps: the history, not an archive. */
export const MAX_MESSAGES = 100;

/** The text of a message's content: a string, or the text parts of an array of parts. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((p): p is { type: string; text: string } => isObject(p) && p.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text)
    .join('\n');
}

export interface Converted {
  messages: Message[];
  skipped: number;
  /** the session id of a "session" header line, when there is one */
  headerId?: string;
  /** the newest timestamp seen (ms epoch), 0 when none */
  lastAt: number;
}

function timeOf(ev: Record<string, unknown>): number {
  const t = ev.timestamp;
  if (typeof t === 'number' && Number.isFinite(t)) return t;
  if (typeof t === 'string') {
    const ms = Date.parse(t);
    if (Number.isFinite(ms)) return ms;
  }
  return 0;
}

/**
 * The events in their order → alternating user/assistant messages, starting with the user (the
 * providers refuse anything else): consecutive messages of one role are joined, an assistant
 * message before the first user one is dropped, the last MAX_MESSAGES kept.
 */
export function convertEvents(events: readonly unknown[]): Converted {
  const out: Message[] = [];
  let skipped = 0;
  let headerId: string | undefined;
  let lastAt = 0;
  for (const ev of events) {
    if (!isObject(ev)) {
      skipped++;
      continue;
    }
    lastAt = Math.max(lastAt, timeOf(ev));
    if (ev.type === 'session') {
      if (typeof ev.id === 'string') headerId = ev.id;
      continue;
    }
    const msg = ev.type === 'message' && isObject(ev.message) ? ev.message : undefined;
    const role = msg?.role;
    const text = msg ? textOf(msg.content).trim() : '';
    if ((role !== 'user' && role !== 'assistant') || text === '') {
      skipped++;
      continue;
    }
    const prev = out[out.length - 1];
    if (prev && prev.role === role) {
      const block = prev.content[0];
      if (block && block.type === 'text') block.text += `\n\n${text}`;
    } else if (role === 'user' || out.length > 0) {
      out.push({ role, content: [{ type: 'text', text }] });
    } else {
      skipped++;
    }
  }
  let messages = out.slice(-MAX_MESSAGES);
  if (messages[0]?.role === 'assistant') messages = messages.slice(1);
  return { messages, skipped, headerId, lastAt };
}
