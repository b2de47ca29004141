// One MESSAGE_CREATE becomes a queued message: the sender is checked (allow-list, pairing), a guild
// message must be addressed to the bot, attachments within channels.discord.maxFileBytes are saved
// into the workspace first, and the commit (the inbound row) is handed back to be stored together
// with the message id (./seen.ts). Sessions: discord:<channel id>; a thread is a channel of its own
// in Discord, so each thread is its own session (discord:<thread id>), as is each DM channel.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Conductor } from '../../conductor/conductor.js';
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import type { Db } from '../../store/db.js';
import { claimPrompt, isPaired, requestPairing } from '../../store/pairing.js';
import { approveCommand } from '../pairing-hint.js';
import { addressedText, type DiscordAttachment, type DiscordMessage } from './message.js';
import { httpFetch } from '../../net/fetch.js';

export type Commit = () => void;

export interface InboundOptions {
  db: Db;
  conductor: Conductor;
  botId: () => string;
  allowFrom: readonly string[];
  maxFileBytes: number;
  maxMessageChars: number;
  workspace: string;
  home?: string;
}

export const sessionKeyFor = (channelId: string) => `discord:${channelId}`;

const ACCEPTED_TYPES = /^(image\/|text\/|audio\/|application\/(pdf|json|xml|x-yaml|yaml|csv))/;
const nothing: Commit = () => {};

export function createInbound(o: InboundOptions): (m: DiscordMessage) => Promise<Commit> {
  const reply = (chatId: string, text: string, key: string) => o.conductor.send({ channel: 'discord', chatId, text, idempotencyKey: key });
  const allowed = (userId: string) => o.allowFrom.includes(userId) || isPaired(o.db, 'discord', userId);

  async function saveFiles(atts: readonly DiscordAttachment[], m: DiscordMessage): Promise<{ notes: string[]; refusals: string[] }> {
    const notes: string[] = [];
    const refusals: string[] = [];
    for (const [i, a] of atts.entries()) {
      const type = a.content_type ?? 'application/octet-stream';
      if (!ACCEPTED_TYPES.test(type)) {
        refusals.push(`I don't accept ${type} files (${a.filename}); I take images, audio, text, PDF, JSON, XML, YAML and CSV up to ${o.maxFileBytes} bytes.`);
        continue;
      }
      if (a.size > o.maxFileBytes) {
        refusals.push(`${a.filename} is ${a.size} bytes, more than the ${o.maxFileBytes} bytes I accept (channels.discord.maxFileBytes); it was not saved.`);
        continue;
      }
      try {
        const res = await httpFetch(a.url, { signal: AbortSignal.timeout(60_000) });
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        const bytes = Buffer.from(await res.arrayBuffer());
        // The size Discord announced is checked above; what came is checked too.
        if (bytes.length > o.maxFileBytes) throw new Error(`${bytes.length} bytes, more than channels.discord.maxFileBytes`);
        const day = new Date().toISOString().slice(0, 10);
        const name = a.filename.replace(/[^\w.\-]+/g, '_').replace(/^\.+/, '_').slice(-100);
        const rel = join('inbox', 'discord', day, `${m.id}-${i}-${name}`);
        mkdirSync(join(o.workspace, 'inbox', 'discord', day), { recursive: true });
        writeFileSync(join(o.workspace, rel), bytes);
        notes.push(`[the sender attached a file, saved in the workspace as ${rel} (${bytes.length} bytes, ${type})]`);
      } catch (err) {
        log.warn(`discord: attachment ${a.filename} of message ${m.id} could not be saved: ${errorMessage(err)}`);
        refusals.push(`I could not save ${a.filename} (${errorMessage(err)}). Please send it again.`);
      }
    }
    return { notes, refusals };
  }

  return async (m) => {
    const botId = o.botId();
    if (m.author.bot || m.author.id === botId) return nothing;
    // System messages (joins, pins, thread starts) start no turn.
    if (m.type !== undefined && m.type !== 0 && m.type !== 19) return nothing;
    const text = addressedText(m, botId);
    if (text === null) return nothing;
    const chatId = m.channel_id;
    const from = m.author.id;
    if (!allowed(from)) {
      // A stranger starts no turn. In a DM they learn how to ask, at most once an hour; in a guild the bot stays quiet.
      if (m.guild_id !== undefined) return nothing;
      const label = `${m.author.global_name ?? m.author.username ?? from} (${from})`;
      return () => {
        const pairing = requestPairing(o.db, 'discord', from, label);
        if (!claimPrompt(o.db, pairing.id)) return;
        const approve = approveCommand(pairing.code, o.home);
        log.info(`discord: ${label} asked to talk to the bot; to let them in: ${approve}`);
        reply(chatId, `I only talk to my owner. To let you in, my owner runs this on my machine:\n\n${approve}\n\n(The code is good for an hour.)`, `pairing:${pairing.id}:${pairing.code}`);
      };
    }
    const files = await saveFiles(m.attachments ?? [], m);
    const body = [text, ...files.notes].filter(Boolean).join('\n\n');
    const key = `${chatId}:${m.id}`;
    return () => {
      if (files.refusals.length) reply(chatId, files.refusals.join('\n'), `refused:${key}`);
      if (!body) return;
      if (body.length > o.maxMessageChars) {
        reply(chatId, `Your message has ${body.length} characters, more than the ${o.maxMessageChars} I accept (agent.maxMessageChars); please send it in smaller parts.`, `too-long:${key}`);
        return;
      }
      o.conductor.submit({ sessionKey: sessionKeyFor(chatId), channel: 'discord', chatId, sender: from, text: body, meta: { messageId: m.id, guild: m.guild_id !== undefined } });
    };
  };
}
