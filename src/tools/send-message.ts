// send_message: the agent writes to a chat on its own initiative (a reminder, a result it was asked
// to pass on), in the caller's chat or, from a control chat, in another one. The message is
// recorded as an outbound row by the conductor and delivered like a reply, so it survives a crash.
import { errorMessage } from '../errors.js';
import type { Tool } from './types.js';
import { defineTool } from './define.js';

export interface SendMessageOptions {
  /** longest message, in characters (agent.maxMessageChars: what pinclaw accepts, it also sends) */
  maxChars: number;
}

interface SendInput {
  text: string;
  channel?: string;
  chat?: string;
}

/** The chat the input names when it names one; policy compares it with the caller's own chat. */
function namedChat({ channel, chat }: Pick<SendInput, 'channel' | 'chat'>): { channel: string; chatId: string } | undefined {
  return channel !== undefined && chat !== undefined ? { channel, chatId: chat } : undefined;
}

export function sendMessageTool(o: SendMessageOptions): Tool {
  return defineTool({
    name: 'send_message',
    description:
      `Sends a message now, without waiting for the end of the turn: to this chat (leave out channel and chat), or to another chat (give both; allowed only from a control chat). At most ${o.maxChars} characters. Your final answer is delivered anyway; use this for messages that must go out first or elsewhere.`,
    inputSchema: {
      type: 'object',
      properties: {
        text: { type: 'string', minLength: 1, description: 'the message' },
        channel: { type: 'string', minLength: 1, maxLength: 64, description: 'channel of another chat, e.g. "telegram"; with chat' },
        chat: { type: 'string', minLength: 1, maxLength: 256, description: 'chat id within that channel; with channel' },
      },
      required: ['text'],
      additionalProperties: false,
    },
    // Two messages of one reply arrive in the order the model wrote them.
    sequential: true,
    targetChat: namedChat,
    async execute(input, ctx) {
      const { text, channel, chat } = input;
      // Policy judged the chat namedChat returned; half a target names no chat, so it must not run.
      if ((channel === undefined) !== (chat === undefined)) {
        return { content: 'send_message: give both channel and chat to reach another chat, or neither for this chat', isError: true };
      }
      if (text.trim() === '') return { content: 'send_message: the text is blank', isError: true };
      if (text.length > o.maxChars) {
        return { content: `send_message: ${text.length} characters is more than the limit of ${o.maxChars} (agent.maxMessageChars)`, isError: true };
      }
      const target = namedChat(input) ?? { channel: ctx.channel, chatId: ctx.chatId };
      const where = `${target.channel}:${target.chatId}`;
      // The conductor's send, lent by the turn; absent where no conductor runs (`pinclaw tool run`).
      if (!ctx.send) {
        return { content: `send_message: no conductor runs in this process to deliver to ${where} (it works in a turn of pinclaw gateway or pinclaw agent)`, isError: true };
      }
      try {
        const row = ctx.send({ ...target, text, sessionKey: ctx.sessionKey });
        return { content: `sent to ${where} (message id ${row.id})` };
      } catch (err) {
        return { content: `send_message to ${where} failed: ${errorMessage(err)}`, isError: true };
      }
    },
  });
}
