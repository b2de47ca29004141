// Token estimates for compaction. The native BPE tokenizer gives exact o200k_base counts when it is
// present; until then (or without the addon) a conservative character heuristic stands in.
import type { ContentBlock, Message } from './types.js';

export type TokenCounter = (text: string) => number;

/** ~3.5 characters per token for English and code, fewer for CJK; rounding up errs on compacting early. */
export const heuristicCount: TokenCounter = (text) => {
  let wide = 0;
  for (const ch of text) if (ch.codePointAt(0)! > 0x2e7f) wide++;
  return Math.ceil((text.length - wide) / 3.5 + wide);
};

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
