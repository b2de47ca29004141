// `pinclaw memory add|list|forget|search|reindex|export|import|stats`: the long-term memory from the command
// line, on the same store, embedder and index as the agent's tools. In the bundle this is the lazy
// chunk 'memory-cli' (src/lazy-chunk.ts), and the memory's implementation is reached through
// import() as in the gateway: the chunk 'memory', one copy of it per process.
import { PinclawError, UsageError } from '../errors.js';
import { openProcess } from '../setup/process.js';
import { memoryHolder, memoryInputError } from '../memory/holder.js';
import type { SearchMode } from '../memory/types.js';
import { parseCommandArgs } from './args.js';
import { memoryOptions } from './options.js';
import type { CliContext } from './context.js';

const USAGE: Record<string, string> = {
  add: 'pinclaw memory add TEXT [--kind K] [--json]',
  list: 'pinclaw memory list [--limit N] [--json]',
  forget: 'pinclaw memory forget ID',
  search: 'pinclaw memory search QUERY [--limit N] [--mode hybrid|keyword|vector] [--json]',
  reindex: 'pinclaw memory reindex',
  export: 'pinclaw memory export FILE',
  import: 'pinclaw memory import FILE',
  stats: 'pinclaw memory stats [--json]',
};
const ARGS: Record<string, number> = { add: 1, list: 0, forget: 1, search: 1, reindex: 0, export: 1, import: 1, stats: 0 };
const MODES: readonly SearchMode[] = ['hybrid', 'keyword', 'vector'];
const LINE_CHARS = 100;

/** A memory's first non-empty line, cut to fit a terminal line. */
function firstLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const line = lines[0] ?? '';
  const more = lines.length > 1 ? ` (+${lines.length - 1} line${lines.length === 2 ? '' : 's'})` : '';
  return (line.length > LINE_CHARS ? `${line.slice(0, LINE_CHARS - 1)}…` : line) + more;
}

export async function runMemory(sub: string, rawArgs: string[], ctx: CliContext): Promise<number> {
  const usage = USAGE[sub]!;
  const { values, positionals } = parseCommandArgs(rawArgs, memoryOptions, usage);
  if (positionals.length !== ARGS[sub]) throw new UsageError(`expected ${ARGS[sub] === 0 ? 'no argument' : 'one argument'}, got ${positionals.length}\nusage: ${usage}`);
  const arg = positionals[0] ?? '';
  if ((sub === 'add' || sub === 'search') && arg.trim() === '') throw new UsageError(`${sub === 'add' ? 'the text' : 'the query'} is empty\nusage: ${usage}`);
  let limit: number | undefined;
  if (values.limit !== undefined) {
    if (!/^\d+$/.test(values.limit) || Number(values.limit) < 1 || Number(values.limit) > 100) throw new UsageError(`--limit: expected an integer from 1 to 100, got '${values.limit}'\nusage: ${usage}`);
    limit = Number(values.limit);
  }
  if (sub === 'forget' && !/^[1-9]\d{0,15}$/.test(arg)) throw new UsageError(`forget: expected a memory id (a number pinclaw memory list shows), got '${arg}'\nusage: ${usage}`);
  if (values.mode !== undefined && !MODES.includes(values.mode as SearchMode)) throw new UsageError(`--mode: expected hybrid, keyword or vector, got '${values.mode}'\nusage: ${usage}`);

  const { config, db } = await openProcess(ctx);
  const holder = memoryHolder({ db, paths: ctx.paths, config, env: ctx.env });
  let transfer: typeof import('../memory/transfer.js') | undefined;
  try {
    if (sub === 'export') {
      transfer = await import('../memory/transfer.js');
      const n = await transfer.exportMemory(db, arg);
      ctx.out(`exported ${n} memories to ${arg}`);
      return 0;
    }
    if (sub === 'import') {
      transfer = await import('../memory/transfer.js');
      const r = transfer.importMemory(db, arg);
      ctx.out(`imported ${r.imported} memories${r.renumbered ? ` (${r.renumbered} under new ids: theirs were taken)` : ''}${r.skipped ? `; ${r.skipped} already present` : ''}`);
      return 0;
    }
    const memory = await holder.get();
    if (sub === 'add') {
      const r = await memory.store(arg, { kind: values.kind, session: 'cli:local' });
      const stored = memory.get(r.id);
      if (ctx.json) ctx.out(JSON.stringify({ id: r.id, kind: stored?.kind, text: stored?.text, ...(r.duplicate ? { duplicate: true } : {}), ...(r.merged ? { merged: true } : {}) }));
      else {
        // What was kept, as it was kept (trimmed; a merge keeps this text): the owner sees the id to forget it by.
        const what = `#${r.id} (${stored?.kind ?? values.kind ?? 'note'}): ${firstLine(stored?.text ?? arg)}`;
        ctx.out(r.duplicate ? `already stored as ${what}` : r.merged ? `stored ${what}; it replaces a near-identical memory (archived)` : `stored ${what}`);
      }
      if (r.unembedded) ctx.err(`note: stored for keyword search only for now: ${r.unembedded}`);
      return 0;
    }
    if (sub === 'list') {
      const rows = memory.recent(limit ?? 50);
      if (ctx.json) ctx.out(JSON.stringify(rows.map((c) => ({ id: c.id, createdAt: new Date(c.createdAt).toISOString(), kind: c.kind, source: c.source, text: c.text })), null, 2));
      else if (rows.length === 0) ctx.out('no memories yet (pinclaw memory add TEXT stores one)');
      else for (const c of rows) ctx.out(`${c.id}\t${new Date(c.createdAt).toISOString().slice(0, 10)}\t${c.source.type === 'file' ? `${c.source.file}:${c.source.lineStart}\t` : ''}${firstLine(c.text)}`);
      return 0;
    }
    if (sub === 'forget') {
      const id = Number(arg);
      let gone;
      try {
        gone = memory.forget(id);
      } catch (err) {
        // Not a usage error: the id was well-formed, there is just no such memory (or it is a file's).
        const input = await memoryInputError(err);
        if (input) throw new PinclawError(`${input.message}${input.message.startsWith('no memory') ? '; pinclaw memory list shows the ids' : ''}`);
        throw err;
      }
      ctx.out(ctx.json ? JSON.stringify({ forgot: gone.id, text: gone.text }) : `forgot #${gone.id}: ${firstLine(gone.text)}`);
      return 0;
    }
    if (sub === 'search') {
      const hits = await memory.search(arg, { limit: limit ?? 5, mode: values.mode as SearchMode | undefined });
      if (ctx.json) ctx.out(JSON.stringify(hits.map((h) => ({ id: h.id, text: h.text, score: h.score, source: h.citation, kind: h.kind })), null, 2));
      else if (hits.length === 0) ctx.out('no memory matches');
      else for (const h of hits) ctx.out(`${h.id}\t${h.score.toFixed(3)}\t${h.citation}\t${h.text.replace(/\s*\n\s*/g, ' ')}`);
      return 0;
    }
    if (sub === 'reindex') {
      let last = '';
      const r = await memory.reindex((what, done, total) => {
        const line = `${what} ${done}/${total}`;
        // Progress for long work: a line per tenth, not per chunk.
        if (done === total || Math.floor((done * 10) / total) !== Math.floor(((done - 1) * 10) / total)) {
          if (line !== last) ctx.err(line);
          last = line;
        }
      });
      ctx.out(`reindexed: ${r.sync.files} memory files (${r.sync.changed.length} changed, ${r.sync.removed.length} removed), ${r.embedded} chunks embedded${r.failed ? `, ${r.failed} left for keyword search (the embedder failed)` : ''}`);
      for (const s of r.sync.skipped) ctx.err(`skipped ${s.file}: ${s.reason}`);
      return r.failed ? 1 : 0;
    }
    const s = memory.stats();
    if (ctx.json) ctx.out(JSON.stringify(s, null, 2));
    else {
      ctx.out(`${s.chunks} memories: ${s.entries} stored entries, ${s.chunks - s.entries} chunks of ${s.files} memory files; ${s.archived} archived`);
      ctx.out(`embedder: ${s.embedder}; vectors: ${Object.entries(s.byEmbedder).map(([e, n]) => `${n} ${e || 'none'}`).join(', ') || 'none'}`);
      ctx.out(`index: ${s.indexed} chunks at generation ${s.generation}`);
    }
    return 0;
  } catch (err) {
    const input = await memoryInputError(err);
    if (input) throw new UsageError(`${input.message}\nusage: ${usage}`);
    if (transfer && err instanceof transfer.ImportError) throw new PinclawError(`import of ${arg} refused, nothing imported: ${err.message}`);
    throw err;
  } finally {
    holder.close();
    db.close();
  }
}
