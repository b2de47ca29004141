// `pinclaw update [--check] [--to VERSION] [--allow-downgrade] [--yes]`: the signed self-update
// (src/update/). The executable replaced is the running one; PINCLAW_UPDATE_TARGET names another
// (the tests, or a pinclaw run from a source tree updating its installed executable).
import { realpathSync } from 'node:fs';
import { loadConfig } from '../config/index.js';
import { EXIT, PinclawError, UsageError, errorMessage } from '../errors.js';
import { log } from '../log.js';
import { isSea } from '../native/sea.js';
import { configureNative } from '../native/loader.js';
import { ownerTarget } from '../scheduler/targets.js';
import { openStore } from '../setup/process.js';
import { recordOutbound } from '../store/queue.js';
import { isVersion } from '../update/release-files.js';
import { findService } from '../update/service-health.js';
import { probeExecutable, runUpdate } from '../update/updater.js';
import { pinclawVersion } from '../version.js';
import { parseCommandArgs, type CommandOptions } from './args.js';
import type { CliContext } from './context.js';

const updateOptions = { check: { type: 'boolean' }, to: { type: 'string' }, 'allow-downgrade': { type: 'boolean' } } as const satisfies CommandOptions;

const USAGE = 'pinclaw update [--check] [--to VERSION] [--allow-downgrade] [--yes]';

export async function runUpdateCommand(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, updateOptions, USAGE);
  if (positionals.length) throw new UsageError(`update: unexpected argument '${positionals[0]}'\nusage: ${USAGE}`);
  const to = values.to;
  if (to !== undefined && !isVersion(to)) throw new UsageError(`update --to: '${to}' is not a version like 1.4.0\nusage: ${USAGE}`);
  const config = loadConfig(ctx.paths, ctx.env);
  configureNative({ cacheDir: ctx.paths.cache, enabled: config.native.enabled });
  const named = ctx.env.PINCLAW_UPDATE_TARGET;
  if (!named && !isSea()) {
    throw new PinclawError(`pinclaw update replaces the single executable, but this pinclaw runs from a source tree or bundle (${process.execPath} ${process.argv[1] ?? ''}): update it with git, or set PINCLAW_UPDATE_TARGET to the installed executable`);
  }
  let target: string;
  try {
    target = realpathSync(named || process.execPath);
  } catch (err) {
    throw new PinclawError(`PINCLAW_UPDATE_TARGET ${named}: ${errorMessage(err)}`);
  }
  let currentVersion = pinclawVersion();
  if (named) {
    try {
      currentVersion = probeExecutable(target, ctx.env).version;
    } catch (err) {
      throw new PinclawError(`PINCLAW_UPDATE_TARGET ${target} is not a pinclaw executable: ${errorMessage(err)}`);
    }
  }
  const say = (line: string) => (ctx.json ? ctx.err(line) : ctx.out(line));
  return runUpdate({
    config,
    paths: ctx.paths,
    env: ctx.env,
    target,
    currentVersion,
    check: values.check === true,
    ...(to !== undefined ? { to } : {}),
    allowDowngrade: values['allow-downgrade'] === true,
    yes: ctx.yes === true,
    service: values.check ? undefined : await findService(target, ctx.env),
    say,
    notifyOwner: (text) => {
      const owner = ownerTarget(config);
      if (!owner) return;
      try {
        const db = openStore(ctx, config);
        try {
          recordOutbound(db, { idempotencyKey: `update:${Date.now()}:${process.pid}`, inboundId: null, sessionKey: `${owner.channel}:${owner.chatId}`, channel: owner.channel, chatId: owner.chatId, text, kind: 'notice' });
        } finally {
          db.close();
        }
        ctx.err(`told ${owner.channel}:${owner.chatId} (owner.notify; the gateway delivers it)`);
      } catch (err) {
        log.warn(`update: could not queue the message for owner.notify: ${errorMessage(err)}`);
      }
    },
    backup: async (file) => {
      const { createBackup } = await import('../ops/backup.js');
      await createBackup(ctx.paths, file, { includeSecrets: false });
    },
    crashPoint: (name) => {
      // The tests' SIGKILL at a named step (PINCLAW_TEST_UPDATE_CRASH=after-rename).
      if (ctx.env.PINCLAW_TEST_UPDATE_CRASH === name) process.kill(process.pid, 'SIGKILL');
    },
  }).then((code) => code || EXIT.ok);
}
