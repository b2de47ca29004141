// The memories the prompt builder adds for an incoming message: the best hits for its text, cited,
// as many as fit the token budget (memory.promptTokens).
import type { Memory } from './memory.js';

export async function promptMemories(memory: Memory, text: string, budget: number, count: (s: string) => number): Promise<string[]> {
  const query = text.trim().slice(0, 2000);
  if (budget <= 0 || query === '' || query.startsWith('/')) return [];
  const out: string[] = [];
  let used = 0;
  for (const h of await memory.search(query, { limit: 8 })) {
    const line = `[${h.citation}] ${h.text.replace(/\s*\n\s*/g, ' ')}`;
    const cost = count(line);
    if (used + cost > budget) continue;
    out.push(line);
    used += cost;
  }
  return out;
}
