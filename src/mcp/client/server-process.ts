// A stdio server's process, however it was started: by Node (unconfined, or bubblewrap as its
// leader) or by the addon under Landlock (its supervising thread forks, confines and execs it, and
// forwards its output; its stdin is a pipe whose write end is ours). The transport (stdio.ts) sees
// one shape: lines to write, chunks of output, one exit, and signals to the whole process group.
import { spawn } from 'node:child_process';
import { Socket } from 'node:net';
import type { NativeExit, NativeHandle, NativePayload, NativeSpawnOptions, NativeStarted, SandboxAddon } from '../../sandbox/native.js';
import { EVENT } from '../../sandbox/native.js';
import { signalName } from '../../sandbox/signals.js';

export type StdioLaunch =
  | { kind: 'spawn'; file: string; args: string[]; env: Record<string, string>; cwd: string }
  | { kind: 'landlock'; addon: SandboxAddon; options: NativeSpawnOptions };

export interface ServerProcessEvents {
  onStarted(pid: number): void;
  onStdout(chunk: Buffer): void;
  onStderr(text: string): void;
  /** Once, after the leader is reaped and what it left in its group is killed. */
  onExit(code: number | null, signal: NodeJS.Signals | null): void;
  /** It never ran; onExit does not follow. */
  onError(message: string): void;
}

export interface ServerProcess {
  write(line: string, done: (err?: Error | null) => void): void;
  endInput(): void;
  /** To the whole process group, and only while the leader is not reaped (its id cannot be reused). */
  signal(sig: 'SIGTERM' | 'SIGKILL'): void;
}

export function startServerProcess(launch: StdioLaunch, ev: ServerProcessEvents): ServerProcess {
  return launch.kind === 'spawn' ? nodeChild(launch, ev) : landlockChild(launch.addon, launch.options, ev);
}

function nodeChild(l: Extract<StdioLaunch, { kind: 'spawn' }>, ev: ServerProcessEvents): ServerProcess {
  // detached: a process group of its own, so that a signal reaches what the server started too.
  const child = spawn(l.file, l.args, { cwd: l.cwd, env: l.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let exited = false;
  const group = (sig: NodeJS.Signals): void => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, sig);
    } catch {
      // the group is gone already
    }
  };
  if (child.pid !== undefined) ev.onStarted(child.pid);
  child.once('close', (code, signal) => {
    exited = true;
    // Whatever the leader left running in its group goes with it. The leader is reaped by now,
    // but a group id is not reissued while any member is alive.
    group('SIGKILL');
    ev.onExit(code, signal);
  });
  child.once('error', (err) => {
    exited = true;
    ev.onError(err.message);
  });
  child.stdout.on('data', (chunk: Buffer) => ev.onStdout(chunk));
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => ev.onStderr(text));
  // A server that stops reading (or died) must not crash the gateway with EPIPE.
  child.stdin.on('error', () => undefined);
  return {
    write: (line, done) => void child.stdin.write(line, done),
    endInput: () => void child.stdin.end(),
    signal: (sig) => {
      if (!exited) group(sig);
    },
  };
}

/** Output of a server is not capped here: the transport bounds a line (MAX_LINE_BYTES), and a server runs for long. */
const UNCAPPED = 2 ** 52;

function landlockChild(addon: SandboxAddon, options: NativeSpawnOptions, ev: ServerProcessEvents): ServerProcess {
  const decoder = new TextDecoder();
  let stdin: Socket | undefined;
  const onEvent = (kind: number, payload: NativePayload): void => {
    if (kind === EVENT.stdout) ev.onStdout(payload as Buffer);
    else if (kind === EVENT.stderr) ev.onStderr(decoder.decode(payload as Buffer, { stream: true }));
    else if (kind === EVENT.started) ev.onStarted((payload as NativeStarted).pid);
    else {
      const exit = payload as NativeExit;
      stdin?.destroy();
      if (exit.spawnError) ev.onError(`sandbox: ${exit.spawnError}`);
      else ev.onExit(exit.code, signalName(exit.signal));
    }
  };
  const handle: NativeHandle = addon.spawnSandboxed({ ...options, stdinPipe: true, timeoutMs: 0, forwardLimit: UNCAPPED }, onEvent);
  if (handle.stdin === undefined) {
    handle.kill();
    throw new Error('sandbox: the addon gave no stdin pipe (rebuild it)');
  }
  // A pipe opened by libuv: non-blocking writes with Node's own buffering and back-pressure.
  stdin = new Socket({ fd: handle.stdin, readable: false, writable: true });
  stdin.on('error', () => undefined);
  return {
    write: (line, done) => void stdin!.write(line, done),
    endInput: () => void stdin!.end(),
    // The addon's supervising thread signals the group, and only while the leader is unreaped.
    signal: (sig) => void (sig === 'SIGTERM' ? handle.terminate() : handle.kill()),
  };
}
