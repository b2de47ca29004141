// The Telegram channel end to end: the gateway as a real process (the bundle), a real SQLite file,
// the real Anthropic SDK against its stand-in, and the stand-in Bot API (test/support/telegram-api.ts)
// with its faults: allow-list and pairing, groups, splitting and formatting with the plain fallback,
// streaming drafts, typing, confirmations as buttons, files, commands, 429/409/5xx/hanging polls, a
// refused token, and SIGKILL while polling and while sending.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../src/store/db.js';
import { slowText, textReply, toolUseReply, type AnthropicStep } from './support/anthropic-server.js';
import { bundle, runPinclawAsync, start } from './support/proc.js';
import { startTelegramApi, type TelegramApi } from './support/telegram-api.js';
import { decodeJpeg } from './support/camera-testsrc.js';
import type { Step } from './support/stand-in.js';
import { dbRows, lastUser, startChannelGateway, type ChannelGateway } from './support/channel-gateway.js';

const OWNER = { id: 42, username: 'ada', first_name: 'Ada' };

interface Fixture extends ChannelGateway {
  tg: TelegramApi;
}

async function fixture(t: Test, o: { telegram?: Record<string, unknown>; tools?: Record<string, unknown>; llm?: Step<AnthropicStep>; env?: Record<string, string> } = {}): Promise<Fixture> {
  const tg = await startTelegramApi();
  const g = await startChannelGateway(t, {
    config: () => ({
      channels: { telegram: { token: tg.token, apiBaseUrl: tg.url, allowFrom: ['42'], pollTimeoutSeconds: 2, debounceMs: 0, ...o.telegram } },
      ...(o.tools ? { tools: o.tools } : {}),
    }),
    llm: o.llm, env: o.env, close: () => tg.close(),
  });
  return Object.assign(g, { tg });
}

const rows = dbRows;

const textsTo = (tg: TelegramApi, chatId: number) => tg.sent.filter((m) => m.chatId === chatId).map((m) => tg.message(chatId, m.messageId)?.text ?? m.text);

t.test('the owner writes, the agent answers; offset confirmed, typing shown, session per chat', async (t) => {
  const { tg, llm, home } = await fixture(t, { telegram: { streaming: false } });
  const u = tg.userMessage({ from: OWNER, text: 'hello there' });
  await tg.waitFor(() => tg.sent.length === 1, 20_000);
  t.equal(tg.sent[0]!.text, 'echo: hello there');
  t.equal(tg.sent[0]!.parseMode, 'HTML');
  t.equal(tg.sent[0]!.chatId, 42);
  t.ok(tg.chatActions.some((a) => a.chatId === 42 && a.action === 'typing'), 'typing was shown');
  await tg.waitFor(() => tg.confirmedOffset > u.update_id);
  t.equal(tg.deliveries(u.update_id), 1, 'the update was fetched once');
  t.equal(llm.requests.length, 1);
  t.match(rows(home, 'select session_key, sender from inbound'), [{ session_key: 'telegram:42', sender: '42' }]);
  t.match(rows(home, 'select delivered_parts from outbound'), [{ delivered_parts: JSON.stringify([String(tg.sent[0]!.messageId)]) }], 'the Telegram message id is on the outbound row');
  t.ok(tg.commands.some((c) => c.command === 'status'), 'the commands are registered');
});

t.test('a stranger gets a pairing code once an hour and no turn; approved, they are answered', async (t) => {
  const { tg, llm, env, home } = await fixture(t, { telegram: { streaming: false } });
  const stranger = { id: 77, username: 'bob' };
  tg.userMessage({ from: stranger, text: 'hi, who are you?' });
  await tg.waitFor(() => tg.sent.length === 1, 20_000);
  const code = /pinclaw --home (\S+) pairing approve ([A-Z0-9]+)/.exec(tg.sent[0]!.text)?.[2];
  t.ok(code, 'the prompt carries the code');
  t.match(tg.sent[0]!.text, `pinclaw --home ${home} pairing approve ${code}`, 'and names the home, which is not the default one');
  const second = tg.userMessage({ from: stranger, text: 'hello??' });
  await tg.waitFor(() => tg.confirmedOffset > second.update_id);
  await new Promise((r) => setTimeout(r, 300));
  t.equal(tg.sent.length, 1, 'no second prompt within the hour');
  t.equal(llm.requests.length, 0, 'a stranger starts no agent turn');
  const list = await runPinclawAsync(['pairing', 'list'], { env });
  t.match(list.stdout, `telegram\t77\t@bob\tpending: pinclaw --home ${home} pairing approve ${code}`);
  const wrong = await runPinclawAsync(['pairing', 'approve', 'NOPE2345'], { env });
  t.equal(wrong.code, 1);
  t.match(wrong.stderr, /no pairing request has the code NOPE2345/);
  const ok = await runPinclawAsync(['pairing', 'approve', code!.toLowerCase()], { env });
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.stdout, /approved telegram @bob \(77\)/);
  tg.userMessage({ from: stranger, text: 'now?' });
  await tg.waitFor(() => tg.sent.length === 2, 20_000);
  t.equal(tg.sent[1]!.text, 'echo: now?');
});

t.test('groups: answered on a mention or a reply to the bot, quoting the message; other talk ignored', async (t) => {
  const { tg, llm } = await fixture(t, { telegram: { streaming: false } });
  const chat = { chatId: -1001, chatType: 'supergroup' as const, chatTitle: 'home', from: OWNER };
  const quiet = tg.userMessage({ ...chat, text: 'dinner at 8?' });
  const mention = tg.userMessage({ ...chat, text: 'is the door locked?', mentionBot: true });
  await tg.waitFor(() => tg.sent.length === 1, 20_000);
  t.equal(tg.sent[0]!.text, 'echo: is the door locked?', 'the mention is cut from the text');
  t.equal(tg.sent[0]!.replyToMessageId, (mention.message as { message_id: number }).message_id, 'the answer quotes the question');
  t.equal(llm.requests.length, 1);
  if (quiet.update_id !== -1) t.notMatch(lastUser(llm.requests[0]!.body), /dinner/, 'talk not for the bot started no turn');
  tg.userMessage({ ...chat, text: 'and the garage?', replyToBotMessageId: tg.sent[0]!.messageId });
  await tg.waitFor(() => tg.sent.length === 2, 20_000);
  t.equal(tg.sent[1]!.text, 'echo: and the garage?');
});

t.test('forum topics: each topic is a session of its own, answered in its topic (draft, typing, reply); /reset resets that topic only', async (t) => {
  const { tg, llm, home } = await fixture(t, { telegram: { streaming: true } });
  const CHAT = -1002;
  const say = (topicId: number | undefined, text: string) => tg.userMessage({ chatId: CHAT, chatType: 'supergroup', from: OWNER, text, mentionBot: !text.startsWith('/'), ...(topicId === undefined ? {} : { topicId }) });
  /** the bot's messages in this chat as they read now (drafts edited into the reply), with their topic */
  const shown = () => tg.sent.filter((m) => m.chatId === CHAT).map((m) => ({ threadId: m.threadId, text: tg.message(CHAT, m.messageId)?.text ?? m.text }));
  const answered = (threadId: number | undefined, text: string) => tg.waitFor(() => shown().some((m) => m.threadId === threadId && m.text === text), 20_000).catch(() => { throw new Error(`no "${text}" in topic ${threadId}; the chat shows ${JSON.stringify(shown())}`); });
  /** what the provider was given as the conversation so far, for the request that carried `text` */
  const history = (text: string) => JSON.stringify(llm.requests.find((r) => lastUser(r.body).includes(text))!.body.messages.slice(0, -1));

  say(5, 'alpha one');
  await answered(5, 'echo: alpha one');
  say(9, 'beta one');
  await answered(9, 'echo: beta one');
  t.ok(tg.chatActions.some((a) => a.chatId === CHAT && a.threadId === 5 && a.action === 'typing'), 'typing is shown in the topic');
  say(5, 'alpha two');
  await answered(5, 'echo: alpha two');
  t.match(history('alpha two'), /alpha one/, "the topic's own conversation goes on");
  t.notMatch(history('alpha two'), /beta/, "another topic's talk is not in it");

  say(5, `/reset@${tg.bot.username}`);
  await answered(5, 'Session reset: the conversation starts fresh.');
  say(9, 'beta two');
  await answered(9, 'echo: beta two');
  t.match(history('beta two'), /beta one/, "/reset in topic 5 left topic 9's conversation alone");
  say(5, 'alpha three');
  await answered(5, 'echo: alpha three');
  t.notMatch(history('alpha three'), /alpha/, 'topic 5 starts fresh');

  // The General topic carries no thread id: the group's own conversation, answered without one.
  say(undefined, 'gamma');
  await answered(undefined, 'echo: gamma');
  t.notOk(shown().some((m) => m.threadId === undefined && m.text.startsWith('echo: alpha')), 'no topic reply went to General');
  t.same(rows<{ session_key: string }>(home, 'select distinct session_key from inbound order by session_key').map((r) => r.session_key), [`telegram:${CHAT}`, `telegram:${CHAT}:5`, `telegram:${CHAT}:9`]);
  t.same(rows<{ chat_id: string }>(home, "select distinct chat_id from outbound where text like 'echo: beta%'").map((r) => r.chat_id), [`${CHAT}:9`], 'the durable reply row names the topic');
});

t.test('a forum topic the bot opened: talk in it is not addressed to the bot unless it mentions or answers the bot', async (t) => {
  const { tg, llm } = await fixture(t, { telegram: { streaming: false }, env: {} });
  const base = { chatId: -1003, chatType: 'supergroup' as const, from: OWNER, topicId: 11, topicByBot: true };
  const quiet = tg.userMessage({ ...base, text: 'we should paint the fence' });
  t.equal((quiet.message as { reply_to_message?: { from?: { id: number } } }).reply_to_message?.from?.id, tg.bot.id, "Telegram makes it a reply to the topic's creation message, which is the bot's");
  tg.userMessage({ ...base, text: 'what time is it?', mentionBot: true });
  await tg.waitFor(() => tg.sent.length === 1, 20_000);
  t.equal(tg.sent[0]!.text, 'echo: what time is it?');
  t.equal(tg.sent[0]!.threadId, 11);
  t.equal(llm.requests.length, 1, 'the unaddressed message started no turn');
  t.notMatch(JSON.stringify(llm.requests[0]!.body.messages), /fence/);
});

t.test('a long reply with code is split at 4096 on block boundaries, fences reopened, every part accepted', async (t) => {
  const para = (i: number) => `Paragraph ${i}: ${'lorem ipsum dolor sit amet '.repeat(12)}`;
  const code = Array.from({ length: 300 }, (_, i) => `print(${i})  # line ${i}`).join('\n');
  const reply = [...Array.from({ length: 8 }, (_, i) => para(i)), '```python\n' + code + '\n```', '| a | b |\n|---|---|\n| 1 | 2 |', '**done**'].join('\n\n');
  const { tg } = await fixture(t, { llm: textReply(reply), telegram: { streaming: false } });
  tg.userMessage({ from: OWNER, text: 'write a lot' });
  await tg.waitFor(() => tg.sent.length >= 3 && tg.sent.at(-1)!.text.includes('done'), 30_000);
  t.ok(tg.sent.every((m) => m.text.length <= 4096), 'every part within the limit (counted after parsing)');
  t.ok(tg.sent.every((m) => m.parseMode === 'HTML'), 'all formatted');
  const withCode = tg.sent.filter((m) => m.text.includes('print('));
  t.ok(withCode.length >= 2, 'the code block spans parts');
  for (const m of withCode) t.ok(m.entities?.some((e) => e.type === 'pre'), `part ${m.messageId} shows its code as a block`);
  const all = tg.sent.map((m) => m.text).join('\n');
  for (let i = 0; i < 300; i++) t.ok(all.includes(`print(${i})`), `line ${i} arrived`);
  t.ok(tg.sent.at(-1)!.entities?.some((e) => e.type === 'bold'), 'the bold survived');
});

t.test('formatting refused by Telegram: the same part goes out as plain text', async (t) => {
  const { tg } = await fixture(t, { llm: textReply('**important**: <check> the _valve_'), telegram: { streaming: false } });
  tg.fail('sendMessage', { kind: 'parse-error' }, 1);
  tg.userMessage({ from: OWNER, text: 'status?' });
  await tg.waitFor(() => tg.sent.length === 1, 20_000);
  t.equal(tg.sent[0]!.parseMode, undefined, 'sent without parse_mode');
  t.equal(tg.sent[0]!.text, '**important**: <check> the _valve_', 'the reply text itself, nothing lost');
});

t.test('streaming: one draft message edited at most once a second, then replaced by the formatted reply', async (t) => {
  const chunks = ['The ', 'garden ', 'is ', 'dry; ', 'I ', 'will ', 'water ', 'it ', '**now**.'];
  const { tg } = await fixture(t, { llm: slowText(chunks, 350) });
  tg.userMessage({ from: OWNER, text: 'garden?' });
  await tg.waitFor(() => tg.edits.some((e) => e.parseMode === 'HTML'), 30_000);
  t.equal(tg.sent.length, 1, 'one message: the draft');
  const draft = tg.sent[0]!;
  t.equal(draft.parseMode, undefined, 'the draft is plain text');
  const edits = tg.edits.filter((e) => e.messageId === draft.messageId);
  const times = [draft.at, ...edits.map((e) => e.at)];
  for (let i = 1; i < times.length - 1; i++) t.ok(times[i]! - times[i - 1]! >= 950, `draft update ${i} came ≥ 1 s after the one before`);
  const final = tg.message(42, draft.messageId)!;
  t.equal((final as { text: string }).text, 'The garden is dry; I will water it now.');
  t.ok(edits.length >= 2, 'the draft grew before the end');
});

t.test('a tool that needs a yes asks with buttons; the owner taps Allow', async (t) => {
  let step = 0;
  const { tg, llm, home } = await fixture(t, {
    tools: { confirm: ['current_time'] },
    telegram: { streaming: false },
    llm: () => (step++ === 0 ? toolUseReply([{ name: 'current_time', input: {} }]) : textReply('It is time.')),
  });
  tg.userMessage({ from: OWNER, text: 'what time is it?' });
  await tg.waitFor(() => tg.sent.some((m) => m.replyMarkup), 20_000);
  const ask = tg.sent.find((m) => m.replyMarkup)!;
  t.match(ask.text, /Allow current_time\?/);
  const allow = ask.replyMarkup!.inline_keyboard[0]!.find((b) => b.text === 'Allow') as { callback_data: string };
  // Someone else in no position to answer presses first: refused.
  tg.callbackQuery({ chatId: 42, from: { id: 77 }, messageId: ask.messageId, data: allow.callback_data });
  tg.callbackQuery({ chatId: 42, from: OWNER, messageId: ask.messageId, data: allow.callback_data });
  await tg.waitFor(() => tg.sent.some((m) => m.text === 'It is time.'), 20_000);
  t.match(tg.callbackAnswers.map((a) => a.text), ['Only the owner can answer this.', 'Allowed']);
  t.match((tg.message(42, ask.messageId) as { text: string }).text, /current_time: allowed/);
  t.match(rows(home, `select tool, outcome from audit`), [{ tool: 'current_time', outcome: 'ok' }]);
  t.equal(llm.requests.length, 2);
});

t.test('photos and documents are saved into the workspace and named in the turn; binary and oversized refused', async (t) => {
  const { tg, llm, home } = await fixture(t, { telegram: { streaming: false, maxFileBytes: 1000 } });
  const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
  tg.userMessage({ from: OWNER, caption: 'what is this?', photo: { bytes: png } });
  await tg.waitFor(() => tg.sent.length === 1, 20_000);
  const prompt = lastUser(llm.requests[0]!.body);
  const saved = /saved in the workspace as (inbox\/telegram\/[^ ]+) \((\d+) bytes\)/.exec(prompt);
  t.ok(saved, 'the turn names the file');
  t.match(prompt, /what is this\?/, 'and carries the caption');
  t.same(readFileSync(join(home, 'workspace', saved![1]!)), png, 'the bytes are in the workspace');
  tg.userMessage({ from: OWNER, document: { bytes: Buffer.from('\x7fELF...'), fileName: 'tool.bin', mimeType: 'application/octet-stream' } });
  await tg.waitFor(() => tg.sent.length === 2, 20_000);
  t.match(tg.sent[1]!.text, /I don't accept application\/octet-stream files/);
  tg.userMessage({ from: OWNER, document: { bytes: Buffer.alloc(5000, 97), fileName: 'big.txt', mimeType: 'text/plain' } });
  await tg.waitFor(() => tg.sent.length === 3, 20_000);
  t.match(tg.sent[2]!.text, /5000 bytes, more than the 1000 bytes I accept \(channels\.telegram\.maxFileBytes\)/);
  t.equal(llm.requests.length, 1, 'refused files start no turn');
  t.notOk(existsSync(join(home, 'workspace', 'inbox', 'telegram', 'big.txt')));
});

t.test('a photo reaches the model as an image in its turn (the lazy chunk images), and the stored session keeps only its note', async (t) => {
  const { tg, llm, home } = await fixture(t, { telegram: { streaming: false } });
  const made = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=800x600:rate=1', '-frames:v', '1', '-f', 'image2pipe', '-c:v', 'mjpeg', 'pipe:1']);
  t.equal(made.status, 0, made.stderr.toString());
  tg.userMessage({ from: OWNER, caption: 'what is this?', photo: { bytes: made.stdout } });
  await tg.waitFor(() => tg.sent.length === 1, 20_000);
  const content = llm.requests[0]!.body.messages.at(-1).content as { type: string; text?: string; source?: { media_type: string; data: string } }[];
  t.same(content.map((b) => b.type), ['text', 'image'], 'the text, then the picture');
  t.same(decodeJpeg(Buffer.from(content[1]!.source!.data, 'base64'), 800, 600), { ok: true }, 'a valid JPEG, at its size (within the limit)');
  const saved = /saved in the workspace as (inbox\/telegram\/\S+) /.exec(content[0]!.text!)![1]!;
  const db = openDatabase(join(home, 'pinclaw.db'), { readonly: true });
  const stored = (db.prepare('select messages from sessions').get() as { messages: string }).messages;
  db.close();
  t.notMatch(stored, content[1]!.source!.data.slice(0, 60), 'no picture in the stored session');
  t.match(stored, `[image removed from the history: a picture the sender attached, saved in the workspace as ${saved}]`);
});

t.test('/status, /reset and /compact are answered by pinclaw', async (t) => {
  const { tg, llm } = await fixture(t, { telegram: { streaming: false } });
  tg.userMessage({ from: OWNER, text: 'remember 7' });
  await tg.waitFor(() => tg.sent.length === 1, 20_000);
  tg.userMessage({ from: OWNER, text: '/status' });
  await tg.waitFor(() => tg.sent.length === 2, 20_000);
  t.match(tg.sent[1]!.text, /this conversation: 2 messages/);
  tg.userMessage({ from: OWNER, text: '/reset' });
  await tg.waitFor(() => tg.sent.length === 3, 20_000);
  t.match(tg.sent[2]!.text, /Session reset/);
  tg.userMessage({ from: OWNER, text: '/compact' });
  await tg.waitFor(() => tg.sent.length === 4, 20_000);
  t.match(tg.sent[3]!.text, /Nothing to compact/);
  t.equal(llm.requests.length, 1, 'the commands cost no model call');
});

t.test('polling survives 429 (waits retry_after), 409, 5xx and a hanging connection', async (t) => {
  const { tg, gw } = await fixture(t, { telegram: { streaming: false } });
  await tg.waitFor(() => tg.polling, 20_000);
  for (const fault of [{ status: 429 as const, retryAfter: 1 }, { status: 409 as const }, { status: 502 as const }, { kind: 'hang' as const }]) {
    const before = tg.calls.filter((c) => c.method === 'getUpdates').length;
    tg.fail('getUpdates', fault, 1);
    // The held poll answers [] after its timeout (2 s); the next poll meets the fault.
    await tg.waitFor(() => tg.calls.filter((c) => c.method === 'getUpdates').length > before + 1, 20_000);
    const faulted = tg.calls.filter((c) => c.method === 'getUpdates' && c.fault).at(-1)!;
    const n = tg.sent.length;
    const u = tg.userMessage({ from: OWNER, text: `after ${JSON.stringify(fault)}` });
    await tg.waitFor(() => tg.sent.length === n + 1, 30_000);
    const fetched = tg.calls.find((c) => c.method === 'getUpdates' && c.at > faulted.at && !c.fault)!;
    if ('retryAfter' in fault) t.ok(fetched.at - faulted.at >= 950, '429: the next poll waited retry_after');
    if ('kind' in fault) t.ok(fetched.at - faulted.at <= 2000 + 2000 + 1500, 'hang: recovered within one poll timeout plus the grace');
    t.equal(tg.deliveries(u.update_id), 1, `after ${JSON.stringify(fault)}: the update arrived once`);
  }
  t.match(gw.stderr(), /polling failed .*409 Conflict/);
});

t.test('a typing indicator Telegram refuses does not hold up the reply', async (t) => {
  const { tg } = await fixture(t, { telegram: { streaming: false } });
  tg.fail('sendChatAction', { status: 500 }, 10);
  tg.fail('sendChatAction', { kind: 'hang' }, 1);
  tg.userMessage({ from: OWNER, text: 'quick one' });
  await tg.waitFor(() => tg.sent.length === 1, 20_000);
  t.equal(tg.sent[0]!.text, 'echo: quick one');
  t.ok(tg.calls.some((c) => c.method === 'sendChatAction' && c.fault), 'the indicator was tried and refused');
});

t.test('a reply Telegram cannot take now (5xx) is retried and arrives once', async (t) => {
  const { tg } = await fixture(t, { telegram: { streaming: false } });
  tg.fail('sendMessage', { status: 502 }, 2);
  tg.userMessage({ from: OWNER, text: 'ping' });
  await tg.waitFor(() => tg.sent.length === 1, 30_000);
  await new Promise((r) => setTimeout(r, 500));
  t.equal(tg.sent.length, 1, 'once');
  t.equal(tg.sent[0]!.text, 'echo: ping');
  t.equal(tg.calls.filter((c) => c.method === 'sendMessage' && c.fault).length, 2);
});

t.test('a refused token: a clear error at start, the gateway serves on, the channel shows down', async (t) => {
  const { tg, gw, env } = await fixture(t);
  await tg.waitFor(() => tg.polling, 20_000);
  gw.child.kill('SIGTERM');
  await gw.exited;
  tg.revokeToken();
  const f2 = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: { ...env, PINCLAW_GATEWAY_TOKEN: 'tok' } });
  t.teardown(() => void f2.child.kill('SIGKILL'));
  const url = (await f2.waitFor(/gateway listening on (http:\/\/[^\s]+)/))[1]!;
  await f2.waitFor(/Telegram refused the bot token \(401 Unauthorized\): check channels\.telegram\.token/);
  t.equal((await fetch(`${url}/healthz`)).status, 200, 'the gateway still serves');
  const metrics = await (await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer tok' } })).text();
  t.match(metrics, /pinclaw_channel_up\{channel="telegram"\} 0/);
  t.match(metrics, /pinclaw_channel_up\{channel="http"\} 1/);
  const doctor = await runPinclawAsync(['doctor'], { env });
  t.match(doctor.stdout, /channels.*telegram down \(Telegram refused the bot token/);
});

t.test('SIGKILL while polling: restarted, every update handled exactly once', async (t) => {
  const { tg, llm, home, gw, restart } = await fixture(t, { telegram: { streaming: false } });
  await tg.waitFor(() => tg.polling, 20_000);
  gw.child.kill('SIGKILL');
  await gw.exited;
  const ids = [1, 2, 3].map((i) => tg.userMessage({ from: OWNER, chatId: 42, text: `m${i}` }).update_id);
  await restart();
  // The three arrive in one getUpdates answer; whether the lane claims m1 before m2 and m3 are
  // committed is a race, and messages waiting together are answered together (coalescing). So: every
  // message answered by exactly one delivered reply, one reply per burst, whatever the bursts were.
  await tg.waitFor(() => rows(home, `select id from inbound where state = 'done'`).length === 3 && rows(home, `select id from outbound where state != 'sent'`).length === 0 && rows(home, 'select id from outbound').length > 0, 30_000);
  t.equal(rows(home, 'select id from inbound').length, 3, 'three messages stored, no duplicate');
  const bursts = rows<{ burst_id: number }>(home, 'select distinct burst_id from inbound order by burst_id').map((r) => r.burst_id);
  const replies = rows<{ inbound_id: number }>(home, `select inbound_id from outbound where kind = 'reply' order by inbound_id`).map((r) => r.inbound_id);
  t.same(replies, bursts, 'one reply per burst, to its last message');
  t.equal(tg.sent.length, replies.length, 'each sent once');
  for (const m of tg.sent) t.match(m.text, /^echo: m[123]$/, 'a reply of the model to these messages');
  t.equal(new Set(tg.sent.map((m) => m.text)).size, tg.sent.length, 'no reply twice');
  t.equal(llm.requests.length, replies.length, 'one model call per burst');
  for (const id of ids) t.ok(tg.deliveries(id) >= 1);
  t.ok(tg.confirmedOffset > ids.at(-1)!, 'all confirmed');
});

t.test('SIGKILL right after a reply was sent, before it was marked: not sent twice', async (t) => {
  const { tg, home, gw, restart } = await fixture(t, { telegram: { streaming: false }, env: { PINCLAW_CRASH_AT: 'after-send' } });
  tg.userMessage({ from: OWNER, text: 'once please' });
  await gw.exited;
  t.equal(tg.sent.length, 1, 'the reply went out, then the process died');
  t.match(rows(home, `select state from outbound`), [{ state: 'pending' }], 'not marked');
  await restart({ PINCLAW_CRASH_AT: '' });
  await tg.waitFor(() => rows<{ state: string }>(home, 'select state from outbound')[0]!.state === 'sent', 20_000);
  t.equal(tg.sent.length, 1, 'the restart saw the recorded message id and sent nothing again');
  t.equal(textsTo(tg, 42).length, 1);
});
