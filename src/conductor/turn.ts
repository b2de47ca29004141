// One turn: a burst of inbound messages from one sender becomes one prompt; the session is loaded,
// compacted when needed, run through the agent loop, and the outcome handed back as data.
import { compact, contextOver, describeFailure } from '../agent/compaction.js';
import { runAgentLoop, contextTokens, type LoopEvent } from '../agent/loop.js';
import { clockTime } from '../local-time.js';
import { buildSystemPrompt } from '../agent/prompt.js';
import type { TokenCounter } from '../agent/tokens.js';
import type { Message, Provider } from '../agent/types.js';
import type { PinclawConfig } from '../config/schema.js';
import { log } from '../log.js';
import type { Db } from '../store/db.js';
import { unfinishedCount, waitingReplies, type InboundRow } from '../store/queue.js';
import { loadSession, resetSession, type Session } from '../store/sessions.js';
import type { SendMessage, ToolContext, ToolSet } from '../tools/types.js';
import { pinclawVersion } from '../version.js';
import type { Hooks } from '../hooks/index.js';

export interface TurnDeps {
  db: Db;
  config: PinclawConfig;
  workspace: string;
  /**
   * The provider chain, resolved on the first turn that needs it: the SDKs stay unloaded until then,
   * which keeps the gateway's start-up fast. `missing` says how to configure one.
   */
  provider: () => Promise<Provider | { missing: string }>;
  tools: ToolSet;
  /** How the owner is asked to confirm a tool in a chat; undefined where the channel cannot ask. */
  confirmFor?: (channel: string, chatId: string) => ToolContext['confirm'];
  countTokens: TokenCounter;
  /** the memories relevant to the message, for the prompt; a failure here never fails the turn */
  memories?: (sessionKey: string, text: string) => Promise<string[]>;
  board?: string;
  now?: () => Date;
  /** command hooks (MessageReceived, SessionStart, MessageSending), when the config has any */
  hooks?: Hooks;
  /** records and delivers a message to a chat: the conductor's own send, lent to the turn's tools */
  send?: SendMessage;
}

export type TurnOutcome =
  | { kind: 'reply'; text: string; session?: Session; iterations: number }
  | { kind: 'reset'; text: string };

function stamp(now: Date, tz: string | undefined, text: string): string {
  return `[${clockTime(now, tz)}] ${text}`;
}

async function relevantMemories(deps: TurnDeps, key: string, text: string): Promise<string[] | undefined> {
  if (!deps.memories) return undefined;
  try {
    return await deps.memories(key, text);
  } catch (err) {
    log.warn(`session ${key}: no memories for this turn: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

/** The workspace files a channel saved as pictures of these messages (meta.images), in order. */
function imagesOf(rows: readonly InboundRow[]): string[] {
  return rows.flatMap((r) => {
    if (!r.meta) return [];
    try {
      const images = (JSON.parse(r.meta) as { images?: unknown }).images;
      return Array.isArray(images) ? images.filter((x): x is string => typeof x === 'string') : [];
    } catch {
      return [];
    }
  });
}

/** /status: the answer comes from pinclaw itself, without a model call. */
function statusText(deps: TurnDeps, key: string): string {
  const session = loadSession(deps.db, key);
  const cfg = deps.config.agent;
  const waiting = unfinishedCount(deps.db);
  const context = session.meta.lastInputTokens !== undefined ? `${session.meta.lastInputTokens} of ${cfg.contextWindow} tokens of context` : 'no model call yet';
  return [
    `pinclaw ${pinclawVersion()}, up ${Math.round(process.uptime() / 60)} min, model ${cfg.model}`,
    `this conversation: ${session.messages.length} messages, ${context}, compacted ${session.meta.compactions ?? 0} times`,
    `messages being handled: ${waiting}`,
  ].join('\n');
}

/**
 * The line a reply from agent.fallback's local model ends with, on every channel: the owner should
 * know a smaller model answered, and how many replies wait for channels that are down.
 */
export function localModelNote(db: Db, model: string): string {
  const waiting = waitingReplies(db);
  const total = waiting.reduce((n, w) => n + w.waiting, 0);
  const queued = total === 0 ? '' : `; ${total} repl${total === 1 ? 'y waits' : 'ies wait'} for channels that are down (${waiting.map((w) => `${w.channel} ${w.waiting}`).join(', ')})`;
  return `(answered by the local model ${model} — the internet provider is unreachable${queued})`;
}

/** What a turn had reached when it was stopped: its session with the conversation so far (stopped-turn.ts). */
export interface TurnProgress {
  session?: Session;
}

/**
 * Throws on provider failure; the caller records the attempt and keeps the rows retryable. `progress`
 * holds the conversation as the model has seen it so far, for a turn the owner stops.
 */
export async function runTurn(deps: TurnDeps, burst: readonly InboundRow[], emit: (e: LoopEvent) => void, signal?: AbortSignal, progress?: TurnProgress): Promise<TurnOutcome> {
  // Voice notes become the owner's text first (src/voice/burst.ts, the voice chunk, loaded by a
  // message with meta.voice): hooks, memories and the model see it.
  const heard = burst.some((r) => r.meta?.includes('"voice":')) ? await (await import('../voice/index.js')).hearVoiceNotes(deps, burst, signal) : undefined;
  const rows = heard?.rows ?? burst;
  // Why a voice note gave no text: said first in the reply; alone when the burst has no other text.
  const unheard = heard?.refusals.length ? `${heard.refusals.join('\n\n')}\n\n` : '';
  const first = rows[0]!;
  const key = first.session_key;
  const text = rows.map((r) => r.text).filter(Boolean).join('\n\n');
  if (unheard && !text.trim()) return { kind: 'reply', text: unheard.trim(), iterations: 0 };
  const command = text.trim();
  const place = { sessionKey: key, channel: first.channel, chatId: first.chat_id };
  if (deps.hooks?.has('MessageReceived')) {
    const v = await deps.hooks.fire('MessageReceived', place, { text, sender: first.sender }, signal);
    // Dropped: the sender hears why, the session does not change.
    if (v.block) return { kind: 'reply', text: `Your message was not handled: the owner's hook ${v.block.rule} refused it (${v.block.reason}).`, iterations: 0 };
  }
  if (command === '/reset') {
    resetSession(deps.db, key);
    return { kind: 'reset', text: 'Session reset: the conversation starts fresh.' };
  }
  if (command === '/status') return { kind: 'reply', text: statusText(deps, key), iterations: 0 };
  const resolved = await deps.provider();
  if ('missing' in resolved) return { kind: 'reply', text: resolved.missing, iterations: 0 };
  const provider = resolved;

  const session = loadSession(deps.db, key);
  const note = session.recovered ? `(The stored conversation could not be read (${session.recovered}); it was set aside and this session starts fresh.)\n\n` : '';
  const cfg = deps.config.agent;
  const now = deps.now?.() ?? new Date();
  // SessionStart: before the first turn of a session; what its hooks say goes into this turn's prompt.
  const started = session.messages.length === 0 && deps.hooks?.has('SessionStart')
    ? await deps.hooks.fire('SessionStart', place, { text }, signal)
    : undefined;
  const base = buildSystemPrompt({
    workspace: deps.workspace,
    now,
    timezone: cfg.timezone,
    runtime: { version: pinclawVersion(), node: process.version, arch: process.arch, model: cfg.model, channel: first.channel },
    board: deps.board,
    memories: await relevantMemories(deps, key, text),
  });
  const system = started?.context ? `${base}\n\n## From the owner's SessionStart hooks\n${started.context}` : base;
  const summarize = async (messages: Message[]) => {
    const result = await compact(messages, cfg.keepRecent, provider, cfg.model, cfg.maxTokens, signal);
    if (result) {
      session.meta.compactions = (session.meta.compactions ?? 0) + 1;
      log.info(`session ${key}: compacted ${result.summarized} messages`);
    }
    return result;
  };

  if (command === '/compact') {
    try {
      const result = await summarize(session.messages);
      if (!result) return { kind: 'reply', text: `${note}Nothing to compact: the session has ${session.messages.length} messages.`, iterations: 0 };
      session.messages = result.messages;
      session.meta.lastInputTokens = undefined;
      session.meta.lastInputMessages = undefined;
      return { kind: 'reply', text: `${note}Compacted ${result.summarized} messages into a summary; ${result.messages.length} messages remain.`, session, iterations: 0 };
    } catch (err) {
      log.warn(`session ${key}: ${describeFailure(err)}`);
      return { kind: 'reply', text: `${note}Compaction failed; the session is unchanged. (${err instanceof Error ? err.message : String(err)})`, iterations: 0 };
    }
  }

  const threshold = cfg.contextWindow * cfg.compactAt;
  let stored: { inputTokens?: number; inputMessages?: number } | undefined = { inputTokens: session.meta.lastInputTokens, inputMessages: session.meta.lastInputMessages };
  const pictures = imagesOf(rows);
  // The image code (ffmpeg) is the lazy chunk 'images': loaded only by a message with a picture.
  const shown = pictures.length ? await (await import('../images/index.js')).attachedImages(deps.workspace, pictures, signal) : [];
  const user: Message = { role: 'user', content: [{ type: 'text', text: stamp(now, cfg.timezone, text) }, ...shown] };
  // The conversation as far as the model has answered: what a stopped turn keeps.
  if (progress) progress.session = { key, messages: [...session.messages, user], meta: session.meta };
  const tracked: Provider = progress
    ? {
        id: provider.id,
        async complete(req, onEvent) {
          const res = await provider.complete(req, onEvent);
          progress.session = { key, messages: [...req.messages, { role: 'assistant', content: res.content }], meta: session.meta };
          return res;
        },
      }
    : provider;
  const result = await runAgentLoop({
    provider: tracked,
    model: cfg.model,
    system,
    messages: [...session.messages, user],
    tools: deps.tools,
    toolContext: {
      sessionKey: key, channel: first.channel, chatId: first.chat_id, caller: first.sender, board: deps.board, signal, confirm: deps.confirmFor?.(first.channel, first.chat_id),
      // When the oldest message of the burst came in: a retry or a restart does not make it younger.
      receivedAt: Math.min(...rows.map((r) => r.created_at)),
      turnId: String(first.id),
      // What the turn's tools may use: the set they run in (spawn lends it to a sub-agent) and the
      // conductor's send (send_message).
      tools: deps.tools,
      ...(deps.send ? { send: deps.send } : {}),
    },
    maxIterations: cfg.maxIterations,
    maxTokens: cfg.maxTokens,
    signal,
    emit,
    beforeCall: async (messages, lastCall) => {
      const over = contextOver(messages, system, deps.countTokens, threshold, lastCall ?? stored);
      stored = undefined; // the stored report describes the session before this turn only
      if (!over) return messages;
      try {
        const r = await summarize(messages);
        return r ? r.messages : messages;
      } catch (err) {
        log.warn(`session ${key}: ${describeFailure(err)}`);
        return messages;
      }
    },
  });
  session.messages = result.conversation;
  session.meta.lastInputTokens = contextTokens(result.lastUsage);
  session.meta.lastInputMessages = result.lastInputMessages;
  let reply = unheard + note + (result.reply || '(no answer)');
  if (result.localModel) reply += `\n\n${localModelNote(deps.db, result.localModel)}`;
  if (deps.hooks?.has('MessageSending')) {
    const v = await deps.hooks.fire('MessageSending', place, { text: reply }, signal);
    if (v.block) reply = `(The reply was withheld by the owner's hook ${v.block.rule}: ${v.block.reason})`;
    else if (v.text !== undefined) reply = v.text;
  }
  return { kind: 'reply', text: reply, session, iterations: result.iterations };
}
