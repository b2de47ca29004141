// The Telegram Bot API stand-in itself, driven through plain fetch the way the channel drives it:
// update offsets and redelivery, long polling and its 409, every injected fault, the HTML parse mode
// with Telegram's exact error texts, the 4096 limit after parsing, edits, callbacks, files, tokens.
import t, { type Test } from 'tap';
import type { File, Message, Update, UserFromGetMe } from '@grammyjs/types';
import { CONFLICT, DEFAULT_TOKEN, INJECTED_PARSE_ERROR, startTelegramApi, type TelegramApi, type TelegramApiOptions } from './support/telegram-api.js';

interface Reply<T> {
  ok: boolean;
  result: T;
  error_code?: number;
  description?: string;
  parameters?: { retry_after: number };
}
interface Answer<T> {
  status: number;
  body: Reply<T>;
}

async function start(t: Test, opts?: TelegramApiOptions): Promise<TelegramApi> {
  const api = await startTelegramApi(opts);
  t.teardown(() => api.close());
  return api;
}

async function call<T = unknown>(api: TelegramApi, method: string, params: Record<string, unknown> = {}, init: { token?: string; signal?: AbortSignal } = {}): Promise<Answer<T>> {
  const r = await fetch(`${api.url}/bot${init.token ?? api.token}/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(params),
    signal: init.signal,
  });
  return { status: r.status, body: (await r.json()) as Reply<T> };
}
const ids = (a: Answer<Update[]>): number[] => a.body.result.map((u) => u.update_id);
const say = (api: TelegramApi, text: string, id = 42): Update => api.userMessage({ from: { id, username: 'alice' }, text });
/** a valid message in chat 42, for the tests that need one to edit, reply to or press */
async function botSays(api: TelegramApi, text = 'hello', extra: Record<string, unknown> = {}): Promise<Message> {
  if (!api.message(42, 1)) say(api, 'hi');
  const r = await call<Message>(api, 'sendMessage', { chat_id: 42, text, ...extra });
  if (!r.body.ok) throw new Error(`sendMessage failed: ${r.body.description}`);
  return r.body.result;
}

t.test('getMe, method names, tokens and the 401/404 answers', async (t) => {
  const api = await start(t);
  t.equal(api.token, DEFAULT_TOKEN);
  const me = await call<UserFromGetMe>(api, 'getMe');
  t.equal(me.status, 200);
  t.match(me.body.result, { id: 123456, is_bot: true, username: 'pinclaw_test_bot', can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false });
  t.equal((await call(api, 'GETME')).status, 200, 'method names are case-insensitive');
  t.same((await call(api, 'getChatHistory')).body, { ok: false, error_code: 404, description: 'Not Found' });
  t.same((await call(api, 'getMe', {}, { token: '123456:wrong' })).body, { ok: false, error_code: 401, description: 'Unauthorized' });
  t.equal((await call(api, 'getChatHistory', {}, { token: '123456:wrong' })).status, 401, 'a wrong token is 401 before anything else');

  api.revokeToken();
  t.equal((await call(api, 'getMe')).status, 401, 'revoked: the old token stops working');
  api.setToken('123456:NEW');
  t.equal((await call(api, 'getMe', {}, { token: '123456:NEW' })).status, 200);
  t.equal((await call(api, 'getMe', {}, { token: DEFAULT_TOKEN })).status, 401);

  const open = await start(t, { privacyMode: false });
  t.equal((await call<UserFromGetMe>(open, 'getMe')).body.result.can_read_all_group_messages, true);
  t.equal((await call(api, 'deleteWebhook', {}, { token: '123456:NEW' })).body.result, true);
});

t.test('query-string and form-urlencoded parameters work like JSON', async (t) => {
  const api = await start(t);
  say(api, 'hi');
  const get = await fetch(`${api.url}/bot${api.token}/getUpdates?offset=0&limit=1`);
  t.equal(((await get.json()) as Reply<Update[]>).result.length, 1);
  const form = new URLSearchParams({ chat_id: '42', text: '<b>bold</b>', parse_mode: 'HTML', reply_markup: JSON.stringify({ inline_keyboard: [[{ text: 'Yes', callback_data: 'y' }]] }) });
  const r = await fetch(`${api.url}/bot${api.token}/sendMessage`, { method: 'POST', body: form });
  const sent = ((await r.json()) as Reply<Message>).result;
  t.equal(sent.text, 'bold');
  t.same(sent.reply_markup, { inline_keyboard: [[{ text: 'Yes', callback_data: 'y' }]] });
  t.equal(api.calls.at(-1)?.method, 'sendMessage');
});

t.test('offsets confirm for good; unconfirmed updates come back', async (t) => {
  const api = await start(t);
  const u = [say(api, 'one'), say(api, 'two'), say(api, 'three')];
  t.same(u.map((x) => x.update_id), [1000, 1001, 1002], 'ids count up from the base');
  t.equal(u[0]?.message?.text, 'one');

  t.same(ids(await call<Update[]>(api, 'getUpdates')), [1000, 1001, 1002]);
  t.same(ids(await call<Update[]>(api, 'getUpdates', { limit: 2 })), [1000, 1001], 'no offset: nothing is confirmed');
  t.same(ids(await call<Update[]>(api, 'getUpdates', { offset: 1001 })), [1001, 1002], '1000 confirmed, the rest redelivered');
  t.equal(api.confirmedOffset, 1001);
  t.same([api.deliveries(1000), api.deliveries(1001), api.deliveries(1002)], [2, 3, 2]);
  t.same(ids(await call<Update[]>(api, 'getUpdates', { offset: 1000 })), [1001, 1002], 'a lower offset cannot bring back a confirmed update');
  t.equal(api.confirmedOffset, 1001, 'the highest offset sent');
  t.same(ids(await call<Update[]>(api, 'getUpdates', { offset: 1003 })), []);
  t.same(ids(await call<Update[]>(api, 'getUpdates')), [], 'confirmed ones never come back');
  t.equal(api.confirmedOffset, 1003);

  say(api, 'four');
  say(api, 'five');
  say(api, 'six');
  t.same(ids(await call<Update[]>(api, 'getUpdates', { offset: -1 })), [1005], 'a negative offset keeps only the last ones');
  t.same(ids(await call<Update[]>(api, 'getUpdates')), [1005], 'the older ones were dropped');
  t.same(api.queued.map((x) => x.update_id), [1005]);
});

t.test('long polling: an update ends the wait at once, otherwise [] after the timeout', async (t) => {
  const api = await start(t, { updateIdBase: 7 });
  const started = Date.now();
  const held = call<Update[]>(api, 'getUpdates', { timeout: 5 });
  await api.waitFor(() => api.polling);
  say(api, 'wake up');
  say(api, 'and this');
  const r = await held;
  t.ok(Date.now() - started < 2000, 'answered long before the 5 s timeout');
  t.same(ids(r), [7, 8], 'updates queued together arrive together');
  t.notOk(api.polling);

  const quiet = Date.now();
  const empty = await call<Update[]>(api, 'getUpdates', { offset: 9, timeout: 1 });
  t.same(empty.body, { ok: true, result: [] });
  t.ok(Date.now() - quiet >= 950, `held for the timeout (${Date.now() - quiet} ms)`);
});

t.test('a second long poll ends the first with 409; a call answered at once does not', async (t) => {
  const api = await start(t);
  const first = call<Update[]>(api, 'getUpdates', { timeout: 10 });
  await api.waitFor(() => api.polling);
  t.same((await call<Update[]>(api, 'getUpdates', { timeout: 0 })).body.result, [], 'timeout 0 answers []');
  t.ok(api.polling, 'and leaves the held poll alone');
  const second = call<Update[]>(api, 'getUpdates', { timeout: 10 });
  const a = await first;
  t.equal(a.status, 409);
  t.same(a.body, { ok: false, error_code: 409, description: CONFLICT });
  t.equal(CONFLICT, 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running');
  say(api, 'for the survivor');
  t.same(ids(await second), [1000]);
});

t.test('a client that gives up on its long poll frees the slot', async (t) => {
  const api = await start(t);
  const ac = new AbortController();
  const held = call(api, 'getUpdates', { timeout: 10 }, { signal: ac.signal });
  await api.waitFor(() => api.polling);
  ac.abort();
  await t.rejects(held);
  await api.waitFor(() => !api.polling);
  say(api, 'later');
  t.same(ids(await call<Update[]>(api, 'getUpdates', { timeout: 10 })), [1000]);
});

t.test('faults: status answers, counted, then normal service', async (t) => {
  const api = await start(t);
  api.fail('sendMessage', { status: 429, retryAfter: 7 }, 2);
  say(api, 'hi');
  for (let i = 0; i < 2; i++) {
    const r = await call(api, 'sendMessage', { chat_id: 42, text: 'x' });
    t.equal(r.status, 429);
    t.same(r.body, { ok: false, error_code: 429, description: 'Too Many Requests: retry after 7', parameters: { retry_after: 7 } });
  }
  t.equal((await call(api, 'getMe')).status, 200, 'other methods are untouched');
  t.equal((await call(api, 'sendMessage', { chat_id: 42, text: 'x' })).status, 200, 'two times, then it works');
  t.equal(api.sent.length, 1, 'faulted calls send nothing');
  t.same(api.calls.filter((c) => c.method === 'sendMessage').map((c) => [c.status, c.fault]), [[429, '429'], [429, '429'], [200, undefined]]);

  api.fail('*', { status: 409 });
  t.same((await call(api, 'getMe')).body, { ok: false, error_code: 409, description: CONFLICT });
  api.fail('getMe', { status: 500 });
  t.same((await call(api, 'getMe')).body, { ok: false, error_code: 500, description: 'Internal Server Error' });
  api.fail('getMe', { status: 401 });
  t.equal((await call(api, 'getMe')).status, 401);
  t.equal((await call(api, 'getMe')).status, 200, 'an injected 401 does not revoke the token');

  api.fail('getMe', { status: 502 });
  const gw = await fetch(`${api.url}/bot${api.token}/getMe`);
  t.equal(gw.status, 502);
  t.match(gw.headers.get('content-type'), /text\/html/);
  t.match(await gw.text(), /502 Bad Gateway.*nginx/s, "nginx's page, not JSON");
});

t.test('a faulted getUpdates confirms nothing', async (t) => {
  const api = await start(t);
  say(api, 'a');
  api.fail('getUpdates', { status: 500 });
  t.equal((await call(api, 'getUpdates', { offset: 1001 })).status, 500);
  t.equal(api.confirmedOffset, 0);
  t.same(ids(await call<Update[]>(api, 'getUpdates')), [1000]);
});

t.test('hang holds the request open; reset drops the connection', async (t) => {
  const api = await start(t);
  api.fail('getUpdates', { kind: 'hang' });
  const started = Date.now();
  await t.rejects(call(api, 'getUpdates', { timeout: 0 }, { signal: AbortSignal.timeout(300) }), { name: 'TimeoutError' }, 'only the client watchdog ends it');
  t.ok(Date.now() - started >= 290);
  t.match(api.calls.at(-1), { method: 'getUpdates', fault: 'hang', status: undefined });
  t.equal((await call(api, 'getUpdates')).status, 200, 'the next call is served');

  api.fail('sendMessage', { kind: 'reset' });
  say(api, 'hi');
  await t.rejects(call(api, 'sendMessage', { chat_id: 42, text: 'x' }), { name: 'TypeError' }, 'fetch failed');
  t.equal(api.sent.length, 0);
  t.equal((await call(api, 'sendMessage', { chat_id: 42, text: 'x' })).status, 200);
});

t.test('close() ends a hanging request the client never aborts', async (t) => {
  const api = await startTelegramApi();
  api.fail('getMe', { kind: 'hang' });
  const hung = call(api, 'getMe');
  await api.waitFor(() => api.calls.length === 1);
  const held = call(api, 'getUpdates', { timeout: 30 });
  await api.waitFor(() => api.polling);
  // Expectations first: both rejections happen inside close().
  const ended = Promise.all([t.rejects(hung), t.rejects(held)]);
  await api.close();
  await ended;
  t.equal(api.polling, false);
});

t.test('parse-error hits only calls with a parse_mode', async (t) => {
  const api = await start(t);
  say(api, 'hi');
  api.fail('sendMessage', { kind: 'parse-error' });
  t.equal((await call(api, 'sendMessage', { chat_id: 42, text: 'plain' })).status, 200, 'plain text passes and does not use the fault up');
  const r = await call(api, 'sendMessage', { chat_id: 42, text: '<b>fine</b>', parse_mode: 'HTML' });
  t.same(r.body, { ok: false, error_code: 400, description: INJECTED_PARSE_ERROR });
  t.match(INJECTED_PARSE_ERROR, /^Bad Request: can't parse entities: /);
  t.equal((await call(api, 'sendMessage', { chat_id: 42, text: '<b>fine</b>', parse_mode: 'HTML' })).status, 200);
});

t.test('HTML parse mode: what Telegram accepts, and the entities it makes', async (t) => {
  const api = await start(t);
  say(api, 'hi');
  const cases: [string, string, unknown[]][] = [
    ['<b>bold</b> <strong>s</strong>', 'bold s', [{ type: 'bold', offset: 0, length: 4 }, { type: 'bold', offset: 5, length: 1 }]],
    ['<i>i</i><em>e</em><u>u</u><ins>n</ins><s>s</s><strike>k</strike><del>d</del>', 'ieunskd', [{ type: 'italic', offset: 0, length: 1 }, { type: 'italic', offset: 1, length: 1 }, { type: 'underline', offset: 2, length: 1 }, { type: 'underline', offset: 3, length: 1 }, { type: 'strikethrough', offset: 4, length: 1 }, { type: 'strikethrough', offset: 5, length: 1 }, { type: 'strikethrough', offset: 6, length: 1 }]],
    ['<span class="tg-spoiler">a</span><tg-spoiler>b</tg-spoiler>', 'ab', [{ type: 'spoiler', offset: 0, length: 1 }, { type: 'spoiler', offset: 1, length: 1 }]],
    ['<a href="https://example.com/x?a=1&amp;b=2">link</a>', 'link', [{ type: 'text_link', offset: 0, length: 4, url: 'https://example.com/x?a=1&b=2' }]],
    ['<a href=telegram.org>t</a>', 't', [{ type: 'text_link', offset: 0, length: 1, url: 'http://telegram.org/' }]],
    ['<code>x &lt; y</code>', 'x < y', [{ type: 'code', offset: 0, length: 5 }]],
    ['<pre><code class="language-python">print(1)</code></pre>', 'print(1)', [{ type: 'pre', offset: 0, length: 8, language: 'python' }]],
    ['<pre>raw</pre>', 'raw', [{ type: 'pre', offset: 0, length: 3 }]],
    ['<blockquote>q</blockquote>\n<blockquote expandable>e</blockquote>', 'q\ne', [{ type: 'blockquote', offset: 0, length: 1 }, { type: 'expandable_blockquote', offset: 2, length: 1 }]],
    ['<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>', '👍', [{ type: 'custom_emoji', offset: 0, length: 2, custom_emoji_id: '5368324170671202286' }]],
    ['😀<b>x</b>', '😀x', [{ type: 'bold', offset: 2, length: 1 }]],
    ['&lt;&gt;&amp;&quot;&#65;&#x42; &nbsp; a & b', '<>&"AB &nbsp; a & b', []],
    ['<B>caps</B>', 'caps', [{ type: 'bold', offset: 0, length: 4 }]],
    ['<b>a <i>b</i></>', 'a b', [{ type: 'bold', offset: 0, length: 3 }, { type: 'italic', offset: 2, length: 1 }]],
    ['  <b></b>  x  ', 'x', []],
  ];
  for (const [html, text, entities] of cases) {
    const r = await call<Message>(api, 'sendMessage', { chat_id: 42, text: html, parse_mode: 'HTML' });
    t.equal(r.status, 200, html);
    t.equal(r.body.result.text, text, `${html} → text`);
    t.same(r.body.result.entities ?? [], entities, `${html} → entities`);
  }
  const md = await call<Message>(api, 'sendMessage', { chat_id: 42, text: '*stays* <b>', parse_mode: 'MarkdownV2' });
  t.equal(md.body.result.text, '*stays* <b>', 'Markdown modes: stored as sent');
  t.equal(api.sent.at(-1)?.parseMode, 'MarkdownV2');
});

t.test("HTML parse mode: Telegram's errors, word for word", async (t) => {
  const api = await start(t);
  say(api, 'hi');
  const cases: [string, string][] = [
    ['<foo>x</foo>', 'Unsupported start tag "foo" at byte offset 0'],
    ['a < b', 'Unsupported start tag "" at byte offset 2'],
    ['if x<y then', 'Unsupported start tag "y" at byte offset 4'],
    ['<br/>', 'Unsupported start tag "br/" at byte offset 0'],
    ['<b>bold', `Can't find end tag corresponding to start tag "b"`],
    ['<b>x</i>', 'Unmatched end tag at byte offset 4, expected "</b>", found "</i>"'],
    ['x</b>', 'Unexpected end tag at byte offset 1'],
    ['é<b', 'Unclosed start tag at byte offset 2'],
    ['<b>x</b', 'Unclosed end tag at byte offset 4'],
    ['<span>x</span>', 'Tag "span" must have class "tg-spoiler" at byte offset 0'],
    ['<a href="x>y</a>', 'Unclosed start tag at byte offset 0'],
    ['<a =x>y</a>', 'Empty attribute name in the tag "a" at byte offset 0'],
    ['<a href=a,b>y</a>', 'Unexpected end of name token at byte offset 8'],
    ['<tg-emoji emoji-id="abc">👍</tg-emoji>', 'Invalid custom emoji identifier specified'],
    ['&#xD83D;', 'Text contains invalid Unicode characters after decoding HTML entities, check for unmatched surrogate code units'],
  ];
  for (const [html, reason] of cases) {
    const r = await call(api, 'sendMessage', { chat_id: 42, text: html, parse_mode: 'HTML' });
    t.same(r.body, { ok: false, error_code: 400, description: `Bad Request: can't parse entities: ${reason}` }, html);
  }
  t.equal(api.sent.length, 0);
  t.same((await call(api, 'sendMessage', { chat_id: 42, text: 'x', parse_mode: 'BBCode' })).body.description, 'Bad Request: unsupported parse_mode');
});

t.test('empty and too long: counted after parsing, in UTF-16 units', async (t) => {
  const api = await start(t);
  say(api, 'hi');
  const send = async (text: string, parse_mode?: string) => (await call<Message>(api, 'sendMessage', { chat_id: 42, text, parse_mode })).body;
  t.equal((await send(`<b>${'a'.repeat(4096)}</b>`, 'HTML')).result.text?.length, 4096, '4096 visible characters inside tags pass');
  t.equal((await send('&lt;'.repeat(4096), 'HTML')).result.text, '<'.repeat(4096), 'an entity is one character');
  t.same(await send('a'.repeat(4097)), { ok: false, error_code: 400, description: 'Bad Request: message is too long' });
  t.equal((await send(`<i>${'a'.repeat(4097)}</i>`, 'HTML')).description, 'Bad Request: message is too long');
  t.ok((await send('😀'.repeat(2048))).ok, '2048 emoji are 4096 UTF-16 units');
  t.equal((await send(`${'😀'.repeat(2048)}a`)).description, 'Bad Request: message is too long', 'an emoji counts 2');
  t.equal((await send(`${'a'.repeat(4096)}\n\n   `)).result.text, 'a'.repeat(4096), 'trailing whitespace is trimmed before counting');
  t.same(await send(''), { ok: false, error_code: 400, description: 'Bad Request: message text is empty' });
  t.equal((await send('<b></b>', 'HTML')).description, 'Bad Request: text must be non-empty', 'empty once parsed');
  t.equal((await send(' \n ')).description, 'Bad Request: text must be non-empty');
  t.equal((await send('\n\n  hi  \n')).result.text, 'hi', 'Telegram trims what it stores');
});

t.test('sendMessage: the Message, the record, chats and replies', async (t) => {
  const api = await start(t);
  t.same((await call(api, 'sendMessage', { chat_id: 42, text: 'x' })).body.description, 'Bad Request: chat not found', 'no user wrote from 42 yet');
  t.same((await call(api, 'sendMessage', { text: 'x' })).body.description, 'Bad Request: chat_id is empty');
  const incoming = say(api, 'hi');
  const keyboard = { inline_keyboard: [[{ text: 'Approve', callback_data: 'approve:1' }, { text: 'Docs', url: 'https://example.com' }]] };
  const r = await call<Message>(api, 'sendMessage', { chat_id: 42, text: 'Hello <b>Alice</b>', parse_mode: 'HTML', reply_parameters: { message_id: incoming.message?.message_id }, reply_markup: keyboard, disable_notification: true });
  const m = r.body.result;
  t.match(m, { message_id: 2, from: { id: 123456, is_bot: true, username: 'pinclaw_test_bot' }, chat: { id: 42, type: 'private', first_name: 'alice' }, text: 'Hello Alice', entities: [{ type: 'bold', offset: 6, length: 5 }], reply_markup: keyboard });
  t.equal(m.reply_to_message?.text, 'hi');
  t.type(m.date, 'number');
  t.match(api.sent[0], { chatId: 42, messageId: 2, text: 'Hello Alice', parseMode: 'HTML', replyMarkup: keyboard, replyToMessageId: 1, params: { disable_notification: true, text: 'Hello <b>Alice</b>' } });
  t.equal((await call<Message>(api, 'sendMessage', { chat_id: '42', text: 'again', reply_to_message_id: 1 })).body.result.message_id, 3, 'ids count up per chat; chat_id may be a string');

  t.same((await call(api, 'sendMessage', { chat_id: 42, text: 'x', reply_parameters: { message_id: 99 } })).body.description, 'Bad Request: message to be replied not found');
  t.equal((await call(api, 'sendMessage', { chat_id: 42, text: 'x', reply_parameters: { message_id: 99, allow_sending_without_reply: true } })).status, 200);
  const long = { inline_keyboard: [[{ text: 'x', callback_data: 'x'.repeat(65) }]] };
  t.same((await call(api, 'sendMessage', { chat_id: 42, text: 'x', reply_markup: long })).body.description, 'Bad Request: BUTTON_DATA_INVALID', 'callback_data over 64 bytes');
  t.same((await call(api, 'sendMessage', { chat_id: 42, text: 'x', reply_markup: { inline_keyboard: [[{ text: 'bare' }]] } })).body.description, "Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard");

  api.addChat({ id: -100777, type: 'supergroup', title: 'Ops' });
  t.equal((await call<Message>(api, 'sendMessage', { chat_id: -100777, text: 'to the group' })).body.result.chat.type, 'supergroup');
});

t.test('editMessageText and editMessageReplyMarkup', async (t) => {
  const api = await start(t);
  const kb = { inline_keyboard: [[{ text: 'Go', callback_data: 'go' }]] };
  const m = await botSays(api, 'draft', { reply_markup: kb });
  const edit = (params: Record<string, unknown>) => call<Message>(api, 'editMessageText', { chat_id: 42, message_id: m.message_id, ...params });
  t.same((await edit({ text: 'draft', reply_markup: kb })).body, {
    ok: false,
    error_code: 400,
    description: 'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
  });
  t.equal((await edit({ text: '<b>draft</b>', parse_mode: 'HTML', reply_markup: kb })).status, 200, 'new entities are a change');
  const e = await edit({ text: 'final' });
  t.match(e.body.result, { message_id: m.message_id, text: 'final' });
  t.type(e.body.result.edit_date, 'number');
  t.equal(e.body.result.reply_markup, undefined, 'an edit without reply_markup drops the keyboard');
  t.equal(api.message(42, m.message_id)?.text, 'final');
  t.same(api.edits.map((x) => [x.method, x.text]), [['editMessageText', 'draft'], ['editMessageText', 'final']]);
  t.equal((await edit({ text: '<b>x', parse_mode: 'HTML' })).body.description, `Bad Request: can't parse entities: Can't find end tag corresponding to start tag "b"`);
  t.equal((await edit({ text: 'a'.repeat(4097) })).body.description, 'Bad Request: message is too long');
  t.equal((await call(api, 'editMessageText', { chat_id: 42, message_id: 999, text: 'x' })).body.description, 'Bad Request: message to edit not found');
  t.equal((await call(api, 'editMessageText', { chat_id: 42, message_id: 1, text: 'x' })).body.description, "Bad Request: message can't be edited", "the user's own message");

  const rm = await call<Message>(api, 'editMessageReplyMarkup', { chat_id: 42, message_id: m.message_id, reply_markup: kb });
  t.same(rm.body.result.reply_markup, kb);
  t.equal(rm.body.result.text, 'final');
  t.equal((await call(api, 'editMessageReplyMarkup', { chat_id: 42, message_id: m.message_id, reply_markup: kb })).status, 400, 'same markup: not modified');
  t.equal(api.edits.at(-1)?.method, 'editMessageReplyMarkup');
});

t.test('callback queries, answers and chat actions', async (t) => {
  const api = await start(t);
  const m = await botSays(api, 'Run it?', { reply_markup: { inline_keyboard: [[{ text: 'Yes', callback_data: 'run:yes' }]] } });
  const u = api.callbackQuery({ chatId: 42, from: { id: 42, username: 'alice' }, messageId: m.message_id, data: 'run:yes' });
  t.equal(u.update_id, 1001);
  const got = (await call<Update[]>(api, 'getUpdates', { offset: 1001 })).body.result[0];
  t.match(got?.callback_query, { data: 'run:yes', from: { id: 42 }, message: { message_id: m.message_id, text: 'Run it?' } });
  t.type(got?.callback_query?.id, 'string');
  const id = u.callback_query?.id ?? '';
  t.equal((await call(api, 'answerCallbackQuery', { callback_query_id: id, text: 'Running' })).body.result, true);
  t.match(api.callbackAnswers, [{ callbackQueryId: id, text: 'Running' }]);
  const old = 'Bad Request: query is too old and response timeout expired or query ID is invalid';
  t.equal((await call(api, 'answerCallbackQuery', { callback_query_id: id })).body.description, old, 'a query is answered once');
  t.equal((await call(api, 'answerCallbackQuery', { callback_query_id: '123' })).body.description, old);

  t.equal((await call(api, 'sendChatAction', { chat_id: 42, action: 'typing' })).body.result, true);
  t.match(api.chatActions, [{ chatId: 42, action: 'typing' }]);
  t.equal((await call(api, 'sendChatAction', { chat_id: 42, action: 'dancing' })).body.description, 'Bad Request: wrong parameter action in request');

  t.equal((await call(api, 'setMyCommands', { commands: [{ command: 'status', description: 'Show status' }] })).body.result, true);
  t.same(api.commands, [{ command: 'status', description: 'Show status' }]);
  t.equal((await call(api, 'setMyCommands', { commands: [{ command: 'Bad-Name', description: 'x' }] })).body.description, 'Bad Request: BOT_COMMAND_INVALID');
});

t.test('files: photos and documents, getFile and the download', async (t) => {
  const api = await start(t);
  const pdf = Buffer.from('%PDF-1.4 pinclaw test document '.repeat(20));
  const photo = Buffer.alloc(5000, 7);
  const doc = api.userMessage({ from: { id: 42 }, caption: 'read this', document: { bytes: pdf, fileName: 'notes.pdf', mimeType: 'application/pdf' } }).message;
  t.match(doc, { caption: 'read this', document: { file_name: 'notes.pdf', mime_type: 'application/pdf', file_size: pdf.length } });
  t.equal(doc?.text, undefined);
  const pic = api.userMessage({ from: { id: 42 }, photo: { bytes: photo } }).message;
  t.equal(pic?.photo?.length, 2, 'several sizes');
  t.match(pic?.photo?.at(-1), { width: 1280, height: 960, file_size: 5000 }, 'the largest last');

  for (const [fileId, bytes] of [[doc?.document?.file_id, pdf], [pic?.photo?.at(-1)?.file_id, photo]] as const) {
    const f = await call<File>(api, 'getFile', { file_id: fileId });
    t.match(f.body.result, { file_id: fileId, file_size: bytes.length, file_path: /^(documents|photos)\/file_\d+\.(pdf|jpg)$/ });
    const dl = await fetch(`${api.url}/file/bot${api.token}/${f.body.result.file_path}`);
    t.equal(dl.status, 200);
    t.ok(Buffer.from(await dl.arrayBuffer()).equals(bytes), 'the bytes sent');
  }
  t.equal((await call(api, 'getFile', { file_id: 'nope' })).body.description, 'Bad Request: invalid file_id');
  t.equal((await fetch(`${api.url}/file/bot${api.token}/documents/missing.pdf`)).status, 404);
  const path = (await call<File>(api, 'getFile', { file_id: doc?.document?.file_id })).body.result.file_path;
  t.equal((await fetch(`${api.url}/file/bot123456:wrong/${path}`)).status, 401);
  api.fail('file', { status: 502 });
  t.equal((await fetch(`${api.url}/file/bot${api.token}/${path}`)).status, 502, 'downloads can fail too');
  t.equal(api.calls.filter((c) => c.method === 'file').length, 5);
});

t.test('privacy mode decides which group messages become updates', async (t) => {
  const api = await start(t);
  const group = (m: { text: string; mentionBot?: boolean; replyToBotMessageId?: number }) => api.userMessage({ chatId: -500, chatType: 'group', chatTitle: 'Lab', from: { id: 7, first_name: 'Bob' }, ...m });
  t.equal(group({ text: 'just chatting' }).update_id, -1, 'not for the bot: Telegram never sends it');
  const mention = group({ text: 'what time is it?', mentionBot: true });
  t.equal(mention.message?.text, '@pinclaw_test_bot what time is it?');
  t.same(mention.message?.entities, [{ type: 'mention', offset: 0, length: 17 }]);
  const cmd = group({ text: '/status@pinclaw_test_bot' });
  t.same(cmd.message?.entities, [{ type: 'bot_command', offset: 0, length: 24 }]);
  t.equal(group({ text: '/status@other_bot' }).update_id, -1, "another bot's command");
  const sent = await call<Message>(api, 'sendMessage', { chat_id: -500, text: 'noted' });
  const reply = group({ text: 'thanks', replyToBotMessageId: sent.body.result.message_id });
  t.equal(reply.message?.reply_to_message?.text, 'noted');
  t.same(api.queued.map((u) => u.message?.text), ['@pinclaw_test_bot what time is it?', '/status@pinclaw_test_bot', 'thanks']);
  t.equal(mention.message?.chat.type, 'group');

  const open = await start(t, { privacyMode: false });
  t.equal(open.userMessage({ chatId: -500, chatType: 'supergroup', from: { id: 7 }, text: 'just chatting' }).update_id, 1000);
});

t.test('allowed_updates filters what is queued after it', async (t) => {
  const api = await start(t);
  await call(api, 'getUpdates', { allowed_updates: ['callback_query'] });
  t.equal(say(api, 'ignored').update_id, -1);
  await call(api, 'getUpdates', { allowed_updates: [] });
  t.equal(say(api, 'seen').update_id, 1000);
});

t.test('waitFor resolves on a state change and rejects with the recent calls', async (t) => {
  const api = await start(t);
  const seen = api.waitFor(() => api.calls.some((c) => c.method === 'getMe'));
  await call(api, 'getMe');
  await seen;
  await t.rejects(api.waitFor(() => false, 50), /waitFor: not true after 50 ms \(last calls: getMe→200\)/);
  const held = call(api, 'getUpdates', { timeout: 10 });
  await api.waitFor(() => api.polling);
  api.revokeToken();
  t.equal((await held).status, 401, 'revoking the token ends the held poll');
});
