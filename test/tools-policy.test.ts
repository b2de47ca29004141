// The tool policy: profiles, allow/deny, channel and chat overrides, control chats, confirmation.
// Every refusal must name the rule that made it.
import t from 'tap';
import { defaults } from '../src/config/index.js';
import { ConfigError } from '../src/errors.js';
import { runTool as runToolCommand } from '../src/cli/tool-command.js';
import type { CliContext } from '../src/cli/context.js';
import { HA_CONTEXT } from '../src/fleet/home-assistant.js';
import { createPolicy, legacyChatNames, PROFILE_TOOLS, type ToolsSettings } from '../src/tools/policy.js';
import { createRegistry } from '../src/tools/registry.js';
import type { ConfirmRequest, Tool, ToolContext } from '../src/tools/types.js';
import { resolvePaths } from '../src/paths.js';
import { bundle, cleanEnv, runAsync, runPinclawAsync, tempDir } from './support/proc.js';

const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({
  name,
  description: name,
  inputSchema: { type: 'object', properties: { channel: { type: 'string' }, chat: { type: 'string' }, text: { type: 'string' } } },
  execute: async () => ({ content: `${name} ran` }),
  ...extra,
});
const settings = (s: Partial<ToolsSettings> = {}): ToolsSettings => ({ ...defaults().tools, ...s });
const at = (channel: string, chatId: string, extra: Partial<ToolContext> = {}): ToolContext => ({ sessionKey: `${channel}:${chatId}`, channel, chatId, ...extra });
const tg = at('telegram', '42');

t.test('exec is in the standard profile exactly when an OS sandbox is in force', async (t) => {
  const sandboxed = createPolicy(settings({ profile: 'standard' }), { execSandbox: { inForce: true } });
  const bare = createPolicy(settings({ profile: 'standard' }), { execSandbox: { inForce: false, reason: 'sandbox.backend is none: commands would run unconfined' } });
  t.same(sandboxed.check(tool('exec'), tg), { allowed: true, rule: 'tools.profile standard (sandboxed)' });
  t.same(bare.check(tool('exec'), tg), {
    allowed: false,
    rule: 'tools.profile standard',
    reason: 'exec is in profile standard only inside an OS sandbox, and sandbox.backend is none: commands would run unconfined; add it to tools.allow to allow it anyway',
  });
  t.same(createPolicy(settings({ profile: 'standard', allow: ['exec'] }), { execSandbox: { inForce: false, reason: 'x' } }).check(tool('exec'), tg), { allowed: true, rule: 'tools.allow' }, 'tools.allow opts in without a sandbox');
  t.equal(createPolicy(settings({ profile: 'minimal' }), { execSandbox: { inForce: true } }).check(tool('exec'), tg).allowed, false, 'minimal never offers exec');
  t.equal(createPolicy(settings({ profile: 'standard', deny: ['exec'] }), { execSandbox: { inForce: true } }).check(tool('exec'), tg).allowed, false, 'a deny still wins');
});

t.test('profiles: minimal and standard by name; full allows tools nobody listed', async (t) => {
  const minimal = createPolicy(settings({ profile: 'minimal' }));
  const standard = createPolicy(settings({ profile: 'standard' }));
  const full = createPolicy(settings({ profile: 'full' }));
  t.same(minimal.check(tool('current_time'), tg), { allowed: true, rule: 'tools.profile minimal' });
  t.same(minimal.check(tool('web_fetch'), tg), { allowed: false, rule: 'tools.profile minimal', reason: 'not in profile minimal; add it to tools.allow to allow it' });
  t.same(standard.check(tool('web_fetch'), tg), { allowed: true, rule: 'tools.profile standard' });
  t.same(standard.check(tool('exec'), tg), { allowed: false, rule: 'tools.profile standard', reason: 'exec is in profile standard only inside an OS sandbox, and no OS sandbox is known to be in force; add it to tools.allow to allow it anyway' });
  t.same(full.check(tool('exec'), tg), { allowed: true, rule: 'tools.profile full' });
  t.same(full.check(tool('a_tool_from_next_year'), tg), { allowed: true, rule: 'tools.profile full' });
  t.equal(minimal.check(tool('a_tool_from_next_year'), tg).allowed, false, 'unknown tools: denied by minimal');
  for (const name of PROFILE_TOOLS.minimal) t.ok(PROFILE_TOOLS.standard.includes(name), `standard includes minimal's ${name}`);
});

t.test('allow adds to the profile; deny wins over every allow', async (t) => {
  const p = createPolicy(settings({ profile: 'minimal', allow: ['exec', 'web_fetch'], deny: ['web_fetch'] }));
  t.same(p.check(tool('exec'), tg), { allowed: true, rule: 'tools.allow' });
  t.same(p.check(tool('web_fetch'), tg), { allowed: false, rule: 'tools.deny', reason: 'denied by tools.deny' });
  const all = createPolicy(settings({ profile: 'full', deny: ['*'] }));
  t.same(all.check(tool('current_time'), tg), { allowed: false, rule: 'tools.deny', reason: 'denied by tools.deny' });
});

t.test('channel and chat overrides: the most specific opinion decides, a deny anywhere wins', async (t) => {
  const p = createPolicy(settings({
    profile: 'standard',
    allow: ['exec'],
    overrides: [
      { channel: 'telegram', deny: ['exec'], allow: [] },
      { channel: 'telegram', chat: '7', allow: ['spawn'], deny: [] },
      { channel: 'http', profile: 'minimal', allow: [], deny: [] },
      { channel: 'http', chat: 'dash', profile: 'full', allow: [], deny: [] },
    ],
  }));
  t.same(p.check(tool('exec'), at('cli', 'local')), { allowed: true, rule: 'tools.allow' });
  t.same(p.check(tool('exec'), tg), { allowed: false, rule: 'tools.overrides[0].deny', reason: 'channel telegram override denies exec (tools.overrides[0].deny)' });
  t.same(p.check(tool('exec'), at('telegram', '7')), { allowed: false, rule: 'tools.overrides[0].deny', reason: 'channel telegram override denies exec (tools.overrides[0].deny)' }, 'the channel deny still applies in the chat');
  t.same(p.check(tool('spawn'), at('telegram', '7')), { allowed: true, rule: 'tools.overrides[1].allow' });
  t.equal(p.check(tool('spawn'), tg).allowed, false, 'the chat allow does not leak to other chats');
  t.same(p.check(tool('web_fetch'), at('http', 'x')), {
    allowed: false,
    rule: 'tools.overrides[2].profile minimal',
    reason: 'not in profile minimal (set by the channel http override, tools.overrides[2].profile); add it to tools.allow to allow it',
  });
  t.same(p.check(tool('exec'), at('http', 'x')), { allowed: false, rule: 'tools.overrides[2].profile minimal', reason: 'not in profile minimal (set by the channel http override, tools.overrides[2].profile); add it to tools.allow to allow it' }, "a narrower profile beats the section's allow");
  t.same(p.check(tool('web_fetch'), at('http', 'dash')), { allowed: true, rule: 'tools.overrides[3].profile full' }, 'a chat profile beats the channel profile');
  const chatDeny = createPolicy(settings({ overrides: [{ channel: 'telegram', chat: '42', deny: ['web_fetch'], allow: [] }] }));
  t.same(chatDeny.check(tool('web_fetch'), tg), { allowed: false, rule: 'tools.overrides[0].deny', reason: 'chat telegram:42 override denies web_fetch (tools.overrides[0].deny)' });
});

t.test('another chat only from a control chat', async (t) => {
  const send = tool('send_message', { targetChat: (input) => {
    const { channel, chat } = input as { channel?: string; chat?: string };
    return channel && chat ? { channel, chatId: chat } : undefined;
  } });
  const p = createPolicy(settings({ controlChats: ['telegram:1', 'cli:local'] }));
  t.same(p.checkInput(send, { text: 'hi' }, tg), { allowed: true, rule: 'own chat' });
  t.same(p.checkInput(send, { channel: 'telegram', chat: '42', text: 'hi' }, tg), { allowed: true, rule: 'own chat' }, 'naming its own chat is not another chat');
  t.same(p.checkInput(send, { channel: 'telegram', chat: '99', text: 'hi' }, tg), {
    allowed: false,
    rule: 'tools.controlChats',
    reason: 'send_message to another chat (telegram:99) is allowed only from a control chat, and telegram:42 is not one (tools.controlChats)',
  });
  t.same(p.checkInput(send, { channel: 'telegram', chat: '99', text: 'hi' }, at('telegram', '1')), { allowed: true, rule: 'tools.controlChats' });
  t.same(p.checkInput(send, { channel: 'telegram', chat: '99', text: 'hi' }, at('cli', 'local')), { allowed: true, rule: 'tools.controlChats' });
  t.equal(p.checkInput(send, { channel: 'telegram', chat: '99' }, at('cli', 'other')).allowed, false, 'a chat id match needs the channel too');

  // Through the registry: the refusal reaches the caller and the tool never runs.
  let ran = false;
  const reg = createRegistry([{ ...send, execute: async () => ((ran = true), { content: 'sent' }) }], { policy: p });
  const r = await reg.call({ name: 'send_message', input: { channel: 'telegram', chat: '99', text: 'hi' } }, tg);
  t.same(r.result, { content: 'send_message refused: send_message to another chat (telegram:99) is allowed only from a control chat, and telegram:42 is not one (tools.controlChats)', isError: true });
  t.equal(r.outcome, 'denied');
  t.equal(ran, false);
});

t.test('Home Assistant\'s commands are a chat of their own: no MQTT chat session can pose as them', async (t) => {
  const send = tool('send_message', { targetChat: () => ({ channel: 'telegram', chatId: '99' }) });
  const relay = tool('relay', { physical: true });
  const kitchen = at('mqtt', 'kitchen2');
  // What an MQTT chat message {"session":"homeassistant",...} ran as before.
  const posing = at('mqtt', 'homeassistant');
  t.same(HA_CONTEXT, { sessionKey: 'homeassistant:commands', channel: 'homeassistant', chatId: 'commands', caller: 'homeassistant' });
  for (const control of [['cli:local', 'homeassistant:commands'], ['cli:local', 'mqtt:homeassistant']]) {
    const p = createPolicy(settings({ controlChats: control }));
    t.equal(p.checkInput(send, {}, kitchen).allowed, false, `${control[1]}: kitchen2 may not send elsewhere`);
    t.equal(p.checkInput(send, {}, posing).allowed, false, `${control[1]}: nor may a chat named homeassistant`);
    t.ok(p.confirmation(relay, posing), `${control[1]}: a physical action there asks`);
    t.same(p.checkInput(send, {}, HA_CONTEXT), { allowed: true, rule: 'tools.controlChats' }, `${control[1]}: Home Assistant's commands are the control chat`);
    t.equal(p.confirmation(relay, HA_CONTEXT), undefined, `${control[1]}: and switch without asking`);
  }
  // The old name keeps its meaning (Home Assistant) and is reported with the rename.
  t.match(legacyChatNames(settings({ controlChats: ['cli:local', 'mqtt:homeassistant'] })), [/^tools\.controlChats\[1\] "mqtt:homeassistant" is the old name of Home Assistant's commands, read as "homeassistant:commands".*pinclaw config set tools\.controlChats '\["cli:local","homeassistant:commands"\]'/]);
  t.same(legacyChatNames(settings({ controlChats: ['cli:local', 'homeassistant:commands'] })), []);
  // Overrides the owner wrote for Home Assistant when it ran on channel mqtt still apply to it, not to a chat.
  const denyRelay = settings({ profile: 'full', overrides: [{ channel: 'mqtt', chat: 'homeassistant', allow: [], deny: ['relay'] }] });
  t.match(createPolicy(denyRelay).check(relay, HA_CONTEXT), { allowed: false, rule: 'tools.overrides[0].deny' });
  t.match(createPolicy(denyRelay).check(relay, posing), { allowed: true });
  const mqttWide = settings({ profile: 'full', overrides: [{ channel: 'mqtt', allow: [], deny: ['relay'] }] });
  t.match(createPolicy(mqttWide).check(relay, HA_CONTEXT), { allowed: false }, 'a channel-wide mqtt override still covers Home Assistant');
  t.match(legacyChatNames(mqttWide), [/tools\.overrides\[0\] \(channel mqtt\) still applies to Home Assistant's commands/]);
  const own = settings({ profile: 'full', overrides: [{ channel: 'mqtt', allow: [], deny: ['relay'] }, { channel: 'homeassistant', allow: [], deny: [] }] });
  t.match(createPolicy(own).check(relay, HA_CONTEXT), { allowed: true }, 'until one for channel homeassistant takes its place');
  t.same(legacyChatNames(own), []);
});

t.test("a trigger's turn in the owner's control chat asks before a physical action; the owner's own message does not", async (t) => {
  const relay = tool('relay', { physical: true });
  const p = createPolicy(settings({ controlChats: ['cli:local', 'telegram:42'] }));
  t.equal(p.confirmation(relay, { ...at('telegram', '42'), caller: 'hardware' }), 'physical action in a turn a hardware trigger started');
  t.equal(p.confirmation(relay, { ...at('telegram', '42'), caller: '42' }), undefined, "the owner's message: no question");
  const hw = createPolicy(settings({ controlChats: ['cli:local', 'hardware:home'] }));
  t.equal(hw.confirmation(relay, { ...at('hardware', 'home'), caller: 'hardware' }), undefined, 'the hardware channel as a declared control chat: as before');
});

t.test('confirmation: yes runs, no refuses, no way to ask refuses, a failing ask refuses', async (t) => {
  const asked: ConfirmRequest[] = [];
  const careful = tool('careful', { requiresConfirmation: true });
  const p = createPolicy(settings({ profile: 'full', confirm: ['listed'] }));
  t.equal(p.confirmation(careful), 'careful.requiresConfirmation');
  t.equal(p.confirmation(tool('listed')), 'tools.confirm');
  t.equal(p.confirmation(tool('plain')), undefined);
  const reg = createRegistry([careful, tool('listed'), tool('plain')], { policy: p, redact: (s) => s.replaceAll('s3cret', '[redacted]') });
  const yes = { ...tg, confirm: async (r: ConfirmRequest) => (asked.push(r), true) };
  const no = { ...tg, confirm: async () => false };
  const broken = { ...tg, confirm: async () => { throw new Error('telegram is down'); } };

  const ok = await reg.call({ name: 'careful', input: { text: 'the s3cret plan' } }, yes);
  t.same(ok.result, { content: 'careful ran' });
  t.equal(ok.rule, 'tools.profile full; confirmed (careful.requiresConfirmation)');
  t.same(asked, [{ tool: 'careful', input: { text: 'the [redacted] plan' }, summary: 'careful {"text":"the [redacted] plan"}', channel: 'telegram', chatId: '42' }], 'the question carries no secret');

  t.same((await reg.call({ name: 'listed', input: {} }, no)).result, { content: 'listed refused: the owner said no (tools.confirm)', isError: true });
  t.same((await reg.call({ name: 'careful', input: {} }, tg)).result, {
    content: "careful refused: it needs the owner's confirmation (careful.requiresConfirmation) and channel telegram has no way to ask",
    isError: true,
  });
  t.match((await reg.call({ name: 'careful', input: {} }, at('cli', 'local'))).result.content, /has no way to ask; run with --yes, or from a terminal$/);
  t.same((await reg.call({ name: 'careful', input: {} }, broken)).result, { content: 'careful refused: asking the owner failed (telegram is down) (careful.requiresConfirmation)', isError: true });
  t.same((await reg.call({ name: 'plain', input: {} }, tg)).result, { content: 'plain ran' }, 'other tools do not ask');
  t.equal(asked.length, 1);
});

t.test('settings the schema cannot check are configuration errors', async (t) => {
  t.throws(() => createPolicy(settings({ overrides: [{ channel: '', deny: ['exec'], allow: [] }] })), new ConfigError('tools.overrides[0].channel: required (the channel the override applies to)'));
  t.throws(() => createPolicy(settings({ controlChats: ['telegram'] })), new ConfigError('tools.controlChats[0]: expected "channel:chatId", found "telegram"'));
  t.same(createPolicy(settings({ controlChats: ['matrix:!room:example.org'] })).checkInput(tool('x', { targetChat: () => ({ channel: 'a', chatId: 'b' }) }), {}, at('matrix', '!room:example.org')), { allowed: true, rule: 'tools.controlChats' }, 'a chat id may contain ":"');
});

t.test('the CLI asks at the terminal: y runs, anything else refuses', async (t) => {
  const home = tempDir();
  const paths = resolvePaths({ home }, {});
  const out: string[] = [];
  const err: string[] = [];
  const env = { PINCLAW_TOOLS_CONFIRM: '["current_time"]' };
  const ctx: CliContext = { paths, json: false, out: (l) => out.push(l), err: (l) => err.push(l), env };
  const questions: string[] = [];
  const answer = (a: string) => async (q: string) => (questions.push(q), a);
  t.equal(await runToolCommand('run', ['current_time', '{"timezone":"UTC"}'], ctx, answer('y')), 0);
  t.match(out.join('\n'), /ISO 8601 UTC: /);
  t.match(questions[0], /current_time needs your confirmation\n {2}current_time \{"timezone":"UTC"\}\nallow this call\? \[y\/N\] $/);
  t.equal(await runToolCommand('run', ['current_time'], ctx, answer('')), 1, 'Enter alone is no');
  t.equal(await runToolCommand('run', ['current_time'], ctx, answer('nope')), 1);
  t.same(err, ['pinclaw: current_time refused: the owner said no (tools.confirm)', 'pinclaw: current_time refused: the owner said no (tools.confirm)']);
  t.equal(await runToolCommand('run', ['current_time'], { ...ctx, yes: true }, answer('n')), 0, '--yes answers without asking');
  t.equal(questions.length, 3);
});

t.test('the command line asks only when stdin is a terminal (a real pty), and says why it cannot otherwise', async (t) => {
  const env = cleanEnv({ PINCLAW_HOME: tempDir(), PINCLAW_TOOLS_CONFIRM: '["current_time"]' });
  const args = ['tool', 'run', 'current_time', '{"timezone":"UTC"}'];
  // A pipe (a script, cron, a service): nobody to ask, so the call is refused and says why.
  const piped = await runPinclawAsync(args, { env, input: 'y\n' });
  t.equal(piped.code, 1, piped.stderr);
  t.notMatch(piped.stderr, /allow this call/, 'no question put to a pipe');
  t.match(piped.stderr, /current_time refused: it needs the owner's confirmation \(tools\.confirm\) and channel cli has no way to ask/);
  // A terminal: script(1) runs the command on a pseudo-terminal and types our "y" into it.
  const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, bundle, ...args].map(quote).join(' ');
  const pty = await runAsync('script', ['-qec', command, '/dev/null'], { env, input: 'y\n' });
  t.equal(pty.code, 0, pty.stdout + pty.stderr);
  t.match(pty.stdout, /current_time needs your confirmation[\s\S]*allow this call\? \[y\/N\] /, 'the question on the terminal');
  t.match(pty.stdout, /ISO 8601 UTC: /, 'answered y: the tool ran');
});

t.test('a physical action expires with its message: tools.physicalMaxAgeSeconds', async (t) => {
  const relay = tool('gpio_write', { physical: true });
  const now = 1_000_000_000;
  const p = createPolicy(settings({ controlChats: ['telegram:42'] }), { now: () => now });
  const sent = (secondsAgo: number) => at('telegram', '42', { receivedAt: now - secondsAgo * 1000 });
  t.equal(p.confirmation(relay, sent(120)), undefined, 'up to the limit, a control chat acts without asking');
  t.same(p.expired(relay, sent(121)), { ageSeconds: 121, maxSeconds: 120, rule: 'tools.physicalMaxAgeSeconds (the message is 121 s old, more than 120 s)' });
  t.equal(p.confirmation(relay, sent(121)), 'tools.physicalMaxAgeSeconds (the message is 121 s old, more than 120 s)');
  t.equal(p.confirmation(relay, at('cli', 'local', { receivedAt: now - 3600_000 })), 'tools.physicalMaxAgeSeconds (the message is 3600 s old, more than 120 s)', 'the command line too');
  t.equal(p.expired(tool('current_time'), sent(3600)), undefined, 'only physical tools');
  t.equal(p.expired(relay, at('cli', 'local')), undefined, 'a call that answers no message (tool run) has no age');
  t.equal(p.confirmation(relay, at('cli', 'local')), undefined);
  const strict = createPolicy(settings({ physicalMaxAgeSeconds: 0 }), { now: () => now });
  t.ok(strict.expired(relay, at('cli', 'local', { receivedAt: now - 1 })), '0: every late millisecond asks');

  // Through the registry: with a way to ask, the question says why; without one, the refusal does.
  const ran: unknown[] = [];
  const reg = createRegistry([{ ...relay, async execute(input) { ran.push(input); return { content: 'done' }; } }], { policy: p });
  const asked: ConfirmRequest[] = [];
  const yes = await reg.call({ name: 'gpio_write', input: {} }, { ...sent(300), confirm: async (r) => (asked.push(r), true) });
  t.equal(yes.outcome, 'ok');
  t.equal(asked[0]?.reason, 'your message asking for this is 300 s old (more than tools.physicalMaxAgeSeconds, 120 s): is it still wanted now?');
  const no = await reg.call({ name: 'gpio_write', input: {} }, sent(300));
  t.equal(no.outcome, 'denied');
  t.equal(no.rule, 'tools.physicalMaxAgeSeconds (the message is 300 s old, more than 120 s)');
  t.match(no.result.content, /^gpio_write refused: the message asking for it is 300 s old, more than tools.physicalMaxAgeSeconds \(120 s\) allows for a physical action without a fresh confirmation, and channel telegram has no way to ask\. Tell the owner why it was not done; they can confirm by asking again now$/);
  t.equal(ran.length, 1, 'run once: after the yes');
});

t.test("a Telegram forum topic is part of its group: the group's control chat and override cover it, a topic's entry covers that topic only", async (t) => {
  const relay = tool('relay', { physical: true });
  const group = createPolicy(settings({ controlChats: ['telegram:-1001'] }));
  t.equal(group.confirmation(relay, at('telegram', '-1001:7')), undefined, "a topic of the owner's group is the owner's chat");
  t.equal(group.confirmation(relay, at('telegram', '-1002:7')), "physical action outside the owner's chats (tools.controlChats)", 'a topic of another group is not');
  const topic = createPolicy(settings({ controlChats: ['telegram:-1001:7'] }));
  t.equal(topic.confirmation(relay, at('telegram', '-1001:7')), undefined, 'the listed topic');
  t.equal(topic.confirmation(relay, at('telegram', '-1001:8')), "physical action outside the owner's chats (tools.controlChats)", 'another topic of that group');
  t.equal(topic.confirmation(relay, at('telegram', '-1001')), "physical action outside the owner's chats (tools.controlChats)", 'the group itself (its General topic)');
  // Only Telegram's ids are split: an MQTT session "kitchen:1" is not a part of "kitchen".
  const mqtt = createPolicy(settings({ controlChats: ['mqtt:kitchen'] }));
  t.equal(mqtt.confirmation(relay, at('mqtt', 'kitchen:1')), "physical action outside the owner's chats (tools.controlChats)");

  // Overrides: the group's applies in its topics, and a topic's own is more specific than the group's.
  const p = createPolicy(settings({
    profile: 'standard',
    overrides: [
      { channel: 'telegram', chat: '-1001:7', allow: ['exec'], deny: [] },
      { channel: 'telegram', chat: '-1001', profile: 'minimal', allow: [], deny: [] },
    ],
  }), { execSandbox: { inForce: true } });
  t.equal(p.check(tool('exec'), at('telegram', '-1001:8')).allowed, false, "the group's minimal profile holds in its other topics");
  t.same(p.check(tool('exec'), at('telegram', '-1001:7')), { allowed: true, rule: 'tools.overrides[0].allow' }, "the topic's own allow wins over its group's profile, whatever the order in the config");
});
