// `pinclaw doctor [--probe] [--json]`: prints the checks; exit 1 when any failed. --probe adds one real
// request to the model provider and to Telegram (src/ops/probe.ts).
import { loadConfig } from '../config/index.js';
import type { PinclawConfig } from '../config/schema.js';
import { ConfigError, UsageError } from '../errors.js';
import { runChecks, type DoctorReport } from '../ops/doctor.js';
import { parseCommandArgs } from './args.js';
import type { CliContext } from './context.js';

const mark = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' } as const;

const USAGE = 'pinclaw doctor [--probe] [--json]';
/** The same flags as doctor's entry in commands.ts. */
const doctorOptions = { probe: { type: 'boolean' } } as const;

export async function runDoctor(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, doctorOptions, USAGE);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${USAGE}`);
  const report = await runChecks(ctx.paths, ctx.env);
  if (values.probe) {
    let config: PinclawConfig | undefined;
    try {
      config = loadConfig(ctx.paths, ctx.env);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      report.checks.push({ name: 'probe', state: 'fail', detail: 'not probed: the config cannot be read (see the config check)' });
    }
    if (config) report.checks.push(...(await (await import('../ops/probe.js')).probeChecks(config, ctx.env)));
    report.ok = report.checks.every((c) => c.state !== 'fail');
  }
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
