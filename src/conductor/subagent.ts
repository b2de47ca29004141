// Runs the sub-agents of the spawn tool: one agent loop per task, in a session of its own
// (`<parent session>/spawn/<n>`, saved so `pinclaw sessions show` can inspect it), offered only the
// tools spawn chose and calling them through the same registry (policy, limits, audit under the
// child's session). The bounds: model calls (the loop's iteration cap), tokens (summed from the
// usage of each call, checked before the next) and wall-clock time (an abort).
import { runAgentLoop } from '../agent/loop.js';
import { clockTime, dayText, systemZone } from '../local-time.js';
import type { ContentBlock, Message, Provider, Usage } from '../agent/types.js';
import type { PinclawConfig } from '../config/schema.js';
import type { Db } from '../store/db.js';
import { saveSession, sessionKeysWithPrefix } from '../store/sessions.js';
import { restrictTools, type SpawnBounds, type SubAgentRun, type SubAgentRunner } from '../tools/spawn.js';
import { toolSet, type ToolContext } from '../tools/types.js';

export interface SubAgentDeps {
  db: Db;
  config: PinclawConfig;
  provider: () => Promise<Provider | { missing: string }>;
  now?: () => Date;
}

/** Thrown (or used as the abort reason) when a bound ends the run. */
class BoundReached extends Error {
  constructor(readonly bound: keyof SpawnBounds) {
    super(`sub-agent bound ${bound} reached`);
    this.name = 'BoundReached';
  }
}

const SPAWN_INFIX = '/spawn/';

/**
 * The next free `<parent>/spawn/<n>`, claimed at once by saving the task as the session's first
 * message: two spawns of one reply run side by side and must not share a session.
 */
function claimSession(db: Db, parent: string, first: Message): string {
  return db.transaction(() => {
    const prefix = `${parent}${SPAWN_INFIX}`;
    let n = 0;
    for (const key of sessionKeysWithPrefix(db, prefix)) {
      const i = Number(key.slice(prefix.length));
      if (Number.isInteger(i) && i > n) n = i;
    }
    const key = `${prefix}${n + 1}`;
    saveSession(db, { key, messages: [first], meta: {} });
    return key;
  }).immediate();
}

/** Everything a call processed: Anthropic reports cached prompt tokens apart from input_tokens. */
function tokensOf(u: Usage): number {
  return u.inputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0) + u.outputTokens;
}

function lastText(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'assistant') continue;
    return m.content.filter((b): b is Extract<ContentBlock, { type: 'text' }> => b.type === 'text').map((b) => b.text).join('');
  }
  return '';
}

function systemPrompt(now: Date, tz: string | undefined, bounds: SpawnBounds, tools: readonly string[]): string {
  const zone = tz ?? systemZone();
  const day = dayText(now, zone);
  return [
    'You are a sub-agent of pinclaw, a personal AI agent on a small Linux computer. The main agent gave you one task. Do it with the tools you have, then answer with the result: the main agent reads your final text, the owner does not.',
    `## Date\nToday is ${day}, time zone ${zone}; the task was given at ${clockTime(now, zone)}.`,
    `## Limits\nYou may make at most ${bounds.maxTurns} model calls and use ${bounds.tokenBudget} tokens in ${Math.round(bounds.timeoutMs / 1000)} s; past a limit you are stopped without an answer. Be brief and answer as soon as you can.`,
    `## Tools\n${tools.length ? tools.join(', ') : 'none: answer from what you know'}.`,
  ].join('\n\n');
}

export function createSubAgents(d: SubAgentDeps): SubAgentRunner {
  return {
    // The caller's own tool set (the registry, lent through the call's context): what it is offered.
    allowedTools: (ctx) => (ctx.tools?.specs(ctx) ?? []).map((s) => s.name),

    async run(req) {
      const resolved = await d.provider();
      if ('missing' in resolved) throw new Error(resolved.missing);
      const provider = resolved;
      const { bounds, parent } = req;
      const now = d.now?.() ?? new Date();
      const task: Message = { role: 'user', content: [{ type: 'text', text: req.task }] };
      const sessionKey = claimSession(d.db, parent.sessionKey, task);

      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(new BoundReached('timeoutMs')), bounds.timeoutMs);
      const onParentAbort = () => ac.abort(parent.signal?.reason);
      if (parent.signal?.aborted) onParentAbort();
      else parent.signal?.addEventListener('abort', onParentAbort, { once: true });

      let tokens = 0;
      let turns = 0;
      // What the loop had when it stopped: the request of the call that was refused or aborted.
      let latest: Message[] = [task];
      const budgeted: Provider = {
        id: provider.id,
        async complete(request, onEvent) {
          latest = request.messages;
          if (ac.signal.aborted) throw ac.signal.reason;
          if (tokens >= bounds.tokenBudget) throw new BoundReached('tokenBudget');
          const res = await provider.complete(request, onEvent);
          turns++;
          tokens += tokensOf(res.usage);
          latest = [...request.messages, { role: 'assistant', content: res.content }];
          return res;
        },
      };
      // Every call of the child goes through the caller's governed set (policy, limits, audit), cut to its tools.
      const childSet = restrictTools(parent.tools ?? toolSet([]), req.tools);
      const ctx: ToolContext = {
        sessionKey,
        channel: parent.channel,
        chatId: parent.chatId,
        caller: parent.caller,
        board: parent.board,
        // The parent's message: a physical action it asks for expires with it (tools.physicalMaxAgeSeconds).
        receivedAt: parent.receivedAt,
        confirm: parent.confirm,
        signal: ac.signal,
        send: parent.send,
        tools: childSet,
      };
      const save = (messages: Message[]) => saveSession(d.db, { key: sessionKey, messages, meta: {} });

      try {
        const result = await runAgentLoop({
          provider: budgeted,
          model: d.config.agent.model,
          system: systemPrompt(now, d.config.agent.timezone, bounds, req.tools),
          messages: [task],
          tools: childSet,
          toolContext: ctx,
          // The loop makes one more call than its iteration cap (the one told to answer).
          maxIterations: bounds.maxTurns - 1,
          maxTokens: d.config.agent.maxTokens,
          signal: ac.signal,
        });
        save(result.conversation);
        // A reply that still asked for tools on the last allowed call was closed unanswered.
        const unanswered = result.conversation.at(-1)?.role === 'user';
        const run: SubAgentRun = { sessionKey, text: lastText(result.conversation), turns, tokens };
        return unanswered ? { ...run, stoppedBy: 'maxTurns' } : run;
      } catch (err) {
        save(latest);
        const reason = err instanceof BoundReached ? err : ac.signal.reason;
        if (reason instanceof BoundReached && !parent.signal?.aborted) {
          return { sessionKey, text: lastText(latest), turns, tokens, stoppedBy: reason.bound };
        }
        throw err;
      } finally {
        clearTimeout(timer);
        parent.signal?.removeEventListener('abort', onParentAbort);
      }
    },
  };
}
