// One Telegram update becomes a queued message: the sender is checked (allow-list, pairing), a group
// message must be addressed to the bot, files are saved into the workspace first, and the commit (the
// inbound row) is returned to the poller, which stores it together with the new offset.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallbackQuery, Message, Update } from '@grammyjs/types';
import type { Conductor } from '../../conductor/conductor.js';
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import { approveCommand } from '../pairing-hint.js';
import type { PinclawConfig } from '../../config/schema.js';
import type { Db } from '../../store/db.js';
import { setVoiceReplies, voiceRepliesOn } from '../../voice/chat-setting.js';
import { claimPrompt, isPaired, requestPairing } from '../../store/pairing.js';
import { addressedText, isAllowed, type BotIdentity } from './access.js';
import type { TelegramApi } from './api.js';
import type { Commit } from './poller.js';
import { chatKeyOf, targetOf } from './topic.js';

export interface InboundOptions {
  api: TelegramApi;
  db: Db;
  conductor: Conductor;
  bot: BotIdentity;
  allowFrom: readonly string[];
  maxFileBytes: number;
  maxMessageChars: number;
  workspace: string;
  /** voice.* (voice notes, /voice) */
  config: PinclawConfig;
  /** the gateway's home: the pairing hint names it when it is not the default one */
  home?: string;
  /** a button press under a confirmation message */
  onCallback(update: CallbackQuery, allowed: boolean): void;
}

// Documents the agent can read or pass on; an executable or an archive is refused with this list.
const ACCEPTED_TYPES = /^(image\/|text\/|application\/(pdf|json|xml|x-yaml|yaml|csv))/;

/** A chat's session; a forum topic's chat is "<group>:<topic>" (./topic.ts), so each topic is a session. */
export const sessionKeyFor = (chat: string) => `telegram:${chat}`;

const nothing = () => {};

/** What a message's file became: a note for the turn, a picture, a voice note to transcribe, or a refusal. */
interface SavedFile { note?: string; refusal?: string; image?: string; voice?: { file: string; seconds: number } }

/** Updates whose sender was told the disk is full, so a refetched update does not tell them again. */
const MAX_TOLD = 256;

export function createInbound(o: InboundOptions): (update: Update) => Promise<Commit> {
  const reply = (chatId: string, text: string, key: string) =>
    // Durable like every reply: recorded now, delivered (and retried) by the conductor.
    o.conductor.send({ channel: 'telegram', chatId, text, idempotencyKey: key });

  const toldDiskFull = new Set<number>();
  /**
   * The message cannot be saved: the sender hears it at once, straight through the Bot API (a
   * durable reply would need the same full disk). The update is not confirmed (the poller keeps the
   * offset), so Telegram hands it over again and it is taken once there is space.
   */
  const tellDiskFull = (chatId: string, updateId: number) => {
    if (toldDiskFull.has(updateId)) return;
    if (toldDiskFull.size >= MAX_TOLD) toldDiskFull.clear();
    toldDiskFull.add(updateId);
    o.api.sendMessage({ ...targetOf(chatId), text: 'I could not take your message: the disk of the machine I run on is full. My owner sees it in my log. I will read your message as soon as there is space again (Telegram keeps it for a day); you need not send it again.' })
      .catch((err: unknown) => log.warn(`telegram: could not tell chat ${chatId} that the disk is full: ${errorMessage(err)}`));
  };

  const allowed = (user: { id: number; username?: string }) => isAllowed(o.allowFrom, user) || isPaired(o.db, 'telegram', String(user.id));

  /** /voice on|off: this chat's replies also as voice notes, kept in the database across restarts. */
  function voiceCommand(chatId: string, arg: string | undefined): string {
    const on = voiceRepliesOn(o.db, 'telegram', chatId);
    if (arg === undefined) return `Voice replies are ${on ? 'on' : 'off'} in this chat. /voice on sends each reply also as a voice note, /voice off stops it.`;
    if (arg !== 'on' && arg !== 'off') return `/voice takes on or off, not "${arg}".`;
    const tts = o.config.voice.tts;
    if (arg === 'on' && (!tts.backend || (tts.backend === 'command' && tts.command.length === 0))) {
      return 'I cannot speak yet: text to speech is not set up. My owner sets voice.tts.backend (openai, or command with voice.tts.command, e.g. espeak-ng); see docs/configuration.md#voice.';
    }
    setVoiceReplies(o.db, 'telegram', chatId, arg === 'on');
    return arg === 'on' ? 'Voice replies on: each reply comes as text and as a voice note.' : 'Voice replies off: text only.';
  }

  async function saveFile(m: Message): Promise<SavedFile> {
    let fileId: string | undefined;
    let size: number | undefined;
    let name: string;
    let image = false;
    let voice: number | undefined;
    if ('voice' in m && m.voice) {
      // A voice note is saved and queued here; it is transcribed in its turn (src/voice/burst.ts),
      // so the poller never waits for speech to text.
      const v = m.voice;
      if ((v.file_size ?? 0) > o.maxFileBytes) return { refusal: `That voice note is ${v.file_size} bytes, more than the ${o.maxFileBytes} bytes I accept (channels.telegram.maxFileBytes).` };
      ({ file_id: fileId, file_size: size } = v);
      name = `voice-${v.file_unique_id.replace(/[^\w-]+/g, '_')}.ogg`;
      voice = v.duration;
    } else if ('photo' in m && m.photo?.length) {
      image = true;
      // Telegram sends each photo in several sizes: the largest the limit allows.
      const fits = m.photo.filter((p) => (p.file_size ?? 0) <= o.maxFileBytes);
      const best = fits.at(-1);
      if (!best) return { refusal: `That photo is larger than the ${o.maxFileBytes} bytes I accept (channels.telegram.maxFileBytes).` };
      ({ file_id: fileId, file_size: size } = best);
      name = `photo-${best.file_unique_id}.jpg`;
    } else if ('document' in m && m.document) {
      const d = m.document;
      const type = d.mime_type ?? 'application/octet-stream';
      if (!ACCEPTED_TYPES.test(type)) return { refusal: `I don't accept ${type} files; I take images, text, PDF, JSON, XML, YAML and CSV up to ${o.maxFileBytes} bytes.` };
      if ((d.file_size ?? 0) > o.maxFileBytes) return { refusal: `That file is ${d.file_size} bytes, more than the ${o.maxFileBytes} bytes I accept (channels.telegram.maxFileBytes).` };
      ({ file_id: fileId, file_size: size } = d);
      image = type.startsWith('image/');
      name = (d.file_name ?? `document-${d.file_unique_id}`).replace(/[^\w.\-]+/g, '_').replace(/^\.+/, '_').slice(-100);
    } else {
      return {};
    }
    const file = await o.api.getFile(fileId);
    if (!file.file_path) throw new Error(`getFile gave no file_path for a file of ${size ?? '?'} bytes`);
    const bytes = await o.api.download(file.file_path, o.maxFileBytes);
    const day = new Date((m.date ?? Date.now() / 1000) * 1000).toISOString().slice(0, 10);
    const rel = join('inbox', 'telegram', day, `${m.message_id}-${name}`);
    mkdirSync(join(o.workspace, 'inbox', 'telegram', day), { recursive: true });
    // Same name for the same message: a redelivered update (after a crash) rewrites the same file.
    writeFileSync(join(o.workspace, rel), bytes);
    if (voice !== undefined) return { voice: { file: rel, seconds: voice } };
    // A picture is also shown to the model in the turn (src/images/attached.ts), scaled down.
    return { note: `[the sender attached a file, saved in the workspace as ${rel} (${bytes.length} bytes)]`, ...(image ? { image: rel } : {}) };
  }

  return async (update) => {
    if ('callback_query' in update && update.callback_query) {
      const q = update.callback_query;
      o.onCallback(q, allowed(q.from));
      return nothing;
    }
    const m = 'message' in update ? update.message : undefined;
    if (!m || !m.from || m.from.is_bot) return nothing;
    const chatId = chatKeyOf(m);
    const key = sessionKeyFor(chatId);
    const text = addressedText(m, o.bot);
    if (text === null) return nothing;
    if (!allowed(m.from)) {
      // A stranger starts no turn. In a private chat they learn how to ask, at most once an hour;
      // in a group the bot stays quiet.
      if (m.chat.type !== 'private') return nothing;
      const label = m.from.username ? `@${m.from.username}` : [m.from.first_name, m.from.last_name].filter(Boolean).join(' ');
      const pairing = requestPairing(o.db, 'telegram', String(m.from.id), label);
      if (!claimPrompt(o.db, pairing.id)) return nothing;
      const approve = approveCommand(pairing.code, o.home);
      log.info(`telegram: ${label} (${m.from.id}) asked to talk to the bot; to let them in: ${approve}`);
      return () => void reply(chatId, `I only talk to my owner. To let you in, my owner runs this on my machine:\n\n${approve}\n\n(The code is good for an hour.)`, `pairing:${pairing.id}:${pairing.code}`);
    }
    let file: SavedFile;
    try {
      file = await saveFile(m);
    } catch (err) {
      log.warn(`telegram: a file from chat ${chatId} could not be fetched: ${errorMessage(err)}`);
      file = { refusal: `I could not fetch your file (${errorMessage(err)}). Please send it again.` };
    }
    // A voice note's transcript becomes the owner's text in the turn (after its caption, if it has one).
    const body = [text, file.note].filter(Boolean).join('\n\n');
    const commit = () => {
      if (file.refusal) reply(chatId, file.refusal, `refused:${chatId}:${m.message_id}`);
      if (!body && !file.voice) return;
      if (body === '/start') {
        reply(chatId, 'Hello! Write to me any time. /status shows how I am, /reset starts a fresh conversation, /compact summarizes a long one, /voice on answers with voice notes too.', `start:${chatId}:${m.message_id}`);
        return;
      }
      const voice = /^\/voice(?:\s+(\S+))?$/i.exec(body);
      if (voice) {
        reply(chatId, voiceCommand(chatId, voice[1]?.toLowerCase()), `voice:${chatId}:${m.message_id}`);
        return;
      }
      if (body.length > o.maxMessageChars) {
        reply(chatId, `Your message has ${body.length} characters, more than the ${o.maxMessageChars} I accept (agent.maxMessageChars); please send it in smaller parts.`, `too-long:${chatId}:${m.message_id}`);
        return;
      }
      o.conductor.submit({
        sessionKey: key, channel: 'telegram', chatId, sender: String(m.from!.id), text: body,
        meta: { updateId: update.update_id, messageId: m.message_id, chatType: m.chat.type, ...(file.voice ? { voice: file.voice } : {}), ...(file.image ? { images: [file.image] } : {}) },
      });
    };
    // The submit, or the commit of its transaction, can find the disk full: the poller calls this then.
    return Object.assign(commit, { diskFull: () => tellDiskFull(chatId, update.update_id) });
  };
}
