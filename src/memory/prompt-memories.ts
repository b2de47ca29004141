// The memories the prompt builder adds for an incoming message: the best hits for its text, cited,
// as many as fit the token budget (memory.promptTokens).
import type { Memory } from './memory.js';

/** A token counter, with the cheap upper bound the runtime's counters carry (src/agent/tokens.ts TokenCounter). */
export interface LineCounter {
  (line: string): number;
  atMost?: (line: string) => number;
}

/**
 * Token counts of the lines lately put in a prompt. The same memories come back turn after turn
 * (MEMORY.md's chunks above all), and counting a 400-token line is a pass of the tokenizer where a
 * lookup hashes the line once. Small and exact: keyed by the whole line, for one counter (another
 * counter, another model's, starts it afresh), emptied when full. It is kept when the gateway goes
 * idle: at most COUNTED_CHARS of text, where counting its lines again after the release would load
 * the tokenizer's table again (8.5 MiB for o200k_base) for a turn that may need nothing else of it.
 */
const counted = new Map<string, number>();
const COUNTED_LINES = 32;
const COUNTED_CHARS = 64 * 1024;
let countedChars = 0;
let countedBy: ((s: string) => number) | undefined;

function countOf(count: (s: string) => number, line: string): number {
  if (countedBy !== count) {
    counted.clear();
    countedChars = 0;
    countedBy = count;
  }
  let n = counted.get(line);
  if (n === undefined) {
    n = count(line);
    if (line.length > COUNTED_CHARS) return n;
    if (counted.size >= COUNTED_LINES || countedChars + line.length > COUNTED_CHARS) {
      counted.clear();
      countedChars = 0;
    }
    counted.set(line, n);
    countedChars += line.length;
  }
  return n;
}

export async function promptMemories(memory: Memory, text: string, budget: number, count: LineCounter): Promise<string[]> {
  const query = text.trim().slice(0, 2000);
  if (budget <= 0 || query === '' || query.startsWith('/')) return [];
  const lines = (await memory.search(query, { limit: 8 })).map((h) => `[${h.citation}] ${h.text.replace(/\s*\n\s*/g, ' ')}`);
  // When the lines' bound (count.atMost) is within the budget, every line fits by its count too, as
  // the loop below would find: no count, and no tokenizer table loaded for them.
  if (count.atMost) {
    let bound = 0;
    for (const line of lines) bound += count.atMost(line);
    if (bound <= budget) return lines;
  }
  const out: string[] = [];
  let used = 0;
  for (const line of lines) {
    const cost = countOf(count, line);
    if (used + cost > budget) continue;
    out.push(line);
    used += cost;
  }
  return out;
}
