// The Landlock backend: the addon builds the ruleset and the seccomp filter here, then a thread of
// its own forks, confines (Landlock, seccomp, rlimits, no capabilities, no new privileges, own
// session) and execs, streams the output back and kills the process group at the timeout. This
// module only translates.
import type { NativeEnforcement, NativeExit, NativePayload, NativeStarted, SandboxAddon } from './native.js';
import { EVENT } from './native.js';
import { signalName } from './signals.js';
import type { BackendExit, Enforcement, PreparedRun } from './types.js';

function describe(e: NativeEnforcement, started: NativeStarted | undefined, run: PreparedRun): Enforcement {
  const ll = e.landlock;
  const net = ll.handledNet.length ? `, TCP ${ll.handledNet.join('/')} denied` : '';
  const scopes = ll.scoped.length ? `, scoped: ${ll.scoped.join(', ')}` : '';
  const scope = started?.maxProcessesScope ?? 'unknown (the command did not start)';
  const processLimit = run.cgroupProcs
    ? `${run.limits.maxProcesses} (pids cgroup)`
    : scope === 'sandbox'
      ? `${run.limits.maxProcesses} (RLIMIT_NPROC in its own user namespace)`
      : scope === 'all processes of the uid'
        ? `${run.limits.maxProcesses} (RLIMIT_NPROC, counting all processes of the uid)`
        : `not enforced: RLIMIT_NPROC ${scope}, and no writable pids cgroup`;
  const caps = started ? `capabilities: ${started.capabilities}` : 'capabilities: dropped before exec';
  return {
    backend: 'landlock',
    network: run.network ? 'allowed' : 'denied',
    processLimit,
    summary: [
      `landlock ABI ${ll.abi}: ${ll.rules.length} path rules${net}${scopes}`,
      `seccomp (${e.seccomp.arch}): ${e.seccomp.denied.join('; ')}`,
      `rlimits: cpu ${e.rlimits.cpuSeconds} s, address space ${e.rlimits.memoryBytes} B, file size ${e.rlimits.fileSizeBytes} B, no core dumps`,
      `processes: ${processLimit}`,
      `${caps}; no_new_privs; own session and process group${started?.userNamespace ? '; own user namespace' : ''}`,
    ],
    detail: { ...e, ...(started ? { started } : {}) },
  };
}

export function runLandlock(addon: SandboxAddon, run: PreparedRun): Promise<BackendExit> {
  return new Promise((resolve, reject) => {
    let started: NativeStarted | undefined;
    let handle: ReturnType<SandboxAddon['spawnSandboxed']> | undefined;
    let grace: ReturnType<typeof setTimeout> | undefined;
    // The whole group gets SIGTERM (seccomp keeps every descendant in it), then SIGKILL.
    const onAbort = (): void => {
      if (!run.graceMs) {
        handle?.kill();
        return;
      }
      handle?.terminate();
      grace = setTimeout(() => handle?.kill(), run.graceMs);
    };
    const onEvent = (kind: number, payload: NativePayload): void => {
      if (kind === EVENT.stdout || kind === EVENT.stderr) {
        run.onOutput(kind === EVENT.stdout ? 'stdout' : 'stderr', payload as Buffer);
        return;
      }
      if (kind === EVENT.started) {
        started = payload as NativeStarted;
        return;
      }
      const exit = payload as NativeExit;
      clearTimeout(grace);
      run.signal?.removeEventListener('abort', onAbort);
      if (exit.spawnError) {
        reject(new Error(`sandbox: ${exit.spawnError}`));
        return;
      }
      resolve({
        exitCode: exit.code,
        signal: signalName(exit.signal),
        timedOut: exit.timedOut,
        cancelled: exit.cancelled,
        dropped: exit.stdoutDropped + exit.stderrDropped,
        ...(exit.error ? { error: exit.error } : {}),
        enforcement: describe(handle!.enforcement, started, run),
      });
    };
    try {
      handle = addon.spawnSandboxed(
        {
          file: '/bin/sh',
          argv: ['sh', '-c', run.command],
          env: Object.entries(run.env).map(([k, v]) => `${k}=${v}`),
          cwd: run.cwd,
          rules: run.rules,
          network: run.network,
          userNamespace: true,
          ...(run.cgroupProcs ? { cgroupProcs: run.cgroupProcs } : {}),
          timeoutMs: run.timeoutMs,
          forwardLimit: run.keepBytes,
          limits: run.limits,
        },
        onEvent,
      );
    } catch (err) {
      reject(err);
      return;
    }
    // Events come through the event loop, so none has arrived before this line.
    if (run.signal?.aborted) onAbort();
    else run.signal?.addEventListener('abort', onAbort, { once: true });
  });
}
