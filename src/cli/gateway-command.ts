// `pinclaw gateway`: holds the home's lock, starts the gateway (src/setup/gateway.ts assembles it)
// and drains it on SIGTERM/SIGINT.
import { PinclawError, UsageError } from '../errors.js';
import { describeHolder, tryLockHome, type HomeLock } from '../store/home-lock.js';
import { ensureWritableDir } from '../fsutil.js';
import { configureNative } from '../native/loader.js';
import { startGateway } from '../setup/gateway.js';
import { parseCommandArgs, parsePort } from './args.js';
import { gatewayOptions } from './options.js';
import type { CliContext } from './context.js';

const USAGE = 'pinclaw gateway [--host H] [--port N]';

function nextSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (sig: NodeJS.Signals) => {
      process.off('SIGTERM', on);
      process.off('SIGINT', on);
      resolve(sig);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  });
}

/** `addonsAhead`: the addons' decompression started before this module loaded (prefetchAddons). */
export async function runGateway(args: string[], ctx: CliContext, addonsAhead?: Promise<unknown>): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, gatewayOptions, USAGE);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${USAGE}`);
  // Bad flags are reported before anything on disk is touched.
  const port = values.port !== undefined ? parsePort(values.port, '--port') : undefined;
  ensureWritableDir(ctx.paths.home, 'PINCLAW_HOME');
  // Before anything else reads or writes the home: a second gateway stops here (src/store/home-lock.ts).
  configureNative({ cacheDir: ctx.paths.cache });
  await addonsAhead;
  const lock = lockHome(ctx.paths);
  try {
    // A signal during the start is kept: the gateway drains as soon as it is up.
    const signal = nextSignal();
    const gateway = await startGateway(ctx, { ...(values.host !== undefined ? { host: values.host } : {}), ...(port !== undefined ? { port } : {}) });
    await gateway.drain(await signal);
    return 0;
  } finally {
    lock.release();
  }
}

/** The gateway's lock on its home, or a PinclawError (exit 1) naming who holds it. */
function lockHome(paths: CliContext['paths']): HomeLock {
  const r = tryLockHome(paths.lock);
  if ('held' in r) return r.held;
  const kill = r.busy.pid !== undefined ? `, or kill ${r.busy.pid}` : '';
  throw new PinclawError(
    `${describeHolder(r.busy)} is already running on ${paths.home} (it holds ${paths.lock}); two gateways on one home would both poll Telegram, claim the same GPIO lines and write one queue. Stop it first (systemctl stop pinclaw${kill}), or run this one on another home (--home DIR)`,
  );
}
