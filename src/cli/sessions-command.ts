// `pinclaw sessions list | show KEY | reset KEY`
import { PinclawError, UsageError } from '../errors.js';
import { openProcess } from '../setup/process.js';
import { listSessions, loadSession, resetSession } from '../store/sessions.js';
import { parseCommandArgs } from './args.js';
import type { CliContext } from './context.js';

export async function runSessions(sub: string, rawArgs: string[], ctx: CliContext): Promise<number> {
  const usage = `pinclaw sessions ${sub}${sub === 'list' ? '' : ' KEY'}`;
  // Parsed so that `--` works (`pinclaw sessions show -- -odd-key`).
  const args = parseCommandArgs(rawArgs, {}, usage).positionals;
  const need = sub === 'list' ? 0 : 1;
  if (args.length !== need) throw new UsageError(`usage: ${usage}`);
  const { config, db } = await openProcess(ctx);
  try {
    if (sub === 'list') {
      const rows = listSessions(db);
      if (ctx.json) ctx.out(JSON.stringify(rows, null, 2));
      else if (rows.length === 0) ctx.out('no sessions');
      else for (const r of rows) ctx.out(`${r.key}\t${r.messages} messages\t${r.updatedAt}`);
      return 0;
    }
    const key = args[0]!;
    if (sub === 'reset') {
      if (!resetSession(db, key)) throw new PinclawError(`no session '${key}'`);
      ctx.out(`reset ${key}`);
      return 0;
    }
    const exists = db.prepare('select 1 from sessions where key = ?').get(key);
    if (!exists) throw new PinclawError(`no session '${key}'`);
    const s = loadSession(db, key);
    if (ctx.json) ctx.out(JSON.stringify(s, null, 2));
    else {
      if (s.recovered) ctx.out(`(the stored session could not be read: ${s.recovered}; it was moved to sessions_quarantine)`);
      for (const m of s.messages) {
        for (const b of m.content) {
          if (b.type === 'text') ctx.out(`${m.role}: ${b.text}`);
          else if (b.type === 'tool_use') ctx.out(`${m.role} → ${b.name} ${JSON.stringify(b.input)}`);
          else if (b.type === 'tool_result') ctx.out(`tool ← ${b.isError ? '(error) ' : ''}${b.content}`);
          else ctx.out(`${m.role}: [image]`);
        }
      }
    }
    return 0;
  } finally {
    db.close();
  }
}
