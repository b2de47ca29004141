// How a stdio server is started: inside bubblewrap or Landlock with the exec tool's path policy
// (the system read-only, the workspace and a private $TMPDIR writable, nothing of $PINCLAW_HOME
// around it: no config, no secret.key, no database), no network unless its config says `network`,
// and the directories its config names in `paths`/`writePaths`. Its environment is a clean one plus
// its own `env`: pinclaw's keys never reach it.
//
// Which sandbox follows sandbox.backend; `auto` prefers bubblewrap for a server (unlike exec, which
// prefers Landlock): its pid namespace and --die-with-parent take every process of the server down
// with a gateway killed by SIGKILL, while under Landlock the server's children outlive it until the
// next gateway start kills them (leftovers.ts). Landlock is used where bubblewrap does not work
// (containers, AppArmor-restricted user namespaces), through the addon's spawn with a stdin pipe.
import { mkdirSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { bwrapArgs, type BwrapTools } from '../../sandbox/bwrap.js';
import { detectSandbox, findExecutable, type SandboxSupport } from '../../sandbox/detect.js';
import { sandboxAddon, type SandboxAddon } from '../../sandbox/native.js';
import { pathRules } from '../../sandbox/policy.js';
import { acquireScratch, releaseScratch } from '../../sandbox/scratch.js';
import type { BackendSetting, SandboxSettings } from '../../sandbox/types.js';
import type { McpServerConfig } from '../types.js';
import { newRunToken, RUN_TOKEN_VAR } from './leftovers.js';
import type { StdioLaunch } from './server-process.js';

const PATH = '/usr/local/bin:/usr/bin:/bin';
const MiB = 1024 * 1024;

export interface Launch {
  launch: StdioLaunch;
  /** bubblewrap or landlock, or none (unconfined) with why */
  sandbox: string;
  /** in the server's environment as PINCLAW_MCP_RUN: how leftovers of it are told apart */
  token: string;
  /** Gives back the private $TMPDIR once the server has exited. */
  release(): void;
}

function quote(s: string): string {
  return `'${s.replaceAll("'", "'\\''")}'`;
}

type ServerBox = { backend: 'bubblewrap'; tools: BwrapTools } | { backend: 'landlock'; addon: SandboxAddon; abi: number } | { error: string };

/** The sandbox a server runs in under `setting` (never none: that is decided before). */
export function serverSandbox(setting: Exclude<BackendSetting, 'none'>, s: SandboxSupport, addon: SandboxAddon | null = sandboxAddon()): ServerBox {
  const bwrap = s.bubblewrap?.usable ? { backend: 'bubblewrap' as const, tools: s.bubblewrap } : null;
  const landlock = s.landlock.abi >= 1 && addon ? { backend: 'landlock' as const, addon, abi: s.landlock.abi } : null;
  const noBwrap = s.bubblewrap ? `bubblewrap does not work here: ${s.bubblewrap.reason}` : 'bubblewrap is not installed (apt-get install bubblewrap)';
  const noLandlock = `Landlock is unavailable: ${s.landlock.reason ?? 'no native addon'}`;
  if (setting === 'bubblewrap') return bwrap ?? { error: `sandbox.backend is bubblewrap, and ${noBwrap}` };
  if (setting === 'landlock') return landlock ?? { error: `sandbox.backend is landlock, and ${noLandlock}` };
  return bwrap ?? landlock ?? { error: `no sandbox works here (${noBwrap}; ${noLandlock})` };
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

export async function stdioLaunch(name: string, s: McpServerConfig, o: { workspace: string; sandbox: SandboxSettings }): Promise<Launch> {
  const where = `mcp.servers.${name}`;
  const command = s.command!;
  mkdirSync(o.workspace, { recursive: true });
  const workspace = real(o.workspace);
  const cwd = s.cwd ? real(resolve(workspace, s.cwd)) : workspace;
  const file = command.includes('/') ? real(resolve(cwd, command)) : findExecutable(command, { PATH: s.env.PATH ?? PATH });
  if (!file) throw new Error(`MCP server ${name}: command '${command}' is not installed (not found in ${s.env.PATH ?? PATH}; ${where}.command)`);
  for (const p of [...s.paths, ...s.writePaths]) if (!isAbsolute(p)) throw new Error(`MCP server ${name}: '${p}' is not an absolute path (${where}.paths/writePaths)`);

  const tmp = acquireScratch();
  const token = newRunToken();
  const env = { PATH, HOME: workspace, TMPDIR: tmp, LANG: 'C.UTF-8', ...s.env, [RUN_TOKEN_VAR]: token };
  const release = () => releaseScratch(tmp);
  if (!s.sandbox || o.sandbox.backend === 'none') {
    // Killed with the gateway even when the gateway is killed (SIGKILL, a crash) and cannot stop it:
    // util-linux setpriv sets the parent-death signal, and keeps it across its exec of the server.
    // (Under bubblewrap, --die-with-parent does this for the whole sandbox.)
    const setpriv = findExecutable('setpriv');
    const launch: StdioLaunch = setpriv ? { kind: 'spawn', file: setpriv, args: ['--pdeathsig', 'KILL', '--', file, ...s.args], env, cwd } : { kind: 'spawn', file, args: s.args, env, cwd };
    return { launch, sandbox: s.sandbox ? 'none (sandbox.backend is none)' : `none (${where}.sandbox is false)`, token, release };
  }
  const box = serverSandbox(o.sandbox.backend, await detectSandbox());
  if ('error' in box) {
    release();
    throw new Error(`MCP server ${name} is not started: stdio servers run in the sandbox, and ${box.error}; or set ${where}.sandbox to false to run it unconfined`);
  }
  const rules = pathRules({ workspace, tmp, allowedRoots: [dirname(file), ...s.paths.map(real)] });
  for (const p of s.writePaths) rules.push({ path: real(p), access: 'rw' });
  // A cwd outside the workspace must exist inside the sandbox for bwrap's --chdir.
  if (cwd !== workspace && !cwd.startsWith(`${workspace}/`)) rules.push({ path: cwd, access: 'rx' });
  // A server runs for as long as the gateway: no CPU-time limit, the rest as exec's. V8 reserves
  // far more address space than it uses, hence the headroom over sandbox.memoryMb.
  const limits = { cpuSeconds: 0x7fffffff, memoryBytes: o.sandbox.memoryMb * 4 * MiB, maxProcesses: o.sandbox.maxProcesses, fileSizeBytes: o.sandbox.maxFileSizeMb * MiB };
  const net = s.network ? ' (network allowed)' : ' (no network)';
  if (box.backend === 'landlock') {
    const options = {
      file,
      argv: [command, ...s.args],
      env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
      cwd,
      rules,
      network: s.network,
      userNamespace: true,
      limits,
      // Set by the process itself (server-process.ts): a server has neither, its stdin is a pipe.
      timeoutMs: 0,
      forwardLimit: 0,
    };
    return { launch: { kind: 'landlock', addon: box.addon, options }, sandbox: `landlock ABI ${box.abi} + seccomp${net}`, token, release };
  }
  const args = bwrapArgs({
    command: `exec ${[file, ...s.args].map(quote).join(' ')}`,
    cwd,
    env,
    rules,
    network: s.network,
    limits,
    timeoutMs: 0,
    keepBytes: 0,
    onOutput: () => undefined,
  }, box.tools);
  return { launch: { kind: 'spawn', file: box.tools.bwrap, args, env, cwd }, sandbox: `bubblewrap${net}`, token, release };
}
