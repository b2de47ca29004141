// spawn: the model hands one task to a sub-agent that works in its own session with fewer tools,
// and gets its final text back as the result. The sub-agent never gets exec (no shell behind the
// owner's back from a conversation nobody watches) nor spawn (no unbounded tree of agents), and its
// calls still go through the registry: policy, limits and audit rows under its own session.
//
// Running the loop is the conductor's business (tools sit below the agent loop, which calls them),
// so this module decides *what* the sub-agent may do and how the outcome reads, and a runner lent by
// the runtime (src/conductor/subagent.ts) does the running within the bounds it is given.
import { errorMessage } from '../errors.js';
import type { PinclawConfig } from '../config/schema.js';
import type { Tool, ToolContext, ToolSet } from './types.js';
import { validateInput } from './validate.js';
import { defineTool } from './define.js';

export type SpawnSettings = PinclawConfig['tools']['spawn'];

/** Tools a sub-agent is never given, whatever the config or the model asks. */
export const NEVER_SPAWNED = ['exec', 'spawn'] as const;

export interface SpawnBounds {
  /** model calls; the last one is told to answer without tools */
  maxTurns: number;
  /** tokens (input, cached and output) summed over the calls, checked before each call */
  tokenBudget: number;
  timeoutMs: number;
}

export interface SubAgentRequest {
  /** the calling turn's context; the child gets the same chat and caller and a session of its own */
  parent: ToolContext;
  task: string;
  /** names of the tools the child is offered, already restricted */
  tools: readonly string[];
  bounds: SpawnBounds;
}

export interface SubAgentRun {
  sessionKey: string;
  /** the child's final text, or its last text when a bound stopped it */
  text: string;
  turns: number;
  tokens: number;
  /** the bound that ended the run before the child answered */
  stoppedBy?: keyof SpawnBounds;
}

export interface SubAgentRunner {
  /** the tools the policy allows in this context: what the caller itself is offered */
  allowedTools(ctx: ToolContext): string[];
  /** Throws when the provider fails or the caller's call is aborted. */
  run(req: SubAgentRequest): Promise<SubAgentRun>;
}

/** Slack over the sub-agent's own timeout, so its bound (with the text so far) ends the call, not the registry's. */
const TIMEOUT_GRACE_MS = 5000;

const BOUND_NAMES: Record<keyof SpawnBounds, string> = { maxTurns: 'turn limit', tokenBudget: 'token budget', timeoutMs: 'time limit' };

/**
 * The child's tools: `requested` (or everything the caller may use) minus what it may never get.
 * A requested tool it cannot have is an error naming why, so the model can ask again.
 */
export function childTools(allowed: readonly string[], settings: Pick<SpawnSettings, 'deny'>, requested?: readonly string[]): { tools: string[] } | { error: string } {
  const why = (name: string): string | undefined => {
    if ((NEVER_SPAWNED as readonly string[]).includes(name)) return 'never given to a sub-agent';
    if (settings.deny.includes(name) || settings.deny.includes('*')) return 'denied by tools.spawn.deny';
    if (!allowed.includes(name)) return 'not a tool allowed in this chat';
    return undefined;
  };
  const usable = allowed.filter((n) => !why(n));
  if (!requested) return { tools: usable };
  const refused = requested.filter((n) => why(n)).map((n) => `${n} (${why(n)})`);
  if (refused.length) return { error: `spawn: a sub-agent cannot have ${refused.join(', ')}; it may have: ${usable.join(', ') || 'none'}` };
  return { tools: [...new Set(requested)] };
}

/** A view of the registry offering only `names`; a call to anything else is refused without running. */
export function restrictTools(set: ToolSet, names: readonly string[]): ToolSet {
  const allowed = new Set(names);
  return {
    specs: (ctx) => set.specs(ctx).filter((s) => allowed.has(s.name)),
    get: (name, ctx) => (allowed.has(name) ? set.get(name, ctx) : undefined),
    async run(call, ctx) {
      if (!allowed.has(call.name)) return { content: `${call.name} is not available to this sub-agent; its tools: ${names.join(', ') || 'none'}`, isError: true };
      if (set.run) return set.run(call, ctx);
      // A plain set has no governed path: validate here, as the loop would.
      const tool = set.get(call.name, ctx);
      if (!tool) return { content: `unknown tool '${call.name}'`, isError: true };
      const problems = validateInput(tool.inputSchema, call.input);
      return problems.length ? { content: `invalid arguments for ${call.name}: ${problems.join('; ')}`, isError: true } : tool.execute(call.input, ctx);
    },
  };
}

function outcomeText(run: SubAgentRun, bounds: SpawnBounds): { content: string; isError?: boolean } {
  const used = `${run.turns} turn${run.turns === 1 ? '' : 's'}, ${run.tokens} tokens`;
  if (!run.stoppedBy) return { content: `sub-agent ${run.sessionKey} finished (${used}):\n\n${run.text || '(no text)'}` };
  const bound = run.stoppedBy;
  const unit = bound === 'timeoutMs' ? ' ms' : bound === 'tokenBudget' ? ' tokens' : '';
  return {
    content: `sub-agent ${run.sessionKey} was stopped by its ${BOUND_NAMES[bound]} (tools.spawn.${bound} = ${bounds[bound]}${unit}) before it answered (${used}). Its last text:\n\n${run.text || '(none)'}`,
    isError: true,
  };
}

export interface SpawnOptions {
  settings: SpawnSettings;
  /** absent where no model runs (`pinclaw tool run`): the tool then says it cannot start one */
  runner?: SubAgentRunner;
}

export function spawnTool(o: SpawnOptions): Tool {
  const bounds: SpawnBounds = { maxTurns: o.settings.maxTurns, tokenBudget: o.settings.tokenBudget, timeoutMs: o.settings.timeoutMs };
  return defineTool({
    name: 'spawn',
    description:
      `Hands a self-contained task to a sub-agent with its own conversation and returns its final answer. It sees only the task you write (not this conversation), gets your tools except exec and spawn (or the subset you name), and is stopped after ${bounds.maxTurns} model calls, ${bounds.tokenBudget} tokens or ${Math.round(bounds.timeoutMs / 1000)} s. Use it for work whose intermediate steps would clutter this conversation.`,
    inputSchema: {
      type: 'object',
      properties: {
        task: { type: 'string', minLength: 1, maxLength: 32000, description: 'what the sub-agent should do and what it should answer with; include every fact it needs' },
        tools: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 64 }, description: 'tool names the sub-agent may use; default: all of yours except exec and spawn' },
      },
      required: ['task'],
      additionalProperties: false,
    },
    timeoutMs: bounds.timeoutMs + TIMEOUT_GRACE_MS,
    async execute(input, ctx) {
      const { task, tools } = input;
      if (task.trim() === '') return { content: 'spawn: the task is blank', isError: true };
      if (!o.runner || !ctx.tools) return { content: 'spawn: no model runs in this process to start a sub-agent (it works in a turn of pinclaw gateway or pinclaw agent)', isError: true };
      const chosen = childTools(o.runner.allowedTools(ctx), o.settings, tools);
      if ('error' in chosen) return { content: chosen.error, isError: true };
      try {
        return outcomeText(await o.runner.run({ parent: ctx, task, tools: chosen.tools, bounds }), bounds);
      } catch (err) {
        if (ctx.signal?.aborted) throw err; // the registry reports its own timeout or the turn's abort
        return { content: `spawn: the sub-agent failed: ${errorMessage(err)}`, isError: true };
      }
    },
  });
}
