// The Discord channel: the adapter the conductor delivers through (replies cut at 2000 characters by
// the splitter Telegram's plain replies use, each part's message id committed as it is sent, so a
// restart sends only the rest), typing while a turn runs, tool confirmations as Allow/Deny buttons
// answered through INTERACTION_CREATE, and the gateway connection with its status. Started by the
// gateway when channels.discord.token is set; a refused token stops this channel, and only it.
import type { Bus } from '../../conductor/bus.js';
import type { ChannelAdapter, Conductor } from '../../conductor/conductor.js';
import type { Delivery } from '../../conductor/delivery.js';
import type { PinclawConfig } from '../../config/schema.js';
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import type { Db } from '../../store/db.js';
import { inboundById, type OutboundRow } from '../../store/queue.js';
import { getState, setState } from '../../store/state.js';
import type { ConfirmRequest } from '../../tools/types.js';
import { FatalGatewayError, runGateway, type GatewaySession } from './gateway.js';
import { createInbound } from './inbound.js';
import { contentWithheld, type DiscordMessage } from './message.js';
import { discordRest, type DiscordRest } from './rest.js';
import { openSeen } from './seen.js';
import { isPaired } from '../../store/pairing.js';
import type { ExternalChannel, ExternalChannelOptions } from '../external.js';

export type DiscordChannel = ExternalChannel;

export interface DiscordChannelOptions extends ExternalChannelOptions {
  rest?: DiscordRest;
}

export const DISCORD_MAX_CHARS = 2000;
/** Where the gateway session is saved (a restart resumes it). */
export const SESSION_KEY = 'discord.session';
/** Discord shows "typing" for 10 s; renewed while the turn runs. */
const TYPING_RENEW_MS = 8000;

interface Interaction {
  id: string;
  token: string;
  type: number;
  channel_id?: string;
  data?: { custom_id?: string };
  member?: { user?: { id: string } };
  user?: { id: string };
}

export function createDiscordChannel(o: DiscordChannelOptions): DiscordChannel {
  const cfg = o.config.channels.discord;
  if (!cfg.token) throw new Error('channels.discord.token is not set');
  const token = cfg.token;
  const rest = o.rest ?? discordRest(cfg.apiBaseUrl, token);
  const abort = new AbortController();
  const confirmations = new Map<string, (yes: boolean) => void>();
  const typing = new Map<string, NodeJS.Timeout>();
  const offs: (() => void)[] = [];
  let botId = '';
  let warnedContent = false;
  let running: Promise<void> | undefined;
  let nonce = 0;

  const status = (state: 'up' | 'down' | 'degraded', detail: string) => o.bus.emit({ type: 'channel_status', channel: 'discord', state, detail });
  const quietly = (what: string) => (err: unknown) => log.debug(`discord: ${what}: ${errorMessage(err)}`);

  async function send(row: OutboundRow, delivery: Delivery): Promise<void> {
    // The splitter Telegram's plain replies use (paragraph, line, word, character), at Discord's limit.
    const { plainParts } = await import('../telegram/format.js');
    const parts = plainParts(row.text, DISCORD_MAX_CHARS);
    let ref: Record<string, unknown> = {};
    if (row.inbound_id !== null) {
      // In a guild the answer replies to the message it answers; in a DM that is noise.
      const meta = inboundById(o.db, row.inbound_id)?.meta;
      const m = meta ? (JSON.parse(meta) as { messageId?: string; guild?: boolean }) : {};
      if (m.guild && m.messageId) ref = { message_reference: { message_id: m.messageId, fail_if_not_exists: false } };
    }
    for (let i = delivery.sentParts.length; i < parts.length; i++) {
      const r = await rest.call<{ id: string }>('POST', `/channels/${row.chat_id}/messages`, { content: parts[i], allowed_mentions: { parse: [] }, ...(i === 0 ? ref : {}) }, { signal: abort.signal });
      delivery.partSent(r.id);
    }
  }

  async function confirm(chatId: string, request: ConfirmRequest): Promise<boolean> {
    const id = `pc${Date.now().toString(36)}${(nonce++).toString(36)}`;
    const seconds = Math.round(o.config.tools.confirmTimeoutMs / 1000);
    const text = `Allow ${request.tool}?\n${request.reason ? `${request.reason}\n` : ''}${request.summary}\n\n(within ${seconds} s)`.slice(0, DISCORD_MAX_CHARS);
    const buttons = [{ type: 1, components: [{ type: 2, style: 3, label: 'Allow', custom_id: `${id}:y` }, { type: 2, style: 4, label: 'Deny', custom_id: `${id}:n` }] }];
    let messageId: string;
    try {
      messageId = (await rest.call<{ id: string }>('POST', `/channels/${chatId}/messages`, { content: text, components: buttons, allowed_mentions: { parse: [] } }, { signal: abort.signal })).id;
    } catch (err) {
      log.warn(`discord: could not ask for confirmation in channel ${chatId}: ${errorMessage(err)}`);
      return false;
    }
    const answer = await new Promise<boolean | 'timeout'>((resolve) => {
      const timer = setTimeout(() => done('timeout'), o.config.tools.confirmTimeoutMs);
      const done = (a: boolean | 'timeout') => {
        clearTimeout(timer);
        confirmations.delete(id);
        resolve(a);
      };
      confirmations.set(id, (yes) => done(yes));
    });
    if (answer === 'timeout' && !abort.signal.aborted) {
      // The buttons go: a click after the timeout would otherwise look like it did something.
      await rest.call('PATCH', `/channels/${chatId}/messages/${messageId}`, { content: `${text}\n\n${request.tool}: no answer in time: not allowed`, components: [] }).catch(quietly('confirmation timeout edit'));
    }
    return answer === true;
  }

  async function interaction(i: Interaction): Promise<void> {
    if (i.type !== 3 || !i.data?.custom_id) return;
    const [id, choice] = i.data.custom_id.split(':');
    const user = i.member?.user?.id ?? i.user?.id ?? '';
    const pending = id ? confirmations.get(id) : undefined;
    const allowed = cfg.allowFrom.includes(user) || isPaired(o.db, 'discord', user);
    let content: string;
    if (!allowed) content = '';
    else if (!pending) content = 'This question is no longer open.';
    else {
      pending(choice === 'y');
      content = choice === 'y' ? 'Allowed.' : 'Denied.';
    }
    // A stranger's click is answered privately (flag 64) and changes nothing; the owner's updates the question.
    const callback = allowed ? { type: 7, data: { content: `${content}`, components: [] } } : { type: 4, data: { content: 'Only my owner can answer this.', flags: 64 } };
    await rest.call('POST', `/interactions/${i.id}/${i.token}/callback`, callback, { signal: abort.signal }).catch((err: unknown) => log.warn(`discord: could not answer a button click: ${errorMessage(err)}`));
  }

  function startTyping(chatId: string): void {
    stopTyping(chatId);
    const tick = () => void rest.call('POST', `/channels/${chatId}/typing`, undefined, { timeoutMs: 10_000 }).catch(quietly('typing'));
    tick();
    typing.set(chatId, setInterval(tick, TYPING_RENEW_MS).unref());
  }

  function stopTyping(chatId: string): void {
    clearInterval(typing.get(chatId));
    typing.delete(chatId);
  }

  return {
    name: 'discord',
    debounceMs: cfg.debounceMs,
    send,
    confirm,
    async start(conductor) {
      status('down', 'connecting');
      const seen = openSeen(o.db);
      const prepare = createInbound({ db: o.db, conductor, botId: () => botId, allowFrom: cfg.allowFrom, maxFileBytes: cfg.maxFileBytes, maxMessageChars: o.config.agent.maxMessageChars, workspace: o.workspace, home: o.home });
      offs.push(
        o.bus.on('turn_start', (e) => void (e.channel === 'discord' && startTyping(e.chatId))),
        o.bus.on('turn_end', (e) => void (e.channel === 'discord' && stopTyping(e.chatId))),
      );
      const prune = setInterval(() => seen.prune(), 6 * 3600_000).unref();
      offs.push(() => clearInterval(prune));
      const saveSession = (s: GatewaySession | undefined) => setState(o.db, SESSION_KEY, s ? JSON.stringify(s) : '');
      running = runGateway({
        token, rest, signal: abort.signal,
        loadSession: () => {
          const raw = getState(o.db, SESSION_KEY);
          return raw ? (JSON.parse(raw) as GatewaySession) : undefined;
        },
        saveSession,
        onStatus: (state, detail) => {
          status(state, detail);
          if (state === 'up') conductor.retryDelivery('discord');
        },
        dispatch: async (ev, session) => {
          if (ev.t === 'READY') {
            botId = (ev.d as { user: { id: string } }).user.id;
            setState(o.db, 'discord.botId', botId);
            saveSession(session);
            return;
          }
          // After a resume READY does not come again: the bot's id is the saved one.
          if (!botId) botId = getState(o.db, 'discord.botId') ?? '';
          if (ev.t === 'INTERACTION_CREATE') return interaction(ev.d as Interaction);
          if (ev.t !== 'MESSAGE_CREATE') return;
          const m = ev.d as DiscordMessage;
          if (seen.has(m.id)) return;
          if (contentWithheld(m, botId) && !warnedContent) {
            warnedContent = true;
            const why = 'a message that mentions the bot came with no text: the Message Content intent is off. Enable MESSAGE_CONTENT ("Message Content Intent") under Privileged Gateway Intents in the Developer Portal (your application → Bot), then restart the gateway';
            log.error(`discord: ${why}`);
            status('degraded', why);
          }
          let commit: () => void;
          try {
            commit = await prepare(m);
          } catch (err) {
            log.error(`discord: message ${m.id} could not be handled and is skipped: ${errorMessage(err)}`);
            commit = () => {};
          }
          // The message, its id and the session's position in one transaction: taken exactly once.
          o.db.transaction(() => {
            commit();
            seen.add(m.id);
            saveSession(session);
          })();
        },
      }).catch((err: unknown) => {
        const why = err instanceof FatalGatewayError ? err.message : `the gateway connection stopped: ${errorMessage(err)}`;
        log.error(`discord: ${why}; this channel stays down until the gateway is restarted (the other channels go on)`);
        status('down', why);
      });
    },
    async stop() {
      abort.abort();
      for (const off of offs) off();
      for (const chatId of [...typing.keys()]) stopTyping(chatId);
      for (const c of confirmations.values()) c(false);
      await running;
    },
  };
}
