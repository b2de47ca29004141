// Where pinclaw keeps its state. Every command resolves these the same way (flag, env, default).
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export interface Paths {
  home: string;
  config: string;
  database: string;
  secretKey: string;
  workspace: string;
  cache: string;
  /** held by the running gateway (or a restore) for its whole life: one per home (src/store/home-lock.ts) */
  lock: string;
  /** the log of a gateway not run by systemd (src/log-file.ts; `pinclaw logs` reads it) */
  logFile: string;
}

export interface PathOptions {
  home?: string;
  config?: string;
}

export function resolvePaths(opts: PathOptions = {}, env: NodeJS.ProcessEnv = process.env): Paths {
  const home = resolve(opts.home ?? env.PINCLAW_HOME ?? join(homedir(), '.pinclaw'));
  const config = resolve(opts.config ?? env.PINCLAW_CONFIG ?? join(home, 'config.json'));
  return {
    home,
    config,
    database: join(home, 'pinclaw.db'),
    secretKey: join(home, 'secret.key'),
    workspace: join(home, 'workspace'),
    cache: join(home, 'cache'),
    lock: join(home, 'gateway.lock'),
    logFile: join(home, 'logs', 'gateway.log'),
  };
}
