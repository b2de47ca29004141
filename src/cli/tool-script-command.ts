// `pinclaw __tool-script FILE` (hidden): runs a JSON list of steps in one process, for the VM tests
// and bench/gpio, where a line pinclaw drives must stay held while the kernel's view of it is read.
// A step is {"tool": NAME, "input": {...}, "as"?: {"channel","chatId"}} (through the registry with
// the machine's hardware tools, exactly as `pinclaw tool run`), or {"sh": "...", "background"?:
// true} (a shell command; its output printed unless it runs in the background). Each step prints
// one JSON line; the exit status is 0 unless a step could not run at all.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { errorMessage, UsageError } from '../errors.js';
import type { ToolContext } from '../tools/types.js';
import { parseCommandArgs } from './args.js';
import type { CliContext } from './context.js';
import { openToolProcess } from '../setup/tool-process.js';

const USAGE = 'pinclaw __tool-script FILE';

type Step =
  | { tool: string; input?: unknown; as?: { channel: string; chatId: string } }
  | { sh: string; background?: boolean };

function parseSteps(text: string): Step[] {
  const v = JSON.parse(text) as unknown;
  if (!Array.isArray(v)) throw new UsageError('the script must be a JSON array of steps');
  return v.map((s, i) => {
    if (typeof s === 'object' && s !== null && (typeof (s as { tool?: unknown }).tool === 'string' || typeof (s as { sh?: unknown }).sh === 'string')) return s as Step;
    throw new UsageError(`step ${i}: expected {"tool": ...} or {"sh": ...}`);
  });
}

export async function runToolScript(args: string[], ctx: CliContext): Promise<number> {
  const { positionals } = parseCommandArgs(args, {}, USAGE);
  if (positionals.length !== 1) throw new UsageError(`usage: ${USAGE}`);
  const steps = parseSteps(readFileSync(positionals[0]!, 'utf8'));
  const tp = await openToolProcess(ctx);
  try {
    const { registry } = tp;
    for (const [i, s] of steps.entries()) {
      if ('sh' in s) {
        if (s.background) {
          spawn('sh', ['-c', s.sh], { stdio: 'ignore', detached: true }).unref();
          ctx.out(JSON.stringify({ step: i, sh: s.sh, background: true }));
        } else {
          const r = spawnSync('sh', ['-c', s.sh], { encoding: 'utf8' });
          ctx.out(JSON.stringify({ step: i, sh: s.sh, status: r.status, stdout: r.stdout, stderr: r.stderr }));
        }
        continue;
      }
      const toolCtx: ToolContext = { sessionKey: 'cli:tool-script', channel: s.as?.channel ?? 'cli', chatId: s.as?.chatId ?? 'local', caller: 'owner' };
      const started = process.hrtime.bigint();
      const report = await registry.call({ name: s.tool, input: s.input ?? {} }, toolCtx);
      const us = Number(process.hrtime.bigint() - started) / 1000;
      ctx.out(JSON.stringify({ step: i, tool: s.tool, outcome: report.outcome, rule: report.rule, isError: report.result.isError ?? false, content: report.result.content, us: Math.round(us) }));
    }
  } catch (err) {
    ctx.err(`__tool-script: ${errorMessage(err)}`);
    return 1;
  } finally {
    tp.close();
  }
  return 0;
}
