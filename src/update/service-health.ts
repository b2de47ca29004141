// The gateway's service, as the updater sees it: is the executable being replaced the one
// pinclaw.service runs, a restart, and the wait for the new process to prove itself. Under systemd
// (Type=notify, WatchdogSec=) that is: the unit active and running with a new main process that
// sent READY=1, and at least one WATCHDOG=1 after that, with no restart in between.
// systemd keeps those facts (ActiveState, MainPID, NRestarts, WatchdogTimestampMonotonic), so the
// updater asks `systemctl show` rather than listening to the gateway itself.
// The systemd helpers are entries of the ops-cli chunk (`pinclaw service`): imported, not copied.
import { realpathSync } from 'node:fs';
import { errorMessage } from '../errors.js';
import type { ServiceMode } from '../ops/service-unit.js';
import type { Systemctl } from '../ops/systemd.js';

export interface ServiceHealth {
  ok: boolean;
  /** what was seen, in words: for the owner when it is not ok */
  detail: string;
}

export interface GatewayService {
  /** e.g. "pinclaw.service (systemctl --user)" */
  name: string;
  restart(): void;
  /** resolves once the restarted gateway is healthy, or with why not after `seconds` */
  waitHealthy(seconds: number): Promise<ServiceHealth>;
}

const PROPS = ['LoadState', 'ExecStart', 'ActiveState', 'SubState', 'MainPID', 'NRestarts', 'Result', 'InvocationID', 'WatchdogUSec', 'WatchdogTimestampMonotonic'] as const;

/** The path= of `systemctl show -p ExecStart`: "{ path=/usr/local/bin/pinclaw ; argv[]=... }". */
export function execPathOf(execStart: string): string | undefined {
  return /(?:^|[{;]\s*)path=([^;]+?)\s*;/.exec(execStart)?.[1];
}

/** The file a path names through symbolic links (ExecStart may name a link to the executable). */
function realPath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/**
 * The systemd service that runs `executable`, or undefined when there is none (no systemctl, no
 * systemd, no pinclaw.service, or one that runs another executable). The system manager for root,
 * the user's otherwise: where `pinclaw service install` puts it.
 */
export async function findService(executable: string, env: NodeJS.ProcessEnv, mode: ServiceMode = process.getuid?.() === 0 ? 'system' : 'user'): Promise<GatewayService | undefined> {
  const { firstLine, onPath, systemctl } = await import('../ops/systemd.js');
  const { UNIT_NAME } = await import('../ops/service-unit.js');
  if (!onPath('systemctl', env)) return undefined;
  let sd: Systemctl;
  try {
    sd = systemctl(mode, env);
  } catch {
    return undefined;
  }
  const first = sd.show(UNIT_NAME, PROPS);
  const exec = execPathOf(first.ExecStart ?? '');
  if (first.LoadState !== 'loaded' || exec === undefined || realPath(exec) !== executable) return undefined;
  return systemdService(sd, UNIT_NAME, firstLine);
}

function systemdService(sd: Systemctl, UNIT_NAME: string, firstLine: (r: ReturnType<Systemctl['run']>) => string): GatewayService {
  const label = `${UNIT_NAME} (systemctl${sd.mode === 'user' ? ' --user' : ''})`;
  let before: Record<string, string> = {};
  return {
    name: label,
    restart() {
      before = sd.show(UNIT_NAME, PROPS);
      // --no-block: the wait below is ours, bounded by update.healthSeconds, not systemctl's job timeout.
      const r = sd.run(['restart', '--no-block', UNIT_NAME]);
      if (r.code !== 0) throw new Error(`systemctl restart ${UNIT_NAME} failed: ${firstLine(r)}`);
    },
    async waitHealthy(seconds) {
      const deadline = Date.now() + seconds * 1000;
      let readyPing: string | undefined;
      let last: Record<string, string> = {};
      for (;;) {
        try {
          last = sd.show(UNIT_NAME, PROPS);
        } catch (err) {
          last = { error: errorMessage(err) };
        }
        // A new InvocationID is the start we asked for; until it shows, what systemd says is about the old one.
        const fresh = (last.InvocationID ?? '') !== '' && last.InvocationID !== before.InvocationID;
        const restarted = Number(last.NRestarts ?? 0) > Number(before.NRestarts ?? 0);
        if (fresh && (last.ActiveState === 'failed' || restarted)) {
          return { ok: false, detail: `the new gateway ${restarted ? 'exited and was restarted by systemd' : `exited (${last.Result ?? 'unknown result'})`} before it was healthy` };
        }
        if (fresh && last.ActiveState === 'active' && last.SubState === 'running' && last.MainPID !== '0') {
          // systemd notes the time of the last WATCHDOG=1 (and resets it when READY=1 arms the
          // watchdog): healthy once it moved on after READY, i.e. the gateway's own check passed.
          // `show` prints the span formatted ("1min") or in µs; 0 or infinity means no watchdog.
          const span = last.WatchdogUSec ?? '0';
          const watchdog = span !== '' && span !== '0' && span !== 'infinity';
          if (!watchdog) return { ok: true, detail: 'READY=1 (the unit has no watchdog)' };
          readyPing ??= last.WatchdogTimestampMonotonic ?? '0';
          if ((last.WatchdogTimestampMonotonic ?? '0') !== readyPing) return { ok: true, detail: 'READY=1 and WATCHDOG=1' };
        }
        if (Date.now() >= deadline) {
          const state = `${last.ActiveState ?? '?'}/${last.SubState ?? '?'}`;
          const what = !fresh || last.ActiveState !== 'active' ? `did not send READY=1 (the unit is ${state})` : 'sent READY=1 but no WATCHDOG=1 (its health check never passed)';
          return { ok: false, detail: `the new gateway ${what} within ${seconds} s (update.healthSeconds)` };
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    },
  };
}
