// Runs one shell command in the OS sandbox sandbox.backend selects: a private $TMPDIR, a pids
// cgroup when the host has one, the path policy, the output cap; cleaned up whatever happens.
import { mkdirSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { log } from '../log.js';
import { runBwrap } from './bwrap.js';
import { createRunCgroup, type RunCgroup } from './cgroup.js';
import { chooseBackend, detectSandbox, type Choice, type SandboxSupport } from './detect.js';
import { runLandlock } from './landlock.js';
import { sandboxAddon } from './native.js';
import { runUnconfined } from './none.js';
import { CappedOutput } from './output.js';
import { checkAllowedRoots, pathRules } from './policy.js';
import { acquireScratch, releaseScratch } from './scratch.js';
import { endingSignal } from './signals.js';
import type { BackendExit, OutputStream, PreparedRun, RunResult, SandboxSettings } from './types.js';

export type { RunResult, SandboxSettings } from './types.js';

/** The sandbox cannot run commands here; the message says why and what to change. */
export class SandboxUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SandboxUnavailable';
  }
}

export interface RunRequest {
  command: string;
  /** absolute, inside the workspace; default the workspace */
  cwd?: string;
  /** at most sandbox.timeoutSeconds, which is also the default */
  timeoutSeconds?: number;
  signal?: AbortSignal;
  /** on abort, SIGTERM first and SIGKILL this many ms later (default 0: SIGKILL at once) */
  graceMs?: number;
  /** output as it arrives, up to the cap */
  onOutput?: (stream: OutputStream, chunk: Buffer) => void;
}

const MiB = 1024 * 1024;

/** A clean environment: pinclaw's own (API keys, tokens) never reaches a command. */
export function commandEnv(workspace: string, tmp: string, backend: string): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: workspace,
    TMPDIR: tmp,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    SHELL: '/bin/sh',
    PINCLAW_SANDBOX: backend,
  };
}

/** The real path of `cwd`, refused unless it is the workspace or beneath it. */
export function resolveCwd(workspace: string, cwd: string | undefined): string {
  const real = realpathSync(workspace);
  if (cwd === undefined) return real;
  let target: string;
  try {
    target = realpathSync(resolve(real, cwd));
  } catch {
    throw new Error(`cwd ${cwd} does not exist`);
  }
  const rel = relative(real, target);
  if (rel.startsWith('..') || isAbsolute(rel)) throw new Error(`cwd ${cwd} is outside the workspace`);
  return target;
}

/**
 * A pids cgroup only where RLIMIT_NPROC cannot bound the command: for root (the kernel exempts
 * uid 0) and without user namespaces (it would count every process of the uid). Moving a process
 * into a cgroup can wait for an RCU grace period (milliseconds), so it is not done needlessly.
 */
export function needsPidsCgroup(s: SandboxSupport, uid = process.getuid?.() ?? 0): boolean {
  return uid === 0 || !s.userNamespaces.available;
}

export class Sandbox {
  constructor(
    readonly workspace: string,
    readonly settings: SandboxSettings,
  ) {}

  support(): Promise<SandboxSupport> {
    return detectSandbox();
  }

  async choice(): Promise<Choice> {
    return chooseBackend(this.settings.backend, await detectSandbox());
  }

  async run(req: RunRequest): Promise<RunResult> {
    const s = this.settings;
    const problems = checkAllowedRoots(s.allowedRoots);
    if (problems.length) throw new SandboxUnavailable(problems.join('; '));
    const choice = await this.choice();
    if ('error' in choice) throw new SandboxUnavailable(choice.error);
    mkdirSync(this.workspace, { recursive: true });
    const workspace = realpathSync(this.workspace);
    const cwd = resolveCwd(workspace, req.cwd);
    const timeoutSeconds = Math.min(req.timeoutSeconds ?? s.timeoutSeconds, s.timeoutSeconds);

    const tmp = acquireScratch();
    let cgroup: RunCgroup | null = null;
    try {
      if (choice.backend !== 'none' && needsPidsCgroup(await detectSandbox())) cgroup = createRunCgroup(s.maxProcesses);
      const output = new CappedOutput(s.outputCap, req.onOutput);
      const run: PreparedRun = {
        command: req.command,
        cwd,
        env: commandEnv(workspace, tmp, choice.backend),
        rules: pathRules({ workspace, tmp, allowedRoots: s.allowedRoots }),
        network: s.network,
        limits: { cpuSeconds: s.cpuSeconds, memoryBytes: s.memoryMb * MiB, maxProcesses: s.maxProcesses, fileSizeBytes: s.maxFileSizeMb * MiB },
        ...(cgroup ? { cgroupProcs: cgroup.procs } : {}),
        timeoutMs: timeoutSeconds * 1000,
        keepBytes: s.outputCap,
        ...(req.signal ? { signal: req.signal } : {}),
        ...(req.graceMs ? { graceMs: req.graceMs } : {}),
        onOutput: (stream, chunk) => output.add(stream, chunk),
      };
      let exit: BackendExit;
      if (choice.backend === 'landlock') {
        const addon = sandboxAddon();
        if (!addon) throw new SandboxUnavailable('the native addon went away');
        exit = await runLandlock(addon, run);
      } else if (choice.backend === 'bubblewrap') {
        exit = await runBwrap(choice.tools, run);
      } else {
        exit = await runUnconfined(run);
      }
      output.addOmitted(exit.dropped);
      if (exit.error) log.warn(`sandbox: ${exit.error}`);
      return {
        backend: choice.backend,
        exitCode: exit.exitCode,
        signal: endingSignal(exit.exitCode, exit.signal),
        timedOut: exit.timedOut,
        cancelled: exit.cancelled,
        stdout: output.text('stdout'),
        stderr: output.text('stderr'),
        omittedBytes: output.omittedBytes,
        enforcement: exit.enforcement,
      };
    } finally {
      // Neither waits: the result does not depend on the cleanup, which can be slow (see scratch.ts).
      releaseScratch(tmp);
      cgroup?.release();
    }
  }
}
