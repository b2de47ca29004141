// The memories the prompt builder adds for an incoming message: the best hits for its text, cited,
// as many as fit the token budget (memory.promptTokens).
import { onRelease } from '../release.js';
import type { Memory } from './memory.js';

/**
 * Token counts of the lines lately put in a prompt. The same memories come back turn after turn
 * (MEMORY.md's chunks above all), and counting a 400-token line is a pass of the tokenizer where a
 * lookup hashes the line once. Small and exact: keyed by the whole line, for one counter (another
 * counter, another model's, starts it afresh), emptied when full and when the gateway goes idle.
 */
const counted = new Map<string, number>();
const COUNTED_LINES = 32;
let countedBy: ((s: string) => number) | undefined;
onRelease('prompt memory counts', () => {
  counted.clear();
  countedBy = undefined;
});

function countOf(count: (s: string) => number, line: string): number {
  if (countedBy !== count) {
    counted.clear();
    countedBy = count;
  }
  let n = counted.get(line);
  if (n === undefined) {
    n = count(line);
    if (counted.size >= COUNTED_LINES) counted.clear();
    counted.set(line, n);
  }
  return n;
}

export async function promptMemories(memory: Memory, text: string, budget: number, count: (s: string) => number): Promise<string[]> {
  const query = text.trim().slice(0, 2000);
  if (budget <= 0 || query === '' || query.startsWith('/')) return [];
  const out: string[] = [];
  let used = 0;
  for (const h of await memory.search(query, { limit: 8 })) {
    const line = `[${h.citation}] ${h.text.replace(/\s*\n\s*/g, ' ')}`;
    const cost = countOf(count, line);
    if (used + cost > budget) continue;
    out.push(line);
    used += cost;
  }
  return out;
}
