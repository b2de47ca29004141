// The limits every tool call runs under: a time limit (the tool's signal is aborted and the call
// answered with an error, so a stuck tool cannot hold the turn) and an output cap (a tool that
// prints a megabyte would otherwise fill the model's context).
import type { ToolsSettings } from './policy.js';
import type { Tool, ToolContext, ToolResult } from './types.js';

export interface Limit<T> {
  value: T;
  /** where it came from, for messages: "tools.timeoutMs", "tools.limits[0]", "exec.timeoutMs" */
  source: string;
}

export interface ToolLimits {
  timeoutMs: Limit<number>;
  maxOutputBytes: Limit<number>;
}

export interface LimitSettings {
  timeoutMs: number;
  maxOutputBytes: number;
  limits: ToolsSettings['limits'];
}

export const DEFAULT_LIMITS: LimitSettings = { timeoutMs: 30_000, maxOutputBytes: 32 * 1024, limits: [] };

/** Config per tool beats the tool's own value, which beats the config default. */
export function limitsFor(tool: Tool, s: LimitSettings): ToolLimits {
  const i = s.limits.findIndex((l) => l.tool === tool.name);
  const own = i >= 0 ? s.limits[i] : undefined;
  const pick = (key: 'timeoutMs' | 'maxOutputBytes'): Limit<number> => {
    const configured = own?.[key];
    if (configured !== undefined) return { value: configured, source: `tools.limits[${i}].${key}` };
    const declared = tool[key];
    if (declared !== undefined) return { value: declared, source: `${tool.name}.${key}` };
    return { value: s[key], source: `tools.${key}` };
  };
  return { timeoutMs: pick('timeoutMs'), maxOutputBytes: pick('maxOutputBytes') };
}

export class ToolTimeout extends Error {
  constructor(readonly tool: string, readonly limit: Limit<number>) {
    super(`${tool} timed out after ${limit.value} ms (${limit.source}); it was told to stop`);
    this.name = 'ToolTimeout';
  }
}

/**
 * Runs the tool with its own abort signal, aborted at the time limit or when the turn is aborted.
 * The call is answered at the limit even if the tool ignores its signal.
 */
export async function executeWithin(tool: Tool, input: unknown, ctx: ToolContext, limit: Limit<number>): Promise<ToolResult> {
  const ac = new AbortController();
  const outer = ctx.signal;
  let timer: NodeJS.Timeout | undefined;
  let onOuterAbort: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new ToolTimeout(tool.name, limit);
      reject(err); // first: a tool rejecting from its abort listener must not win the race
      ac.abort(err);
    }, limit.value);
    onOuterAbort = () => {
      reject(outer!.reason instanceof Error ? outer!.reason : new Error('the turn was aborted'));
      ac.abort(outer!.reason);
    };
    if (outer?.aborted) onOuterAbort();
    else outer?.addEventListener('abort', onOuterAbort, { once: true });
  });
  try {
    return await Promise.race([tool.execute(input, { ...ctx, signal: ac.signal }), stop]);
  } finally {
    clearTimeout(timer);
    if (onOuterAbort) outer?.removeEventListener('abort', onOuterAbort);
  }
}

export interface Capped {
  text: string;
  /** size of the text before the cap, in UTF-8 bytes */
  bytes: number;
  truncated: boolean;
}

/** Cuts at the byte cap (on a character boundary) and says so, with the rule that cut it. */
export function capOutput(text: string, limit: Limit<number>): Capped {
  // Counted without a copy: most results are under the cap, and every call's result passes here.
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= limit.value) return { text, bytes, truncated: false };
  const buf = Buffer.from(text, 'utf8');
  let end = limit.value;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--; // never split a multi-byte character
  const shown = buf.subarray(0, end).toString('utf8');
  return { text: `${shown}\n[output truncated: the first ${end} of ${buf.length} bytes are shown (${limit.source})]`, bytes: buf.length, truncated: true };
}
