// Command hooks in whole turns: the conductor on a real SQLite file, the registry with its policy,
// a scripted provider (behind the Provider interface) and hooks the test writes, in the sandbox.
// The veto of a physical action survives the conductor's retry of a failed turn; MessageReceived,
// SessionStart, MessageSending and TurnEnd do what docs/hooks.md says.
import t, { type Test } from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { heuristicCount } from '../src/agent/tokens.js';
import { ensureWorkspace } from '../src/agent/workspace.js';
import type { ProviderRequest } from '../src/agent/types.js';
import { defaults, validateConfig } from '../src/config/index.js';
import { createBus } from '../src/conductor/bus.js';
import { createConductor, type ChannelAdapter } from '../src/conductor/conductor.js';
import { loadHooks } from '../src/hooks/index.js';
import { chooseBackend, detectSandbox } from '../src/sandbox/detect.js';
import { queryAudit } from '../src/store/audit.js';
import { openDatabase } from '../src/store/db.js';
import type { OutboundRow } from '../src/store/queue.js';
import { createPolicy } from '../src/tools/policy.js';
import { createRegistry } from '../src/tools/registry.js';
import { dbAudit } from '../src/setup/registry.js';
import type { Tool } from '../src/tools/types.js';
import { reply, scriptedProvider, type Step } from './support/scripted-provider.js';
import { bundle, cleanEnv, runPinclawAsync, tempDir } from './support/proc.js';

const auto = chooseBackend('auto', await detectSandbox());
const backend = 'error' in auto ? 'none' : auto.backend;

function setup(t: Test, hooks: Record<string, { command: string; matcher?: string }[]>, steps: Step[]) {
  const dir = tempDir();
  const db = openDatabase(join(dir, 'pinclaw.db'));
  const workspace = join(dir, 'workspace');
  ensureWorkspace(workspace);
  const { config, errors } = validateConfig({ hooks, sandbox: { backend }, conductor: { maxAttempts: 3 } });
  if (!config) throw new Error(JSON.stringify(errors));
  const runs: unknown[] = [];
  const relay: Tool = {
    name: 'relay_write', description: 'drive a relay', physical: true, sequential: true,
    inputSchema: { type: 'object', properties: { pin: { type: 'integer' } }, required: ['pin'], additionalProperties: false },
    async execute(input) {
      runs.push(input);
      return { content: 'relay set', physical: { device: 'relay' } };
    },
  };
  const audit = dbAudit(db);
  const h = loadHooks({ config, workspace, audit, db })!;
  // test:room is one of the owner's chats: the relay runs there without a confirmation.
  const tools = createRegistry([relay], { policy: createPolicy({ ...defaults().tools, profile: 'full', controlChats: ['test:room'] }), audit, hooks: h });
  const sent: OutboundRow[] = [];
  const channel: ChannelAdapter = { name: 'test', debounceMs: 0, send: async (o) => void sent.push(o) };
  const provider = scriptedProvider(steps);
  const conductor = createConductor({
    db, config, workspace, provider: async () => provider, tools, countTokens: heuristicCount, bus: createBus(), channels: [channel], hooks: h,
    retryDelayMs: () => 20,
  });
  conductor.start();
  t.teardown(async () => {
    await conductor.stop(1000);
    db.close();
  });
  const say = async (text: string) => (await conductor.delivered(conductor.submit({ sessionKey: 'test:room', channel: 'test', chatId: 'room', sender: 'owner', text }).id)).text;
  return { db, workspace, runs, provider, say, sent };
}

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '');
const toolResults = (req: ProviderRequest) => JSON.stringify(req.messages.at(-1)!.content);
const relayCall = (id: string) => reply([{ type: 'tool_use', id, name: 'relay_write', input: { pin: 3 } }]);

t.test("the conductor's retry of a failed turn does not get past a veto", async (t) => {
  // The hook blocks once, then allows: a flaky veto (a timeout, a clock) must still hold for the turn.
  const s = setup(t, { PreToolUse: [{ matcher: 'relay_write', command: 'n=$(cat count 2>/dev/null || echo 0); echo $((n+1)) > count; [ "$n" -gt 0 ] && exit 0; echo "the garage is open" >&2; exit 2' }] }, [
    relayCall('a1'),
    () => {
      throw new Error('model overloaded');
    },
    relayCall('a2'),
    reply('could not switch it'),
  ]);
  // The first answer is the notice of the failed attempt; the retry's reply follows.
  t.match(await s.say('switch on relay 3'), /model overloaded/);
  for (let i = 0; i < 200 && !s.sent.some((o) => o.text === 'could not switch it'); i++) await new Promise((r) => setTimeout(r, 25));
  t.ok(s.sent.some((o) => o.text === 'could not switch it'), 'the retried turn answered');
  t.same(s.runs, [], 'the relay never ran');
  t.equal(s.provider.requests.length, 4, 'two attempts of the turn');
  t.match(toolResults(s.provider.requests[1]!), /refused by the owner's hook hooks\.PreToolUse\[0\]: the garage is open/);
  t.match(toolResults(s.provider.requests[3]!), /vetoed earlier in this turn: the garage is open/);
  t.equal(readFileSync(join(s.workspace, 'count'), 'utf8').trim(), '1', 'the retry did not ask the hook again');
});

t.test('MessageReceived drops a message with a notice; SessionStart, MessageSending and TurnEnd', async (t) => {
  const s = setup(t, {
    MessageReceived: [{ command: 'grep -q "launch codes" && { echo "not in this chat" >&2; exit 2; }; exit 0' }],
    SessionStart: [{ command: 'echo "The owner is away until Monday."' }],
    MessageSending: [{ command: 'grep -q hunter2 && echo \'{"updatedInput": {"text": "(a password was removed)"}}\'; exit 0' }],
    TurnEnd: [{ command: 'cat >> turns.jsonl; echo >> turns.jsonl' }],
  }, [reply('hello'), reply('the password is hunter2')]);
  t.match(await s.say('the launch codes are 1234'), /Your message was not handled: the owner's hook hooks\.MessageReceived\[0\] refused it \(not in this chat\)/);
  t.equal(s.provider.requests.length, 0, 'no model call for a dropped message');
  t.equal(await s.say('hi'), 'hello');
  t.match(s.provider.requests[0]!.system, /From the owner's SessionStart hooks\nThe owner is away until Monday\./);
  t.equal(await s.say('what is the password?'), '(a password was removed)');
  t.notMatch(s.provider.requests[1]!.system, /away until Monday/, 'SessionStart runs before the first turn of a session only');
  const rows = queryAudit(s.db).filter((r) => r.rule === 'hooks.SessionStart[0]');
  t.equal(rows.length, 1);
  // TurnEnd runs after each turn without holding it up: wait for the three.
  const file = join(s.workspace, 'turns.jsonl');
  for (let i = 0; i < 200 && !(existsSync(file) && lines(file).length >= 3); i++) await new Promise((r) => setTimeout(r, 25));
  const ends = lines(file).map((l) => JSON.parse(l) as { hook_event_name: string; session_id: string });
  t.equal(ends.length, 3);
  t.ok(ends.every((e) => e.hook_event_name === 'TurnEnd' && e.session_id === 'test:room'));
});

t.test('the built bundle loads the hooks chunk: `pinclaw tool run` under a PreToolUse hook', { skip: existsSync(bundle) ? false : 'no bundle: run node scripts/build.mjs' }, async (t) => {
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({
    sandbox: { backend },
    hooks: { PreToolUse: [{ matcher: 'current_time', command: 'echo "the clock is private" >&2; exit 2' }] },
  }));
  const r = await runPinclawAsync(['tool', 'run', 'current_time', '{}'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.not(r.code, 0);
  t.match(r.stdout + r.stderr, /current_time refused by the owner's hook hooks\.PreToolUse\[0\]: the clock is private/);
  const audit = await runPinclawAsync(['audit', '--json'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.match(audit.stdout, /hooks\.PreToolUse\[0\]/);
});
