// The facts behind the unit `pinclaw service` writes: which executable, which home, which account
// and groups, which device nodes, how much memory. Read from the config and the machine (through
// HostRoots and a group file, so tests describe a Raspberry Pi as a directory tree); the renderer
// (service-unit.ts) turns the plan into text.
import { realpathSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { PinclawConfig } from '../config/schema.js';
import type { Paths } from '../paths.js';
import { gpioChips } from '../hardware/boards/gpiochips.js';
import { HOST_ROOTS, hostPath, readText, type HostRoots } from '../hardware/boards/host-roots.js';
import { detectWith } from '../hardware/boards/detect.js';
import { loadBoardRegistry, userBoardsDir } from '../hardware/boards/registry.js';
import { chooseBoard } from '../hardware/boards/select.js';
import { busNumbers } from '../hardware/i2c/buses.js';
import { isSea } from '../native/sea.js';
import type { DeviceRule, MemoryPlan, ServiceMode, ServicePlan } from './service-unit.js';

export interface PlanInput {
  mode: ServiceMode;
  paths: Paths;
  config: PinclawConfig;
  /** ExecStart's program and arguments before `gateway`; default: this executable (runningExec) */
  exec?: string[];
  /** main when the addon sends sd_notify, all for the systemd-notify fallback */
  notifyAccess: 'main' | 'all';
  roots?: HostRoots;
  /** /etc/group */
  groupFile?: string;
  /** the installing user's group ids (process.getgroups), for the --user advice */
  userGids?: number[];
}

export interface PlannedService {
  plan: ServicePlan;
  /** things the owner should know: missing groups, a home the service user cannot reach */
  notes: string[];
  /** --system: reasons the service user could not run this (install refuses; dry-run tells) */
  blockers: string[];
}

/**
 * The program the unit starts: the single executable itself, or node with the bundle's launcher
 * (bin/pinclaw.cjs or dist/pinclaw.cjs, whichever started this process).
 */
export function runningExec(): string[] {
  if (isSea()) return [process.execPath];
  const script = process.argv[1];
  if (!script) throw new Error('cannot tell which script runs pinclaw (process.argv[1] is empty)');
  return [process.execPath, realpathSync(script)];
}

/** name → gid and members, from /etc/group. */
export function readGroups(file = '/etc/group'): Map<string, { gid: number; members: string[] }> {
  const out = new Map<string, { gid: number; members: string[] }>();
  for (const line of (readText(file) ?? '').split('\n')) {
    const [name, , gid, members] = line.split(':');
    if (!name || gid === undefined || !/^\d+$/.test(gid)) continue;
    out.set(name, { gid: Number(gid), members: (members ?? '').split(',').filter(Boolean) });
  }
  return out;
}

/** MemTotal from /proc/meminfo, in MiB; null when it cannot be read. */
export function memTotalMiB(roots: HostRoots = HOST_ROOTS): number | null {
  const m = /^MemTotal:\s+(\d+)\s+kB/m.exec(readText(join(roots.proc, 'meminfo')) ?? '');
  return m ? Math.floor(Number(m[1]) / 1024) : null;
}

/**
 * The V8 caps for a MemoryMax: half of it for the old space, a small young generation (Node 24's
 * default semi-space of 64 MiB triples to 192 MiB of heap limit, more than a Pi Zero's whole budget).
 * What is left covers the addon, SQLite's cache, buffers and the executable's own pages.
 */
export function memoryPlan(maxMiB: number, source: string): MemoryPlan {
  return { maxMiB, heapMiB: Math.max(32, Math.floor(maxMiB / 2)), semiSpaceMiB: maxMiB < 512 ? 8 : 16, source };
}

function boardBudget(input: PlanInput, roots: HostRoots): { id: string; budgetMiB: number } | undefined {
  const registry = loadBoardRegistry({ userDir: userBoardsDir(input.paths) });
  const choice = chooseBoard(registry, input.config.board.profile, detectWith(registry, roots));
  const profile = choice.loaded?.profile;
  return profile?.memory ? { id: profile.id, budgetMiB: profile.memory.budgetMiB } : undefined;
}

function planMemory(input: PlanInput, roots: HostRoots, notes: string[]): MemoryPlan | undefined {
  const own = input.config.service.memoryMaxMb;
  if (own !== undefined) return memoryPlan(own, 'service.memoryMaxMb');
  const board = boardBudget(input, roots);
  if (board) return memoryPlan(board.budgetMiB, `the memory budget of the ${board.id} board profile`);
  const total = memTotalMiB(roots);
  if (total === null) {
    notes.push('no board profile and /proc/meminfo unreadable: the unit sets no MemoryMax (set service.memoryMaxMb)');
    return undefined;
  }
  const share = Math.min(1024, Math.max(128, Math.floor(total / 4)));
  return memoryPlan(share, `a quarter of this machine's ${total} MiB, between 128 and 1024 (no board profile)`);
}

/** USB serial ttys come and go (a board replugged may get the next minor): allowed by class. */
const HOTPLUG_TTY = /^(ttyACM|ttyUSB)\d+$/;

interface DeviceNeeds {
  rules: DeviceRule[];
  groups: { name: string; why: string }[];
}

function planDevices(input: PlanInput, roots: HostRoots): DeviceNeeds {
  const hw = input.config.hardware;
  const rules: DeviceRule[] = [];
  const groups: { name: string; why: string }[] = [];
  // GPIO: the gateway's GPIO tools reach every chip; chip numbers change between kernels (the Pi 5's
  // header moved from gpiochip4 to gpiochip0), so the class rather than today's numbers.
  const chips = gpioChips(roots).map((c) => c.name);
  const namedLines = hw.lines.some((l) => l.line !== undefined && !l.line.includes(':'));
  if (chips.length || namedLines || input.config.board.profile !== undefined) {
    rules.push({ device: 'char-gpiochip', why: `the GPIO chips (${chips.length ? chips.map((c) => `/dev/${c}`).join(', ') : 'none present now'})` });
    groups.push({ name: 'gpio', why: 'the GPIO chips' });
  }
  // I2C: the buses present (the I2C tools reach each) and those the sensor triggers read.
  const buses = [...new Set([...busNumbers(roots.dev), ...hw.sensorTriggers.flatMap((s) => (s.bus === undefined ? [] : [s.bus]))])].sort((a, b) => a - b);
  if (buses.length) {
    rules.push({ device: 'char-i2c', why: `the I2C buses (${buses.map((b) => `/dev/i2c-${b}`).join(', ')})` });
    groups.push({ name: 'i2c', why: 'the I2C buses' });
  }
  // Serial: the ports of hardware.devices (socket:// ports need no device).
  const ports = hw.devices.flatMap((d) => (d.port?.startsWith('/dev/') ? [d.port] : []));
  for (const port of ports) {
    let tty = basename(port);
    const local = hostPath(roots, port);
    if (local) {
      try {
        tty = basename(realpathSync(local));
      } catch {
        // not plugged in now: judged by its name
      }
    }
    const m = HOTPLUG_TTY.exec(tty);
    const rule = m ? { device: `char-${m[1]}`, why: `USB serial boards (${port}${tty !== basename(port) ? ` is ${tty} now` : ''}; replugged it may get another number)` } : { device: port, why: `the serial port ${port}` };
    if (!rules.some((r) => r.device === rule.device)) rules.push(rule);
  }
  if (ports.length) groups.push({ name: 'dialout', why: 'the serial ports' });
  return { rules, groups };
}

const HOME_TREES = ['/home', '/root', '/run/user'];
const underHomes = (p: string) => HOME_TREES.some((h) => p === h || p.startsWith(`${h}/`));

/** Directories and files on the way to `path` that others (the service account) cannot pass or read. */
function unreachable(path: string, file: 'read' | 'exec' | 'dir'): string[] {
  const out: string[] = [];
  for (let d = dirname(path); ; d = dirname(d)) {
    try {
      if ((statSync(d).mode & 0o001) === 0) out.push(`${d} is not searchable by other users (mode ${(statSync(d).mode & 0o777).toString(8)})`);
    } catch {
      // does not exist yet: install creates it
    }
    if (d === '/') break;
  }
  try {
    const mode = statSync(path).mode;
    const need = file === 'exec' ? 0o005 : file === 'read' ? 0o004 : 0;
    if ((mode & need) !== need) out.push(`${path} is not ${file === 'exec' ? 'executable' : 'readable'} by other users (mode ${(mode & 0o777).toString(8)})`);
  } catch {
    // checked elsewhere (verify says when the executable is missing)
  }
  return out;
}

export function planService(input: PlanInput): PlannedService {
  const roots = input.roots ?? HOST_ROOTS;
  const { config, paths, mode } = input;
  const notes: string[] = [];
  const blockers: string[] = [];
  const exec = [...(input.exec ?? runningExec()), 'gateway'];
  const configFile = paths.config === join(paths.home, 'config.json') ? undefined : paths.config;
  const extraWritable = config.files.roots.filter((r) => r.startsWith('/'));

  const devices = planDevices(input, roots);
  const groupDb = readGroups(input.groupFile);
  const groups: string[] = [];
  for (const g of devices.groups) {
    const entry = groupDb.get(g.name);
    if (!entry) {
      notes.push(`no '${g.name}' group on this machine: ${g.why} are usable only if their device nodes let the service in (ls -l /dev)`);
      continue;
    }
    if (mode === 'system') groups.push(g.name);
    else if (input.userGids && !input.userGids.includes(entry.gid)) {
      notes.push(`you are not in the '${g.name}' group, which ${g.why} need: sudo usermod -aG ${g.name} $USER, then log in again`);
    }
  }
  if (mode === 'user' && devices.rules.length) notes.push('a user service has no device filter (DevicePolicy= needs the system manager): your groups decide which devices it opens');

  const needed = [paths.home, ...(configFile ? [configFile] : []), ...exec.filter((a) => a.startsWith('/')), ...config.files.roots, ...config.files.readOnlyRoots, ...config.sandbox.allowedRoots];
  const protectHome = needed.some(underHomes) ? 'read-only' : 'yes';

  const user = mode === 'system' ? config.service.user : undefined;
  if (mode === 'system') {
    if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(config.service.user)) blockers.push(`service.user '${config.service.user}' is not a valid account name`);
    for (const p of unreachable(paths.home, 'dir')) blockers.push(`the service account ${user} cannot reach PINCLAW_HOME: ${p}; choose a home it can reach, e.g. --home /var/lib/pinclaw`);
    const prog = exec[0]!;
    for (const p of unreachable(prog, 'exec')) blockers.push(`the service account ${user} cannot run ${prog}: ${p}; install pinclaw somewhere like /usr/local/bin`);
    if (exec.length > 2) for (const p of unreachable(exec[1]!, 'read')) blockers.push(`the service account ${user} cannot read ${exec[1]}: ${p}`);
  }

  const watchdogSec = config.service.watchdogSec;
  if (input.notifyAccess === 'all') notes.push("the pinclaw addon is not available: NotifyAccess=all lets the systemd-notify fallback (a child process) report readiness and the watchdog");

  return {
    plan: {
      mode,
      exec,
      home: paths.home,
      configFile,
      user,
      groups,
      devices: mode === 'system' ? devices.rules : [],
      memory: planMemory(input, roots, notes),
      watchdogSec,
      notifyAccess: input.notifyAccess,
      protectHome,
      extraWritable,
    },
    notes,
    blockers,
  };
}
