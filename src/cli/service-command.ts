// `pinclaw service install|uninstall|status [--user|--system] [--dry-run]`: the systemd unit of the
// gateway (src/ops/service-unit.ts renders it, src/ops/service-plan.ts gathers its facts). install
// verifies the unit with systemd-analyze before it writes anything, then enables and (re)starts it;
// uninstall disables, stops and removes it; status shows what systemd and the gateway itself say.
import { existsSync, mkdirSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/index.js';
import type { PinclawConfig } from '../config/schema.js';
import { EXIT, PinclawError, UsageError, errorMessage } from '../errors.js';
import { ensureWritableDir, writeFileAtomic } from '../fsutil.js';
import { readText } from '../hardware/boards/host-roots.js';
import { nativeInfo } from '../native/index.js';
import { configureNative } from '../native/loader.js';
import { planService, type PlannedService } from '../ops/service-plan.js';
import { RETRY_TIMER, UNIT_NAME, renderRetryTimer, renderUnit, type ServiceMode } from '../ops/service-unit.js';
import { firstLine, onPath, runTool, systemctl, unitDir, verifyUnits, type Systemctl } from '../ops/systemd.js';
import { gatewayHealth } from '../ops/gateway-health.js';
import { parseCommandArgs } from './args.js';
import { serviceOptions } from './options.js';
import type { CliContext } from './context.js';

const USAGE = 'pinclaw service install|uninstall|status [--user|--system] [--dry-run]';

export async function runService(sub: string, args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, serviceOptions, USAGE);
  if (positionals.length) throw new UsageError(`service ${sub}: unexpected argument '${positionals[0]}'\nusage: ${USAGE}`);
  if (values.user && values.system) throw new UsageError(`service: --user and --system exclude each other\nusage: ${USAGE}`);
  if (values['dry-run'] && sub !== 'install') throw new UsageError(`service: --dry-run is for install (it prints the unit)\nusage: ${USAGE}`);
  // Root installs for the machine, anyone else for themselves, unless told.
  const mode: ServiceMode = values.system ? 'system' : values.user ? 'user' : process.getuid?.() === 0 ? 'system' : 'user';
  switch (sub) {
    case 'install':
      return install(mode, values['dry-run'] === true, ctx);
    case 'uninstall':
      return uninstall(mode, ctx);
    case 'status':
      return status(mode, ctx);
    default:
      throw new UsageError(`service: unknown subcommand '${sub}'\nusage: ${USAGE}`);
  }
}

/**
 * main when pinclaw's addon loads (it sends sd_notify from the gateway process itself), all for the
 * systemd-notify fallback. Checked with a scratch cache, so a dry run writes nothing to the home.
 */
function notifyAccessFor(config: PinclawConfig): 'main' | 'all' {
  if (!config.native.enabled) return 'all';
  const scratch = mkdtempSync(join(tmpdir(), 'pinclaw-service-'));
  try {
    configureNative({ cacheDir: scratch, enabled: true });
    return nativeInfo() ? 'main' : 'all';
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function plan(mode: ServiceMode, ctx: CliContext): { config: PinclawConfig; planned: PlannedService; unit: string; timer: string; dir: string } {
  const config = loadConfig(ctx.paths, ctx.env);
  const planned = planService({ mode, paths: ctx.paths, config, notifyAccess: notifyAccessFor(config), userGids: process.getgroups?.() });
  return { config, planned, unit: renderUnit(planned.plan), timer: renderRetryTimer(), dir: unitDir(mode, ctx.env) };
}

function must(sd: Systemctl, args: string[], hint = ''): void {
  const r = sd.run(args);
  if (r.code !== 0) throw new PinclawError(`systemctl${sd.mode === 'user' ? ' --user' : ''} ${args.join(' ')} failed: ${firstLine(r)}${hint}`);
}

async function install(mode: ServiceMode, dryRun: boolean, ctx: CliContext): Promise<number> {
  if (dryRun) {
    const p = plan(mode, ctx);
    const unitFile = join(p.dir, UNIT_NAME);
    const timerFile = join(p.dir, RETRY_TIMER);
    // What install would do besides writing the files, said rather than done.
    const user = p.planned.plan.user;
    const steps = [
      ...(user && !accountExists(user) ? [`install would create the system account ${user}: ${useraddArgs(user, ctx.paths.home).join(' ')}`] : []),
      ...(mode === 'user' && !lingering() ? [`install would turn on lingering (loginctl enable-linger ${userInfo().username}), so the service starts at boot`] : []),
    ];
    const notes = [...steps, ...p.planned.notes, ...p.planned.blockers];
    if (ctx.json) {
      ctx.out(JSON.stringify({ mode, unitFile, unit: p.unit, timerFile, timer: p.timer, notes, blockers: p.planned.blockers }, null, 2));
    } else {
      ctx.out(`# ==> ${unitFile} <==`);
      ctx.out(p.unit);
      ctx.out(`# ==> ${timerFile} <==`);
      ctx.out(p.timer.trimEnd());
      for (const n of notes) ctx.err(`note: ${n}`);
    }
    return EXIT.ok;
  }
  if (mode === 'system' && process.getuid?.() !== 0) throw new PinclawError('a system service is installed by root: sudo pinclaw service install --system (or --user to run it as yourself)');
  // Before anything is touched: is there a systemd to install into?
  const sd = systemctl(mode, ctx.env);
  const p = plan(mode, ctx);
  if (p.planned.blockers.length) throw new PinclawError(`nothing was installed:\n  ${p.planned.blockers.join('\n  ')}`);
  const verified = verifyUnits([{ name: UNIT_NAME, text: p.unit }, { name: RETRY_TIMER, text: p.timer }], mode, ctx.env);
  if (verified && !verified.ok) throw new PinclawError(`systemd-analyze verify rejects the unit, nothing was installed:\n${verified.output}`);
  if (!verified) ctx.err('note: systemd-analyze is not installed, so the unit was not verified first');
  if (verified?.others) ctx.err(`note: systemd-analyze verify said about other units of this machine:\n${verified.others}`);
  for (const n of p.planned.notes) ctx.err(`note: ${n}`);

  const home = ctx.paths.home;
  if (mode === 'system') {
    const user = p.planned.plan.user!;
    if (ensureAccount(user, home, ctx)) ctx.out(`created the system account ${user} (home ${home}, no login shell)`);
    ensureWritableDir(home, 'PINCLAW_HOME');
    const chown = onPath('chown', ctx.env);
    const r = chown ? runTool(chown, ['-R', `${user}:${user}`, home], ctx.env) : { code: null, stdout: '', stderr: 'chown is not on PATH' };
    if (r.code !== 0) throw new PinclawError(`cannot give ${home} to ${user}: ${firstLine(r)}`);
  } else {
    ensureWritableDir(home, 'PINCLAW_HOME');
  }
  mkdirSync(p.dir, { recursive: true, mode: 0o755 });
  const unitFile = join(p.dir, UNIT_NAME);
  writeFileAtomic(unitFile, p.unit, 0o644);
  writeFileAtomic(join(p.dir, RETRY_TIMER), p.timer, 0o644);
  ctx.out(`wrote ${unitFile} and ${RETRY_TIMER}${verified ? ' (systemd-analyze verify: ok)' : ''}`);
  must(sd, ['daemon-reload']);
  must(sd, ['enable', UNIT_NAME]);
  // restart, not start: a second install applies the new unit to a running gateway.
  const journal = `journalctl${mode === 'user' ? ' --user' : ''} -u pinclaw`;
  must(sd, ['restart', UNIT_NAME], `; see ${journal}`);
  ctx.out(`enabled and started ${UNIT_NAME} (${mode}); logs: ${journal}; state: pinclaw service status${mode === 'user' ? ' --user' : ''}`);
  if (mode === 'user') linger(ctx);
  return EXIT.ok;
}

const accountExists = (user: string) => (readText('/etc/passwd') ?? '').split('\n').some((l) => l.startsWith(`${user}:`));

/** A system account without a login shell, its home the pinclaw home (which install creates itself). */
function useraddArgs(user: string, home: string): string[] {
  const shell = existsSync('/usr/sbin/nologin') ? '/usr/sbin/nologin' : '/bin/false';
  return ['useradd', '--system', '--user-group', '--home-dir', home, '--no-create-home', '--shell', shell, user];
}

/** Creates the service account when it is missing; true when it was created. */
function ensureAccount(user: string, home: string, ctx: CliContext): boolean {
  if (accountExists(user)) return false;
  const useradd = onPath('useradd', ctx.env);
  if (!useradd) throw new PinclawError(`the account ${user} does not exist and useradd is not on PATH to create it`);
  const r = runTool(useradd, useraddArgs(user, home).slice(1), ctx.env);
  if (r.code !== 0) throw new PinclawError(`useradd ${user} failed: ${firstLine(r)}`);
  return true;
}

const lingering = () => existsSync(join('/var/lib/systemd/linger', userInfo().username));

/** A user's services run at boot (and after logout) only while lingering is on. */
function linger(ctx: CliContext): void {
  const name = userInfo().username;
  if (lingering()) return;
  const loginctl = onPath('loginctl', ctx.env);
  const r = loginctl ? runTool(loginctl, ['enable-linger', name], ctx.env) : undefined;
  if (r?.code === 0) ctx.out(`turned on lingering for ${name} (loginctl enable-linger): the service starts at boot, without a login`);
  else ctx.err(`note: until lingering is on, the service runs only while ${name} is logged in: sudo loginctl enable-linger ${name}${r ? ` (loginctl said: ${firstLine(r)})` : ''}`);
}

async function uninstall(mode: ServiceMode, ctx: CliContext): Promise<number> {
  const sd = systemctl(mode, ctx.env);
  const dir = unitDir(mode, ctx.env);
  const files = [UNIT_NAME, RETRY_TIMER].map((n) => join(dir, n));
  if (!files.some((f) => existsSync(f))) {
    ctx.out(`no ${UNIT_NAME} in ${dir}: nothing to remove${mode === 'user' ? ' (installed with --system?)' : ' (installed with --user?)'}`);
    return EXIT.ok;
  }
  const r = sd.run(['disable', '--now', UNIT_NAME]);
  if (r.code !== 0) ctx.err(`note: systemctl disable --now ${UNIT_NAME}: ${firstLine(r)}`);
  sd.run(['stop', RETRY_TIMER]);
  for (const f of files) if (existsSync(f)) unlinkSync(f);
  must(sd, ['daemon-reload']);
  sd.run(['reset-failed', UNIT_NAME]);
  ctx.out(`stopped, disabled and removed ${files[0]} and ${RETRY_TIMER}`);
  ctx.out(`kept: ${ctx.paths.home}${mode === 'system' ? ` and the account ${loadConfig(ctx.paths, ctx.env).service.user} (userdel removes it)` : ''}`);
  return EXIT.ok;
}

const PROPS = ['LoadState', 'UnitFileState', 'FragmentPath', 'ActiveState', 'SubState', 'Result', 'MainPID', 'NRestarts', 'WatchdogUSec', 'MemoryCurrent', 'ActiveEnterTimestamp'] as const;

const ago = (iso: string) => {
  const s = Math.round((Date.now() - Date.parse(iso)) / 1000);
  return Number.isFinite(s) ? `${s} s ago` : 'unknown';
};

async function status(mode: ServiceMode, ctx: CliContext): Promise<number> {
  const config = loadConfig(ctx.paths, ctx.env);
  let unit: Record<string, string> | undefined;
  let timer: string | undefined;
  let systemdError: string | undefined;
  try {
    const sd = systemctl(mode, ctx.env);
    unit = sd.show(UNIT_NAME, PROPS);
    timer = sd.show(RETRY_TIMER, ['ActiveState']).ActiveState;
  } catch (err) {
    systemdError = errorMessage(err);
  }
  const gw = await gatewayHealth(config, ctx);
  const active = unit?.ActiveState === 'active';
  const ok = active && gw.healthz.ok;
  if (ctx.json) {
    ctx.out(JSON.stringify({ ok, mode, systemd: systemdError ? { error: systemdError } : { ...unit, retryTimer: timer }, gateway: gw }, null, 2));
  } else {
    if (systemdError) ctx.out(`service: unknown: ${systemdError}`);
    else if (!unit || unit.LoadState === 'not-found') ctx.out(`service: ${UNIT_NAME} is not installed (${mode}); pinclaw service install${mode === 'user' ? ' --user' : ' --system'}`);
    else {
      const wd = Number(unit.WatchdogUSec ?? 0);
      ctx.out(`service: ${UNIT_NAME} (${mode}) ${unit.ActiveState} (${unit.SubState})${unit.Result && unit.Result !== 'success' ? `, last result ${unit.Result}` : ''}`);
      ctx.out(`  main PID ${unit.MainPID ?? '?'}, ${unit.NRestarts ?? '?'} automatic restarts, watchdog ${wd > 0 ? `${wd / 1e6} s` : 'off'}${unit.ActiveEnterTimestamp ? `, active since ${unit.ActiveEnterTimestamp}` : ''}`);
      const mem = Number(unit.MemoryCurrent);
      ctx.out(`  unit file ${unit.FragmentPath || '?'} (${unit.UnitFileState || '?'})${Number.isFinite(mem) && mem < 2 ** 63 ? `, memory ${(mem / 2 ** 20).toFixed(1)} MiB` : ''}`);
      if (timer === 'active') ctx.out(`  quick restarts used up: ${RETRY_TIMER} starts it again later`);
    }
    ctx.out(`gateway: ${gw.url ?? '(no URL)'} /healthz ${gw.healthz.ok ? 'ok' : `not ok: ${gw.healthz.detail}`}`);
    const facts = [
      gw.aliveAt ? `last healthy ${gw.aliveAt} (${ago(gw.aliveAt)})` : 'no watchdog check recorded',
      gw.starts !== undefined ? `${gw.starts} start${gw.starts === 1 ? '' : 's'} recorded` : undefined,
      gw.startedAt ? `last start ${gw.startedAt}` : undefined,
      gw.store ? `the store cannot be read: ${gw.store}` : undefined,
    ].filter(Boolean);
    ctx.out(`  ${facts.join(', ')}`);
  }
  if (systemdError) ctx.err(`pinclaw: ${systemdError}`);
  return ok ? EXIT.ok : EXIT.failure;
}
