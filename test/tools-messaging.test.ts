// send_message and spawn through the real runtime: a SQLite file in a temp dir, the conductor with
// capturing channel adapters, the registry with its policy and audit. The model is the scripted
// provider, and in one test the real Anthropic SDK against the stand-in server.
import t, { type Test } from 'tap';
import type { Provider, ProviderRequest, ProviderResponse } from '../src/agent/types.js';
import { defaults, type PinclawConfig } from '../src/config/schema.js';
import type { ChannelAdapter } from '../src/conductor/conductor.js';
import { createRuntime } from '../src/setup/runtime.js';
import { resolvePaths } from '../src/paths.js';
import { flushAuditSoon, queryAudit } from '../src/store/audit.js';
import { openDatabase, type Db } from '../src/store/db.js';
import type { OutboundRow } from '../src/store/queue.js';
import { loadSession } from '../src/store/sessions.js';
import { childTools } from '../src/tools/spawn.js';
import { startAnthropicServer, textReply, toolUseReply } from './support/anthropic-server.js';
import { tempDir } from './support/proc.js';
import { reply, scriptedProvider, type Step } from './support/scripted-provider.js';

interface FixtureOptions {
  provider?: Provider;
  env?: NodeJS.ProcessEnv;
  configure?: (c: PinclawConfig) => void;
  /** a channel whose send fails, to keep rows pending */
  offline?: string[];
  home?: string;
}

function fixture(t: Test, o: FixtureOptions = {}) {
  const home = o.home ?? tempDir();
  const paths = resolvePaths({ home }, {});
  const db = openDatabase(paths.database);
  const config = defaults();
  config.conductor.maxAttempts = 1;
  o.configure?.(config);
  const sent: OutboundRow[] = [];
  const adapter = (name: string): ChannelAdapter => ({
    name,
    debounceMs: 0,
    send: async (row) => {
      if (o.offline?.includes(name)) throw new Error(`${name} is offline`);
      sent.push(row);
    },
  });
  const rt = createRuntime({ db, config, paths, env: o.env ?? {}, channels: [adapter('cli'), adapter('tg')], provider: o.provider });
  t.teardown(async () => {
    await rt.conductor.stop(2000);
    db.close();
  });
  /** One message through the queue; resolves with the delivered reply. */
  const ask = async (channel: string, chatId: string, text: string) => {
    const row = rt.conductor.submit({ sessionKey: `${channel}:${chatId}`, channel, chatId, sender: 'owner', text });
    return rt.conductor.delivered(row.id);
  };
  rt.conductor.start();
  return { home, db, config, rt, sent, ask };
}

const toolUse = (name: string, input: unknown, id = `call_${name}`) => ({ type: 'tool_use' as const, id, name, input });
/** The tool results the model was given in a request (the last user message). */
const resultsIn = (req: ProviderRequest) => req.messages.at(-1)!.content.filter((b) => b.type === 'tool_result');
const sentTo = (sent: OutboundRow[], channel: string, chat: string) => sent.filter((o) => o.channel === channel && o.chat_id === chat).map((o) => o.text);
const outboundRows = (db: Db) => db.prepare('select id, inbound_id, session_key, channel, chat_id, text, kind, state from outbound order by id').all() as Partial<OutboundRow>[];

t.test('send_message to the own chat: recorded, delivered before the reply, in order', async (t) => {
  const provider = scriptedProvider([reply([toolUse('send_message', { text: 'working on it' })]), reply('done')]);
  const { ask, sent, db } = fixture(t, { provider });
  const out = await ask('tg', '42', 'check the greenhouse');
  t.equal(out.text, 'done');
  t.same(sentTo(sent, 'tg', '42'), ['working on it', 'done']);
  t.same(resultsIn(provider.requests[1]!), [{ type: 'tool_result', toolUseId: 'call_send_message', content: 'sent to tg:42 (message id 1)' }]);
  t.match(outboundRows(db), [
    { id: 1, inbound_id: null, session_key: 'tg:42', channel: 'tg', chat_id: '42', text: 'working on it', kind: 'reply', state: 'sent' },
    { id: 2, inbound_id: 1, text: 'done', state: 'sent' },
  ]);
});

t.test('another chat: refused from a chat that is not a control chat, naming the rule', async (t) => {
  const provider = scriptedProvider([reply([toolUse('send_message', { channel: 'tg', chat: '99', text: 'psst' })]), reply('could not')]);
  const { ask, sent, db } = fixture(t, { provider });
  await ask('tg', '42', 'tell 99');
  t.same(resultsIn(provider.requests[1]!), [{
    type: 'tool_result', toolUseId: 'call_send_message', isError: true,
    content: 'send_message refused: send_message to another chat (tg:99) is allowed only from a control chat, and tg:42 is not one (tools.controlChats)',
  }]);
  t.same(sentTo(sent, 'tg', '99'), [], 'nothing reached chat 99');
  t.match(queryAudit(db, { tool: 'send_message' }), [{ session_key: 'tg:42', outcome: 'denied', rule: 'tools.controlChats' }]);
  t.equal(outboundRows(db).length, 1, 'only the reply was recorded');
});

t.test('another chat from a control chat (cli:local, the default) is delivered there', async (t) => {
  const provider = scriptedProvider([reply([toolUse('send_message', { channel: 'tg', chat: '99', text: 'the door is open' })]), reply('told them')]);
  const { ask, sent, db } = fixture(t, { provider });
  const out = await ask('cli', 'local', 'tell 99 the door is open');
  t.equal(out.text, 'told them');
  t.same(sentTo(sent, 'tg', '99'), ['the door is open']);
  t.same(sentTo(sent, 'cli', 'local'), ['told them']);
  t.match(resultsIn(provider.requests[1]!), [{ content: 'sent to tg:99 (message id 1)' }]);
  t.match(queryAudit(db, { tool: 'send_message' }), [{ session_key: 'cli:local', outcome: 'ok', rule: 'tools.profile standard' }]);
  t.match(outboundRows(db)[0], { session_key: 'cli:local', channel: 'tg', chat_id: '99', state: 'sent' }, 'the row belongs to the sender\'s session');
});

t.test('an unknown channel, half a target, and too long a text are errors the model reads', async (t) => {
  const provider = scriptedProvider([
    reply([
      toolUse('send_message', { channel: 'matrix', chat: '!room', text: 'hi' }, 'a'),
      toolUse('send_message', { chat: '99', text: 'hi' }, 'b'),
      toolUse('send_message', { text: 'x'.repeat(60) }, 'c'),
    ]),
    reply('ok'),
  ]);
  const { ask, rt, db } = fixture(t, { provider, configure: (c) => (c.agent.maxMessageChars = 50) });
  await ask('cli', 'local', 'try');
  t.same(resultsIn(provider.requests[1]!).map((b) => (b as { content: string }).content), [
    "send_message to matrix:!room failed: unknown channel 'matrix'; channels in this process: cli, tg",
    'send_message: give both channel and chat to reach another chat, or neither for this chat',
    'send_message: 60 characters is more than the limit of 50 (agent.maxMessageChars)',
  ]);
  t.throws(() => rt.conductor.send({ channel: 'matrix', chatId: 'x', text: 'hi' }), { message: "unknown channel 'matrix'; channels in this process: cli, tg" });
  t.throws(() => rt.conductor.send({ channel: 'tg', chatId: '1', text: 'y'.repeat(51) }), { message: 'message refused: 51 characters is more than the limit of 50 (agent.maxMessageChars)' });
  t.equal(outboundRows(db).length, 1, 'only the reply');
});

t.test('the outbound row is committed before delivery and survives a process that could not deliver it', async (t) => {
  const home = tempDir();
  // First process: the channel is down, so the message stays pending (as after a crash before sending).
  const first = fixture(t, { home, offline: ['tg'], provider: scriptedProvider([]) });
  const row = first.rt.conductor.send({ channel: 'tg', chatId: '7', text: 'water the plants', sessionKey: 'cron' });
  t.match(row, { id: 1, state: 'pending', inbound_id: null, session_key: 'cron', kind: 'reply' });
  await first.rt.conductor.stop(1000);
  t.match(outboundRows(first.db), [{ id: 1, state: 'pending' }]);

  // Second process on the same file: its delivery pass finds the row; at send time it is committed.
  const paths = resolvePaths({ home }, {});
  const seenAtSend: unknown[] = [];
  const db = openDatabase(paths.database);
  const config = defaults();
  const reader = openDatabase(paths.database, { readonly: true });
  const tg: ChannelAdapter = {
    name: 'tg', debounceMs: 0,
    send: async (o) => void seenAtSend.push({ o: o.text, row: reader.prepare('select state from outbound where id = ?').get(o.id) }),
  };
  const rt = createRuntime({ db, config, paths, env: {}, channels: [tg], provider: scriptedProvider([]) });
  const delivered = new Promise((resolve) => rt.bus.on('reply', resolve));
  rt.conductor.start();
  t.match(await delivered, { outboundId: 1, inboundId: null, channel: 'tg', text: 'water the plants' });
  t.same(seenAtSend, [{ o: 'water the plants', row: { state: 'pending' } }], 'another connection saw the row before it was sent');
  t.match(reader.prepare('select state from outbound where id = 1').get(), { state: 'sent' });
  // The same idempotency key records one message, whatever the retries.
  const a = rt.conductor.send({ channel: 'tg', chatId: '7', text: 'once', idempotencyKey: 'job:1' });
  const b = rt.conductor.send({ channel: 'tg', chatId: '7', text: 'once', idempotencyKey: 'job:1' });
  t.equal(a.id, b.id);
  await rt.conductor.stop(1000);
  reader.close();
  db.close();
});

t.test('send_message outside a conductor says it cannot deliver', async (t) => {
  const { rt } = fixture(t, { provider: scriptedProvider([]) });
  t.ok(rt.tools.get('send_message'), 'registered');
  // `pinclaw tool run` builds the tools without a conductor: same tool, no send capability.
  const { sendMessageTool } = await import('../src/tools/send-message.js');
  const r = await sendMessageTool({ maxChars: 100 }).execute({ text: 'hi' }, { sessionKey: 's', channel: 'cli', chatId: 'local' });
  t.same(r, { content: 'send_message: no conductor runs in this process to deliver to cli:local (it works in a turn of pinclaw gateway or pinclaw agent)', isError: true });
});

// ---- spawn ----

const isChild = (req: ProviderRequest) => req.system.startsWith('You are a sub-agent');
const toolNames = (req: ProviderRequest) => req.tools.map((x) => x.name);

type ChildAnswer = (req: ProviderRequest, n: number) => ProviderResponse | Promise<ProviderResponse>;
/** Parent and child share the provider; `child` answers the sub-agent's calls (the nth), `parent` the rest. */
function twoModels(parent: Step[], child: ProviderResponse | ChildAnswer) {
  let n = 0;
  return scriptedProvider([], async (req) => {
    if (isChild(req)) return typeof child === 'function' ? child(req, ++n) : child;
    const step = parent.shift();
    if (!step) throw new Error('parent script ended');
    return typeof step === 'function' ? step(req) : step;
  });
}

const full = (c: PinclawConfig) => (c.tools.profile = 'full');

t.test('spawn: the child works in its own session with fewer tools; its answer is the result', async (t) => {
  const provider = twoModels([reply([toolUse('spawn', { task: 'How many sensors are there? Answer with a number.' })]), reply('There are 3.')], reply('3', 'end_turn', 200));
  const { ask, db } = fixture(t, { provider, configure: full });
  const out = await ask('tg', '42', 'how many sensors?');
  t.equal(out.text, 'There are 3.');
  const [parent1, child, parent2] = provider.requests;
  t.ok(toolNames(parent1!).includes('spawn') && toolNames(parent1!).includes('exec'), 'the parent (profile full) has exec and spawn');
  t.ok(isChild(child!));
  t.notOk(toolNames(child!).includes('exec'), 'the child is not offered exec');
  t.notOk(toolNames(child!).includes('spawn'), 'the child is not offered spawn');
  t.ok(toolNames(child!).includes('current_time') && toolNames(child!).includes('send_message'), 'the child has the other tools');
  t.same(child!.messages, [{ role: 'user', content: [{ type: 'text', text: 'How many sensors are there? Answer with a number.' }] }], 'the child sees the task only');
  t.same(resultsIn(parent2!), [{ type: 'tool_result', toolUseId: 'call_spawn', content: 'sub-agent tg:42/spawn/1 finished (1 turn, 210 tokens):\n\n3' }]);
  t.same(loadSession(db, 'tg:42/spawn/1').messages.map((m) => m.role), ['user', 'assistant'], 'the child session is stored for inspection');
  t.match(queryAudit(db, { tool: 'spawn' }), [{ session_key: 'tg:42', outcome: 'ok' }]);
});

t.test('spawn: the child is lent the conductor\'s send through its call context; its send_message reaches the chat', async (t) => {
  // The child's first call sends, its second answers; the parent then answers the owner.
  const child: ChildAnswer = (_req, n) => (n === 1 ? reply([toolUse('send_message', { text: 'halfway there' }, 'child_send')]) : reply('done', 'end_turn', 50));
  const provider = twoModels([reply([toolUse('spawn', { task: 'Report progress, then finish.' })]), reply('finished')], child);
  const { ask, sent, db } = fixture(t, { provider, configure: full });
  const out = await ask('tg', '42', 'go');
  t.equal(out.text, 'finished');
  t.same(sentTo(sent, 'tg', '42'), ['halfway there', 'finished'], 'the child\'s message was delivered to the parent\'s chat, before the reply');
  t.match(queryAudit(db, { tool: 'send_message' }), [{ session_key: 'tg:42/spawn/1', outcome: 'ok' }]);
});

t.test('spawn: a tool subset, the tools it may never have, tools.spawn.deny', async (t) => {
  const provider = twoModels([
    reply([toolUse('spawn', { task: 'a', tools: ['current_time'] }, 's1')]),
    reply([toolUse('spawn', { task: 'b', tools: ['exec', 'current_time', 'web_fetch'] }, 's2')]),
    reply([toolUse('spawn', { task: 'c' }, 's3')]),
    reply('done'),
  ], (req) => {
    const task = req.messages[0]!.content[0]!;
    return task.type === 'text' && task.text === 'c' && req.messages.length === 1 ? reply([toolUse('exec', { command: 'id' }, 'x')]) : reply('ok');
  });
  const { ask, db } = fixture(t, { provider, configure: (c) => (full(c), (c.tools.spawn.deny = ['web_fetch'])) });
  await ask('tg', '42', 'go');
  const children = provider.requests.filter(isChild);
  t.same(toolNames(children[0]!), ['current_time'], 'only the subset asked for');
  const second = provider.requests.filter((r) => !isChild(r))[2]!;
  t.match(resultsIn(second)[0], { isError: true, content: /^spawn: a sub-agent cannot have exec \(never given to a sub-agent\), web_fetch \(denied by tools\.spawn\.deny\); it may have: current_time, .*send_message/ });
  t.equal(children.length, 3, 'task b never started a child');
  t.notOk(toolNames(children[1]!).includes('web_fetch'), 'tools.spawn.deny leaves web_fetch out');
  t.ok(toolNames(children[1]!).includes('read_file'));
  // The third child asks for exec anyway: refused without running, nothing audited as run.
  t.same(resultsIn(children[2]!), [{ type: 'tool_result', toolUseId: 'x', isError: true, content: `exec is not available to this sub-agent; its tools: ${toolNames(children[1]!).join(', ')}` }]);
  t.same(queryAudit(db, { tool: 'exec' }), []);
  t.same(childTools(['exec', 'spawn', 'current_time'], { deny: [] }), { tools: ['current_time'] });
  t.same(childTools(['current_time'], { deny: [] }, ['nope']), { error: 'spawn: a sub-agent cannot have nope (not a tool allowed in this chat); it may have: current_time' });
});

t.test('spawn: the turn bound stops a child that keeps calling tools; its calls are audited under its session', async (t) => {
  const provider = twoModels([reply([toolUse('spawn', { task: 'loop forever' })]), reply('it did not finish')], (_req, n) => reply([{ type: 'text', text: `round ${n}` }, toolUse('current_time', { timezone: 'UTC' }, `t${n}`)]));
  const { ask, db } = fixture(t, { provider, configure: (c) => (full(c), (c.tools.spawn.maxTurns = 3)) });
  await ask('tg', '42', 'go');
  const children = provider.requests.filter(isChild);
  t.equal(children.length, 3, 'three model calls, no more');
  t.match(JSON.stringify(children[2]!.messages.at(-1)), /You have used all 2 tool-use rounds/, 'the last call was told to answer');
  const parent2 = provider.requests.filter((r) => !isChild(r))[1]!;
  t.same(resultsIn(parent2), [{
    type: 'tool_result', toolUseId: 'call_spawn', isError: true,
    content: 'sub-agent tg:42/spawn/1 was stopped by its turn limit (tools.spawn.maxTurns = 3) before it answered (3 turns, 330 tokens). Its last text:\n\nround 3',
  }]);
  flushAuditSoon(db); // current_time is read-only: its rows are written just after the calls
  const audit = queryAudit(db, { tool: 'current_time' });
  t.same(audit.map((r) => [r.session_key, r.channel, r.chat_id, r.outcome]), [['tg:42/spawn/1', 'tg', '42', 'ok'], ['tg:42/spawn/1', 'tg', '42', 'ok']], 'two calls ran, the third was closed unexecuted');
  const stored = loadSession(db, 'tg:42/spawn/1').messages;
  t.equal(stored.length, 7, 'task, three replies and their results');
  t.match(JSON.stringify(stored.at(-1)), /not executed: the tool-use limit/);
});

t.test('spawn: the token budget stops a child before its next call', async (t) => {
  const provider = twoModels([reply([toolUse('spawn', { task: 'read everything' })]), reply('partial')], (_req, n) => reply([toolUse('current_time', {}, `t${n}`)], undefined, 400));
  const { ask, db } = fixture(t, { provider, configure: (c) => (full(c), (c.tools.spawn.tokenBudget = 1000)) });
  await ask('tg', '42', 'go');
  t.equal(provider.requests.filter(isChild).length, 3, '410 + 410 + 410 passes 1000: no fourth call');
  const parent2 = provider.requests.filter((r) => !isChild(r))[1]!;
  t.match(resultsIn(parent2)[0], { isError: true, content: /^sub-agent tg:42\/spawn\/1 was stopped by its token budget \(tools\.spawn\.tokenBudget = 1000 tokens\) before it answered \(3 turns, 1230 tokens\)\. Its last text:\n\n\(none\)$/ });
  flushAuditSoon(db);
  t.equal(queryAudit(db, { tool: 'current_time' }).filter((r) => r.session_key === 'tg:42/spawn/1').length, 3);
  t.equal(loadSession(db, 'tg:42/spawn/1').messages.length, 7, 'what the child had is stored');
});

t.test('spawn: the time limit, a provider failure, two children side by side', async (t) => {
  let calls = 0;
  const provider = twoModels(
    [reply([toolUse('spawn', { task: 'slow' }, 'a'), toolUse('spawn', { task: 'broken' }, 'b')]), reply('reported')],
    (req) => {
      calls++;
      if (JSON.stringify(req.messages).includes('broken')) throw new Error('503 upstream overloaded');
      return new Promise((_, reject) => req.signal!.addEventListener('abort', () => reject(req.signal!.reason)));
    },
  );
  const { ask } = fixture(t, { provider, configure: (c) => (full(c), (c.tools.spawn.timeoutMs = 300)) });
  const started = Date.now();
  await ask('tg', '42', 'go');
  t.ok(Date.now() - started < 5000, 'ended at the sub-agent time limit, not the registry one');
  t.equal(calls, 2);
  const parent2 = provider.requests.filter((r) => !isChild(r))[1]!;
  const byId = Object.fromEntries(resultsIn(parent2).map((b) => [(b as { toolUseId: string }).toolUseId, b]));
  t.match(byId.a, { isError: true, content: /^sub-agent tg:42\/spawn\/[12] was stopped by its time limit \(tools\.spawn\.timeoutMs = 300 ms\) before it answered \(0 turns, 0 tokens\)/ });
  t.same(byId.b, { type: 'tool_result', toolUseId: 'b', isError: true, content: 'spawn: the sub-agent failed: 503 upstream overloaded' });
});

t.test('spawn is in profile full only', async (t) => {
  const { rt } = fixture(t, { provider: scriptedProvider([]) });
  const listed = rt.tools.list({ sessionKey: 's', channel: 'tg', chatId: '42' });
  t.match(listed.find((l) => l.tool.name === 'spawn')?.decision, { allowed: false, reason: 'not in profile standard; add it to tools.allow to allow it' });
  t.match(listed.find((l) => l.tool.name === 'send_message')?.decision, { allowed: true, rule: 'tools.profile standard' });
});

t.test('spawn with the real Anthropic SDK: the parent calls spawn, the child answers, the parent gets its text', async (t) => {
  const srv = await startAnthropicServer();
  t.teardown(() => srv.close());
  srv.enqueue(
    toolUseReply([{ name: 'spawn', input: { task: 'What is the greenhouse temperature? One sentence.' } }]),
    textReply('The greenhouse is at 21.5 C.', 30),
    textReply('Your greenhouse is at 21.5 C.'),
  );
  const { ask, db } = fixture(t, {
    env: { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: srv.url },
    configure: (c) => ((c.agent.model = 'anthropic/claude-test'), (c.agent.retryBaseMs = 1), full(c)),
  });
  const out = await ask('tg', '42', 'how warm is the greenhouse?');
  t.equal(out.text, 'Your greenhouse is at 21.5 C.');
  t.equal(srv.requests.length, 3);
  const [parent1, child, parent2] = srv.requests.map((r) => r.body);
  const names = (body: { tools?: { name: string }[] }) => (body.tools ?? []).map((x) => x.name);
  t.ok(names(parent1).includes('spawn'), 'the parent is offered spawn');
  t.match(JSON.stringify(child.system), /You are a sub-agent of pinclaw/);
  t.notOk(names(child).includes('exec'), 'the child request carries no exec');
  t.notOk(names(child).includes('spawn'), 'the child request carries no spawn');
  t.ok(names(child).includes('current_time'));
  t.same(child.messages, [{ role: 'user', content: [{ type: 'text', text: 'What is the greenhouse temperature? One sentence.' }] }]);
  const result = parent2.messages.at(-1).content.find((b: { type: string }) => b.type === 'tool_result');
  t.match(JSON.stringify(result.content), /sub-agent tg:42\/spawn\/1 finished \(1 turn, 42 tokens\):\\n\\nThe greenhouse is at 21\.5 C\./);
  t.match(loadSession(db, 'tg:42/spawn/1').messages.at(-1), { role: 'assistant', content: [{ type: 'text', text: 'The greenhouse is at 21.5 C.' }] });
});
