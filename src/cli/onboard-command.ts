// `pinclaw onboard [--non-interactive ...]`: first-run setup (the questions and the plan are in
// src/ops/onboard.ts). This file is the terminal around them, the service step and the closing doctor.
import { existsSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { isLoopback } from '../channels/http/guard.js';
import { loadConfig, readConfigFile } from '../config/index.js';
import { defaults } from '../config/schema.js';
import { EXIT, PinclawError, UsageError, errorMessage } from '../errors.js';
import type { WaitResult } from '../channels/telegram/owner-chat.js';
import { detectWith } from '../hardware/boards/detect.js';
import { loadBoardRegistry, userBoardsDir, type BoardRegistry } from '../hardware/boards/registry.js';
import { runChecks } from '../ops/doctor.js';
import {
  OnboardInterrupted, answersFromFlags, applyOnboard, askAnswers, checkFlags, currentSetup, planOnboard,
  type OnboardAnswers, type OnboardFlags, type OnboardPlan, type Prompter, type ServiceChoice,
} from '../ops/onboard.js';
import { resolvePaths } from '../paths.js';
import { parseCommandArgs } from './args.js';
import { ONBOARD_USAGE, onboardOptions } from './options.js';
import type { CliContext } from './context.js';
import { stdinIsTerminal } from './terminal.js';
import { doctorLines } from './doctor-command.js';

const USAGE = ONBOARD_USAGE;

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
        if (typed.length) return typed.shift()!;
        return await new Promise<string>((resolve, reject) => {
          const w = { resolve, reject };
          waiting = w;
          // Withdrawn (the bot got the owner's message): this question no longer wants a line.
          opts.signal?.addEventListener('abort', () => {
            if (waiting !== w) return;
            waiting = undefined;
            resolve('');
          }, { once: true });
        });
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

/** `pinclaw service install --user|--system`, run as that command runs; the line is printed to run again. */
async function serviceStep(mode: ServiceChoice, ctx: CliContext): Promise<'skipped' | 'installed' | 'failed'> {
  if (mode === 'none') return 'skipped';
  const line = `pinclaw${locationFlags(ctx)} service install --${mode}`;
  ctx.out(`service: ${line}`);
  let code: number;
  try {
    code = await (await import('./service-command.js')).runService('install', [`--${mode}`], ctx);
  } catch (err) {
    // What the command line would have printed for this error, and its exit code.
    ctx.err(`pinclaw: ${errorMessage(err)}`);
    code = err instanceof PinclawError ? err.exitCode : 1;
  }
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

/** The bot token and endpoint for the owner's message: the one just typed, else the stored one. */
async function waitForOwner(ctx: CliContext, typed: string | undefined, say: (l: string) => void, signal: AbortSignal): Promise<WaitResult> {
  let token = typed;
  let apiBaseUrl = defaults().channels.telegram.apiBaseUrl;
  try {
    const config = loadConfig(ctx.paths, ctx.env);
    token ??= config.channels.telegram.token;
    apiBaseUrl = config.channels.telegram.apiBaseUrl;
  } catch (err) {
    if (token === undefined) return { failed: `the stored bot token cannot be read (${errorMessage(err)}); type the chat id, or skip` };
  }
  if (!token) return { failed: 'no bot token is set; type the chat id, or skip' };
  const { waitForOwnerChat } = await import('../channels/telegram/owner-chat.js');
  return waitForOwnerChat({ apiBaseUrl, token, say, signal, timeoutMs: ownerWaitMs(ctx.env) });
}

/** PINCLAW_ONBOARD_WAIT_SECONDS bounds the wait for the owner's message (default 300). */
function ownerWaitMs(env: NodeJS.ProcessEnv): number {
  const n = Number(env.PINCLAW_ONBOARD_WAIT_SECONDS);
  return Number.isInteger(n) && n > 0 ? n * 1000 : 300_000;
}

/** This machine's LAN addresses (IPv4, not internal), for the dashboard's URL. */
function lanAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).filter((a) => a.family === 'IPv4' && !a.internal).map((a) => a.address));
}

/** The dashboard's URLs: this machine's LAN addresses when the gateway listens beyond loopback, else loopback's; undefined for an unreadable config. */
function dashboardUrls(ctx: CliContext): string[] | undefined {
  try {
    const { gateway } = loadConfig(ctx.paths, ctx.env);
    return (isLoopback(gateway.host) ? ['127.0.0.1'] : lanAddresses()).map((ip) => `http://${ip}:${gateway.port}/`);
  } catch {
    return undefined;
  }
}

/** What to do now that the config is written: start, log in, talk, wire. */
function nextSteps(ctx: CliContext, plan: OnboardPlan, answers: OnboardAnswers): string[] {
  let config;
  try {
    config = loadConfig(ctx.paths, ctx.env);
  } catch {
    return []; // doctor below says what is wrong
  }
  const at = locationFlags(ctx);
  const lines = ['', 'next steps:'];
  lines.push(answers.service === 'none' ? `  start pinclaw: pinclaw${at} gateway (or run pinclaw onboard again and pick a service to have it start at boot)` : `  pinclaw runs as a ${answers.service} service: systemctl${answers.service === 'user' ? ' --user' : ''} status pinclaw`);
  const port = config.gateway.port;
  if (!isLoopback(config.gateway.host)) {
    const ips = lanAddresses();
    const urls = (ips.length ? ips : ['<this machine\'s address>']).map((ip) => `http://${ip}:${port}/`).join(' or ');
    lines.push(`  dashboard: ${urls} from your phone or laptop on the same network`);
    lines.push(plan.newGatewayToken
      ? `  log in with the token ${plan.newGatewayToken} (shown this once; it is stored encrypted as gateway.token: keep it in your password manager)`
      : '  log in with your gateway.token (stored encrypted; pinclaw config set gateway.token NEW sets another), or pair with a code');
  } else {
    lines.push(`  dashboard: http://127.0.0.1:${port}/ on this machine only; pinclaw onboard --dashboard-lan yes opens it to your LAN with a login token`);
  }
  if (config.channels.telegram.token) lines.push('  chat: write to your bot on Telegram');
  lines.push(config.owner.notify
    ? `  notifications (triggers, cron jobs, the heartbeat) go to ${config.owner.notify} (owner.notify)`
    : '  notifications go to the log: run pinclaw onboard on a terminal and message the bot, or give --owner-chat ID, to get them on Telegram');
  lines.push('  hardware: README.md "Hardware in five minutes" wires a relay and a door contact; docs/hardware.md has the wiring');
  lines.push(`  try the agent here: pinclaw${at} agent -m "hello"`);
  return lines;
}

export async function runOnboard(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, onboardOptions, USAGE);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${USAGE}`);
  const nonInteractive = values['non-interactive'] === true;
  const flags: OnboardFlags = {
    provider: values.provider, apiKey: values['api-key'], apiKeyEnv: values['api-key-env'], model: values.model, baseUrl: values['base-url'],
    telegramToken: values['telegram-token'], telegramAllow: values['telegram-allow'], board: values.board, service: values.service,
    timezone: values.timezone, dashboardLan: values['dashboard-lan'], ownerChat: values['owner-chat'],
  };
  let registry: BoardRegistry | undefined;
  const boards = () => (registry ??= loadBoardRegistry({ userDir: userBoardsDir(ctx.paths) }));
  // Flags are checked first in both modes: a typo is named before a single question is asked.
  withUsage(() => checkFlags(flags, ctx.env, boards));
  if (!nonInteractive && !stdinIsTerminal()) throw new UsageError('stdin is not a terminal; use --non-interactive with flags');

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
      answers = await askAnswers(prompter, {
        current, env: ctx.env, registry: boards, flags, detectedBoard: detected, serviceDefault: serviceDefault(), configFile: ctx.paths.config,
        waitForOwner: (token, say, signal) => waitForOwner(ctx, token, say, signal),
      });
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
  if (!ctx.json) nextSteps(ctx, plan, answers).forEach((l) => ctx.out(l));

  // The closing check: its warnings and failures are reported, the exit code is the write's.
  const report = await runChecks(ctx.paths, ctx.env);
  const warnings = report.checks.filter((c) => c.state === 'warn');
  const failures = report.checks.filter((c) => c.state === 'fail');
  if (ctx.json) {
    // A token made now is in the output once, as on the terminal: the owner needs it to log in.
    const dashboard = dashboardUrls(ctx);
    ctx.out(JSON.stringify({ config: ctx.paths.config, wrote, changes: plan.changes, notes: plan.notes, service: serviceResult, ...(dashboard ? { dashboard: { urls: dashboard, ...(plan.newGatewayToken ? { token: plan.newGatewayToken } : {}) } } : {}), doctor: report }, null, 2));
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
