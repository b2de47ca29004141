// doctor's 'service' check: is pinclaw.service installed (for the system or this user), is it
// active, and does it have its watchdog. systemctl is asked only when a unit file exists.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../errors.js';
import { UNIT_NAME, type ServiceMode } from './service-unit.js';
import { systemctl, unitDir } from './systemd.js';

export interface ServiceCheck {
  name: 'service';
  state: 'ok' | 'warn';
  detail: string;
}

export function serviceCheck(env: NodeJS.ProcessEnv): ServiceCheck {
  const found = (['system', 'user'] as ServiceMode[]).map((mode) => ({ mode, file: join(unitDir(mode, env), UNIT_NAME) })).find((u) => existsSync(u.file));
  if (!found) return { name: 'service', state: 'ok', detail: `no ${UNIT_NAME} installed; \`pinclaw service install\` runs the gateway under systemd` };
  const { mode, file } = found;
  const watchdogInFile = /^WatchdogSec=(?!0\s*$)\S/m.test(readFileSync(file, 'utf8'));
  let props: Record<string, string>;
  try {
    props = systemctl(mode, env).show(UNIT_NAME, ['ActiveState', 'SubState', 'Result', 'NRestarts', 'WatchdogUSec']);
  } catch (err) {
    return { name: 'service', state: 'warn', detail: `${file} is installed, but ${errorMessage(err)}` };
  }
  const usec = Number(props.WatchdogUSec ?? 0);
  const watchdog = usec > 0 ? `watchdog ${usec / 1e6} s` : watchdogInFile ? 'watchdog in the file but not loaded (systemctl daemon-reload)' : 'no watchdog (service.watchdogSec is 0)';
  const active = props.ActiveState === 'active';
  const detail = `${file} (${mode}): ${props.ActiveState ?? '?'} (${props.SubState ?? '?'})${props.Result && props.Result !== 'success' ? `, last result ${props.Result}` : ''}, ${props.NRestarts ?? '?'} automatic restarts, ${watchdog}`;
  return { name: 'service', state: active && usec > 0 ? 'ok' : 'warn', detail: active ? detail : `${detail}; journalctl${mode === 'user' ? ' --user' : ''} -u pinclaw says why` };
}
