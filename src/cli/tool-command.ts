// `pinclaw tool list | run NAME [JSON]`: the registry without a model. The call takes the same path
// as one from a turn (policy, limits, redaction, audit), as the owner on the 'cli' channel.
import { UsageError } from '../errors.js';
import type { ToolContext } from '../tools/types.js';
import { parseCommandArgs } from './args.js';
import { cliConfirm, type Ask } from './confirm.js';
import type { CliContext } from './context.js';
import { openToolProcess } from '../setup/tool-process.js';

const USAGE = 'pinclaw tool list | run NAME [JSON]';

/** The CLI is the owner at the device: channel 'cli', chat 'local', as `pinclaw agent` uses. */
export const CLI_TOOL_SESSION = 'cli:tool';

function parseInput(text: string | undefined): unknown {
  if (text === undefined) return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UsageError(`the tool input must be JSON, e.g. '{"timezone":"UTC"}': ${err instanceof Error ? err.message : String(err)}\nusage: ${USAGE}`);
  }
}

export async function runTool(sub: string, args: string[], ctx: CliContext, ask?: Ask): Promise<number> {
  const { positionals } = parseCommandArgs(args, {}, USAGE);
  const rest = positionals[0] === '--' ? positionals.slice(1) : positionals;
  if (sub === 'list' && rest.length) throw new UsageError(`unexpected argument '${rest[0]}'\nusage: pinclaw tool list`);
  if (sub === 'run' && (rest.length < 1 || rest.length > 2)) throw new UsageError(`usage: pinclaw tool run NAME [JSON]`);
  const input = sub === 'run' ? parseInput(rest[1]) : undefined;

  const tp = await openToolProcess(ctx);
  try {
    const { registry } = tp;
    const toolCtx: ToolContext = { sessionKey: CLI_TOOL_SESSION, channel: 'cli', chatId: 'local', caller: 'owner', confirm: cliConfirm(ctx, ask) };

    if (sub === 'list') {
      const listed = registry.list(toolCtx).map(({ tool, decision, confirm, unavailable }) => ({
        name: tool.name,
        description: tool.description,
        allowed: decision.allowed,
        rule: decision.rule,
        ...(decision.allowed ? {} : { reason: decision.reason }),
        ...(confirm ? { confirm } : {}),
        // A tool that exists but cannot run on this machine (no GPIO chip, permission denied): why, and the fix.
        available: unavailable === undefined,
        ...(unavailable !== undefined ? { unavailable } : {}),
      }));
      if (ctx.json) ctx.out(JSON.stringify(listed, null, 2));
      else {
        const width = Math.max(...listed.map((l) => l.name.length));
        for (const l of listed) {
          const verdict = (l.allowed ? `allowed (${l.rule})${l.confirm ? `, asks first (${l.confirm})` : ''}` : `denied: ${l.reason}`)
            + (l.unavailable !== undefined ? `; unavailable here: ${l.unavailable}` : '');
          ctx.out(`${l.name.padEnd(width)}  ${verdict}\n${' '.repeat(width + 2)}${l.description}`);
        }
      }
      return 0;
    }

    const report = await registry.call({ name: rest[0]!, input }, toolCtx);
    if (ctx.json) {
      ctx.out(JSON.stringify({ outcome: report.outcome, rule: report.rule ?? null, content: report.result.content, durationMs: Math.round(report.durationMs), outputBytes: report.outputBytes, truncated: report.truncated, auditId: report.auditId ?? null }));
    } else if (report.outcome === 'ok') ctx.out(report.result.content);
    else ctx.err(`pinclaw: ${report.result.content}`);
    return report.outcome === 'ok' ? 0 : 1;
  } finally {
    tp.close();
  }
}
