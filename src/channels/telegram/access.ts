// Who the bot answers, and which group messages are addressed to it. Pure functions over the
// update, so every rule is tested without a network.
import type { Message, MessageEntity, User } from '@grammyjs/types';

export interface BotIdentity {
  id: number;
  username: string;
}

/** allowFrom entries: numeric user ids, or usernames with or without @ (case-insensitive). */
export function isAllowed(allowFrom: readonly string[], user: Pick<User, 'id' | 'username'>): boolean {
  const id = String(user.id);
  const name = user.username?.toLowerCase();
  return allowFrom.some((entry) => {
    const e = entry.trim();
    if (/^-?\d+$/.test(e)) return e === id;
    return name !== undefined && e.replace(/^@/, '').toLowerCase() === name;
  });
}

const isGroup = (m: Message) => m.chat.type === 'group' || m.chat.type === 'supergroup';

function entitiesOf(m: Message): { text: string; entities: MessageEntity[] } {
  if ('text' in m && m.text !== undefined) return { text: m.text, entities: m.entities ?? [] };
  if ('caption' in m && m.caption !== undefined) return { text: m.caption, entities: m.caption_entities ?? [] };
  return { text: '', entities: [] };
}

/**
 * The text the agent should see, or null when a group message is not for the bot. In a group the
 * bot answers a mention (@name or a text mention), a reply to one of its messages, or a command
 * addressed to it; with privacy mode on Telegram delivers only those anyway, with it off the bot
 * still keeps out of conversations that are not its own. The mention itself is cut from the text.
 */
export function addressedText(m: Message, bot: BotIdentity): string | null {
  const { text, entities } = entitiesOf(m);
  const handle = `@${bot.username}`.toLowerCase();
  let mentioned = false;
  let cleaned = text;
  // Entity offsets are UTF-16 code units, as JavaScript strings count them; cut from the end so
  // earlier offsets stay valid.
  for (const e of [...entities].sort((a, b) => b.offset - a.offset)) {
    const part = text.slice(e.offset, e.offset + e.length);
    if ((e.type === 'mention' && part.toLowerCase() === handle) || (e.type === 'text_mention' && e.user.id === bot.id)) {
      mentioned = true;
      if (e.type === 'mention') cleaned = cleaned.slice(0, e.offset) + cleaned.slice(e.offset + e.length);
    }
  }
  // "/status@pinclaw_bot" → "/status"; a command for another bot is not ours.
  const command = /^\/([A-Za-z0-9_]+)(@[A-Za-z0-9_]+)?(?=\s|$)/.exec(cleaned.trimStart());
  if (command?.[2]) {
    if (command[2].toLowerCase() !== handle) return isGroup(m) ? null : cleaned.trim();
    mentioned = true;
    cleaned = cleaned.trimStart().replace(command[0], `/${command[1]}`);
  }
  // In a forum topic every message that answers nothing else "replies" to the topic's creation
  // message: a topic the bot opened would make every message in it look addressed to the bot.
  const topicRoot = m.is_topic_message === true && m.reply_to_message?.message_id === m.message_thread_id;
  const repliesToBot = m.reply_to_message?.from?.id === bot.id && !topicRoot;
  if (isGroup(m) && !mentioned && !repliesToBot) return null;
  return cleaned.replace(/[ \t]{2,}/g, ' ').trim();
}
