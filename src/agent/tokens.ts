// Token estimates for compaction: the exact o200k_base count (native BPE, or its TS reference),
// scaled for Claude models (docs/tokenizer.md#claude-estimates). When the rank data cannot be
// loaded, a conservative character heuristic stands in, so a turn never fails for want of a count.
import { errorMessage } from '../errors.js';
import { log } from '../log.js';
import { CLAUDE_TOKEN_FACTOR } from '../native/token-estimate.js';
import { getTokenizer } from '../native/tokenizer.js';
import type { ContentBlock, Message } from './types.js';

export type TokenCounter = (text: string) => number;

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
  let count: TokenCounter | undefined;
  return (text) => {
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

export function countMessages(messages: readonly Message[], count: TokenCounter): number {
  let n = 0;
  for (const m of messages) {
    n += 4; // role and block framing
    for (const b of m.content) n += b.type === 'image' ? 1600 : count(blockText(b));
  }
  return n;
}
