// memory_search, memory_get, memory_store, memory_forget: the long-term memory as the model uses it.
// Every result cites where it came from (file:lines, or the entry's id), so the model can say why it
// believes something and the owner can check it.
import { memoryInputError, type MemoryHolder } from './holder.js';
import type { MemoryHit } from './types.js';
import { errorMessage } from '../errors.js';
import type { Tool, ToolResult } from '../tools/types.js';
import { defineTool } from '../tools/define.js';

const KINDS = 'note, fact, preference, or a word of your own';

function list(hits: MemoryHit[]): string {
  if (hits.length === 0) return 'No memory matches.';
  return hits.map((h) => `[${h.citation}] (id ${h.id}, ${h.kind}, score ${h.score.toFixed(3)})\n${h.text}`).join('\n\n');
}

async function run(fn: () => Promise<string>): Promise<ToolResult> {
  try {
    return { content: await fn() };
  } catch (err) {
    // Bad input is the model's to fix; anything else is reported the same way, in words.
    return { content: (await memoryInputError(err))?.message ?? `memory is unavailable: ${errorMessage(err)}`, isError: true };
  }
}

export function memoryTools(holder: MemoryHolder): Tool[] {
  return [
    defineTool({
      name: 'memory_search',
      readOnly: true,
      description: 'Search the long-term memory (MEMORY.md, the daily notes in memory/, and what was stored with memory_store) by meaning and by words. Results cite their source.',
      inputSchema: {
        type: 'object',
        properties: {
          query: { type: 'string', minLength: 1, maxLength: 2000, description: 'what to look for, in your own words' },
          limit: { type: 'integer', minimum: 1, maximum: 20, description: 'results wanted (default 5)' },
          kind: { type: 'string', minLength: 1, maxLength: 40, description: 'only memories of this kind (note, fact, preference, daily, file)' },
        },
        required: ['query'],
        additionalProperties: false,
      },
      execute: (input) => run(async () => {
        const { query, limit, kind } = input;
        return list(await (await holder.get()).search(query, { limit: limit ?? 5, kind }));
      }),
    }),
    defineTool({
      name: 'memory_get',
      readOnly: true,
      description: 'One memory by its id (from memory_search), in full.',
      inputSchema: { type: 'object', properties: { id: { type: 'integer', minimum: 1 } }, required: ['id'], additionalProperties: false },
      execute: (input) => run(async () => {
        const { id } = input;
        const m = (await holder.get()).get(id);
        // The memory's own error class; its module (a lazy chunk in the bundle) is loaded by now.
        if (!m) throw new (await import('./memory.js')).MemoryInputError(`no memory #${id}`);
        const where = m.source.type === 'file' ? `${m.source.file}:${m.source.lineStart}-${m.source.lineEnd}` : `memory #${m.id}`;
        return `[${where}] (${m.kind}, stored ${new Date(m.createdAt).toISOString()})\n${m.text}`;
      }),
    }),
    defineTool({
      name: 'memory_store',
      description: `Remember something for later conversations: a fact about the owner or the devices, a preference, a decision. One memory per call, in a sentence or two that makes sense on its own. Kind: ${KINDS}.`,
      inputSchema: {
        type: 'object',
        properties: {
          text: { type: 'string', minLength: 1, maxLength: 8000 },
          kind: { type: 'string', minLength: 1, maxLength: 40 },
        },
        required: ['text'],
        additionalProperties: false,
      },
      execute: (input, ctx) => run(async () => {
        const { text, kind } = input;
        const r = await (await holder.get()).store(text, { kind, session: ctx.sessionKey });
        if (r.duplicate) return `Already remembered as memory #${r.id}.`;
        const note = r.unembedded ? ` (searchable by words now, by meaning after the next reindex: ${r.unembedded})` : '';
        return r.merged ? `Updated: memory #${r.id} replaces a near-identical older one.${note}` : `Remembered as memory #${r.id}.${note}`;
      }),
    }),
    defineTool({
      name: 'memory_forget',
      description: 'Forget a stored memory by its id. Memories from MEMORY.md or the daily notes are removed by editing those files instead.',
      inputSchema: { type: 'object', properties: { id: { type: 'integer', minimum: 1 } }, required: ['id'], additionalProperties: false },
      execute: (input) => run(async () => {
        const { id } = input;
        const m = (await holder.get()).forget(id);
        return `Forgot memory #${id}: ${m.text.length > 120 ? `${m.text.slice(0, 120)}…` : m.text}`;
      }),
    }),
  ];
}
