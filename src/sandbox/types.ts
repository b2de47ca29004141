// The sandbox's vocabulary, shared by the backends, the runner, the exec tool and doctor.
import type { PinclawConfig } from '../config/schema.js';

export type SandboxSettings = PinclawConfig['sandbox'];
export type BackendSetting = SandboxSettings['backend'];
export type BackendName = Exclude<BackendSetting, 'auto'>;

/** rx: read and execute; ro: read; rw: everything but device nodes; dev: one device node. */
export type PathAccess = 'rx' | 'ro' | 'rw' | 'dev';
export interface PathRule {
  path: string;
  access: PathAccess;
}

export interface ResourceLimits {
  cpuSeconds: number;
  memoryBytes: number;
  maxProcesses: number;
  fileSizeBytes: number;
}

export type OutputStream = 'stdout' | 'stderr';

/** One command, fully decided: what a backend gets. */
export interface PreparedRun {
  command: string;
  cwd: string;
  env: Record<string, string>;
  rules: PathRule[];
  network: boolean;
  limits: ResourceLimits;
  /** cgroup.procs of a pids cgroup made for this run, when the host offers one */
  cgroupProcs?: string;
  timeoutMs: number;
  /** bytes per stream worth reading into memory; the rest is only counted */
  keepBytes: number;
  signal?: AbortSignal;
  /** on abort: SIGTERM to the command's processes first, SIGKILL this much later (0: SIGKILL at once) */
  graceMs?: number;
  onOutput(stream: OutputStream, chunk: Buffer): void;
}

/** How a backend's run ended. */
export interface BackendExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  cancelled: boolean;
  /** bytes the backend read but did not pass on (beyond keepBytes) */
  dropped: number;
  error?: string;
  enforcement: Enforcement;
}

/** What was in force for one command, as the tool result and doctor report it. */
export interface Enforcement {
  backend: BackendName;
  /** one line per mechanism, for people */
  summary: string[];
  network: 'allowed' | 'denied';
  processLimit: string;
  /** backend-specific detail: Landlock ABI and rules, seccomp, rlimits, bwrap arguments */
  detail: Record<string, unknown>;
}

export interface RunResult {
  backend: BackendName;
  /** null when the leader itself was killed */
  exitCode: number | null;
  /** what killed the command: the leader's signal, or N of a 128+N exit status (see signals.ts) */
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  cancelled: boolean;
  stdout: string;
  stderr: string;
  /** bytes of output not kept (over the output cap) */
  omittedBytes: number;
  enforcement: Enforcement;
}

export type Backend = (run: PreparedRun) => Promise<BackendExit>;
