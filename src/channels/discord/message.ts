// The parts of Discord's message object pinclaw reads, and what is derived from them alone: whether
// a guild message is addressed to the bot (mention-only in guilds) and its text without the mention.

export interface DiscordUser {
  id: string;
  username?: string;
  global_name?: string | null;
  bot?: boolean;
}

export interface DiscordAttachment {
  id: string;
  filename: string;
  size: number;
  url: string;
  content_type?: string;
}

export interface DiscordMessage {
  id: string;
  channel_id: string;
  guild_id?: string;
  author: DiscordUser;
  content: string;
  mentions?: DiscordUser[];
  attachments?: DiscordAttachment[];
  referenced_message?: { author?: DiscordUser } | null;
  /** 0 default, 19 reply; others are system messages (joins, pins) */
  type?: number;
}

/**
 * The text a message carries for the bot, or null when it is not for it: a direct message always
 * is; in a guild (channels and threads alike) only a message that mentions the bot or replies to it.
 */
export function addressedText(m: DiscordMessage, botId: string): string | null {
  const mention = new RegExp(`<@!?${botId}>`, 'g');
  if (m.guild_id !== undefined) {
    const mentioned = (m.mentions ?? []).some((u) => u.id === botId) || mention.test(m.content);
    const repliedTo = m.referenced_message?.author?.id === botId;
    if (!mentioned && !repliedTo) return null;
  }
  return m.content.replace(mention, '').replace(/\s+/g, (w) => (w.includes('\n') ? w : ' ')).trim();
}

/** True for a guild message that mentions the bot yet has no text: what a bot without MESSAGE_CONTENT receives. */
export function contentWithheld(m: DiscordMessage, botId: string): boolean {
  return m.guild_id !== undefined && m.content === '' && (m.mentions ?? []).some((u) => u.id === botId) && !(m.attachments ?? []).length;
}
