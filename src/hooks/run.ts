// Runs one command hook: `command` through /bin/sh -c in pinclaw's OS sandbox (the same Sandbox as
// the exec tool: Landlock or bubblewrap, its own process group, a minimal environment without keys
// or tokens, output kept up to sandbox.outputCap), the event as JSON on stdin. At timeoutMs its
// processes get SIGTERM, and whatever still runs a grace later (2 s, or the timeout when that is
// shorter) is killed with SIGKILL with its whole process group, every child reaped. What the hook
// said is read here; what it means is the engine's job.
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../errors.js';
import type { Sandbox } from '../sandbox/index.js';
import { isObject as isRecord } from '../is-object.js';

/** What one hook run came to. `failure` is set when the hook did not answer (crash, timeout, bad output). */
export interface HookAnswer {
  decision?: 'block' | 'allow' | 'ask';
  reason?: string;
  updatedInput?: unknown;
  additionalContext?: string;
  failure?: string;
}

/** Most of a blocking hook's stderr that reaches the model: a reason, not a log. */
export const MAX_REASON_CHARS = 2000;
/** How long a timed-out hook has between SIGTERM and SIGKILL, at most (see graceFor). */
export const KILL_GRACE_MS = 2000;
/** The grace never exceeds the hook's own timeout: a hook allowed 300 ms is not waited on for 2 s more. */
export const graceFor = (timeoutMs: number): number => Math.min(KILL_GRACE_MS, timeoutMs);
/** Larger inputs go through a file: one argument to sh -c is limited to 128 KiB by the kernel. */
const MAX_HEREDOC_BYTES = 64 * 1024;

function cut(text: string, max = MAX_REASON_CHARS): string {
  const t = text.trim();
  return t.length > max ? `${t.slice(0, max)}… (${t.length - max} more characters)` : t;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * The decision in a hook's JSON: pinclaw's flat form ({decision, reason, updatedInput,
 * additionalContext}) and Claude Code's (hookSpecificOutput.permissionDecision allow/deny/ask with
 * permissionDecisionReason; the older decision approve/block), so hooks written for it work here.
 */
export function parseAnswer(stdout: string, plainIsContext: boolean): HookAnswer {
  const text = stdout.trim();
  if (text === '') return {};
  if (!text.startsWith('{')) return plainIsContext ? { additionalContext: text } : {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { failure: `its stdout is not valid JSON (${errorMessage(err)}): ${cut(text, 200)}` };
  }
  if (!isRecord(json)) return { failure: 'its stdout is not a JSON object' };
  const specific = isRecord(json.hookSpecificOutput) ? json.hookSpecificOutput : {};
  const raw = str(specific.permissionDecision) ?? str(json.decision);
  const decision = raw === 'deny' || raw === 'block' ? 'block' : raw === 'allow' || raw === 'approve' ? 'allow' : raw === 'ask' ? 'ask' : undefined;
  if (raw !== undefined && decision === undefined) return { failure: `its decision ${JSON.stringify(raw)} is none of block, allow, ask` };
  const reason = str(specific.permissionDecisionReason) ?? str(json.reason);
  const updatedInput = specific.updatedInput ?? json.updatedInput;
  const additionalContext = str(specific.additionalContext) ?? str(json.additionalContext);
  return {
    ...(decision ? { decision } : {}),
    ...(reason ? { reason: cut(reason) } : {}),
    ...(updatedInput !== undefined ? { updatedInput } : {}),
    ...(additionalContext ? { additionalContext } : {}),
  };
}

export interface RunHookOptions {
  sandbox: Sandbox;
  command: string;
  timeoutMs: number;
  /** the event as it goes to stdin */
  input: unknown;
  /** SessionStart: plain text on stdout is context for the prompt (as in Claude Code) */
  plainIsContext?: boolean;
  signal?: AbortSignal;
}

/** Never throws: a hook that cannot be run is a failure, and onFailure decides. */
export async function runHook(o: RunHookOptions): Promise<HookAnswer> {
  const json = JSON.stringify(o.input);
  // A brace group, so that the redirection feeds the whole command (`a; b` or a pipeline), not its last part.
  // The wrapping shell traps TERM: it then waits for the hook (which gets the SIGTERM too) to finish
  // its own trap before it exits, instead of dying at once, when its exit would have the sandbox
  // SIGKILL the group under the hook's cleanup.
  const trap = "trap 'exit 143' TERM\n";
  let command: string;
  let file: string | undefined;
  if (Buffer.byteLength(json) <= MAX_HEREDOC_BYTES) {
    // JSON.stringify never writes a raw newline, so no line of it can be the random delimiter.
    const tag = `PINCLAW_HOOK_${randomBytes(8).toString('hex')}`;
    command = `${trap}{ ${o.command}\n} <<'${tag}'\n${json}\n${tag}\n`;
  } else {
    file = join(o.sandbox.workspace, `.pinclaw-hook-${randomBytes(8).toString('hex')}.json`);
    try {
      writeFileSync(file, json, { mode: 0o600 });
    } catch (err) {
      return { failure: `its input could not be written (${errorMessage(err)})` };
    }
    command = `${trap}{ ${o.command}\n} < '${file}'\n`;
  }
  const ac = new AbortController();
  const onAbort = () => ac.abort();
  o.signal?.addEventListener('abort', onAbort, { once: true });
  let timedOut = false;
  // The sandbox counts in whole seconds; the hook's own limit is kept to the millisecond here.
  const timer = setTimeout(() => {
    timedOut = true;
    ac.abort();
  }, o.timeoutMs);
  try {
    const graceMs = graceFor(o.timeoutMs);
    const r = await o.sandbox.run({ command, timeoutSeconds: Math.ceil((o.timeoutMs + graceMs) / 1000) + 1, signal: ac.signal, graceMs });
    if (timedOut) return { failure: `it timed out after ${o.timeoutMs} ms and was stopped with its process group (SIGTERM, SIGKILL ${graceMs} ms later)` };
    if (r.timedOut) return { failure: `it ran past sandbox.timeoutSeconds and was killed with its process group` };
    if (r.cancelled) return { failure: 'the turn was stopped while it ran' };
    if (r.exitCode === 2) return { decision: 'block', reason: cut(r.stderr) || 'blocked (exit 2, nothing on stderr)' };
    if (r.exitCode !== 0) {
      const how = r.signal ? `was killed by ${r.signal}` : `exited with ${r.exitCode}`;
      return { failure: `it ${how}${r.stderr.trim() ? `: ${cut(r.stderr, 500)}` : ''}` };
    }
    // A decision cut off in the middle is no decision: a hook that floods its output is a failed one.
    if (r.omittedBytes > 0) return { failure: `its output passed sandbox.outputCap (${r.omittedBytes} bytes more were dropped, output truncated), so its answer cannot be read` };
    return parseAnswer(r.stdout, o.plainIsContext ?? false);
  } catch (err) {
    return { failure: `it could not be run: ${errorMessage(err)}` };
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', onAbort);
    if (file) rmSync(file, { force: true });
  }
}
