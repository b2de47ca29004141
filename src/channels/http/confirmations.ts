// Confirmation questions of the http channel: a tool that needs the owner's yes in an http chat is
// announced on the bus (`confirm_request`, seen by /api/events and by the SSE stream of the
// /api/chat call that caused it) and waits for POST /api/confirm. No answer in time is a refusal,
// so a turn never hangs on a dashboard nobody looks at.
import { randomUUID } from 'node:crypto';
import type { Bus } from '../../conductor/bus.js';
import type { ConfirmRequest } from '../../tools/types.js';

export interface Confirmations {
  ask(chatId: string, request: ConfirmRequest): Promise<boolean>;
  /** false when no question with this id is waiting (answered already, expired, or never asked) */
  answer(id: string, allow: boolean): boolean;
  /** questions still waiting (for a dashboard that connects late) */
  pending(): { id: string; sessionKey: string; tool: string; summary: string; expiresAt: string; reason?: string }[];
}

export function createConfirmations(bus: Bus, timeoutMs: number): Confirmations {
  const waiting = new Map<string, { sessionKey: string; tool: string; summary: string; reason?: string; expiresAt: number; settle: (allow: boolean | Error) => void }>();
  return {
    ask(chatId, request) {
      const id = randomUUID();
      const expiresAt = Date.now() + timeoutMs;
      return new Promise<boolean>((resolve, reject) => {
        const timer = setTimeout(() => settle(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s (tools.confirmTimeoutMs)`)), timeoutMs);
        // A stopped turn withdraws its question, so the page does not keep offering it.
        const onAbort = () => settle(new Error('the turn was stopped'));
        const settle = (allow: boolean | Error) => {
          clearTimeout(timer);
          request.signal?.removeEventListener('abort', onAbort);
          waiting.delete(id);
          bus.emit({ type: 'confirm_answer', id, sessionKey: chatId, allowed: allow === true, by: allow instanceof Error ? 'timeout' : 'api' });
          if (allow instanceof Error) reject(allow);
          else resolve(allow);
        };
        // For the http channel the chat is the session.
        waiting.set(id, { sessionKey: chatId, tool: request.tool, summary: request.summary, reason: request.reason, expiresAt, settle });
        request.signal?.addEventListener('abort', onAbort, { once: true });
        bus.emit({ type: 'confirm_request', id, sessionKey: chatId, tool: request.tool, summary: request.summary, input: request.input, expiresAt: new Date(expiresAt).toISOString(), ...(request.reason ? { reason: request.reason } : {}) });
      });
    },
    answer(id, allow) {
      const w = waiting.get(id);
      if (!w) return false;
      w.settle(allow);
      return true;
    },
    pending() {
      return [...waiting].map(([id, w]) => ({ id, sessionKey: w.sessionKey, tool: w.tool, summary: w.summary, expiresAt: new Date(w.expiresAt).toISOString(), ...(w.reason ? { reason: w.reason } : {}) }));
    },
  };
}
