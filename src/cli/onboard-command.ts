// `pinclaw onboard [--non-interactive ...]`: first-run setup (the questions and the plan are in
// src/ops/onboard.ts). This file is the terminal around them, the service step and the closing doctor.
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { readConfigFile } from '../config/index.js';
import { EXIT, UsageError } from '../errors.js';
import { detectWith } from '../hardware/boards/detect.js';
import { loadBoardRegistry, userBoardsDir, type BoardRegistry } from '../hardware/boards/registry.js';
import { runChecks } from '../ops/doctor.js';
import {
  OnboardInterrupted, answersFromFlags, applyOnboard, askAnswers, checkFlags, currentSetup, planOnboard,
  type OnboardAnswers, type OnboardFlags, type OnboardPlan, type Prompter, type ServiceChoice,
} from '../ops/onboard.js';
import { resolvePaths } from '../paths.js';
import { parseCommandArgs } from './args.js';
import { commands, onboardOptions } from './commands.js';
import type { CliContext } from './context.js';
import { doctorLines } from './doctor-command.js';

const USAGE = commands.find((c) => c.name === 'onboard')?.usage ?? 'pinclaw onboard [--non-interactive ...]';

/**
 * Questions on the terminal through node:readline. Lines typed ahead are kept for the next
 * question; a secret is read with the echo off (readline writes through `output`, which is muted
 * while the secret is typed). End of input and Ctrl-C reject the pending question.
 */
function terminalPrompter(): Prompter & { close(): void } {
  let muted = false;
  const output = new Writable({
    write(chunk: Buffer, _enc, cb) {
      if (!muted) process.stdout.write(chunk);
      cb();
    },
  });
  // readline lays out the line by the terminal's width
  Object.defineProperty(output, 'columns', { get: () => process.stdout.columns });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  const typed: string[] = [];
  let waiting: { resolve: (line: string) => void; reject: (err: Error) => void } | undefined;
  let ended: string | undefined;
  const stop = (why: string) => {
    ended ??= why;
    waiting?.reject(new OnboardInterrupted(ended));
    waiting = undefined;
  };
  rl.on('line', (line) => {
    if (waiting) {
      const w = waiting;
      waiting = undefined;
      w.resolve(line);
    } else typed.push(line);
  });
  rl.on('SIGINT', () => {
    stop('Ctrl-C');
    rl.close();
  });
  rl.on('close', () => stop('end of input'));
  return {
    say: (line) => process.stdout.write(line + '\n'),
    async ask(question, opts = {}) {
      if (typed.length === 0 && ended) throw new OnboardInterrupted(ended);
      rl.setPrompt(question);
      rl.prompt();
      muted = opts.secret === true;
      try {
        return typed.length ? typed.shift()! : await new Promise<string>((resolve, reject) => (waiting = { resolve, reject }));
      } finally {
        if (muted) process.stdout.write('\n');
        muted = false;
      }
    },
    close: () => rl.close(),
  };
}

/** What this machine can run: a user service normally, a system one as root, none without systemd. */
function serviceDefault(): ServiceChoice {
  if (!existsSync('/run/systemd/system')) return 'none';
  return process.getuid?.() === 0 ? 'system' : 'user';
}

/** --home/--config as the user gave them, for commands printed for them to run. */
function locationFlags(ctx: CliContext): string {
  const home = resolvePaths({}, ctx.env).home === ctx.paths.home ? '' : ` --home ${ctx.paths.home}`;
  const config = resolvePaths({ home: ctx.paths.home }, ctx.env).config === ctx.paths.config ? '' : ` --config ${ctx.paths.config}`;
  return home + config;
}

/**
 * `pinclaw service install --user|--system` through the command table, so this works as soon as
 * that command is built; until then the command is printed for later.
 */
async function serviceStep(mode: ServiceChoice, ctx: CliContext): Promise<'skipped' | 'installed' | 'failed' | 'unavailable'> {
  if (mode === 'none') return 'skipped';
  const line = `pinclaw${locationFlags(ctx)} service install --${mode}`;
  const service = commands.find((c) => c.name === 'service');
  if (!service?.run || service.arrives) {
    ctx.out(`service: this version cannot install the service yet; when it can, run: ${line}`);
    return 'unavailable';
  }
  ctx.out(`service: ${line}`);
  const { main } = await import('./index.js');
  const code = await main(['--home', ctx.paths.home, '--config', ctx.paths.config, 'service', 'install', `--${mode}`], { out: ctx.out, err: ctx.err, env: ctx.env });
  if (code === 0) return 'installed';
  ctx.err(`service: installing the service failed (exit ${code}); the config is written, run again: ${line}`);
  return 'failed';
}

function printPlan(plan: OnboardPlan, ctx: CliContext): void {
  if (plan.changes.length) {
    ctx.out(`changes to ${ctx.paths.config}:`);
    for (const c of plan.changes) ctx.out(`  ${c.key}: ${c.from} -> ${c.to}`);
  }
  for (const n of plan.notes) ctx.out(`note: ${n}`);
}

/** A flag's error with this command's usage rather than the general one. */
function withUsage<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof UsageError && !err.message.includes('usage:')) throw new UsageError(`${err.message}\nusage: ${USAGE}`);
    throw err;
  }
}

export async function runOnboard(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, onboardOptions, USAGE);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${USAGE}`);
  const nonInteractive = values['non-interactive'] === true;
  const flags: OnboardFlags = {
    provider: values.provider, apiKey: values['api-key'], apiKeyEnv: values['api-key-env'], model: values.model, baseUrl: values['base-url'],
    telegramToken: values['telegram-token'], telegramAllow: values['telegram-allow'], board: values.board, service: values.service,
  };
  let registry: BoardRegistry | undefined;
  const boards = () => (registry ??= loadBoardRegistry({ userDir: userBoardsDir(ctx.paths) }));
  // Flags are checked first in both modes: a typo is named before a single question is asked.
  withUsage(() => checkFlags(flags, ctx.env, boards));
  if (!nonInteractive && !process.stdin.isTTY) throw new UsageError('stdin is not a terminal; use --non-interactive with flags');

  // A broken config file is reported (exit 78), never overwritten.
  const raw = readConfigFile(ctx.paths.config);
  const current = currentSetup(raw);
  let answers: OnboardAnswers;
  let plan: OnboardPlan;
  if (nonInteractive) {
    answers = withUsage(() => answersFromFlags(flags, ctx.env, current, boards));
    plan = planOnboard(raw, answers, ctx.paths.secretKey, ctx.env);
    if (!ctx.json) printPlan(plan, ctx);
  } else {
    const prompter = terminalPrompter();
    try {
      const detected = detectWith(boards()).sbc?.profile.profile.id;
      answers = await askAnswers(prompter, { current, env: ctx.env, registry: boards, flags, detectedBoard: detected, serviceDefault: serviceDefault(), configFile: ctx.paths.config });
      plan = planOnboard(raw, answers, ctx.paths.secretKey, ctx.env);
      printPlan(plan, ctx);
      if (plan.changes.length) {
        const yes = (await prompter.ask('Write these changes? [Y/n] ')).trim().toLowerCase();
        if (yes !== '' && yes !== 'y' && yes !== 'yes') {
          ctx.out(`nothing was written; ${ctx.paths.config} is as it was`);
          return EXIT.failure;
        }
      }
    } finally {
      prompter.close();
    }
  }

  const wrote = applyOnboard(ctx.paths, plan);
  if (!ctx.json) ctx.out(wrote ? `wrote ${ctx.paths.config} (${plan.changes.length} change${plan.changes.length === 1 ? '' : 's'})` : `${ctx.paths.config} already holds these settings; nothing was written`);
  const serviceResult = await serviceStep(answers.service, ctx);

  // The closing check: its warnings and failures are reported, the exit code is the write's.
  const report = await runChecks(ctx.paths, ctx.env);
  const warnings = report.checks.filter((c) => c.state === 'warn');
  const failures = report.checks.filter((c) => c.state === 'fail');
  if (ctx.json) {
    ctx.out(JSON.stringify({ config: ctx.paths.config, wrote, changes: plan.changes, notes: plan.notes, service: serviceResult, doctor: report }, null, 2));
  } else {
    ctx.out('');
    doctorLines(report).forEach((l) => ctx.out(l));
    ctx.out(
      failures.length
        ? `doctor: ${failures.length} check${failures.length === 1 ? '' : 's'} failed (${failures.map((c) => c.name).join(', ')}); see above`
        : warnings.length
          ? `doctor: ok, with ${warnings.length} warning${warnings.length === 1 ? '' : 's'} (${warnings.map((c) => c.name).join(', ')}); see above`
          : 'doctor: all checks passed',
    );
  }
  return serviceResult === 'failed' ? EXIT.failure : EXIT.ok;
}
