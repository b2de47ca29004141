// `pinclaw doctor [--json]`: prints the checks; exit 1 when any failed.
import { UsageError } from '../errors.js';
import { runChecks, type DoctorReport } from '../ops/doctor.js';
import { parseCommandArgs } from './args.js';
import type { CliContext } from './context.js';

const mark = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' } as const;

const USAGE = 'pinclaw doctor [--json]';

export async function runDoctor(args: string[], ctx: CliContext): Promise<number> {
  const { positionals } = parseCommandArgs(args, {}, USAGE);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${USAGE}`);
  const report = await runChecks(ctx.paths, ctx.env);
  if (ctx.json) ctx.out(JSON.stringify(report, null, 2));
  else doctorLines(report).forEach((l) => ctx.out(l));
  return report.ok ? 0 : 1;
}

/** The report as doctor prints it (also at the end of `pinclaw onboard`). */
export function doctorLines(report: DoctorReport): string[] {
  return [
    `pinclaw ${report.version} on Node ${report.node} ${report.arch}${report.singleExecutable ? ' (single executable)' : ''}`,
    ...report.checks.map((c) => `${mark[c.state]}  ${c.name}: ${c.detail}`),
  ];
}
