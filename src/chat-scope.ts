// Which chat settings a chat falls under. A Telegram forum topic ("<group>:<topic>", see
// src/channels/telegram/topic.ts) is part of its group: the group's entry in tools.controlChats or
// tools.overrides covers each of its topics, and an entry naming one topic covers that topic only.
// Only Telegram's ids are split: another channel's chat id may hold ':' as part of its name (an MQTT
// session), where the part before it is a different chat. A leaf module: the tool policy reads it.

/** The chat ids whose settings apply to `chatId`, the most specific first. */
export function chatScopes(channel: string, chatId: string): string[] {
  const topic = channel === 'telegram' ? /^(-?\d+):\d+$/.exec(chatId) : null;
  return topic ? [chatId, topic[1]!] : [chatId];
}
