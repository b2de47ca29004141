// The Matrix channel end to end: the gateway as a real process (the bundle), a real SQLite file, the
// real Anthropic SDK against its stand-in, and a stand-in homeserver (test/support/matrix-server.ts)
// speaking the client-server API: /sync long polls with next_batch tokens, sends deduplicated by
// transaction id, typing, invites, 429 with retry_after_ms, a refused token, encrypted rooms, and
// SIGKILL while receiving and while sending.
import t, { type Test } from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { textReply, type AnthropicStep } from './support/anthropic-server.js';
import { dbRows, startChannelGateway, type ChannelGateway } from './support/channel-gateway.js';
import { startTelegramApi } from './support/telegram-api.js';
import { BOT, startMatrix, TOKEN, type MatrixStandIn } from './support/matrix-server.js';
import { bundle, cleanEnv, runPinclawAsync, tempDir } from './support/proc.js';
import type { Step } from './support/stand-in.js';

const OWNER = '@ada:hs.test';
const ALICE = '@alice:hs.test';
const STRANGER = '@bob:elsewhere.test';
const DM = '!dm:hs.test';
const GROUP = '!group:hs.test';

interface Fixture extends ChannelGateway {
  hs: MatrixStandIn;
}

async function fixture(t: Test, o: { matrix?: Record<string, unknown>; channels?: Record<string, unknown>; llm?: Step<AnthropicStep>; env?: Record<string, string>; stand?: (hs: MatrixStandIn) => void; wait?: boolean } = {}): Promise<Fixture> {
  const hs = await startMatrix();
  hs.room(DM, [OWNER]);
  hs.room(GROUP, [OWNER, ALICE]);
  o.stand?.(hs);
  const g = await startChannelGateway(t, {
    config: () => ({ channels: { matrix: { homeserver: hs.url, accessToken: TOKEN, allowFrom: [OWNER], debounceMs: 0, ...o.matrix }, ...o.channels } }),
    llm: o.llm, env: o.env, close: () => hs.close().catch(() => {}),
  });
  const f = Object.assign(g, { hs });
  if (o.wait !== false) await up(f);
  return f;
}

const rows = dbRows;
const channelOf = (home: string) => {
  const raw = rows<{ value: string }>(home, `select value from state where key = 'channels.status'`)[0]?.value;
  return raw ? (JSON.parse(raw) as { channels: { channel: string; state: string; detail: string }[] }).channels.find((c) => c.channel === 'matrix') : undefined;
};
/** up, and past the position-taking first sync: a long poll is open */
const up = async (f: Fixture) =>
  f.hs.waitFor(() => channelOf(f.home)?.state === 'up' && f.hs.syncs.some((s) => s !== '')).catch((err: Error) => {
    throw new Error(`${err.message}; the gateway said:\n${f.gw.stderr()}`);
  });
/**
 * Every recorded reply is sent (and there are `count` of them): one query, so one snapshot. Two (no
 * unsent row, then the count) could see no row at all, then the row the turn recorded in between,
 * still pending; on a busy machine that let a test go on before anything was sent.
 */
const settled = (home: string, count?: number) => {
  const out = rows<{ state: string }>(home, 'select state from outbound');
  return out.every((o) => o.state === 'sent') && (count === undefined || out.length === count);
};

t.test('the owner writes in a DM, the agent answers there: typing, session per room, the event id on the outbound row; history before the first start is not answered', async (t) => {
  const f = await fixture(t, { stand: (hs) => void hs.message(DM, OWNER, 'written before pinclaw came') });
  const { hs, home, llm } = f;
  t.same(hs.syncs[0], '', 'the first sync has no since token');
  t.ok(hs.calls.find((c) => c.path.endsWith('/sync')), 'synced');
  hs.message(DM, OWNER, 'hello there');
  await hs.waitFor(() => hs.sent.length === 1);
  t.equal(hs.sent[0]!.body, 'echo: hello there');
  t.equal(hs.sent[0]!.room, DM);
  t.same(hs.sent[0]!.content.msgtype, 'm.text');
  t.notOk(hs.sent[0]!.content['m.relates_to'], 'a DM answer is no reply-to');
  t.ok(hs.calls.some((c) => c.method === 'PUT' && c.path === `/_matrix/client/v3/rooms/${encodeURIComponent(DM)}/typing/${encodeURIComponent(BOT)}` && c.body.typing === true), 'typing was shown');
  t.match(rows(home, 'select session_key, sender, text from inbound'), [{ session_key: `matrix:${DM}`, sender: OWNER, text: 'hello there' }], 'the message from before the first start was not taken');
  await hs.waitFor(() => settled(home, 1));
  const out = rows<{ id: number; created_at: number; delivered_parts: string }>(home, 'select id, created_at, delivered_parts from outbound')[0]!;
  t.equal(out.delivered_parts, JSON.stringify([hs.sent[0]!.eventId]));
  t.equal(hs.sent[0]!.txnId, `pinclaw.${out.id}.${out.created_at}.0`, 'the transaction id names the outbound row and the part');
  t.equal(llm.requests.length, 1);
  t.ok(rows<{ value: string }>(home, `select value from state where key = 'matrix.since'`)[0]?.value.startsWith('s'), 'the since token is kept in SQLite');
});

t.test('in a room of more than two only a mention is answered, as a reply', async (t) => {
  const f = await fixture(t);
  const { hs, home } = f;
  hs.message(GROUP, OWNER, 'just chatting with alice');
  const m1 = hs.message(GROUP, OWNER, 'what is up?', { mentions: [BOT], formatted: `<a href="https://matrix.to/#/${BOT}">Pinclaw</a>: what is up?` });
  // The second mention after the first answer: two mentions of one sync are one burst, one turn
  // (as on every channel), and whether the stand-in's long poll returns them together is timing.
  await hs.waitFor(() => hs.sent.length === 1);
  hs.message(GROUP, OWNER, 'Pinclaw: and you?');
  await hs.waitFor(() => hs.sent.length === 2);
  t.same(hs.sent.map((s) => s.body).sort(), ['echo: and you?', 'echo: what is up?']);
  t.same(hs.sent.find((s) => s.body === 'echo: what is up?')!.content['m.relates_to'], { 'm.in_reply_to': { event_id: m1 } });
  t.same(rows<{ text: string }>(home, 'select text from inbound order by id').map((r) => r.text), ['what is up?', 'and you?'], 'no row for the message without a mention');
});

t.test('a stranger: pairing code in a room of two, silence in a bigger room, their invite not joined; the owner\'s invite joined; approved, the stranger is answered', async (t) => {
  const f = await fixture(t);
  const { hs, llm, env } = f;
  const STRANGER_DM = '!strangerdm:hs.test';
  hs.room(STRANGER_DM, [STRANGER]);
  hs.invite('!spam:elsewhere.test', STRANGER);
  hs.invite('!owners:hs.test', OWNER);
  await hs.waitFor(() => hs.isJoined('!owners:hs.test'));
  hs.message(GROUP, STRANGER, `${BOT} hi`, { mentions: [BOT] });
  hs.message(STRANGER_DM, STRANGER, 'who are you?');
  await hs.waitFor(() => hs.sent.length === 1);
  const code = /pairing approve ([A-Z0-9]+)/.exec(hs.sent[0]!.body)?.[1];
  t.ok(code, 'the prompt carries the code');
  t.equal(hs.sent[0]!.room, STRANGER_DM);
  await new Promise((r) => setTimeout(r, 500));
  t.equal(llm.requests.length, 0, 'a stranger starts no agent turn');
  t.notOk(hs.isJoined('!spam:elsewhere.test'), 'a stranger\'s invite is not joined');
  t.equal(hs.calls.filter((c) => c.path.startsWith('/_matrix/client/v3/join/')).length, 1, 'one join: the owner\'s room');
  const ok = await runPinclawAsync(['pairing', 'approve', code!], { env });
  t.equal(ok.code, 0, ok.stderr);
  hs.message(STRANGER_DM, STRANGER, 'now?');
  hs.message('!owners:hs.test', OWNER, 'in my new room');
  await hs.waitFor(() => hs.sent.length === 3);
  t.same(hs.sent.slice(1).map((s) => `${s.room} ${s.body}`).sort(), [`!owners:hs.test echo: in my new room`, `${STRANGER_DM} echo: now?`]);
});

t.test('an encrypted room gets one plain notice, not silence, and never again (also across a restart)', async (t) => {
  const f = await fixture(t);
  const { hs, home, llm } = f;
  const SECRET = '!secret:hs.test';
  hs.invite(SECRET, OWNER, { encrypted: true });
  await hs.waitFor(() => hs.sent.length === 1);
  t.equal(hs.sent[0]!.room, SECRET);
  t.match(hs.sent[0]!.body, /end-to-end encrypted; pinclaw cannot read it\. Use an unencrypted room/);
  hs.encryptedMessage(SECRET, OWNER);
  hs.encryptedMessage(SECRET, OWNER);
  // A room that turned encryption on later, noticed by its encrypted message.
  hs.encryptedMessage(DM, OWNER);
  await hs.waitFor(() => hs.sent.length === 2);
  t.equal(hs.sent[1]!.room, DM);
  await hs.waitFor(() => settled(home));
  f.gw.child.kill('SIGKILL');
  await f.gw.exited;
  hs.encryptedMessage(SECRET, OWNER);
  await f.restart();
  await up(f);
  hs.message(DM, OWNER, 'plain again');
  await hs.waitFor(() => hs.sent.length === 3);
  t.equal(hs.sent[2]!.body, 'echo: plain again');
  t.equal(hs.sent.filter((s) => /encrypted/.test(s.body)).length, 2, 'one notice per room');
  t.equal(llm.requests.length, 1, 'no turn for ciphertext');
  t.same(rows<{ room_id: string }>(home, 'select room_id from matrix_rooms order by room_id').map((r) => r.room_id), [DM, SECRET]);
});

t.test('a long reply is cut at 10000 characters between paragraphs; 429s are waited out for retry_after_ms', async (t) => {
  const para = (c: string) => c.repeat(4500);
  const long = [para('a'), para('b'), para('c'), para('d')].join('\n\n');
  const f = await fixture(t, { llm: () => textReply(long) });
  const { hs, home, llm } = f;
  hs.limit(2, 300);
  hs.message(DM, OWNER, 'write a lot');
  // What happened, said when it goes wrong: the rows as the gateway left them, what the stand-in
  // received and the gateway's log.
  const story = () => `outbound ${JSON.stringify(rows(home, 'select id, kind, state, chat_id, length(text) as chars, delivered_parts, attempts, last_error from outbound'))}, inbound ${JSON.stringify(rows(home, 'select id, state, text from inbound'))}, sent ${JSON.stringify(hs.sent.map((s) => ({ txnId: s.txnId, chars: s.body.length })))}, calls ${JSON.stringify(hs.calls.filter((c) => !c.path.endsWith('/sync')).map((c) => `${c.method} ${c.path} ${c.status}`))}, model requests ${llm.requests.length}; the gateway said:\n${f.gw.stderr()}`;
  await hs.waitFor(() => settled(home, 1), 30_000).catch((err: Error) => {
    throw new Error(`${err.message}; ${story()}`);
  });
  if (hs.sent.length !== 2) t.comment(story());
  t.same(hs.sent.map((s) => s.body), [`${para('a')}\n\n${para('b')}`, `${para('c')}\n\n${para('d')}`]);
  t.ok(hs.sent.every((s) => s.body.length <= 10_000));
  t.same(hs.sent.map((s) => s.txnId.split('.').at(-1)), ['0', '1'], 'one transaction per part');
  t.equal(hs.calls.filter((c) => c.status === 429).length, 2, 'two 429s, waited out');
  t.same(rows<{ attempts: number }>(home, 'select attempts from outbound'), [{ attempts: 0 }], 'not a failed delivery');
});

t.test('SIGKILL while receiving a sync answer: the restart asks from the same token, each message taken once', async (t) => {
  const f = await fixture(t);
  const { hs, home, llm } = f;
  hs.message(DM, OWNER, 'm0');
  await hs.waitFor(() => hs.sent.length === 1 && settled(home));
  hs.stallNextSync();
  hs.message(DM, OWNER, 'm1');
  hs.message(DM, OWNER, 'm2');
  await hs.waitFor(() => hs.stalled === 1);
  const heldSince = hs.syncs.at(-1)!;
  f.gw.child.kill('SIGKILL');
  await f.gw.exited;
  hs.message(DM, OWNER, 'm3');
  const before = hs.syncs.length;
  await f.restart();
  await hs.waitFor(() => rows(home, `select id from inbound where state = 'done'`).length === 4 && settled(home), 30_000).catch((err: Error) => {
    throw new Error(`${err.message}; inbound ${JSON.stringify(rows(home, 'select text, state from inbound'))}, sent ${JSON.stringify(hs.sent.map((s) => s.body))}, syncs ${JSON.stringify(hs.syncs)}; the gateway said:\n${f.gw.stderr()}`);
  });
  t.equal(hs.syncs[before], heldSince, 'the restart syncs from the token of the answer it was killed in');
  await new Promise((r) => setTimeout(r, 500));
  t.same(rows<{ text: string }>(home, 'select text from inbound order by id').map((r) => r.text), ['m0', 'm1', 'm2', 'm3'], 'four messages, none lost, none twice');
  // m1 to m3 waited together and may be one turn: what counts is that no reply went twice.
  t.equal(new Set(hs.sent.map((s) => s.body)).size, hs.sent.length, 'no reply twice');
  t.equal(hs.sent.length, rows(home, 'select id from outbound').length, 'each recorded reply sent once');
  t.equal(llm.requests.length, rows(home, 'select id from outbound').length);
});

t.test('SIGKILL while a reply is sent (the homeserver stored it, the answer never came): the retry is the same transaction, the room gets it once', async (t) => {
  const f = await fixture(t);
  const { hs, home } = f;
  hs.stallNextSend();
  hs.message(DM, OWNER, 'once please');
  await hs.waitFor(() => hs.stalled === 1);
  f.gw.child.kill('SIGKILL');
  await f.gw.exited;
  t.match(rows(home, 'select state, delivered_parts from outbound'), [{ state: 'pending', delivered_parts: null }], 'no event id was recorded');
  await f.restart();
  await hs.waitFor(() => settled(home));
  const sends = hs.calls.filter((c) => c.method === 'PUT' && c.path.includes('/send/m.room.message/'));
  t.equal(sends.length, 2, 'sent again after the restart');
  t.equal(sends[0]!.path, sends[1]!.path, 'with the same transaction id');
  t.equal(hs.sent.length, 1, 'the homeserver stored it once');
  t.match(rows(home, 'select delivered_parts from outbound'), [{ delivered_parts: JSON.stringify([hs.sent[0]!.eventId]) }], 'the first event\'s id, as the homeserver answered the repeat');
});

t.test('SIGKILL right after a reply was sent, before it was marked: not sent twice', async (t) => {
  const f = await fixture(t, { env: { PINCLAW_CRASH_AT: 'after-send' } });
  const { hs, home } = f;
  hs.message(DM, OWNER, 'once please');
  await f.gw.exited;
  t.equal(hs.sent.length, 1, 'the reply went out, then the process died');
  t.match(rows(home, 'select state from outbound'), [{ state: 'pending' }]);
  await f.restart({ PINCLAW_CRASH_AT: '' });
  await hs.waitFor(() => settled(home));
  t.equal(hs.sent.length, 1, 'the recorded event id: nothing sent again');
});

t.test('a wrong token: a clear error at start, the channel stays down, Telegram and http go on; doctor says why', async (t) => {
  const tg = await startTelegramApi();
  t.teardown(() => tg.close());
  const f = await fixture(t, { matrix: { accessToken: 'wrong' }, channels: { telegram: { token: tg.token, apiBaseUrl: tg.url, allowFrom: ['42'], pollTimeoutSeconds: 2, debounceMs: 0 } }, env: { PINCLAW_GATEWAY_TOKEN: 'tok' }, wait: false });
  const said = new RegExp(`matrix: channels\\.matrix\\.accessToken was refused by ${f.hs.url.replace(/\./g, '\\.')} \\(M_UNKNOWN_TOKEN\\)`);
  await f.gw.waitFor(said);
  t.equal((await fetch(`${f.gw.url}/healthz`)).status, 200);
  const metrics = await (await fetch(`${f.gw.url}/metrics`, { headers: { authorization: 'Bearer tok' } })).text();
  t.match(metrics, /pinclaw_channel_up\{channel="matrix"\} 0/);
  t.match(metrics, /pinclaw_channel_up\{channel="http"\} 1/);
  tg.userMessage({ from: { id: 42 }, text: 'still there?' });
  await tg.waitFor(() => tg.sent.length === 1, 20_000);
  t.equal(tg.sent[0]!.text, 'echo: still there?', 'Telegram answers');
  const doctor = await runPinclawAsync(['doctor'], { env: f.env });
  t.match(doctor.stdout, /channels.*matrix down \(channels\.matrix\.accessToken was refused by/);
  t.match(doctor.stdout, /matrix.*channels\.matrix\.accessToken was refused by/);
  await new Promise((r) => setTimeout(r, 1000));
  t.equal(f.hs.calls.filter((c) => c.path.endsWith('/account/whoami')).length, 2, 'not retried: the gateway\'s one and doctor\'s one');
  t.equal(f.hs.calls.filter((c) => c.path.endsWith('/sync')).length, 0);
});

t.test('doctor with a working homeserver names the account', async (t) => {
  const f = await fixture(t);
  const doctor = await runPinclawAsync(['doctor'], { env: f.env });
  t.match(doctor.stdout, new RegExp(`matrix.*answers; the token is ${BOT.replace(/\./g, '\\.')}'s`));
  t.ok(f.hs.calls.some((c) => c.path === '/_matrix/client/versions'));
});

t.test('a homeserver that is down: retried with a backoff, the state shows why', async (t) => {
  const f = await fixture(t, { wait: false, stand: () => {} });
  await f.hs.close();
  f.gw.child.kill('SIGKILL');
  await f.gw.exited;
  await f.restart();
  await f.gw.waitFor(/matrix: Matrix GET \/account\/whoami: http:\/\/127\.0\.0\.1:\d+ cannot be reached \(ECONNREFUSED\); asking again in/);
  await f.hs.waitFor(() => channelOf(f.home)?.state === 'down' && /ECONNREFUSED/.test(channelOf(f.home)?.detail ?? ''));
  t.pass('down, with the reason');
});

t.test('the idle gateway without channels.matrix holds none of the Matrix code', async (t) => {
  const main = readFileSync(bundle, 'utf8');
  t.notOk(main.includes('m.room.encrypted'), 'the channel is not in the main bundle');
  const chunk = join(bundle, '..', 'lazy', 'matrix.cjs');
  t.ok(existsSync(chunk) && readFileSync(chunk, 'utf8').includes('m.room.encrypted'), 'it is in the matrix chunk');
});

t.test('config: a display name in allowFrom or a homeserver without a token is refused at load, naming the key', async (t) => {
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ channels: { matrix: { homeserver: 'https://matrix.example.org', allowFrom: ['ada'] } } }));
  const r = await runPinclawAsync(['config', 'validate'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(r.code, 78, 'EX_CONFIG');
  t.match(r.stdout + r.stderr, /channels\.matrix\.accessToken: expected the bot's access token, found nothing/);
  t.match(r.stdout + r.stderr, /channels\.matrix\.allowFrom\[0\]: expected a user id, @user:server, found "ada"[\s\S]*@ada:example\.org/);
});
