// exec: one shell command (/bin/sh -c) in the OS sandbox, from the workspace. The result carries
// stdout, stderr, how the command ended and one line on what confined it.
import { StringDecoder } from 'node:string_decoder';
import { errorMessage } from '../errors.js';
import { Sandbox, SandboxUnavailable, type RunResult, type SandboxSettings } from '../sandbox/index.js';
import type { OutputStream } from '../sandbox/types.js';
import type { Tool } from './types.js';
import { humanBytes } from '../store/disk.js';
import { watchGrowth, workspaceBytes } from './workspace-quota.js';
import { defineTool } from './define.js';

export interface ExecToolOptions {
  workspace: string;
  sandbox: SandboxSettings;
  /** files.workspaceQuotaMb: a command is stopped once its writes would take the workspace past it */
  workspaceQuotaMb?: number;
  /** output as it arrives (a channel can show progress); the result holds it too */
  onOutput?: (stream: OutputStream, chunk: Buffer) => void;
}

const SIGNAL_CAUSES: Partial<Record<NodeJS.Signals, string>> = {
  SIGXCPU: 'CPU time limit (sandbox.cpuSeconds)',
  SIGXFSZ: 'file size limit (sandbox.maxFileSizeMb)',
};

function ending(r: RunResult, timeoutSeconds: number): string {
  if (r.timedOut) return `[killed with its process group: timed out after ${timeoutSeconds} s]`;
  if (r.cancelled) return '[killed with its process group: the call was cancelled]';
  if (r.signal) return `[${r.exitCode !== null ? `exit code ${r.exitCode}: ` : ''}killed by ${r.signal}${SIGNAL_CAUSES[r.signal] ? `: ${SIGNAL_CAUSES[r.signal]}` : ''}]`;
  return `[exit code ${r.exitCode}]`;
}

function sandboxLine(r: RunResult): string {
  const e = r.enforcement;
  if (e.backend === 'none') return '[sandbox: none (sandbox.backend = none)]';
  const first = e.summary[0]?.split(':')[0] ?? e.backend;
  return `[sandbox: ${first}; network ${e.network}; processes ${e.processLimit}]`;
}

/** `end` replaces the line on how the command ended (the quota's watcher tells its own). */
export function formatResult(r: RunResult, timeoutSeconds: number, end = ending(r, timeoutSeconds)): string {
  const parts: string[] = [];
  if (r.stdout) parts.push(r.stdout.endsWith('\n') ? r.stdout.slice(0, -1) : r.stdout);
  if (r.stderr) parts.push(`[stderr]\n${r.stderr.endsWith('\n') ? r.stderr.slice(0, -1) : r.stderr}`);
  if (!r.stdout && !r.stderr) parts.push('(no output)');
  parts.push(end);
  if (r.omittedBytes) parts.push(`[output truncated: ${r.omittedBytes} more bytes not shown (sandbox.outputCap)]`);
  parts.push(sandboxLine(r));
  return parts.join('\n');
}

/** Chunks may split a UTF-8 sequence: each stream gets its own decoder before text goes to the context. */
function streamTo(
  raw: ExecToolOptions['onOutput'],
  text: ((stream: OutputStream, text: string) => void) | undefined,
): ((stream: OutputStream, chunk: Buffer) => void) | undefined {
  if (!raw && !text) return undefined;
  const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
  return (stream, chunk) => {
    raw?.(stream, chunk);
    if (!text) return;
    const s = decoders[stream].write(chunk);
    if (s) text(stream, s);
  };
}

export function execTool(opts: ExecToolOptions): Tool {
  const sandbox = new Sandbox(opts.workspace, opts.sandbox);
  const max = opts.sandbox.timeoutSeconds;
  return defineTool({
    name: 'exec',
    description:
      'Run a shell command (/bin/sh -c) in a sandbox, starting in the workspace. It can read system programs and ' +
      'libraries and read and write the workspace; nothing else' +
      (opts.sandbox.network ? '' : ', and no network') +
      `. Killed with all its processes after timeoutSeconds (at most ${max}). Returns stdout, stderr and the exit status.`,
    inputSchema: {
      type: 'object',
      properties: {
        command: { type: 'string', minLength: 1, maxLength: 16_000, description: 'the shell command' },
        timeoutSeconds: { type: 'integer', minimum: 1, maximum: max, description: `seconds before it is killed (default and maximum ${max})` },
        cwd: { type: 'string', minLength: 1, maxLength: 4096, description: 'directory to start in, relative to the workspace (default: the workspace)' },
      },
      required: ['command'],
      additionalProperties: false,
    },
    sequential: false,
    // The sandbox kills at its own timeout and reports it; the registry's limit is only a backstop.
    timeoutMs: (max + 10) * 1000,
    maxOutputBytes: opts.sandbox.outputCap + 4096,
    async execute(input, ctx) {
      const { command, timeoutSeconds, cwd } = input;
      const seconds = Math.min(timeoutSeconds ?? max, max);
      const onOutput = streamTo(opts.onOutput, ctx.onOutput);
      const quotaMb = opts.workspaceQuotaMb;
      // The quota's watcher stops the command through the same abort as a cancelled call.
      const ac = new AbortController();
      const cancel = () => ac.abort(ctx.signal?.reason);
      if (ctx.signal?.aborted) cancel();
      else ctx.signal?.addEventListener('abort', cancel, { once: true });
      const used = quotaMb !== undefined ? await workspaceBytes(opts.workspace) : 0;
      const watch = quotaMb !== undefined ? watchGrowth(opts.workspace, used, quotaMb, () => ac.abort(new Error('workspace quota'))) : undefined;
      try {
        const r = await sandbox.run({
          command,
          timeoutSeconds: seconds,
          ...(cwd !== undefined ? { cwd } : {}),
          signal: ac.signal,
          ...(onOutput ? { onOutput } : {}),
        });
        watch?.stop();
        if (watch?.over) {
          const note = `[killed with its process group: its writes passed what was left of files.workspaceQuotaMb (${quotaMb} MiB; the workspace held ${humanBytes(used)}, ` +
            `${humanBytes(watch.budgetBytes)} were left, it took ${humanBytes(watch.peakBytes)}); what it wrote is still there: remove files (rm) before writing more]`;
          return { content: formatResult(r, seconds, note), isError: true };
        }
        return { content: formatResult(r, seconds), isError: r.timedOut || r.cancelled || r.signal !== null };
      } catch (err) {
        watch?.stop();
        if (err instanceof SandboxUnavailable) return { content: `exec refused: ${err.message}`, isError: true };
        return { content: `exec failed: ${errorMessage(err)}`, isError: true };
      } finally {
        ctx.signal?.removeEventListener('abort', cancel);
      }
    },
  });
}
