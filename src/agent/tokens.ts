// Token estimates for compaction: the exact o200k_base count (native BPE, or its TS reference),
// scaled for Claude models (docs/tokenizer.md#claude-estimates). When the rank data cannot be
// loaded, a conservative character heuristic stands in, so a turn never fails for want of a count.
import { errorMessage } from '../errors.js';
import { log } from '../log.js';
import { CLAUDE_TOKEN_FACTOR } from '../native/token-estimate.js';
import { getTokenizer } from '../native/tokenizer.js';
import type { ContentBlock, Message } from './types.js';

export interface TokenCounter {
  (text: string): number;
  /**
   * Never less than the count, and cheap: the UTF-8 length, scaled as the count is. A byte-level BPE
   * makes at most one token per byte (every token covers one or more), and the character heuristic
   * below fewer still. A question such as "is this within the budget?" that the bound already answers
   * needs no count, and so no tokenizer table (8.5 MiB for o200k_base, loaded again after every idle
   * release): see contextOver (compaction.ts) and promptMemories.
   */
  atMost?: (text: string) => number;
}

/** ~3.5 characters per token for English and code, fewer for CJK; rounding up errs on compacting early. */
export const heuristicCount: TokenCounter = (text) => {
  let wide = 0;
  for (const ch of text) if (ch.codePointAt(0)! > 0x2e7f) wide++;
  return Math.ceil((text.length - wide) / 3.5 + wide);
};

/**
 * The counter for a "provider/model" name. The rank data is read on the first count, not here, so
 * building a runtime stays cheap.
 */
export function tokenCounterFor(model: string): TokenCounter {
  const factor = model.startsWith('anthropic/') ? CLAUDE_TOKEN_FACTOR : 1;
  let count: ((text: string) => number) | undefined;
  const counter: TokenCounter = (text) => {
    if (!count) {
      try {
        const t = getTokenizer('o200k_base');
        count = factor === 1 ? (s) => t.count(s) : (s) => Math.ceil(t.count(s) * factor);
      } catch (err) {
        log.warn(`token counts fall back to a character estimate: the o200k_base tokenizer did not load (${errorMessage(err)})`);
        count = heuristicCount;
      }
    }
    return count(text);
  };
  counter.atMost = (text) => Math.ceil(Buffer.byteLength(text, 'utf8') * factor);
  return counter;
}

function blockText(b: ContentBlock): string {
  switch (b.type) {
    case 'text':
      return b.text;
    case 'tool_use':
      return `${b.name} ${JSON.stringify(b.input)}`;
    case 'tool_result':
      return b.content;
    case 'image':
      return ''; // counted separately: images are priced by size, not by their base64 text
  }
}

export function countMessages(messages: readonly Message[], count: (text: string) => number): number {
  let n = 0;
  for (const m of messages) {
    n += 4; // role and block framing
    for (const b of m.content) n += b.type === 'image' ? 1600 : count(blockText(b));
  }
  return n;
}
