// The addon's sandbox functions (native/sandbox*.cc), typed. Kept here rather than in the shared
// native façade because only the sandbox uses them, and an addon built before them lacks them.
import { tryAddon } from '../native/loader.js';

export interface NativeRule {
  path: string;
  access: 'rx' | 'ro' | 'rw' | 'dev';
}

export interface NativeSpawnOptions {
  file: string;
  argv: string[];
  env: string[];
  cwd: string;
  rules: NativeRule[];
  network: boolean;
  userNamespace: boolean;
  cgroupProcs?: string;
  /** the child's stdin is a pipe (see NativeHandle.stdin), not /dev/null */
  stdinPipe?: boolean;
  timeoutMs: number;
  forwardLimit: number;
  limits: { cpuSeconds: number; memoryBytes: number; maxProcesses: number; fileSizeBytes: number };
}

export interface NativeEnforcement {
  landlock: {
    abi: number;
    handledFs: string[];
    handledNet: string[];
    scoped: string[];
    rules: { path: string; access: string }[];
    skipped: { path: string; reason: string }[];
  };
  seccomp: { arch: string; denied: string[] };
  rlimits: { cpuSeconds: number; memoryBytes: number; maxProcesses: number; fileSizeBytes: number; coreBytes: number };
  noNewPrivs: boolean;
}

/** What is known once the child runs (event 4). */
export interface NativeStarted {
  pid: number;
  userNamespace: boolean;
  userNamespaceError?: string;
  capabilities: string;
  /** where RLIMIT_NPROC counts: 'sandbox', 'all processes of the uid', or why it does not apply */
  maxProcessesScope: string;
}

export interface NativeExit {
  code: number | null;
  signal: number | null;
  timedOut: boolean;
  cancelled: boolean;
  stdoutDropped: number;
  stderrDropped: number;
  error?: string;
  /** the command never ran: which setup step failed, and why */
  spawnError?: string;
}

/** Event kinds of spawnSandboxed's callback: 4 the start, 1 and 2 a Buffer each, 3 the exit (always last). */
export const EVENT = { stdout: 1, stderr: 2, exit: 3, started: 4 } as const;
export type NativePayload = Buffer | NativeExit | NativeStarted;

export interface NativeHandle {
  /** SIGKILLs the process group (also before it has started); false when it has finished. */
  kill(): boolean;
  /** SIGTERMs the process group (also before it has started: then at once after); false when it has finished. */
  terminate(): boolean;
  /** With options.stdinPipe: the write end of the child's stdin, a descriptor the caller owns and closes. */
  stdin?: number;
  enforcement: NativeEnforcement;
}

export interface SandboxAddon {
  landlockAbi(): { abi: number; reason?: string };
  spawnSandboxed(options: NativeSpawnOptions, onEvent: (kind: number, payload: NativePayload) => void): NativeHandle;
}

/** The addon's sandbox half, or null when the addon is missing, disabled, or older than it. */
export function sandboxAddon(): SandboxAddon | null {
  const a = tryAddon<Partial<SandboxAddon>>('pinclaw');
  if (!a || typeof a.spawnSandboxed !== 'function' || typeof a.landlockAbi !== 'function') return null;
  return a as SandboxAddon;
}
