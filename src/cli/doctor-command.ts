// `pinclaw doctor [--json]`: prints the checks; exit 1 when any failed.
import { UsageError } from '../errors.js';
import { runChecks } from '../ops/doctor.js';
import { parseCommandArgs } from './args.js';
import type { CliContext } from './context.js';

const mark = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' } as const;

const USAGE = 'pinclaw doctor [--json]';

export async function runDoctor(args: string[], ctx: CliContext): Promise<number> {
  const { positionals } = parseCommandArgs(args, {}, USAGE);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${USAGE}`);
  const report = await runChecks(ctx.paths, ctx.env);
  if (ctx.json) {
    ctx.out(JSON.stringify(report, null, 2));
  } else {
    ctx.out(`pinclaw ${report.version} on Node ${report.node} ${report.arch}${report.singleExecutable ? ' (single executable)' : ''}`);
    for (const c of report.checks) ctx.out(`${mark[c.state]}  ${c.name}: ${c.detail}`);
  }
  return report.ok ? 0 : 1;
}
