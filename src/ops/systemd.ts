// The systemd tools `pinclaw service` and doctor use: systemctl (for a user or the system manager),
// systemd-analyze verify, and where unit files live. Tools are looked up on $PATH only, so a test
// can take them away; errors name what is missing.
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PinclawError } from '../errors.js';
import type { ServiceMode } from './service-unit.js';

export interface ToolRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The absolute path of a program on $PATH, or null. */
export function onPath(name: string, env: NodeJS.ProcessEnv): string | null {
  for (const dir of (env.PATH ?? DEFAULT_PATH).split(':')) {
    if (!dir.startsWith('/')) continue;
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

export function runTool(file: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 120_000): ToolRun {
  const r = spawnSync(file, args, { env, encoding: 'utf8', timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.error) return { code: null, stdout: '', stderr: r.error.message };
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The first line of a tool's complaint, for an error message. */
export function firstLine(r: ToolRun): string {
  return (r.stderr.trim() || r.stdout.trim()).split('\n')[0] || `exit ${r.code}`;
}

/** Where install writes the unit files: the system's admin directory, or the user's config directory. */
export function unitDir(mode: ServiceMode, env: NodeJS.ProcessEnv): string {
  if (mode === 'system') return '/etc/systemd/system';
  const config = env.XDG_CONFIG_HOME?.startsWith('/') ? env.XDG_CONFIG_HOME : join(env.HOME ?? '/', '.config');
  return join(config, 'systemd', 'user');
}

export interface Systemctl {
  file: string;
  mode: ServiceMode;
  run(args: string[]): ToolRun;
  /** `systemctl show` of one unit as a key → value map */
  show(unit: string, props: readonly string[]): Record<string, string>;
}

/**
 * systemctl for the chosen manager, after checking there is one to talk to. Throws a PinclawError
 * (exit 1) naming what is missing: the program, a running systemd, or the user's manager.
 */
export function systemctl(mode: ServiceMode, env: NodeJS.ProcessEnv): Systemctl {
  const file = onPath('systemctl', env);
  if (!file) {
    throw new PinclawError(`systemctl is not on PATH: this machine does not run systemd (or its tools are missing), so there is no service to ${mode === 'user' ? 'set up for you' : 'set up'}; run \`pinclaw gateway\` in the foreground, or see the unit with \`pinclaw service install --dry-run\``);
  }
  const pre = mode === 'user' ? ['--user'] : [];
  const run = (args: string[]) => runTool(file, [...pre, ...args], env);
  const probe = run(['show', '--property=Version', '--value']);
  if (probe.code !== 0) {
    const said = firstLine(probe);
    const what = /not been booted with systemd|host is down/i.test(said)
      ? 'systemd is not running on this machine (not booted with systemd as PID 1, e.g. a container)'
      : mode === 'user'
        ? 'there is no systemd user manager to talk to (log in on the machine, or set XDG_RUNTIME_DIR=/run/user/$(id -u); as root use --system)'
        : 'systemd does not answer';
    throw new PinclawError(`${what}: \`systemctl${mode === 'user' ? ' --user' : ''} show\` said: ${said}`);
  }
  return {
    file,
    mode,
    run,
    show(unit, props) {
      const r = run(['show', unit, `--property=${props.join(',')}`]);
      const out: Record<string, string> = {};
      if (r.code !== 0) return out;
      for (const line of r.stdout.split('\n')) {
        const eq = line.indexOf('=');
        if (eq > 0) out[line.slice(0, eq)] = line.slice(eq + 1);
      }
      return out;
    },
  };
}

/** "systemd 252 (252.39-1~deb12u2)" → 252; null when neither tool is there or says. */
export function systemdVersion(env: NodeJS.ProcessEnv): number | null {
  for (const tool of ['systemctl', 'systemd-analyze']) {
    const file = onPath(tool, env);
    if (!file) continue;
    const m = /^systemd (\d+)/m.exec(runTool(file, ['--version'], env, 10_000).stdout);
    if (m) return Number(m[1]);
  }
  return null;
}

export interface VerifyResult {
  ok: boolean;
  /** what systemd-analyze said about these units (a warning counts as a failure: it exits 0 on an unknown key) */
  output: string;
  /** what it said about other units it loaded on the way (the machine's own, e.g. network-online.target's) */
  others: string;
}

/**
 * `systemd-analyze verify` of unit texts, written to a scratch directory under their names; null
 * when systemd-analyze is not installed. Only what it says about these units counts: it also loads
 * the units they refer to, and a warning about one of the machine's own is not ours to refuse. A user unit is verified with --user, which needs a
 * runtime directory: a scratch one when XDG_RUNTIME_DIR is unset (containers, CI).
 */
export function verifyUnits(units: readonly { name: string; text: string }[], mode: ServiceMode, env: NodeJS.ProcessEnv): VerifyResult | null {
  const tool = onPath('systemd-analyze', env);
  if (!tool) return null;
  const dir = mkdtempSync(join(tmpdir(), 'pinclaw-verify-'));
  try {
    const files = units.map((u) => {
      const file = join(dir, u.name);
      writeFileSync(file, u.text);
      return file;
    });
    let runEnv = env;
    if (mode === 'user' && !env.XDG_RUNTIME_DIR) {
      const runtime = join(dir, 'runtime');
      mkdirSync(runtime, { mode: 0o700 });
      runEnv = { ...env, XDG_RUNTIME_DIR: runtime };
    }
    const r = runTool(tool, [...(mode === 'user' ? ['--user'] : []), 'verify', ...files], runEnv);
    const lines = `${r.stdout}${r.stderr}`.split(`${dir}/`).join('').split('\n').filter((l) => l.trim());
    const ours = (l: string) => units.some((u) => l.includes(u.name));
    const mine = lines.filter(ours);
    const ok = r.code === 0 && mine.length === 0;
    const output = r.code === 0 ? mine.join('\n') : lines.join('\n') || `systemd-analyze verify exited with ${r.code}`;
    return { ok, output: ok ? '' : output, others: ok ? lines.filter((l) => !ours(l)).join('\n') : '' };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
