// Token estimates for Claude. Anthropic has not published the tokenizer of Claude 3 and later, so
// pinclaw counts o200k_base exactly and scales by a factor chosen to over- rather than
// under-estimate English, code and JSON. How the factor was chosen, and what was and was not
// measured, is in docs/tokenizer.md. The provider's reported usage is the ground truth whenever a
// response carries it; this is for deciding before a request is sent.
import { getTokenizer, type TokenizerInput } from './tokenizer.js';

export const CLAUDE_TOKEN_FACTOR = 1.3;

export function estimateClaudeTokens(text: TokenizerInput): number {
  return Math.ceil(getTokenizer('o200k_base').count(text) * CLAUDE_TOKEN_FACTOR);
}
