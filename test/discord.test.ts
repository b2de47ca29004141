// The Discord channel end to end: the gateway as a real process (the bundle), a real SQLite file, the
// real Anthropic SDK against its stand-in, and a stand-in Discord (test/support/discord-gateway.ts)
// speaking gateway v10 and REST: DMs, guild mentions, threads, pairing, splitting at 2000, buttons,
// dropped sockets, op 7, op 9, missed heartbeat acks, 429 buckets, a wrong token, disallowed
// intents, an unreachable Discord, an attachment over the limit, and SIGKILL while receiving and
// while sending.
import t, { type Test } from 'tap';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { textReply, toolUseReply, type AnthropicStep } from './support/anthropic-server.js';
import { dbRows, startChannelGateway, type ChannelGateway } from './support/channel-gateway.js';
import { startDiscord, TOKEN, BOT, type DiscordStandIn } from './support/discord-gateway.js';
import { freePort } from './support/free-port.js';
import { bundle, cleanEnv, runPinclawAsync, tempDir } from './support/proc.js';
import { writeFileSync } from 'node:fs';
import type { Step } from './support/stand-in.js';

const OWNER = { id: '300000000000000011', username: 'ada' };
const STRANGER = { id: '300000000000000022', username: 'bob' };
const GUILD = '500000000000000001';
const CHANNEL = '400000000000000001';
const THREAD = '400000000000000002';

interface Fixture extends ChannelGateway {
  dc: DiscordStandIn;
}

async function fixture(t: Test, o: { discord?: Record<string, unknown>; tools?: Record<string, unknown>; llm?: Step<AnthropicStep>; env?: Record<string, string>; stand?: (dc: DiscordStandIn) => void; wait?: boolean } = {}): Promise<Fixture> {
  const dc = await startDiscord();
  o.stand?.(dc);
  const g = await startChannelGateway(t, {
    config: () => ({ channels: { discord: { token: TOKEN, apiBaseUrl: dc.apiBaseUrl, allowFrom: [OWNER.id], debounceMs: 0, ...o.discord } }, ...(o.tools ? { tools: o.tools } : {}) }),
    llm: o.llm, env: o.env, close: () => dc.close().catch(() => {}),
  });
  if (o.wait !== false) await dc.waitFor(() => dc.identifies + dc.resumes >= 1 && dc.received.some((p) => p.op === 2 || p.op === 6));
  // READY handled: the bot knows its id before the test's first message.
  if (o.wait !== false) await g.gw.waitFor(/gateway listening/).catch(() => {});
  return Object.assign(g, { dc });
}

const rows = dbRows;
const up = async (f: Fixture) =>
  f.dc.waitFor(() => statusOf(f.home) === 'up').catch((err: Error) => {
    throw new Error(`${err.message}; the gateway said:\n${f.gw.stderr()}`);
  });
const statusOf = (home: string) => {
  const raw = rows<{ value: string }>(home, `select value from state where key = 'channels.status'`)[0]?.value;
  return raw ? (JSON.parse(raw) as { channels: { channel: string; state: string; detail: string }[] }).channels.find((c) => c.channel === 'discord')?.state : undefined;
};
const detailOf = (home: string) => {
  const raw = rows<{ value: string }>(home, `select value from state where key = 'channels.status'`)[0]?.value;
  return raw ? (JSON.parse(raw) as { channels: { channel: string; detail: string }[] }).channels.find((c) => c.channel === 'discord')?.detail : undefined;
};

t.test('the owner writes a DM, the agent answers: typing, session per channel, the message id on the outbound row', async (t) => {
  const f = await fixture(t);
  const { dc, home, llm } = f;
  await up(f);
  dc.message({ from: OWNER, text: 'hello there' });
  await dc.waitFor(() => dc.sent.length === 1);
  t.equal(dc.sent[0]!.content, 'echo: hello there');
  t.ok(dc.calls.some((c) => c.method === 'POST' && c.path === `/channels/3${OWNER.id.slice(1)}/typing`), 'typing was shown');
  t.match(rows(home, 'select session_key, sender from inbound'), [{ session_key: `discord:3${OWNER.id.slice(1)}`, sender: OWNER.id }]);
  await dc.waitFor(() => rows<{ state: string }>(home, 'select state from outbound')[0]?.state === 'sent');
  t.match(rows(home, 'select delivered_parts from outbound'), [{ delivered_parts: JSON.stringify([dc.sent[0]!.id]) }]);
  t.notOk(dc.sent[0]!.body.message_reference, 'a DM answer is no reply-to');
  t.equal(llm.requests.length, 1);
  const identify = dc.received.find((p) => p.op === 2)!.d as { intents: number };
  t.equal(identify.intents, 1 | 512 | 4096 | 32768, 'GUILDS, GUILD_MESSAGES, DIRECT_MESSAGES, MESSAGE_CONTENT');
});

t.test('in a guild only a mention is answered, as a reply; each thread is its own session', async (t) => {
  const f = await fixture(t);
  const { dc, home } = f;
  await up(f);
  dc.message({ from: OWNER, text: 'just chatting', guild: GUILD, channel: CHANNEL, mentionBot: false });
  const m1 = dc.message({ from: OWNER, text: 'in the channel', guild: GUILD, channel: CHANNEL });
  dc.message({ from: OWNER, text: 'in the thread', guild: GUILD, channel: THREAD });
  await dc.waitFor(() => dc.sent.length === 2);
  t.same(dc.sent.map((s) => s.content).sort(), ['echo: in the channel', 'echo: in the thread']);
  t.same(dc.sent.find((s) => s.channel === CHANNEL)!.body.message_reference, { message_id: m1, fail_if_not_exists: false });
  t.same(rows<{ session_key: string }>(home, 'select session_key from inbound order by id').map((r) => r.session_key), [`discord:${CHANNEL}`, `discord:${THREAD}`], 'no row for the message without a mention');
});

t.test('a stranger gets a pairing code in a DM and no turn; in a guild nothing; approved, they are answered', async (t) => {
  const f = await fixture(t);
  const { dc, llm, env } = f;
  await up(f);
  dc.message({ from: STRANGER, text: 'hi', guild: GUILD, channel: CHANNEL });
  dc.message({ from: STRANGER, text: 'who are you?' });
  await dc.waitFor(() => dc.sent.length === 1);
  const code = /pairing approve ([A-Z0-9]+)/.exec(dc.sent[0]!.content)?.[1];
  t.ok(code, 'the prompt carries the code');
  t.equal(dc.sent[0]!.channel, `3${STRANGER.id.slice(1)}`, 'in the DM, not the guild');
  await new Promise((r) => setTimeout(r, 500));
  t.equal(llm.requests.length, 0, 'a stranger starts no agent turn');
  const ok = await runPinclawAsync(['pairing', 'approve', code!], { env });
  t.equal(ok.code, 0, ok.stderr);
  dc.message({ from: STRANGER, text: 'now?' });
  await dc.waitFor(() => dc.sent.length === 2);
  t.equal(dc.sent[1]!.content, 'echo: now?');
});

t.test('a long reply is cut at 2000 characters between paragraphs; 429s (route and global) are waited out', async (t) => {
  const para = (c: string) => `${c.repeat(900)}`;
  const long = [para('a'), para('b'), para('c'), para('d')].join('\n\n');
  const f = await fixture(t, { llm: () => textReply(long) });
  const { dc, home } = f;
  await up(f);
  dc.limit(2);
  dc.message({ from: OWNER, text: 'write a lot' });
  await dc.waitFor(() => rows<{ state: string }>(home, 'select state from outbound')[0]?.state === 'sent', 30_000);
  t.same(dc.sent.map((s) => s.content), [`${para('a')}\n\n${para('b')}`, `${para('c')}\n\n${para('d')}`]);
  t.ok(dc.sent.every((s) => s.content.length <= 2000));
  t.equal(dc.calls.filter((c) => c.status === 429).length, 2, 'two 429s, waited out');
  dc.limit(1, { global: true, retryAfter: 0.2 });
  dc.message({ from: OWNER, text: 'again' });
  await dc.waitFor(() => dc.sent.length === 4, 30_000);
  t.equal(dc.calls.filter((c) => c.status === 429).length, 3);
});

t.test('a bucket spent before any 429: the next part waits for its reset (read from the headers), none is refused', async (t) => {
  const long = ['a', 'b', 'c', 'd'].map((c) => c.repeat(1500)).join('\n\n');
  const f = await fixture(t, { llm: () => textReply(long) });
  const { dc, home } = f;
  await up(f);
  // One message per 0.4 s: each part after the first finds the bucket spent by the one before.
  dc.bucket(1, 0.4);
  dc.message({ from: OWNER, text: 'write a lot' });
  await dc.waitFor(() => rows<{ state: string }>(home, 'select state from outbound')[0]?.state === 'sent', 30_000);
  t.equal(dc.sent.length, 4, 'four parts of 1500 characters');
  t.equal(dc.overdrawn, 0, 'no request was sent into a spent bucket');
  t.equal(dc.calls.filter((c) => c.status === 429).length, 0, 'so no 429');
});

t.test('typing is renewed while a long turn runs (Discord shows it for 10 s)', async (t) => {
  // A model that takes 9 s: past the 8 s renewal.
  const f = await fixture(t, { llm: async () => (await new Promise((r) => setTimeout(r, 9000)), textReply('slow answer')) });
  const { dc } = f;
  await up(f);
  dc.message({ from: OWNER, text: 'think hard' });
  await dc.waitFor(() => dc.sent.length === 1, 30_000);
  const typing = dc.calls.filter((c) => c.method === 'POST' && c.path.endsWith('/typing'));
  t.ok(typing.length >= 2, `typing shown and renewed (${typing.length} POSTs)`);
  t.equal(dc.sent[0]!.content, 'slow answer');
});

t.test('a confirmation nobody answers: refused at its timeout, the buttons removed from the question', async (t) => {
  let step = 0;
  const f = await fixture(t, { tools: { confirm: ['current_time'], confirmTimeoutMs: 1000 }, llm: () => (step++ === 0 ? toolUseReply([{ name: 'current_time', input: {} }]) : textReply('Not allowed, then.')) });
  const { dc, home } = f;
  await up(f);
  dc.message({ from: OWNER, text: 'what time is it?' });
  await dc.waitFor(() => dc.sent.some((s) => s.content === 'Not allowed, then.'), 30_000);
  const question = dc.sent[0]!;
  t.match(question.content, /Allow current_time\?/);
  const edit = dc.calls.find((c) => c.method === 'PATCH' && c.path === `/channels/${question.channel}/messages/${question.id}`);
  t.ok(edit, 'the question was edited');
  t.same(edit?.body.components, [], 'its buttons are gone');
  t.match(edit?.body.content, /no answer in time: not allowed/);
  t.match(rows(home, `select tool, outcome from audit`), [{ tool: 'current_time', outcome: 'denied' }]);
});

t.test('a tool that needs a yes asks with buttons; a stranger cannot answer; the owner clicks Allow', async (t) => {
  let step = 0;
  const f = await fixture(t, { tools: { confirm: ['current_time'] }, llm: () => (step++ === 0 ? toolUseReply([{ name: 'current_time', input: {} }]) : textReply('It is time.')) });
  const { dc, home } = f;
  await up(f);
  dc.message({ from: OWNER, text: 'what time is it?' });
  await dc.waitFor(() => dc.sent.length === 1);
  t.match(dc.sent[0]!.content, /Allow current_time\?/);
  const buttons = dc.sent[0]!.body.components[0].components as { custom_id: string; label: string }[];
  t.same(buttons.map((b) => b.label), ['Allow', 'Deny']);
  const chat = dc.sent[0]!.channel;
  dc.click(buttons[0]!.custom_id, STRANGER, chat);
  await dc.waitFor(() => dc.calls.filter((c) => c.path.startsWith('/interactions/')).length === 1);
  t.match(dc.calls.find((c) => c.path.startsWith('/interactions/'))!.body, { type: 4, data: { flags: 64 } }, 'the stranger is told privately');
  dc.click(buttons[0]!.custom_id, OWNER, chat);
  await dc.waitFor(() => dc.sent.some((s) => s.content === 'It is time.'));
  t.match(dc.calls.filter((c) => c.path.startsWith('/interactions/'))[1]!.body, { type: 7, data: { content: 'Allowed.', components: [] } });
  t.match(rows(home, `select tool, outcome from audit`), [{ tool: 'current_time', outcome: 'ok' }]);
});

t.test('a dropped socket, op 7, op 9 (resumable or not) and a missed heartbeat ack: reconnected, resumed, nothing lost or doubled', async (t) => {
  const f = await fixture(t);
  const { dc, home, gw } = f;
  await up(f);
  let n = 0;
  const say = async () => {
    dc.message({ from: OWNER, text: `m${n++}` });
    await dc.waitFor(() => dc.sent.length === n, 20_000);
  };
  await say();
  dc.drop();
  dc.message({ from: OWNER, text: `m${n++}` }); // while the socket is gone: replayed on resume
  await dc.waitFor(() => dc.sent.length === n, 20_000);
  t.equal(dc.resumes, 1, 'a dropped socket resumes');
  dc.reconnect();
  await dc.waitFor(() => dc.resumes === 2, 20_000);
  await say();
  dc.invalidate(true);
  await dc.waitFor(() => dc.resumes === 3, 20_000);
  await say();
  const identifies = dc.identifies;
  dc.invalidate(false);
  await dc.waitFor(() => dc.identifies === identifies + 1, 20_000);
  await say();
  dc.withholdAcks(true);
  await gw.waitFor(/discord: no heartbeat ack from the gateway; reconnecting/, 20_000);
  dc.withholdAcks(false);
  await dc.waitFor(() => dc.sockets >= 6, 20_000);
  await say();
  t.equal(rows(home, 'select id from inbound').length, n, 'every message once');
  t.same(dc.sent.map((s) => s.content), Array.from({ length: n }, (_, i) => `echo: m${i}`));
});

t.test('SIGKILL while receiving: the restart resumes the saved session, Discord replays, each message taken once', async (t) => {
  const f = await fixture(t);
  const { dc, home, llm } = f;
  await up(f);
  dc.message({ from: OWNER, text: 'm0' });
  await dc.waitFor(() => rows<{ state: string }>(home, 'select state from outbound')[0]?.state === 'sent');
  f.gw.child.kill('SIGKILL');
  await f.gw.exited;
  for (const i of [1, 2, 3]) dc.message({ from: OWNER, text: `m${i}` });
  // The replay also hands over what was taken before the kill (as when the saved seq lags).
  dc.replayAll = true;
  await f.restart();
  await dc.waitFor(() => rows(home, `select id from inbound where state = 'done'`).length === 4 && rows(home, `select id from outbound where state != 'sent'`).length === 0, 30_000);
  await new Promise((r) => setTimeout(r, 500));
  t.ok(dc.resumes >= 1, 'the restart resumed');
  t.same(rows<{ text: string }>(home, 'select text from inbound order by id').map((r) => r.text), ['m0', 'm1', 'm2', 'm3'], 'four messages, none lost, none twice');
  t.equal(new Set(dc.sent.map((s) => s.content)).size, dc.sent.length, 'no reply twice');
  t.equal(llm.requests.length, rows(home, `select id from outbound`).length);
});

t.test('SIGKILL right after a reply was sent, before it was marked: not sent twice', async (t) => {
  const f = await fixture(t, { env: { PINCLAW_CRASH_AT: 'after-send' } });
  await up(f);
  f.dc.message({ from: OWNER, text: 'once please' });
  await f.gw.exited;
  t.equal(f.dc.sent.length, 1, 'the reply went out, then the process died');
  t.match(rows(f.home, 'select state from outbound'), [{ state: 'pending' }]);
  await f.restart({ PINCLAW_CRASH_AT: '' });
  await f.dc.waitFor(() => rows<{ state: string }>(f.home, 'select state from outbound')[0]!.state === 'sent');
  t.equal(f.dc.sent.length, 1, 'the recorded message id: nothing sent again');
});

t.test('an attachment over the limit is refused with a clear message; one within it is saved', async (t) => {
  const f = await fixture(t, { discord: { maxFileBytes: 1000 } });
  const { dc, home } = f;
  await up(f);
  dc.message({ from: OWNER, text: 'two files', attachments: [{ filename: 'big.txt', size: 5000, contentType: 'text/plain' }, { filename: 'small.txt', size: 5, contentType: 'text/plain', bytes: Buffer.from('hello') }] });
  await dc.waitFor(() => dc.sent.length === 2);
  t.ok(dc.sent.some((s) => s.content === 'big.txt is 5000 bytes, more than the 1000 bytes I accept (channels.discord.maxFileBytes); it was not saved.'));
  const day = readdirSync(join(home, 'workspace', 'inbox', 'discord'))[0]!;
  const saved = readdirSync(join(home, 'workspace', 'inbox', 'discord', day));
  t.equal(saved.length, 1);
  t.match(saved[0], /small\.txt$/);
  t.equal(readFileSync(join(home, 'workspace', 'inbox', 'discord', day, saved[0]!), 'utf8'), 'hello');
});

t.test('a wrong token: a clear error at start, the channel stays down, the gateway and http go on', async (t) => {
  const f = await fixture(t, { discord: { token: 'wrong' }, env: { PINCLAW_GATEWAY_TOKEN: 'tok' }, wait: false });
  await f.gw.waitFor(/discord: Discord refused the bot token \(HTTP 401 from GET \/gateway\/bot\): check channels\.discord\.token/);
  t.equal((await fetch(`${f.gw.url}/healthz`)).status, 200);
  const metrics = await (await fetch(`${f.gw.url}/metrics`, { headers: { authorization: 'Bearer tok' } })).text();
  t.match(metrics, /pinclaw_channel_up\{channel="discord"\} 0/);
  t.match(metrics, /pinclaw_channel_up\{channel="http"\} 1/);
  const doctor = await runPinclawAsync(['doctor'], { env: f.env });
  t.match(doctor.stdout, /channels.*discord down \(Discord refused the bot token/);
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(f.dc.calls.filter((c) => c.path === '/gateway/bot').length, 1, 'not retried');
});

t.test('MESSAGE_CONTENT not enabled in the portal: close 4014 named, the channel stays down', async (t) => {
  const f = await fixture(t, { stand: (dc) => (dc.contentIntentAllowed = false), wait: false });
  await f.gw.waitFor(/enable MESSAGE_CONTENT \("Message Content Intent"\) under Privileged Gateway Intents/);
  await f.dc.waitFor(() => statusOf(f.home) === 'down' && /MESSAGE_CONTENT/.test(detailOf(f.home) ?? ''));
  t.equal(f.dc.identifies, 1, 'not retried');
});

t.test('a mention with empty content: the owner is told once that MESSAGE_CONTENT is off', async (t) => {
  const f = await fixture(t);
  await up(f);
  f.dc.message({ from: OWNER, text: '', guild: GUILD, channel: CHANNEL });
  f.dc.message({ from: OWNER, text: '', guild: GUILD, channel: CHANNEL });
  await f.gw.waitFor(/discord: a message that mentions the bot came with no text: the Message Content intent is off/);
  await f.dc.waitFor(() => statusOf(f.home) === 'degraded');
  await new Promise((r) => setTimeout(r, 300));
  t.equal(f.gw.stderr().match(/^error: discord: a message that mentions the bot came with no text/gm)?.length, 1, 'said once');
});

t.test('the identify budget spent: no identify until Discord resets it, and the state says so', async (t) => {
  const f = await fixture(t, { stand: (dc) => (dc.identifyRemaining = 0), wait: false });
  await f.gw.waitFor(/discord: the daily identify budget is spent \(1000 sessions\); waiting 2 s for Discord to reset it/);
  await f.dc.waitFor(() => f.dc.calls.filter((c) => c.path === '/gateway/bot').length >= 2);
  t.equal(f.dc.identifies, 0, 'no identify while the budget is spent');
  t.match(detailOf(f.home), /identify budget is spent/);
  f.dc.identifyRemaining = 5;
  await up(f);
  t.equal(f.dc.identifies, 1, 'identified once it was reset');
});

t.test('Discord unreachable: retried with a backoff, the state shows why', async (t) => {
  const port = await freePort();
  const f = await fixture(t, { discord: { apiBaseUrl: `http://127.0.0.1:${port}/api/v10` }, wait: false });
  await f.gw.waitFor(/discord: Discord GET \/gateway\/bot: http:\/\/127\.0\.0\.1:\d+\/api\/v10 cannot be reached \(ECONNREFUSED\); reconnecting in/);
  await f.gw.waitFor(/cannot be reached \(ECONNREFUSED\); reconnecting in[\s\S]*cannot be reached \(ECONNREFUSED\); reconnecting in/, 10_000);
  t.equal(statusOf(f.home), 'down');
  t.match(detailOf(f.home), /cannot be reached \(ECONNREFUSED\)/);
});

t.test('the idle gateway without channels.discord holds none of the Discord code', async (t) => {
  const main = readFileSync(bundle, 'utf8');
  t.notOk(main.includes('resume_gateway_url'), 'the gateway protocol is not in the main bundle');
  const chunk = join(bundle, '..', 'lazy', 'discord.cjs');
  t.ok(existsSync(chunk) && readFileSync(chunk, 'utf8').includes('resume_gateway_url'), 'it is in the discord chunk');
  void BOT;
});

t.test('config: an allow-list entry that is not a user id is refused at load, naming the key and the way out', async (t) => {
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ channels: { discord: { token: 'x', allowFrom: ['ada#1234'] } } }));
  const r = await runPinclawAsync(['config', 'validate'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(r.code, 78, 'EX_CONFIG');
  t.match(r.stdout + r.stderr, /channels\.discord\.allowFrom\[0\]: expected a Discord user id \(17 to 20 digits\), found "ada#1234"[\s\S]*Copy User ID/);
});
