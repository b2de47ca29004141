// Compaction: when the context nears the model's window, the older part of the session is replaced
// by a structured summary written by the model; the most recent messages stay verbatim.
import { errorMessage } from '../errors.js';
import { countMessages, type TokenCounter } from './tokens.js';
import type { Message, Provider } from './types.js';

export interface CompactionSettings {
  contextWindow: number;
  compactAt: number;
  keepRecent: number;
}

/**
 * The context estimate: what the provider reported for the last call, plus an exact (or heuristic)
 * count of everything added since. Without a report, everything is counted.
 */
export function estimateContext(messages: readonly Message[], system: string, count: (text: string) => number, last?: { inputTokens?: number; inputMessages?: number }): number {
  if (last?.inputTokens && last.inputMessages !== undefined && last.inputMessages <= messages.length) {
    return last.inputTokens + countMessages(messages.slice(last.inputMessages), count);
  }
  return count(system) + countMessages(messages, count);
}

/**
 * Whether the context's estimate is over `threshold`, as estimateContext says. A context whose bound
 * (count.atMost) is within it is not over it either, and is answered without counting: most turns'
 * contexts are far below the compaction threshold, and their turns then never load the tokenizer.
 */
export function contextOver(messages: readonly Message[], system: string, count: TokenCounter, threshold: number, last?: { inputTokens?: number; inputMessages?: number }): boolean {
  if (count.atMost && estimateContext(messages, system, count.atMost, last) <= threshold) return false;
  return estimateContext(messages, system, count, last) > threshold;
}

function isToolResultMessage(m: Message): boolean {
  return m.role === 'user' && m.content.some((b) => b.type === 'tool_result');
}

/**
 * Index of the first message kept verbatim: at most `keepRecent` messages, moved earlier so the kept
 * part never starts with a tool_result whose tool_use would be summarized away. 0 means nothing to cut.
 */
export function keepBoundary(messages: readonly Message[], keepRecent: number): number {
  let i = Math.max(0, messages.length - keepRecent);
  while (i > 0 && isToolResultMessage(messages[i]!)) i--;
  return i;
}

const INSTRUCTIONS = `Summarize the conversation above for your own future use; it will replace the conversation. Be factual and complete, and use exactly these headings:
## Goals
## Decisions
## Facts about the user and devices
## Open tasks
## Next step
Keep names, numbers, pins, addresses, file paths and times exactly as they appeared.`;

function transcript(messages: readonly Message[]): string {
  return messages
    .map((m) =>
      m.content
        .map((b) => {
          if (b.type === 'text') return `${m.role}: ${b.text}`;
          if (b.type === 'tool_use') return `${m.role} called ${b.name}(${JSON.stringify(b.input)})`;
          if (b.type === 'tool_result') return `tool result${b.isError ? ' (error)' : ''}: ${b.content.slice(0, 2000)}`;
          return `${m.role}: [image]`;
        })
        .join('\n'),
    )
    .join('\n');
}

export interface CompactionResult {
  messages: Message[];
  summarized: number;
  summary: string;
}

/** Throws when the provider fails; the caller keeps the session as it was. */
export async function compact(messages: readonly Message[], keepRecent: number, provider: Provider, model: string, maxTokens: number, signal?: AbortSignal): Promise<CompactionResult | null> {
  const cut = keepBoundary(messages, keepRecent);
  if (cut === 0) return null;
  const older = messages.slice(0, cut);
  const res = await provider.complete({
    model,
    system: 'You write precise, structured summaries of conversations between a user and their assistant.',
    messages: [{ role: 'user', content: [{ type: 'text', text: `<conversation>\n${transcript(older)}\n</conversation>\n\n${INSTRUCTIONS}` }] }],
    tools: [],
    maxTokens: Math.min(maxTokens, 4096),
    signal,
  });
  const summary = res.content.map((b) => (b.type === 'text' ? b.text : '')).join('').trim();
  if (!summary) throw new Error('the model returned an empty summary');
  const note = { type: 'text' as const, text: `[Summary of the earlier conversation]\n${summary}` };
  const kept = messages.slice(cut);
  const first = kept[0];
  // Roles must alternate: the summary joins the first kept user message, or opens the session.
  const merged: Message[] = first?.role === 'user' ? [{ role: 'user', content: [note, ...first.content] }, ...kept.slice(1)] : [{ role: 'user', content: [note] }, ...kept];
  return { messages: merged, summarized: cut, summary };
}

export function describeFailure(err: unknown): string {
  return `compaction failed, session left as it was: ${errorMessage(err)}`;
}
