// What a turn the owner stopped leaves in its session: the message it answered and what the model
// and the tools had done by then, closed so that the conversation stays one the providers accept
// (every tool_use answered by a tool_result, the last word the assistant's). Without it the next turn
// would not know the owner asked, nor that a tool may already have acted (a GPIO line switched).
import type { Message } from '../agent/types.js';

export const STOPPED_TOOL = 'Stopped by the owner: this call was interrupted, or its result was not kept. Whether it ran is in the audit log (pinclaw audit).';
export const STOPPED_REPLY = '(The owner stopped this turn before it was done.)';

export function stoppedConversation(progress: readonly Message[]): Message[] {
  const out = [...progress];
  const last = out.at(-1);
  if (last?.role === 'assistant') {
    const open = last.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
    if (open.length) out.push({ role: 'user', content: open.map((id) => ({ type: 'tool_result' as const, toolUseId: id, content: STOPPED_TOOL, isError: true })) });
    else return out; // the model had answered: nothing to close
  }
  out.push({ role: 'assistant', content: [{ type: 'text', text: STOPPED_REPLY }] });
  return out;
}
