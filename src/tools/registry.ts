// The tool registry: every call, from the model or `pinclaw tool run`, takes one path:
//   known tool → policy (by name) → available here → input schema → policy (by input) → PreToolUse hooks →
//   confirmation → run within the time limit → redact → cap → PostToolUse hooks → audit.
// Each step that stops a call answers with an error result naming the rule, and every call,
// stopped or not, is one audit row. The context (session, channel, caller) comes from the runtime.
// The import, not the global: a lazy built-in, loaded under V8's defaults (src/v8-flags.ts).
import { performance } from 'node:perf_hooks';
import { count } from '../counters.js';
import type { ToolSpec } from '../agent/types.js';
import { errorMessage } from '../errors.js';
import { log } from '../log.js';
import type { AuditFinish, NewAudit } from '../store/audit.js';
import type { ToolHooks } from './hooks.js';
import { capOutput, DEFAULT_LIMITS, executeWithin, limitsFor, ToolTimeout, type LimitSettings } from './limits.js';
import { openPolicy, type Decision, type Expired, type Policy } from './policy.js';
import type { Tool, ToolCall, ToolContext, ToolResult, ToolSet, ToolSource } from './types.js';
import { validateInput } from './validate.js';

export { builtinTools, type BuiltinDeps } from './builtin.js';

/** Where audit rows go; `dbAudit` in audit-sink.ts writes them to the store. */
export interface AuditSink {
  record(entry: NewAudit): number;
  finish(id: number, f: AuditFinish): void;
  /** The row of a read-only call, written shortly after (batched, before the store closes); without it, record. */
  recordSoon?(entry: NewAudit): void;
}

export interface RegistryDeps {
  policy?: Policy;
  audit?: AuditSink;
  /** applied to audit inputs, confirmation questions, tool output and error messages */
  redact?: (text: string) => string;
  limits?: LimitSettings;
  /** the audit clock, ms since the epoch */
  now?: () => number;
  /** command hooks (hooks.PreToolUse, hooks.PostToolUse), when the config has any */
  hooks?: ToolHooks;
  /**
   * Tools that come and go (MCP servers'), asked at each listing and call and judged exactly like
   * the fixed ones; a name of theirs that a fixed tool has is ignored (the fixed tool wins).
   */
  sources?: readonly ToolSource[];
}

export type CallOutcome = 'denied' | 'error' | 'ok';

/** What happened to one call: the result the model gets, and how it was decided. */
export interface CallReport {
  result: ToolResult;
  outcome: CallOutcome;
  /** the rule that decided (refused, allowed, or the limit that stopped it) */
  rule?: string;
  durationMs: number;
  /** size of the tool's output before the cap, in bytes */
  outputBytes: number;
  truncated: boolean;
  auditId?: number;
}

export interface ListedTool {
  tool: Tool;
  decision: Decision;
  /** the rule that makes it ask the owner first */
  confirm?: string;
  /** why it cannot run on this machine now (Tool.unavailable) */
  unavailable?: string;
}

/** The rule an audit row of a call to an unavailable tool names. */
export const UNAVAILABLE_RULE = 'unavailable';

export interface Registry extends ToolSet {
  run(call: ToolCall, ctx: ToolContext): Promise<ToolResult>;
  call(call: ToolCall, ctx: ToolContext): Promise<CallReport>;
  /** every registered tool with the policy's verdict in this context */
  list(ctx: ToolContext): ListedTool[];
  /** the tools policy allows here that cannot run on this machine now, with why (for the system prompt) */
  unavailable(ctx: ToolContext): { name: string; reason: string }[];
}

/** Longest audit input kept; a write_file of a large file should not double the database. */
const MAX_AUDIT_INPUT = 4096;
/** Anthropic and OpenAI both accept this shape of tool name. */
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

function specOf(t: Tool): ToolSpec {
  return { name: t.name, description: t.description, inputSchema: t.inputSchema as Record<string, unknown> };
}

/** The arguments as redacted JSON text, cut to size for the audit row, and in full. */
function redactedInput(input: unknown, redact: (s: string) => string): { text: string; full: string } {
  let full: string;
  try {
    full = redact(JSON.stringify(input) ?? 'null');
  } catch {
    full = redact(String(input));
  }
  const text = full.length > MAX_AUDIT_INPUT ? `${full.slice(0, MAX_AUDIT_INPUT)}… (${full.length} characters)` : full;
  return { text, full };
}

/** The redacted arguments as a value to show the owner; parsed only when the owner is asked, not on every call. */
function shownInput(full: string): unknown {
  try {
    return JSON.parse(full); // [redacted] inside a JSON string keeps it valid JSON
  } catch {
    return full; // shown as text
  }
}

/** What the model is told (and passes on) when a physical action's message is too old and nobody can be asked. */
function lateRefusal(tool: string, late: Expired, channel: string): string {
  return `${tool} refused: the message asking for it is ${late.ageSeconds} s old, more than tools.physicalMaxAgeSeconds (${late.maxSeconds} s) allows for a physical action without a fresh confirmation, and channel ${channel} has no way to ask. Tell the owner why it was not done; they can confirm by asking again now`;
}

function summaryOf(tool: string, input: string): string {
  return `${tool} ${input.length > 200 ? `${input.slice(0, 200)}…` : input}`;
}

export function createRegistry(tools: readonly Tool[], deps: RegistryDeps = {}): Registry {
  const byName = new Map<string, Tool>();
  for (const t of tools) {
    if (!NAME.test(t.name)) throw new Error(`tool name '${t.name}' must be 1-64 letters, digits, _ or -`);
    if (byName.has(t.name)) throw new Error(`two tools are named '${t.name}'`);
    byName.set(t.name, t);
  }
  const fixed = tools;
  const sources = deps.sources ?? [];
  /** The fixed tools and what the sources offer now. */
  const current = (): readonly Tool[] => {
    if (!sources.length) return fixed;
    const out = [...fixed];
    for (const src of sources) for (const t of src.tools()) if (!byName.has(t.name) && NAME.test(t.name)) out.push(t);
    return out;
  };
  const find = (name: string): Tool | undefined => {
    const t = byName.get(name);
    if (t || !sources.length) return t;
    for (const src of sources) for (const x of src.tools()) if (x.name === name) return x;
    return undefined;
  };
  const policy = deps.policy ?? openPolicy;
  const redact = deps.redact ?? ((s: string) => s);
  const limits = deps.limits ?? DEFAULT_LIMITS;
  const now = deps.now ?? Date.now;

  const allowed = (ctx: ToolContext) => current().filter((t) => policy.check(t, ctx).allowed);
  const whyNot = (t: Tool): string | undefined => {
    try {
      return t.unavailable?.();
    } catch (err) {
      return `its device cannot be checked: ${errorMessage(err)}`;
    }
  };

  // Every call is counted once by what became of it (/metrics); a name the model made up counts as 'unknown'.
  async function call(c: ToolCall, ctx: ToolContext): Promise<CallReport> {
    const report = await judgeAndRun(c, ctx);
    count('tool_calls', { tool: find(c.name) ? c.name : 'unknown', outcome: report.outcome });
    return report;
  }

  async function judgeAndRun(c: ToolCall, ctx: ToolContext): Promise<CallReport> {
    const started = performance.now();
    let input = redactedInput(c.input, redact);
    const base: NewAudit = { at: now(), sessionKey: ctx.sessionKey, channel: ctx.channel, chatId: ctx.chatId, caller: ctx.caller, tool: c.name, input: input.text, outcome: 'error' };
    const elapsed = () => performance.now() - started;

    /** A call that never runs: one closed audit row and an error result. */
    const stopped = (outcome: 'denied' | 'error', content: string, rule?: string): CallReport => {
      const durationMs = elapsed();
      let auditId: number | undefined;
      try {
        auditId = deps.audit?.record({ ...base, outcome, rule, detail: content, durationMs: Math.round(durationMs), outputBytes: 0 });
      } catch (err) {
        log.warn(`audit: cannot record a ${outcome} call of ${c.name}: ${errorMessage(err)}`);
      }
      return { result: { content, isError: true }, outcome, rule, durationMs, outputBytes: 0, truncated: false, auditId };
    };

    const tool = find(c.name);
    if (!tool) return stopped('error', `unknown tool '${c.name}'; available: ${allowed(ctx).map((t) => t.name).join(', ') || 'none'}`);
    const decision = policy.check(tool, ctx);
    if (!decision.allowed) return stopped('denied', `${tool.name} refused: ${decision.reason}`, decision.rule);
    // Before the arguments: the owner needs the missing device and its fix, not a schema complaint.
    const why = whyNot(tool);
    if (why !== undefined) return stopped('denied', `${tool.name} cannot run on this machine: ${why}`, UNAVAILABLE_RULE);
    const problems = validateInput(tool.inputSchema, c.input);
    if (problems.length) return stopped('error', `invalid arguments for ${tool.name}: ${problems.join('; ')}`, 'inputSchema');
    const byInput = policy.checkInput(tool, c.input, ctx);
    if (!byInput.allowed) return stopped('denied', `${tool.name} refused: ${byInput.reason}`, byInput.rule);

    // PreToolUse hooks, after policy (a hook cannot grant what policy refuses) and before the owner
    // is asked. Their "allow" never skips a confirmation: only "ask" adds one (docs/hooks.md).
    let args = c.input;
    let hookAsk: string | undefined;
    let hookContext: string | undefined;
    if (deps.hooks) {
      const v = await deps.hooks.before(tool, c.input, ctx);
      if ('block' in v) return stopped('denied', `${tool.name} refused by the owner's hook ${v.rule}: ${redact(v.block)}`, v.rule);
      hookAsk = v.ask;
      hookContext = v.context;
      if (v.input !== undefined) {
        // A rewritten input is judged like the model's: the schema, then policy by input.
        const bad = validateInput(tool.inputSchema, v.input);
        if (bad.length) return stopped('error', `${tool.name} not run: a PreToolUse hook's updatedInput is invalid: ${bad.join('; ')}`, 'hooks.PreToolUse');
        const again = policy.checkInput(tool, v.input, ctx);
        if (!again.allowed) return stopped('denied', `${tool.name} refused (input rewritten by a PreToolUse hook): ${again.reason}`, again.rule);
        args = v.input;
        input = redactedInput(args, redact);
        base.input = input.text;
      }
    }

    // A message too old for a physical action: the owner hears why they are asked (or why it did not run).
    const late = policy.expired(tool, ctx);
    const confirmRule = late?.rule ?? policy.confirmation(tool, ctx) ?? hookAsk;
    if (confirmRule) {
      if (!ctx.confirm) {
        if (late) return stopped('denied', lateRefusal(tool.name, late, ctx.channel), confirmRule);
        return stopped('denied', `${tool.name} refused: it needs the owner's confirmation (${confirmRule}) and channel ${ctx.channel} has no way to ask${ctx.channel === 'cli' ? '; run with --yes, or from a terminal' : ''}`, confirmRule);
      }
      let yes: boolean;
      try {
        yes = await untilAborted(ctx.confirm({
          tool: tool.name, input: shownInput(input.full), summary: summaryOf(tool.name, input.text), channel: ctx.channel, chatId: ctx.chatId,
          ...(late ? { reason: `your message asking for this is ${late.ageSeconds} s old (more than tools.physicalMaxAgeSeconds, ${late.maxSeconds} s): is it still wanted now?` } : {}),
          ...(ctx.signal ? { signal: ctx.signal } : {}),
        }), ctx.signal);
      } catch (err) {
        return stopped('denied', `${tool.name} refused: asking the owner failed (${redact(errorMessage(err))}) (${confirmRule})`, confirmRule);
      }
      if (!yes) return stopped('denied', `${tool.name} refused: the owner said no (${confirmRule})`, confirmRule);
    }

    const decidedBy = confirmRule ? `${decision.rule}; confirmed (${confirmRule})` : decision.rule;
    let auditId: number | undefined;
    try {
      // A tool that changes nothing gets its one row when it ends (below): a write less per call.
      if (!tool.readOnly) auditId = deps.audit?.record({ ...base, outcome: 'allowed', rule: decidedBy });
    } catch (err) {
      // No record, no run: an unaudited side effect is worse than a failed call.
      return { result: { content: `${tool.name} not run: the audit log cannot be written (${errorMessage(err)})`, isError: true }, outcome: 'error', durationMs: elapsed(), outputBytes: 0, truncated: false };
    }

    const lim = limitsFor(tool, limits);
    let result: ToolResult;
    let rule = decidedBy;
    try {
      // Streamed output passes the same redaction as the result does.
      const onOutput = ctx.onOutput;
      const runCtx = onOutput ? { ...ctx, onOutput: (stream: 'stdout' | 'stderr', text: string) => onOutput(stream, redact(text)) } : ctx;
      result = await executeWithin(tool, args, runCtx, lim.timeoutMs);
    } catch (err) {
      if (err instanceof ToolTimeout) rule = err.limit.source;
      result = { content: err instanceof ToolTimeout ? err.message : `${tool.name} failed: ${errorMessage(err)}`, isError: true };
    }
    const capped = capOutput(redact(result.content), lim.maxOutputBytes);
    if (deps.hooks) {
      // PostToolUse sees what the model would; it may withhold it or add to it. The audit row
      // below still tells what the tool itself did.
      const after = await deps.hooks.after(tool, args, { ...result, content: capped.text }, ctx);
      const notes = [hookContext, after.context].filter((x): x is string => x !== undefined).map((x) => redact(x));
      if (after.block) {
        result = { ...result, isError: true };
        capped.text = `${tool.name} ran, but its result is withheld by the owner's hook ${after.block.rule}: ${redact(after.block.reason)}`;
      }
      if (notes.length) capped.text += notes.map((n) => `\n[hook context] ${n}`).join('');
    }
    const durationMs = elapsed();
    const outcome: CallOutcome = result.isError ? 'error' : 'ok';
    const detail = outcome === 'error' ? capped.text.slice(0, 500) : undefined;
    if (auditId !== undefined) {
      try {
        const physical = result.physical ? redact(JSON.stringify(result.physical)) : undefined;
        deps.audit!.finish(auditId, { outcome, detail, durationMs, outputBytes: capped.bytes, physical });
      } catch (err) {
        log.warn(`audit: cannot close row ${auditId} (${tool.name}): ${errorMessage(err)}`);
      }
    } else if (tool.readOnly && deps.audit) {
      const row: NewAudit = { ...base, outcome, rule: decidedBy, detail, durationMs: Math.round(durationMs), outputBytes: capped.bytes };
      try {
        // Off the call's path where the sink can: the answer (a remote read's) goes out first.
        if (deps.audit.recordSoon) deps.audit.recordSoon(row);
        else auditId = deps.audit.record(row);
      } catch (err) {
        log.warn(`audit: cannot record the call of ${tool.name} (${outcome}): ${errorMessage(err)}`);
      }
    }
    return {
      // Images pass only with a result the model may see (not one a PostToolUse hook withheld).
      result: { content: capped.text, ...(result.isError ? { isError: true } : {}), ...(result.images?.length && !result.isError ? { images: result.images } : {}) },
      outcome, rule, durationMs, outputBytes: capped.bytes, truncated: capped.truncated, auditId,
    };
  }

  return {
    // A tool that cannot run here is not offered: the model would only call it to hear why. The
    // system prompt names it with the reason (unavailable below), and a call by name still gets it.
    specs: (ctx) => (ctx ? allowed(ctx) : current()).filter((t) => whyNot(t) === undefined).map(specOf),
    get(name, ctx) {
      const t = find(name);
      return t && (!ctx || policy.check(t, ctx).allowed) ? t : undefined;
    },
    call,
    run: async (c, ctx) => (await call(c, ctx)).result,
    list: (ctx) => current().map((tool) => {
      const why = whyNot(tool);
      return { tool, decision: policy.check(tool, ctx), confirm: policy.confirmation(tool, ctx), ...(why !== undefined ? { unavailable: why } : {}) };
    }),
    unavailable: (ctx) => allowed(ctx).flatMap((t) => {
      const why = whyNot(t);
      return why === undefined ? [] : [{ name: t.name, reason: why }];
    }),
  };
}

/**
 * The owner's answer, or a refusal as soon as the turn is stopped: a channel whose question cannot be
 * withdrawn (a Telegram button) would otherwise hold a stopped turn until the question times out.
 */
function untilAborted(answer: Promise<boolean>, signal: AbortSignal | undefined): Promise<boolean> {
  if (!signal) return answer;
  if (signal.aborted) return Promise.reject(new Error('the turn was stopped'));
  return new Promise<boolean>((resolve, reject) => {
    const onAbort = () => reject(new Error('the turn was stopped'));
    signal.addEventListener('abort', onAbort, { once: true });
    answer.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
