// Who the Telegram bot answers, and which group messages are for it: the pure rules, on Bot API
// message objects of the real shape.
import t from 'tap';
import type { Message, MessageEntity } from '@grammyjs/types';
import { addressedText, isAllowed } from '../src/channels/telegram/access.js';

const bot = { id: 999, username: 'pinclaw_bot' };
const owner = { id: 42, is_bot: false, first_name: 'Ada', username: 'ada' };

function msg(text: string, o: { chat?: 'private' | 'group' | 'supergroup'; entities?: MessageEntity[]; replyToBot?: boolean } = {}): Message {
  const chat = o.chat === undefined || o.chat === 'private' ? { id: 42, type: 'private' as const, first_name: 'Ada' } : { id: -100, type: o.chat, title: 'home' };
  const m = { message_id: 7, date: 0, chat, from: owner, text, entities: o.entities } as Message;
  if (o.replyToBot) (m as { reply_to_message?: unknown }).reply_to_message = { message_id: 6, date: 0, chat, from: { id: bot.id, is_bot: true, first_name: 'pinclaw' }, text: 'earlier' };
  return m;
}

const mention = (text: string, handle: string): MessageEntity => ({ type: 'mention', offset: text.indexOf(handle), length: handle.length });

t.test('allow-list by id or username, with or without @, case-insensitive', async (t) => {
  t.ok(isAllowed(['42'], owner));
  t.ok(isAllowed(['@Ada'], owner));
  t.ok(isAllowed(['ada'], owner));
  t.notOk(isAllowed(['4'], owner), 'ids match whole');
  t.notOk(isAllowed(['@adam'], owner));
  t.notOk(isAllowed(['ada'], { id: 43 }), 'a user without a username matches ids only');
  t.notOk(isAllowed([], owner));
});

t.test('private chats: every message, the command suffix dropped', async (t) => {
  t.equal(addressedText(msg('hello'), bot), 'hello');
  t.equal(addressedText(msg('/status@pinclaw_bot'), bot), '/status');
  t.equal(addressedText(msg('/reset'), bot), '/reset');
});

t.test('groups: only a mention, a reply to the bot, or a command for it', async (t) => {
  t.equal(addressedText(msg('lunch at noon?', { chat: 'group' }), bot), null, 'a conversation not for the bot');
  const text = 'hey @pinclaw_bot is the door locked?';
  t.equal(addressedText(msg(text, { chat: 'supergroup', entities: [mention(text, '@pinclaw_bot')] }), bot), 'hey is the door locked?', 'the mention is cut');
  const upper = '@PINCLAW_BOT status';
  t.equal(addressedText(msg(upper, { chat: 'group', entities: [mention(upper, '@PINCLAW_BOT')] }), bot), 'status', 'usernames are case-insensitive');
  const other = '@other_bot hi';
  t.equal(addressedText(msg(other, { chat: 'group', entities: [mention(other, '@other_bot')] }), bot), null, 'a mention of someone else');
  t.equal(addressedText(msg('and the garage?', { chat: 'group', replyToBot: true }), bot), 'and the garage?', 'a reply to the bot');
  t.equal(addressedText(msg('/status@pinclaw_bot', { chat: 'group' }), bot), '/status');
  t.equal(addressedText(msg('/status@other_bot', { chat: 'group' }), bot), null, 'a command for another bot');
  const tm = 'Pinclaw, lights off';
  t.equal(addressedText(msg(tm, { chat: 'group', entities: [{ type: 'text_mention', offset: 0, length: 7, user: { id: bot.id, is_bot: true, first_name: 'Pinclaw' } }] }), bot), tm, 'a text mention of the bot (its name stays)');
});

t.test('mention offsets are UTF-16 units: text before it with emoji is cut right', async (t) => {
  const text = '🙂🙂 @pinclaw_bot open the gate';
  t.equal(addressedText(msg(text, { chat: 'group', entities: [mention(text, '@pinclaw_bot')] }), bot), '🙂🙂 open the gate');
});
