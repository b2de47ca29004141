// The systemd units of `pinclaw service`, rendered from a plan (src/ops/service-plan.ts gathers the
// facts). Pure: the same plan always gives the same text, so tests pass every variant through
// `systemd-analyze verify`. Each setting carries a one-line comment; docs/operations.md says more.

export type ServiceMode = 'user' | 'system';

export interface DeviceRule {
  /** a device node (/dev/i2c-1) or a /proc/devices class (char-gpiochip) */
  device: string;
  /** why the gateway needs it, for the comment */
  why: string;
}

export interface MemoryPlan {
  /** the cgroup's MemoryMax=, in MiB */
  maxMiB: number;
  /** V8's old space cap (--max-old-space-size), in MiB */
  heapMiB: number;
  /** V8's semi-space cap (--max-semi-space-size), in MiB */
  semiSpaceMiB: number;
  /** where maxMiB came from, for the comment */
  source: string;
}

export interface ServicePlan {
  mode: ServiceMode;
  /** ExecStart=: the absolute path of the executable and its arguments */
  exec: string[];
  /** $PINCLAW_HOME: the one writable place */
  home: string;
  /** $PINCLAW_CONFIG, when the config file is not $PINCLAW_HOME/config.json */
  configFile?: string;
  /** system mode: the dedicated account (User=, Group=) */
  user?: string;
  /** system mode: supplementary groups that exist on this machine (gpio, i2c, dialout) */
  groups: string[];
  /** system mode: the device nodes allowed past DevicePolicy=closed */
  devices: DeviceRule[];
  memory?: MemoryPlan;
  /** WatchdogSec=; 0 turns the watchdog off */
  watchdogSec: number;
  /** main: only the gateway's own datagrams count; all: the systemd-notify fallback (no addon) */
  notifyAccess: 'main' | 'all';
  /** yes: /home, /root and /run/user are inaccessible; read-only: something pinclaw needs lives there */
  protectHome: 'yes' | 'read-only';
  /** writable besides the home; may not exist (a leading '-' in the unit) */
  extraWritable: string[];
}

export const UNIT_NAME = 'pinclaw.service';
export const RETRY_TIMER = 'pinclaw-retry.timer';

/** Restart pacing: quick retries first, then one try every RETRY_DELAY after the burst is used up. */
export const RESTART_SEC = 5;
export const START_LIMIT_BURST = 5;
export const START_LIMIT_INTERVAL_SEC = 600;
export const RETRY_DELAY = '15min';
export const STOP_TIMEOUT_SEC = 30;

const CONTROL = /[\x00-\x1f\x7f]/;

function checkText(s: string, what: string): void {
  if (CONTROL.test(s)) throw new Error(`${what} ${JSON.stringify(s)} contains a control character; it cannot be written into a systemd unit`);
}

/** A specifier-safe value: systemd expands %x in nearly every setting. */
const noSpecifiers = (s: string) => s.replace(/%/g, '%%');

/**
 * One word of a setting that systemd splits into words (ExecStart=, Environment=, ReadWritePaths=):
 * quoted when it holds anything but plain path characters, with \ and " escaped inside the quotes.
 */
export function unitWord(s: string, what = 'value'): string {
  checkText(s, what);
  const escaped = noSpecifiers(s);
  if (s !== '' && /^[A-Za-z0-9_@+=:,./-]+$/.test(s)) return escaped;
  return `"${escaped.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** ExecStart= additionally expands $VAR and ${VAR}: a literal dollar is $$. */
function execWord(s: string): string {
  return unitWord(s, 'ExecStart argument').replace(/\$/g, '$$$$');
}

/** A setting that takes the rest of the line as one path (EnvironmentFile=): no quoting, only specifiers. */
function plainPath(s: string): string {
  checkText(s, 'path');
  if (s !== s.trim()) throw new Error(`path ${JSON.stringify(s)} starts or ends with white space; it cannot be written into a systemd unit`);
  return noSpecifiers(s);
}

export function nodeOptions(m: MemoryPlan): string {
  return `--max-old-space-size=${m.heapMiB} --max-semi-space-size=${m.semiSpaceMiB}`;
}

export function renderUnit(p: ServicePlan): string {
  const system = p.mode === 'system';
  const L: string[] = [];
  const set = (key: string, value: string | number, why?: string) => {
    if (why) L.push(`# ${why}`);
    L.push(`${key}=${value}`);
  };
  L.push('# Written by `pinclaw service install`; run it again rather than editing this file.');
  L.push('# Every setting is explained in docs/operations.md ("Under systemd").');
  L.push('[Unit]');
  set('Description', 'pinclaw agent runtime (gateway)');
  if (system) {
    set('Wants', 'network-online.target', 'Telegram and the model providers need the network; the gateway retries until it is there.');
    set('After', 'network-online.target');
  }
  set('StartLimitIntervalSec', START_LIMIT_INTERVAL_SEC, `Quick restarts (RestartSec=${RESTART_SEC}) at most ${START_LIMIT_BURST} times in ${START_LIMIT_INTERVAL_SEC / 60} minutes, then the unit fails...`);
  set('StartLimitBurst', START_LIMIT_BURST);
  set('OnFailure', RETRY_TIMER, `...and ${RETRY_TIMER} starts it again in ${RETRY_DELAY}: it never gives up for good.`);
  L.push('');
  L.push('[Service]');
  set('Type', 'notify', 'READY=1 once the gateway listens, STOPPING=1 when it drains.');
  set('NotifyAccess', p.notifyAccess, p.notifyAccess === 'main' ? 'Only the gateway process itself may notify (the addon sends the datagrams).' : 'The addon is not available: the systemd-notify fallback is a child process.');
  if (p.watchdogSec > 0) set('WatchdogSec', p.watchdogSec, 'The gateway sends WATCHDOG=1 only while its event loop keeps up and its database takes a write.');
  set('ExecStart', p.exec.map(execWord).join(' '));
  set('Environment', unitWord(`PINCLAW_HOME=${p.home}`, 'PINCLAW_HOME'));
  if (p.configFile) set('Environment', unitWord(`PINCLAW_CONFIG=${p.configFile}`, 'PINCLAW_CONFIG'));
  set('EnvironmentFile', `-${plainPath(`${p.home}/service.env`)}`, 'Optional KEY=VALUE lines, e.g. ANTHROPIC_API_KEY when the config does not hold the key.');
  if (p.memory) {
    set('MemoryMax', `${p.memory.maxMiB}M`, `${p.memory.source}; the V8 heap cap below stays under it, so V8 fails (and restarts) before the kernel OOM killer.`);
    set('Environment', unitWord(`NODE_OPTIONS=${nodeOptions(p.memory)}`));
  }
  set('OOMPolicy', 'continue', 'An OOM kill of one process (say a command the agent ran) does not stop the rest.');
  set('Restart', 'on-failure', 'A crash, a watchdog timeout or an OOM kill restarts it; a clean exit does not.');
  set('RestartSec', RESTART_SEC);
  set('TimeoutStopSec', STOP_TIMEOUT_SEC, 'SIGTERM drains turns and requests (up to 10 s each) before the exit.');
  if (system && p.user) {
    set('User', p.user, 'A dedicated system account that owns $PINCLAW_HOME.');
    set('Group', p.user);
  }
  if (system && p.groups.length) set('SupplementaryGroups', p.groups.join(' '), 'The groups that own the GPIO, I2C and serial device nodes here.');
  set('NoNewPrivileges', 'yes', 'No setuid escalation, for the gateway and every command it runs.');
  set('ProtectSystem', 'strict', 'The whole file system is read-only...');
  set('ReadWritePaths', [unitWord(p.home, 'PINCLAW_HOME'), ...p.extraWritable.map((d) => unitWord(`-${d}`, 'files.roots entry'))].join(' '), '...except the home (and files.roots, if any).');
  set('ProtectHome', p.protectHome, p.protectHome === 'yes' ? 'Nothing pinclaw needs lives under /home, /root or /run/user.' : 'Home directories are read-only (pinclaw or its files live there; the home above stays writable).');
  set('PrivateTmp', 'yes', 'A /tmp of its own.');
  if (system) {
    set('DevicePolicy', 'closed', p.devices.length ? 'No device nodes beyond /dev/null, /dev/urandom and the like...' : 'No device nodes beyond /dev/null, /dev/urandom and the like (no GPIO, I2C or serial port in use).');
    for (const d of p.devices) set('DeviceAllow', `${unitWord(d.device, 'device')} rw`, `...and ${d.why}`);
  }
  L.push('');
  L.push('[Install]');
  set('WantedBy', system ? 'multi-user.target' : 'default.target');
  return L.join('\n') + '\n';
}

/** The timer OnFailure= starts: one more start of the service after RETRY_DELAY. */
export function renderRetryTimer(): string {
  return [
    '# Written by `pinclaw service install`: started by pinclaw.service\'s OnFailure= when its quick',
    '# restarts are used up; it starts the service again later, so a lasting failure is retried slowly.',
    '[Unit]',
    'Description=pinclaw: start the gateway again after a pause',
    '# Stopping or restarting the service by hand cancels a pending retry.',
    `PartOf=${UNIT_NAME}`,
    '',
    '[Timer]',
    `OnActiveSec=${RETRY_DELAY}`,
    'AccuracySec=1min',
    '# Inactive once it fired, so the next failure can start it again.',
    'RemainAfterElapse=no',
    `Unit=${UNIT_NAME}`,
    '',
  ].join('\n');
}
