// How a stdio server is started: inside bubblewrap with the exec tool's path policy (the system
// read-only, the workspace and a private $TMPDIR writable, nothing of $PINCLAW_HOME around it: no
// config, no secret.key, no database), no network unless its config says `network`, and the
// directories its config names in `paths`/`writePaths`. Its environment is a clean one plus its own
// `env`: pinclaw's keys never reach it. Landlock cannot carry a long-lived server's stdin (the
// addon's spawn is for one-shot commands), so bubblewrap is what confines servers.
import { mkdirSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { bwrapArgs } from '../../sandbox/bwrap.js';
import { detectSandbox, findExecutable } from '../../sandbox/detect.js';
import { pathRules } from '../../sandbox/policy.js';
import { acquireScratch, releaseScratch } from '../../sandbox/scratch.js';
import type { SandboxSettings } from '../../sandbox/types.js';
import type { McpServerConfig } from '../types.js';
import type { StdioLaunch } from './stdio.js';

const PATH = '/usr/local/bin:/usr/bin:/bin';
const MiB = 1024 * 1024;

export interface Launch {
  launch: StdioLaunch;
  /** bubblewrap, or none (unconfined) with why */
  sandbox: string;
  /** Gives back the private $TMPDIR once the server has exited. */
  release(): void;
}

function quote(s: string): string {
  return `'${s.replaceAll("'", "'\\''")}'`;
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
  const env = { PATH, HOME: workspace, TMPDIR: tmp, LANG: 'C.UTF-8', ...s.env };
  const release = () => releaseScratch(tmp);
  if (!s.sandbox || o.sandbox.backend === 'none') {
    // Killed with the gateway even when the gateway is killed (SIGKILL, a crash) and cannot stop it:
    // util-linux setpriv sets the parent-death signal, and keeps it across its exec of the server.
    // (Under bubblewrap, --die-with-parent does this for the whole sandbox.)
    const setpriv = findExecutable('setpriv');
    const launch = setpriv ? { file: setpriv, args: ['--pdeathsig', 'KILL', '--', file, ...s.args], env, cwd } : { file, args: s.args, env, cwd };
    return { launch, sandbox: s.sandbox ? 'none (sandbox.backend is none)' : `none (${where}.sandbox is false)`, release };
  }
  const support = await detectSandbox();
  const bwrap = support.bubblewrap;
  if (!bwrap?.usable) {
    release();
    const why = bwrap ? `bubblewrap does not work here: ${bwrap.reason}` : 'bubblewrap is not installed (apt-get install bubblewrap)';
    throw new Error(`MCP server ${name} is not started: stdio servers run inside bubblewrap, and ${why}; or set ${where}.sandbox to false to run it unconfined`);
  }
  const rules = pathRules({ workspace, tmp, allowedRoots: [dirname(file), ...s.paths.map(real)] });
  for (const p of s.writePaths) rules.push({ path: real(p), access: 'rw' });
  // A cwd outside the workspace must exist inside the sandbox for bwrap's --chdir.
  if (cwd !== workspace && !cwd.startsWith(`${workspace}/`)) rules.push({ path: cwd, access: 'rx' });
  const args = bwrapArgs({
    command: `exec ${[file, ...s.args].map(quote).join(' ')}`,
    cwd,
    env,
    rules,
    network: s.network,
    // A server runs for as long as the gateway: no CPU-time limit, the rest as exec's. V8 reserves
    // far more address space than it uses, hence the headroom over sandbox.memoryMb.
    limits: { cpuSeconds: 0x7fffffff, memoryBytes: o.sandbox.memoryMb * 4 * MiB, maxProcesses: o.sandbox.maxProcesses, fileSizeBytes: o.sandbox.maxFileSizeMb * MiB },
    timeoutMs: 0,
    keepBytes: 0,
    onOutput: () => undefined,
  }, bwrap);
  return { launch: { file: bwrap.bwrap, args, env, cwd }, sandbox: `bubblewrap${s.network ? ' (network allowed)' : ' (no network)'}`, release };
}
