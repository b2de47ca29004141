// The conductor on a real SQLite file with a scripted provider (behind the Provider interface):
// lanes, concurrency, coalescing, failures that keep the message, sessions, limits.
import t from 'tap';
import { join } from 'node:path';
import { ensureWorkspace } from '../src/agent/workspace.js';
import { heuristicCount } from '../src/agent/tokens.js';
import type { Provider, ProviderRequest } from '../src/agent/types.js';
import { defaults } from '../src/config/schema.js';
import { createBus } from '../src/conductor/bus.js';
import { ABORTED_NOTICE, createConductor, type ChannelAdapter } from '../src/conductor/conductor.js';
import { STOPPED_REPLY, STOPPED_TOOL } from '../src/conductor/stopped-turn.js';
import { openDatabase } from '../src/store/db.js';
import { enqueue, type OutboundRow } from '../src/store/queue.js';
import { loadSession, saveSession } from '../src/store/sessions.js';
import { toolSet, type ConfirmRequest, type Tool } from '../src/tools/types.js';
import { createPolicy } from '../src/tools/policy.js';
import { createRegistry } from '../src/tools/registry.js';
import { dbAudit } from '../src/setup/registry.js';
import { reply, scriptedProvider } from './support/scripted-provider.js';
import { tempDir } from './support/proc.js';

function setup(provider: Provider | null, over: { debounceMs?: number; concurrency?: number; maxAttempts?: number; tools?: Tool[] } = {}) {
  const dir = tempDir();
  const db = openDatabase(join(dir, 'pinclaw.db'));
  const workspace = join(dir, 'workspace');
  ensureWorkspace(workspace);
  const config = defaults();
  config.conductor.concurrency = over.concurrency ?? 2;
  config.conductor.maxAttempts = over.maxAttempts ?? 3;
  const sent: OutboundRow[] = [];
  const channel: ChannelAdapter = { name: 'test', debounceMs: over.debounceMs ?? 0, send: async (o) => void sent.push(o) };
  const bus = createBus();
  const conductor = createConductor({
    db, config, workspace, provider: async () => provider ?? { missing: 'configure a provider like this' }, tools: toolSet(over.tools ?? []), countTokens: heuristicCount, bus, channels: [channel],
    retryDelayMs: () => 20,
  });
  t.teardown(async () => {
    await conductor.stop(1000);
    db.close();
  });
  const say = (session: string, text: string, sender = 'u') => conductor.submit({ sessionKey: session, channel: 'test', chatId: session, sender, text });
  return { db, conductor, sent, bus, say, config };
}

const lastUserText = (req: ProviderRequest) => JSON.stringify(req.messages.at(-1)!.content);

t.test('one lane per session, sessions concurrent up to the limit', async (t) => {
  let active = 0;
  let peak = 0;
  const perSession = new Map<string, number>();
  const provider = scriptedProvider([], async (req) => {
    const key = /s\d/.exec(lastUserText(req))![0];
    active++;
    perSession.set(key, (perSession.get(key) ?? 0) + 1);
    peak = Math.max(peak, active);
    t.equal(perSession.get(key), 1, `${key}: never two turns at once`);
    await new Promise((r) => setTimeout(r, 25));
    perSession.set(key, perSession.get(key)! - 1);
    active--;
    return reply(`answer for ${key}`);
  });
  const { conductor, say } = setup(provider, { concurrency: 2 });
  conductor.start();
  const rows = [];
  for (let i = 0; i < 3; i++) for (const s of ['s1', 's2', 's3']) rows.push(say(s, `${s} message ${i}`));
  const outs = await Promise.all(rows.map((r) => conductor.delivered(r.id)));
  t.equal(peak, 2, 'two sessions at once, not three');
  t.equal(outs.length, 9);
});

t.test('messages of one session are answered in order', async (t) => {
  const provider = scriptedProvider([], async (req) => reply(`re: ${/m\d/.exec(lastUserText(req))![0]}`));
  const { conductor, say, sent } = setup(provider);
  conductor.start();
  const rows = ['m1', 'm2', 'm3'].map((m) => say('s', m, `sender-${m}`));
  await conductor.delivered(rows[2]!.id);
  t.same(sent.map((o) => o.text), ['re: m1', 're: m2', 're: m3']);
});

t.test('a burst from one sender within the debounce window becomes one prompt, in order', async (t) => {
  const provider = scriptedProvider([], async () => reply('got it'));
  const { conductor, say, sent } = setup(provider, { debounceMs: 150 });
  conductor.start();
  say('s', 'first');
  await new Promise((r) => setTimeout(r, 40));
  say('s', 'second');
  const last = say('s', 'third');
  await conductor.delivered(last.id);
  t.equal(provider.requests.length, 1, 'one provider call for three messages');
  t.match(lastUserText(provider.requests[0]!), /first\\n\\nsecond\\n\\nthird/);
  t.equal(sent.length, 1);
});

t.test('sessions are saved with tool blocks and resumed; /reset starts over', async (t) => {
  const provider = scriptedProvider([], async (req) => reply(`turn ${req.messages.filter((m) => m.role === 'user').length}`));
  const { conductor, say, db } = setup(provider);
  conductor.start();
  await conductor.delivered(say('s', 'one').id);
  const out = await conductor.delivered(say('s', 'two').id);
  t.equal(out.text, 'turn 2', 'the second turn saw the first');
  t.equal(loadSession(db, 's').messages.length, 4);
  t.equal((await conductor.delivered(say('s', '/reset').id)).text, 'Session reset: the conversation starts fresh.');
  t.equal((await conductor.delivered(say('s', 'three').id)).text, 'turn 1');
});

t.test('a corrupt session row is moved aside, kept, and the user is told', async (t) => {
  const provider = scriptedProvider([], async () => reply('fresh start'));
  const { conductor, say, db } = setup(provider);
  saveSession(db, { key: 's', messages: [], meta: {} });
  // Damage comes from outside the process (another program, the disk): written through a second
  // connection, as the gateway's own writes all go through src/store/sessions.ts.
  const other = openDatabase(db.name);
  other.prepare(`update sessions set messages = '{"not": "a list"' where key = 's'`).run();
  other.close();
  conductor.start();
  const out = await conductor.delivered(say('s', 'hello').id);
  t.match(out.text, /could not be read .* set aside and this session starts fresh/);
  t.match(out.text, /fresh start$/);
  const q = db.prepare('select key, messages, error from sessions_quarantine').all() as { key: string; messages: string; error: string }[];
  t.equal(q.length, 1);
  t.equal(q[0]!.messages, '{"not": "a list"', 'the original bytes are kept');
});

t.test('provider failure: a short notice, the message stays and is answered on retry', async (t) => {
  let calls = 0;
  const provider = scriptedProvider([], async () => {
    if (++calls <= 2) throw new Error('all providers failed: 529 overloaded');
    return reply('finally');
  });
  const { conductor, say, sent, db } = setup(provider, { maxAttempts: 5 });
  conductor.start();
  const row = say('s', 'are you there?');
  const notice = await conductor.delivered(row.id);
  t.equal(notice.kind, 'notice');
  t.match(notice.text, /couldn't get an answer right now \(all providers failed: 529 overloaded\)\. Your message is saved/);
  await new Promise<void>((resolve) => {
    const check = () => (sent.some((o) => o.kind === 'reply') ? resolve() : setTimeout(check, 10));
    check();
  });
  t.same(sent.map((o) => o.kind), ['notice', 'reply'], 'one notice, then the answer');
  const state = db.prepare('select state, attempts from inbound where id = ?').get(row.id) as { state: string; attempts: number };
  t.same(state, { state: 'done', attempts: 3 });
});

t.test('shutdown: a turn still running past the drain timeout is released, its attempt not used up, and answered on the next start', async (t) => {
  // The model never answers; only the abort of the shutdown ends the call.
  const hanging: Provider = {
    id: 'hanging/test',
    complete: (req) => new Promise((_, reject) => req.signal?.addEventListener('abort', () => reject(req.signal!.reason), { once: true })),
  };
  let started = false;
  const first = setup({ id: hanging.id, complete: (req) => { started = true; return hanging.complete(req); } }, { maxAttempts: 1 });
  first.conductor.start();
  const row = first.say('s', 'switch the pump off at noon');
  while (!started) await new Promise((r) => setTimeout(r, 5));
  t.same(first.db.prepare('select state, attempts from inbound where id = ?').get(row.id), { state: 'processing', attempts: 1 }, 'claimed: one attempt counted');
  // The drain timer is unref'd (a gateway's server keeps its loop alive); here nothing else would.
  const alive = setInterval(() => {}, 1000);
  await first.conductor.stop(20);
  clearInterval(alive);
  t.same(first.db.prepare('select state, attempts, owner from inbound where id = ?').get(row.id), { state: 'pending', attempts: 0, owner: null }, 'released with the attempt given back');
  t.same(first.sent, [], 'no notice: the interruption is not a failure');

  // maxAttempts 1: had the shutdown used the only attempt up, this start's attempt would be a second one.
  const workspace = join(tempDir(), 'workspace');
  ensureWorkspace(workspace);
  const second = createConductor({
    db: first.db, config: first.config, workspace, provider: async () => scriptedProvider([reply('the pump goes off at noon')]),
    tools: toolSet([]), countTokens: heuristicCount, bus: createBus(), channels: [{ name: 'test', debounceMs: 0, send: async () => {} }],
  });
  second.start();
  const out = await second.delivered(row.id);
  await second.stop(1000); // before setup's teardown closes the database
  t.equal(out.text, 'the pump goes off at noon');
  t.same(first.db.prepare('select state, attempts from inbound where id = ?').get(row.id), { state: 'done', attempts: 1 }, 'answered on its first counted attempt');
});

t.test('after maxAttempts the message is marked failed and the user told once more', async (t) => {
  const provider = scriptedProvider([], async () => { throw new Error('401 invalid x-api-key'); });
  const { conductor, say, sent, db } = setup(provider, { maxAttempts: 2 });
  conductor.start();
  const row = say('s', 'hello');
  await new Promise<void>((resolve) => {
    const check = () => (sent.length >= 2 ? resolve() : setTimeout(check, 10));
    check();
  });
  t.match(sent[1]!.text, /gave up on your message after 2 attempts \(401 invalid x-api-key\)/);
  t.match(db.prepare('select state, last_error from inbound where id = ?').get(row.id), { state: 'failed', last_error: '401 invalid x-api-key' });
});

t.test('without a provider the agent explains how to configure one', async (t) => {
  const { conductor, say } = setup(null);
  conductor.start();
  t.equal((await conductor.delivered(say('s', 'hi').id)).text, 'configure a provider like this');
});

t.test('a message above the limit is refused with the limit named, nothing stored', async (t) => {
  const { say, db, config } = setup(scriptedProvider([]));
  t.throws(() => say('s', 'x'.repeat(config.agent.maxMessageChars + 1)), /message refused: 32001 characters is more than the limit of 32000 \(agent\.maxMessageChars\)/);
  t.equal((db.prepare('select count(*) as n from inbound').get() as { n: number }).n, 0);
});

t.test('the bus reports a turn', async (t) => {
  const provider = scriptedProvider([reply('hello there')]);
  const { conductor, say, bus } = setup(provider);
  const seen: string[] = [];
  for (const name of ['message_received', 'turn_start', 'turn_end', 'reply'] as const) bus.on(name, () => seen.push(name));
  conductor.start();
  await conductor.delivered(say('s', 'hi').id);
  t.same(seen, ['message_received', 'turn_start', 'turn_end', 'reply']);
});

t.test('a provider retry reaches the bus, so a client can drop the text streamed before it', async (t) => {
  // The retry/fallback layers report a new attempt through onEvent; the conductor must pass it on.
  const provider: Provider = {
    id: 'streaming/test',
    async complete(_req, onEvent) {
      onEvent?.({ type: 'text_delta', text: 'half an ans' });
      onEvent?.({ type: 'retry', attempt: 1, delayMs: 0, reason: 'stream cut' });
      onEvent?.({ type: 'text_delta', text: 'the answer' });
      return reply('the answer');
    },
  };
  const { conductor, bus, say } = setup(provider);
  const seen: string[] = [];
  bus.on('text_delta', (e) => seen.push(`text:${e.text}`));
  bus.on('retry', (e) => seen.push(`retry:${e.sessionKey}:${e.attempt}:${e.reason}`));
  conductor.start();
  const out = await conductor.delivered(say('r1', 'hello').id);
  t.equal(out.text, 'the answer');
  t.same(seen, ['text:half an ans', 'retry:r1:1:stream cut', 'text:the answer']);
});

t.test("a running tool's output reaches the bus as tool_output, between tool_start and tool_end", async (t) => {
  const talker: Tool = {
    name: 'talker',
    description: 'writes progress',
    inputSchema: { type: 'object', properties: {} },
    async execute(_input, ctx) {
      ctx.onOutput?.('stdout', 'step 1\n');
      ctx.onOutput?.('stderr', 'warn\n');
      return { content: 'done' };
    },
  };
  const provider = scriptedProvider([reply([{ type: 'tool_use', id: 'c1', name: 'talker', input: {} }]), reply('finished')]);
  const { conductor, bus, say } = setup(provider, { tools: [talker] });
  const seen: string[] = [];
  bus.on('tool_start', (e) => seen.push(`start:${e.name}`));
  bus.on('tool_output', (e) => seen.push(`${e.sessionKey}:${e.id}:${e.name}:${e.stream}:${e.text}`));
  bus.on('tool_end', (e) => seen.push(`end:${e.name}`));
  conductor.start();
  t.equal((await conductor.delivered(say('o1', 'go').id)).text, 'finished');
  t.same(seen, ['start:talker', 'o1:c1:talker:stdout:step 1\n', 'o1:c1:talker:stderr:warn\n', 'end:talker']);
});

t.test('a physical action asked for by a message older than tools.physicalMaxAgeSeconds needs a fresh confirmation', async (t) => {
  // A relay behind the real policy and registry; its chat is a control chat, so a fresh message acts without asking.
  const switched: unknown[] = [];
  const relay: Tool = {
    name: 'relay_write',
    description: 'switches the heater relay',
    inputSchema: { type: 'object', properties: { on: { type: 'boolean' } }, required: ['on'] },
    physical: true,
    async execute(input) {
      switched.push(input);
      return { content: 'switched' };
    },
  };
  const dir = tempDir();
  const db = openDatabase(join(dir, 'pinclaw.db'));
  const workspace = join(dir, 'workspace');
  ensureWorkspace(workspace);
  const config = defaults();
  config.tools.controlChats = ['test:heater', 'asking:heater'];
  config.tools.allow = ['relay_write'];
  const tools = createRegistry([relay], { policy: createPolicy(config.tools), audit: dbAudit(db) });
  const asked: ConfirmRequest[] = [];
  const channels: ChannelAdapter[] = [
    { name: 'test', debounceMs: 0, send: async () => {} },
    // A channel that can ask: the owner says yes.
    { name: 'asking', debounceMs: 0, send: async () => {}, confirm: async (_chat, request) => (asked.push(request), true) },
  ];
  const turnOn = () => reply([{ type: 'tool_use', id: `c${switched.length}`, name: 'relay_write', input: { on: true } }]);
  const provider = scriptedProvider([], (req) => (req.messages.at(-1)!.role === 'user' && JSON.stringify(req.messages.at(-1)!.content).includes('tool_result') ? reply('ok') : turnOn()));
  const bus = createBus();
  const conductor = createConductor({
    db, config, workspace, provider: async () => provider, tools, countTokens: heuristicCount, bus, channels,
    confirmFor: (channel, chatId) => {
      const ch = channels.find((c) => c.name === channel);
      return ch?.confirm ? (request) => ch.confirm!(chatId, request) : undefined;
    },
  });
  t.teardown(async () => {
    await conductor.stop(1000);
    db.close();
  });
  // Rows left pending an hour ago (a gateway stopped, or a provider failing meanwhile): committed
  // before the conductor starts, as a restarted gateway finds them.
  const hourAgo = Date.now() - 3600_000;
  const old = enqueue(db, { sessionKey: 'test:heater', channel: 'test', chatId: 'heater', sender: 'u', text: 'turn on the heater' }, 0, hourAgo);
  conductor.start();

  // Nobody can be asked: not run, and the model is told why, to tell the owner.
  await conductor.delivered(old.id);
  const result = JSON.stringify(provider.requests.find((r) => JSON.stringify(r.messages).includes('relay_write refused'))?.messages.at(-1));
  t.match(result, /relay_write refused: the message asking for it is \d+ s old, more than tools.physicalMaxAgeSeconds \(120 s\) allows for a physical action without a fresh confirmation, and channel test has no way to ask/);
  t.match(result, /they can confirm by asking again now/);
  t.same(switched, [], 'the relay was not switched');
  const audit = db.prepare(`select outcome, rule from audit where tool = 'relay_write' and channel = 'test'`).all() as { outcome: string; rule: string }[];
  t.match(audit, [{ outcome: 'denied', rule: /^tools\.physicalMaxAgeSeconds \(the message is \d+ s old, more than 120 s\)$/ }]);

  // A channel that can ask asks, saying why; on the owner's yes it runs.
  const oldAsking = enqueue(db, { sessionKey: 'asking:heater', channel: 'asking', chatId: 'heater', sender: 'u', text: 'turn on the heater' }, 0, hourAgo);
  conductor.wake();
  await conductor.delivered(oldAsking.id);
  t.equal(asked.length, 1);
  t.match(asked[0]!.reason, /^your message asking for this is \d+ s old \(more than tools.physicalMaxAgeSeconds, 120 s\): is it still wanted now\?$/);
  t.same(switched, [{ on: true }], 'run after the fresh yes');

  // The same request sent now acts at once in the control chat, without asking.
  await conductor.delivered(conductor.submit({ sessionKey: 'test:heater', channel: 'test', chatId: 'heater', sender: 'u', text: 'turn on the heater' }).id);
  t.same(switched, [{ on: true }, { on: true }]);
  t.equal(asked.length, 1, 'nobody was asked');
});

t.test('a turn the owner stops keeps the message and what was done in the session, closed so the next turn can go on', async (t) => {
  // A tool that runs until the turn is stopped (a long exec, a motor that keeps turning).
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  const relay: Tool = {
    name: 'relay',
    description: 'switches a relay and waits',
    inputSchema: { type: 'object', properties: {} },
    execute: (_input, ctx) => new Promise((resolve) => {
      started();
      ctx.signal?.addEventListener('abort', () => resolve({ content: 'interrupted', isError: true }), { once: true });
    }),
  };
  const provider = scriptedProvider([reply([{ type: 'tool_use', id: 'r1', name: 'relay', input: {} }])], async (req) => reply(`seen ${req.messages.length} messages`));
  const { conductor, say, db } = setup(provider, { tools: [relay] });
  conductor.start();
  const first = say('st', 'switch it on');
  await running;
  t.ok(conductor.abort('st'), 'stopped while the tool ran');
  t.equal((await conductor.delivered(first.id)).text, ABORTED_NOTICE);
  const kept = loadSession(db, 'st').messages;
  t.same(kept.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
  t.match(JSON.stringify(kept[0]!.content), /switch it on/, "the owner's message is kept");
  t.same(kept[1]!.content, [{ type: 'tool_use', id: 'r1', name: 'relay', input: {} }], 'the call the model made is kept');
  t.same(kept[2]!.content, [{ type: 'tool_result', toolUseId: 'r1', content: STOPPED_TOOL, isError: true }], 'answered, so the conversation stays valid, saying it may have run');
  t.same(kept[3]!.content, [{ type: 'text', text: STOPPED_REPLY }]);
  // The next turn sees all of it.
  t.equal((await conductor.delivered(say('st', 'is it on?').id)).text, 'seen 5 messages');

  // Stopped before the model answered at all: the message and the note.
  let hang!: () => void;
  const waiting = new Promise<void>((r) => (hang = r));
  const slow = scriptedProvider([], (req) => new Promise((_, reject) => {
    hang();
    req.signal?.addEventListener('abort', () => reject(req.signal!.reason), { once: true });
  }));
  const s2 = setup(slow);
  s2.conductor.start();
  const row = s2.say('st2', 'hello?');
  await waiting;
  t.ok(s2.conductor.abort('st2'));
  t.equal((await s2.conductor.delivered(row.id)).text, ABORTED_NOTICE);
  t.same(loadSession(s2.db, 'st2').messages.map((m) => m.role), ['user', 'assistant']);
});
