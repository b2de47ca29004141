// Forum topics: each topic of a Telegram forum group is a conversation of its own. Inside pinclaw
// its chat is "<group>:<topic>" (session telegram:<group>:<topic>, outbound rows, /reset, the live
// view), so everything keyed by a chat keeps topics apart without knowing about them; only the Bot
// API calls split it back into chat_id and message_thread_id. The General topic carries no thread
// id and stays the group's own chat. Telegram's reply threads in ordinary groups also set
// message_thread_id, but not is_topic_message: they stay in the group's conversation.
/** Where a Bot API call goes: spread into its parameters. */
export interface TelegramTarget {
  chat_id: string;
  message_thread_id?: number;
}

const TOPIC_CHAT = /^(-?\d+):(\d+)$/;

/** The chat a message belongs to, as pinclaw names it (a forum topic's is "<group>:<topic>"). */
export function chatKeyOf(m: { chat: { id: number; is_forum?: boolean }; message_thread_id?: number; is_topic_message?: boolean }): string {
  return m.chat.is_forum === true && m.is_topic_message && m.message_thread_id !== undefined ? `${m.chat.id}:${m.message_thread_id}` : String(m.chat.id);
}

export function targetOf(chatKey: string): TelegramTarget {
  const t = TOPIC_CHAT.exec(chatKey);
  return t ? { chat_id: t[1]!, message_thread_id: Number(t[2]) } : { chat_id: chatKey };
}
