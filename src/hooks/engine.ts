// The hooks of each event, run in config order (docs/hooks.md): the first block ends the event, a
// rewritten input goes to the next hook, context is joined. Every hook run is one audit row, and a
// PreToolUse block of a physical action is written down for the turn, so that no retry of that turn
// (the conductor's, after a failed model call, or the model's own) runs the action: the owner's veto.
// The import, not the global: a lazy built-in, loaded under V8's defaults (src/v8-flags.ts).
import { performance } from 'node:perf_hooks';
import { failureMode, matcherFor, type HookEvent, type HookSpec } from '../config/hooks.js';
import type { PinclawConfig } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import { log } from '../log.js';
import { Sandbox } from '../sandbox/index.js';
import type { NewAudit } from '../store/audit.js';
import type { Db } from '../store/db.js';
import type { AfterTool, BeforeTool } from '../tools/hooks.js';
import type { Tool, ToolContext, ToolResult } from '../tools/types.js';
import { runHook, type HookAnswer } from './run.js';
import { findVeto, storeVeto } from './vetoes.js';
import type { EventPayload, EventVerdict, HookPlace, Hooks, MessageEvent } from './types.js';

export interface HooksDeps {
  config: Pick<PinclawConfig, 'hooks' | 'sandbox'>;
  workspace: string;
  /** where each hook decision is recorded (the tool registry's audit sink) */
  audit?: { record(entry: NewAudit): number };
  /** holds the vetoes of physical actions, so that they outlive a restart between two attempts */
  db?: Db;
  redact?: (text: string) => string;
  now?: () => number;
}

const MAX_AUDIT_INPUT = 4096;

interface Ran {
  block?: { reason: string; rule: string };
  ask?: string;
  input?: unknown;
  context: string[];
}

export function createHooks(deps: HooksDeps): Hooks {
  const hooks = deps.config.hooks;
  const sandbox = new Sandbox(deps.workspace, deps.config.sandbox);
  const redact = deps.redact ?? ((s: string) => s);
  const now = deps.now ?? Date.now;
  const matchers = new Map<HookSpec, (tool: string) => boolean>();
  const matches = (spec: HookSpec, tool: string | undefined) => {
    if (tool === undefined) return true;
    let m = matchers.get(spec);
    if (!m) matchers.set(spec, (m = matcherFor(spec.matcher)));
    return m(tool);
  };

  function audit(event: HookEvent, rule: string, place: HookPlace, tool: string | undefined, input: unknown, outcome: NewAudit['outcome'], detail: string, durationMs: number): void {
    if (!deps.audit) return;
    let text = redact(JSON.stringify(input) ?? 'null');
    if (text.length > MAX_AUDIT_INPUT) text = `${text.slice(0, MAX_AUDIT_INPUT)}… (${text.length} characters)`;
    try {
      deps.audit.record({ at: now(), sessionKey: place.sessionKey, channel: place.channel, chatId: place.chatId, tool: tool ?? `hooks.${event}`, input: text, outcome, rule, detail: redact(detail).slice(0, 1000), durationMs: Math.round(durationMs) });
    } catch (err) {
      log.warn(`audit: cannot record the decision of ${rule}: ${errorMessage(err)}`);
    }
  }

  /** Runs the event's hooks that match `tool`; `input` is the tool's input, rewritten as they go. */
  async function run(event: HookEvent, place: HookPlace, payload: Record<string, unknown>, tool: string | undefined, input: unknown, signal?: AbortSignal): Promise<Ran> {
    const out: Ran = { context: [] };
    let current = input;
    const list = hooks[event] ?? [];
    for (let i = 0; i < list.length; i++) {
      const spec = list[i]!;
      if (!matches(spec, tool)) continue;
      const rule = `hooks.${event}[${i}]`;
      const full = {
        hook_event_name: event, session_id: place.sessionKey, channel: place.channel, chat_id: place.chatId, cwd: deps.workspace,
        ...(tool !== undefined ? { tool_name: tool, tool_input: current } : {}),
        ...payload,
      };
      // A hook sees no secret of pinclaw's, not even one the model put in a tool's input.
      const stdin = JSON.parse(redact(JSON.stringify(full))) as Record<string, unknown>;
      const started = performance.now();
      const answer: HookAnswer = await runHook({ sandbox, command: spec.command ?? '', timeoutMs: spec.timeoutMs, input: stdin, plainIsContext: event === 'SessionStart', ...(signal ? { signal } : {}) });
      const took = performance.now() - started;
      if (answer.failure) {
        const mode = failureMode(event, spec);
        const what = `${rule} failed: ${answer.failure}`;
        log.warn(`hook ${what} (onFailure ${mode})`);
        audit(event, rule, place, tool, stdin, mode === 'block' ? 'denied' : 'error', `${what}; onFailure ${mode}`, took);
        if (mode === 'block') {
          out.block = { reason: `${answer.failure} (the hook failed, and its onFailure is block)`, rule };
          return out;
        }
        continue;
      }
      if (answer.decision === 'block') {
        const reason = answer.reason ?? 'blocked by the hook';
        audit(event, rule, place, tool, stdin, 'denied', `block: ${reason}`, took);
        out.block = { reason, rule };
        return out;
      }
      const said = [answer.decision ?? 'continue', answer.updatedInput !== undefined ? 'updatedInput' : '', answer.additionalContext ? 'additionalContext' : '', answer.reason ?? '']
        .filter(Boolean).join('; ');
      audit(event, rule, place, tool, stdin, 'ok', said, took);
      if (answer.decision === 'ask') out.ask ??= rule;
      if (answer.updatedInput !== undefined) current = out.input = answer.updatedInput;
      if (answer.additionalContext) out.context.push(answer.additionalContext);
    }
    return out;
  }

  function earlierVeto(tool: Tool, ctx: ToolContext): { reason: string; rule: string } | undefined {
    if (!tool.physical || ctx.turnId === undefined || !deps.db) return undefined;
    const v = findVeto(deps.db, ctx.sessionKey, ctx.turnId, tool.name);
    return v && { reason: v.reason ? `vetoed earlier in this turn: ${v.reason}` : 'vetoed earlier in this turn', rule: v.rule };
  }

  const placeOf = (ctx: ToolContext): HookPlace => ({ sessionKey: ctx.sessionKey, channel: ctx.channel, chatId: ctx.chatId });

  return {
    has: (event) => (hooks[event] ?? []).length > 0,

    async before(tool: Tool, input: unknown, ctx: ToolContext): Promise<BeforeTool> {
      const veto = earlierVeto(tool, ctx);
      if (veto) {
        audit('PreToolUse', veto.rule, placeOf(ctx), tool.name, input, 'denied', `block: ${veto.reason}`, 0);
        return { block: veto.reason, rule: veto.rule };
      }
      const ran = await run('PreToolUse', placeOf(ctx), {}, tool.name, input, ctx.signal);
      if (ran.block) {
        if (tool.physical && ctx.turnId !== undefined && deps.db) {
          try {
            storeVeto(deps.db, ctx.sessionKey, ctx.turnId, tool.name, ran.block, now());
          } catch (err) {
            log.warn(`hooks: the veto of ${tool.name} could not be stored (${errorMessage(err)}); this attempt refuses it all the same`);
          }
        }
        return { block: ran.block.reason, rule: ran.block.rule };
      }
      return {
        ...(ran.ask ? { ask: ran.ask } : {}),
        ...(ran.input !== undefined ? { input: ran.input } : {}),
        ...(ran.context.length ? { context: ran.context.join('\n') } : {}),
      };
    },

    async after(tool: Tool, input: unknown, result: ToolResult, ctx: ToolContext): Promise<AfterTool> {
      const payload = { tool_response: { content: result.content, is_error: result.isError === true } };
      const ran = await run('PostToolUse', placeOf(ctx), payload, tool.name, input, ctx.signal);
      return { ...(ran.block ? { block: ran.block } : {}), ...(ran.context.length ? { context: ran.context.join('\n') } : {}) };
    },

    async fire(event: MessageEvent, place: HookPlace, payload: EventPayload, signal?: AbortSignal): Promise<EventVerdict> {
      // MessageSending's text is what its hooks may rewrite: it goes through as their "input".
      const rewrites = event === 'MessageSending';
      const ran = await run(event, place, payload, undefined, undefined, signal);
      let text: string | undefined;
      if (rewrites && ran.input !== undefined) {
        const t = (ran.input as { text?: unknown } | null)?.text;
        if (typeof t === 'string') text = t;
      }
      return { ...(ran.block ? { block: ran.block } : {}), ...(ran.context.length ? { context: ran.context.join('\n') } : {}), ...(text !== undefined ? { text } : {}) };
    },
  };
}
