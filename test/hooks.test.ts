// Command hooks with scripts these tests write, run through the real sandbox (Landlock or bubblewrap
// where the host has one, else backend none) and the real registry, policy and SQLite audit table:
// block, rewrite, allow/ask, timeout, crash, 1 MB of stdout, a grandchild, the environment, the veto
// of a physical action across retries of a turn, and HardwareTrigger.
import t, { type Test } from 'tap';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hookIssues, matcherFor } from '../src/config/hooks.js';
import { createRedactor } from '../src/config/redact.js';
import { defaults, validateConfig } from '../src/config/index.js';
import type { PinclawConfig } from '../src/config/schema.js';
import { loadHooks } from '../src/hooks/index.js';
import { gatedSubmit } from '../src/hooks/trigger-gate.js';
import { chooseBackend, detectSandbox } from '../src/sandbox/detect.js';
import { queryAudit } from '../src/store/audit.js';
import { openDatabase, type Db } from '../src/store/db.js';
import type { NewInbound } from '../src/store/queue.js';
import { createPolicy } from '../src/tools/policy.js';
import { createRegistry } from '../src/tools/registry.js';
import { dbAudit } from '../src/setup/registry.js';
import type { ConfirmRequest, Tool, ToolContext } from '../src/tools/types.js';
import { tempDir } from './support/proc.js';

const auto = chooseBackend('auto', await detectSandbox());
const backend = 'error' in auto ? 'none' : auto.backend;
t.comment(`hooks run under sandbox backend ${backend}`);

type Hooks = Partial<PinclawConfig['hooks']>;
type HookIn = { command: string; matcher?: string; timeoutMs?: number; onFailure?: 'block' | 'continue' };

interface Setup {
  ws: string;
  db: Db;
  calls: { tool: string; input: unknown }[];
  asked: ConfirmRequest[];
  registry: ReturnType<typeof createRegistry>;
}

/** A config whose hooks are `hooks` (defaults filled in by validation, as at start). */
function configWith(hooks: Record<string, HookIn[]>): PinclawConfig {
  const { config, errors } = validateConfig({ hooks, sandbox: { backend } });
  if (!config) throw new Error(JSON.stringify(errors));
  return config;
}

function setup(t: Test, hooks: Record<string, HookIn[]>, redact?: (s: string) => string): Setup {
  const ws = tempDir('pinclaw-hooks-ws-');
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  const config = configWith(hooks);
  const calls: Setup['calls'] = [];
  const asked: ConfirmRequest[] = [];
  const relay: Tool = {
    name: 'relay_write', description: 'drive a relay', physical: true, sequential: true,
    inputSchema: { type: 'object', properties: { pin: { type: 'integer', minimum: 0, maximum: 40 }, on: { type: 'boolean' } }, required: ['pin', 'on'], additionalProperties: false },
    async execute(input) {
      calls.push({ tool: 'relay_write', input });
      return { content: `relay ${(input as { pin: number }).pin} set`, physical: { device: 'relay' } };
    },
  };
  const note: Tool = {
    name: 'note', description: 'echo a note', readOnly: true,
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    async execute(input) {
      calls.push({ tool: 'note', input });
      return { content: `noted: ${(input as { text: string }).text}` };
    },
  };
  const audit = dbAudit(db);
  const h = loadHooks({ config, workspace: ws, audit, db, ...(redact ? { redact } : {}) });
  const registry = createRegistry([relay, note], {
    policy: createPolicy({ ...defaults().tools, profile: 'full' }),
    audit,
    ...(h ? { hooks: h } : {}),
  });
  return { ws, db, calls, asked, registry };
}

/** The owner's own chat (no confirmation for physical actions) unless `chat` says otherwise. */
function ctxOf(s: Setup, over: Partial<ToolContext> = {}, answer = true): ToolContext {
  return { sessionKey: 'telegram:5', channel: 'cli', chatId: 'local', turnId: '1', confirm: async (r) => (s.asked.push(r), answer), ...over };
}

const hookRows = (db: Db) => queryAudit(db).filter((r) => r.rule?.startsWith('hooks.'));

/** Processes whose command line holds `marker` (a grandchild a hook left behind). */
function processesWith(marker: string): number {
  let n = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}

async function until(cond: () => boolean, ms = 5000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 25))) if (cond()) return true;
  return cond();
}

t.test('config: a hook needs a command, its matcher must compile; errors name the key', async (t) => {
  const bad = validateConfig({ hooks: { PreToolUse: [{ matcher: 'gpio_(' , command: 'true' }, { matcher: '*' }] } });
  t.equal(bad.config, undefined);
  const text = bad.errors.map((e) => `${e.path}: ${e.expected} / ${e.found}`).join('\n');
  t.match(text, /hooks\.PreToolUse\[0\]\.matcher: .*regular expression/);
  t.match(text, /hooks\.PreToolUse\[1\]\.command: a shell command \/ nothing/);
  const unknown = validateConfig({ hooks: { PreToolCall: [] } });
  t.match(unknown.errors[0]!.path, 'hooks.PreToolCall');
  const good = validateConfig({ hooks: { PreToolUse: [{ command: 'true' }] } });
  t.same(good.errors, []);
  t.equal(good.config!.hooks.PreToolUse[0]!.timeoutMs, 10000);
  t.equal(good.config!.hooks.PreToolUse[0]!.matcher, '');
  t.same(hookIssues(defaults().hooks), []);
});

t.test("matcher: Claude Code's rules", async (t) => {
  for (const all of ['', '*', ' ']) t.ok(matcherFor(all)('anything'), `${JSON.stringify(all)} matches all`);
  t.ok(matcherFor('gpio_write')('gpio_write'));
  t.notOk(matcherFor('gpio_write')('gpio_write_many'), 'a plain name is exact');
  t.notOk(matcherFor('gpio')('gpio_write'), 'a plain name is exact, not a prefix');
  t.ok(matcherFor('exec|write_file')('write_file'));
  t.notOk(matcherFor('exec|write_file')('read_file'));
  t.ok(matcherFor('gpio_.*')('gpio_write'), 'a regular expression');
  t.ok(matcherFor('^mcp__home__')('mcp__home__lights'));
  t.notOk(matcherFor('^mcp__home__')('mcp__cal__add'));
});

t.test('exit 2 blocks: the stderr reaches the model, the tool does not run, an audit row names the hook', async (t) => {
  const s = setup(t, { PreToolUse: [{ matcher: 'relay_write', command: 'echo "pin 17 drives the garage door: not at night" >&2; exit 2' }] });
  const r = await s.registry.call({ name: 'relay_write', input: { pin: 17, on: true } }, ctxOf(s));
  t.equal(r.outcome, 'denied');
  t.equal(r.rule, 'hooks.PreToolUse[0]');
  t.match(r.result.content, /relay_write refused by the owner's hook hooks\.PreToolUse\[0\]: pin 17 drives the garage door: not at night/);
  t.same(s.calls, []);
  const rows = hookRows(s.db);
  t.ok(rows.some((x) => x.rule === 'hooks.PreToolUse[0]' && x.outcome === 'denied' && x.tool === 'relay_write' && /garage door/.test(x.detail ?? '')), 'the hook decision');
  // The matcher leaves other tools alone: no hook ran for note.
  const before = hookRows(s.db).length;
  const ok = await s.registry.call({ name: 'note', input: { text: 'hi' } }, ctxOf(s));
  t.equal(ok.outcome, 'ok');
  t.equal(hookRows(s.db).length, before);
});

t.test('updatedInput rewrites the call; it is validated again', async (t) => {
  const s = setup(t, { PreToolUse: [{ matcher: 'relay_write', command: 'echo \'{"updatedInput": {"pin": 18, "on": false}, "reason": "pin 17 is retired"}\'' }] });
  const r = await s.registry.call({ name: 'relay_write', input: { pin: 17, on: true } }, ctxOf(s));
  t.equal(r.outcome, 'ok', r.result.content);
  t.same(s.calls, [{ tool: 'relay_write', input: { pin: 18, on: false } }]);
  const row = queryAudit(s.db).find((x) => x.tool === 'relay_write' && x.rule?.startsWith('tools.'));
  t.match(row?.input, '"pin":18', 'the call is audited with the input that ran');

  const bad = setup(t, { PreToolUse: [{ command: 'echo \'{"updatedInput": {"pin": "seventeen"}}\'' }] });
  const r2 = await bad.registry.call({ name: 'relay_write', input: { pin: 17, on: true } }, ctxOf(bad));
  t.equal(r2.outcome, 'error');
  t.match(r2.result.content, /updatedInput is invalid: .*pin/);
  t.same(bad.calls, []);
});

t.test("allow never skips the owner's confirmation; ask adds one", async (t) => {
  const s = setup(t, { PreToolUse: [{ matcher: 'relay_write', command: 'echo \'{"decision": "allow"}\'' }, { matcher: 'note', command: 'echo \'{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "notes are private"}}\'' }] });
  // A chat that is not the owner's: a physical action needs a yes, whatever the hook said.
  const r = await s.registry.call({ name: 'relay_write', input: { pin: 4, on: true } }, ctxOf(s, { channel: 'telegram', chatId: '5' }, false));
  t.equal(r.outcome, 'denied');
  t.match(r.result.content, /the owner said no/);
  t.equal(s.asked.length, 1);
  t.same(s.calls, []);
  // note needs no confirmation by policy; the hook's ask makes one, and names itself.
  const n = await s.registry.call({ name: 'note', input: { text: 'x' } }, ctxOf(s, {}, true));
  t.equal(n.outcome, 'ok');
  t.equal(s.asked.length, 2);
  t.equal(s.asked[1]!.tool, 'note');
  t.match(n.rule, /confirmed \(hooks\.PreToolUse\[1\]\)/);
  const noAsk = await s.registry.call({ name: 'note', input: { text: 'x' } }, { sessionKey: 's', channel: 'cron', chatId: 'job' });
  t.equal(noAsk.outcome, 'denied', 'a channel that cannot ask refuses');
});

t.test('timeout: killed with its group; PreToolUse fails closed, PostToolUse goes on', async (t) => {
  const marker = `31${process.pid}7`;
  const s = setup(t, {
    PreToolUse: [{ matcher: 'relay_write', command: `sleep ${marker}`, timeoutMs: 300 }],
    PostToolUse: [{ matcher: 'note', command: `sleep ${marker}`, timeoutMs: 300 }],
  });
  const r = await s.registry.call({ name: 'relay_write', input: { pin: 1, on: true } }, ctxOf(s));
  t.equal(r.outcome, 'denied');
  t.match(r.result.content, /timed out after 300 ms and was stopped with its process group \(SIGTERM, SIGKILL 300 ms later\) \(the hook failed, and its onFailure is block\)/);
  t.same(s.calls, []);
  const n = await s.registry.call({ name: 'note', input: { text: 'still here' } }, ctxOf(s));
  t.equal(n.outcome, 'ok');
  t.equal(n.result.content, 'noted: still here');
  t.ok(await until(() => processesWith(`sleep\0${marker}`) === 0), 'no hook process is left');
  const rows = hookRows(s.db);
  t.ok(rows.some((x) => x.rule === 'hooks.PreToolUse[0]' && x.outcome === 'denied' && /timed out/.test(x.detail ?? '')));
  t.ok(rows.some((x) => x.rule === 'hooks.PostToolUse[0]' && x.outcome === 'error' && /onFailure continue/.test(x.detail ?? '')));
});

// Every backend this host has: the SIGTERM reaches the hook by a different road in each (the
// addon's supervising thread, the processes below bwrap, the process group).
for (const b of ['landlock', 'bubblewrap', 'none'] as const) {
  const usable = b === 'none' || !('error' in chooseBackend(b, await detectSandbox()));
  t.test(`timeout under ${b}: SIGTERM first, so a hook can clean up; one that ignores it is killed after the grace`, { skip: usable ? false : `no ${b} here` }, async (t) => {
    const { runHook, graceFor } = await import('../src/hooks/run.js');
    const { Sandbox } = await import('../src/sandbox/index.js');
    const ws = tempDir('pinclaw-hooks-term-');
    const { config } = validateConfig({ sandbox: { backend: b } });
    const sandbox = new Sandbox(ws, config!.sandbox);
    const marker = `${b}-term-${process.pid}`;
    const cleanup = join(ws, 'cleaned-up');
    writeFileSync(join(ws, `trap-${marker}.sh`), `trap 'echo cleaned > "${cleanup}"; exit 0' TERM\nwhile :; do sleep 0.05; done\n`);
    const polite = await runHook({ sandbox, command: `sh ${join(ws, `trap-${marker}.sh`)}`, timeoutMs: 400, input: {} });
    t.match(polite.failure, /timed out after 400 ms and was stopped with its process group \(SIGTERM, SIGKILL 400 ms later\)/);
    t.equal(readFileSync(cleanup, 'utf8'), 'cleaned\n', 'the hook ran its TERM trap before it was gone');
    t.equal(processesWith(marker), 0, 'nothing of it is left: runHook returns once every process is reaped');

    const sleeper = `9${process.pid}${b.length}`;
    writeFileSync(join(ws, `deaf-${marker}.sh`), `trap '' TERM\nsleep ${sleeper}\n`);
    const deaf = await runHook({ sandbox, command: `sh ${join(ws, `deaf-${marker}.sh`)}`, timeoutMs: 300, input: {} });
    t.match(deaf.failure, /timed out after 300 ms/);
    t.ok(await until(() => processesWith(marker) === 0 && processesWith(`sleep\0${sleeper}`) === 0), 'a hook that ignores SIGTERM (and its child that inherits that) is killed all the same');
    t.equal(graceFor(60_000), 2000, 'the grace is 2 s');
    t.equal(graceFor(300), 300, 'or the timeout, when shorter');
  });
}

t.test('a crash (exit 1) follows onFailure', async (t) => {
  const s = setup(t, { PreToolUse: [{ matcher: 'relay_write', command: 'echo boom >&2; exit 1' }, { matcher: 'note', command: 'exit 1', onFailure: 'continue' }] });
  const r = await s.registry.call({ name: 'relay_write', input: { pin: 1, on: true } }, ctxOf(s));
  t.equal(r.outcome, 'denied');
  t.match(r.result.content, /it exited with 1: boom/);
  const n = await s.registry.call({ name: 'note', input: { text: 'y' } }, ctxOf(s));
  t.equal(n.outcome, 'ok');
  t.same(s.calls, [{ tool: 'note', input: { text: 'y' } }]);
});

t.test('1 MB of stdout: capped, said to be truncated, never read as a decision', async (t) => {
  const flood = "head -c 1048576 /dev/zero | tr '\\0' x";
  const s = setup(t, { PreToolUse: [{ matcher: 'relay_write', command: flood }], PostToolUse: [{ matcher: 'note', command: flood }] });
  const r = await s.registry.call({ name: 'relay_write', input: { pin: 1, on: true } }, ctxOf(s));
  t.equal(r.outcome, 'denied');
  t.match(r.result.content, /output passed sandbox\.outputCap \(\d+ bytes more were dropped, output truncated\)/);
  t.ok(r.result.content.length < 2000, 'none of the flood reaches the model');
  const n = await s.registry.call({ name: 'note', input: { text: 'z' } }, ctxOf(s));
  t.equal(n.result.content, 'noted: z');
});

t.test('a grandchild left running is killed with the group', async (t) => {
  const marker = `27${process.pid}3`;
  const s = setup(t, { PostToolUse: [{ command: `(sleep ${marker} &); sleep ${marker} & echo '{"additionalContext": "seen"}'` }] });
  const n = await s.registry.call({ name: 'note', input: { text: 'g' } }, ctxOf(s));
  t.equal(n.result.content, 'noted: g\n[hook context] seen');
  t.ok(await until(() => processesWith(`sleep\0${marker}`) === 0), 'the background sleep and the orphaned one are gone');
});

t.test('the hook sees the event on stdin and no secret in its environment', async (t) => {
  process.env.ANTHROPIC_API_KEY = 'sk-ant-hook-test-secret';
  process.env.PINCLAW_TELEGRAM_TOKEN = '12345:hook-test-token';
  t.teardown(() => {
    delete process.env.ANTHROPIC_API_KEY;
    delete process.env.PINCLAW_TELEGRAM_TOKEN;
  });
  const s = setup(t, { PreToolUse: [{ command: 'env > hook-env.txt; cat > hook-in.json' }] }, createRedactor(['sk-model-typed-this']));
  const big = 'x'.repeat(100_000); // past the here-document: the input goes through a file
  await s.registry.call({ name: 'note', input: { text: 'hello' } }, ctxOf(s));
  const env = readFileSync(join(s.ws, 'hook-env.txt'), 'utf8');
  t.notMatch(env, /sk-ant-hook-test-secret|hook-test-token|ANTHROPIC|TELEGRAM/);
  t.match(env, /^PATH=/m);
  const input = JSON.parse(readFileSync(join(s.ws, 'hook-in.json'), 'utf8')) as Record<string, unknown>;
  t.match(input, { hook_event_name: 'PreToolUse', session_id: 'telegram:5', channel: 'cli', chat_id: 'local', tool_name: 'note', tool_input: { text: 'hello' } });
  // A secret the model put in a tool's input is redacted before the hook sees it.
  await s.registry.call({ name: 'note', input: { text: 'key sk-model-typed-this' } }, ctxOf(s));
  t.notMatch(readFileSync(join(s.ws, 'hook-in.json'), 'utf8'), /sk-model-typed-this/);
  t.match(readFileSync(join(s.ws, 'hook-in.json'), 'utf8'), /key \[redacted/);
  const r = await s.registry.call({ name: 'note', input: { text: big } }, ctxOf(s));
  t.equal(r.outcome, 'ok');
  t.equal((JSON.parse(readFileSync(join(s.ws, 'hook-in.json'), 'utf8')) as { tool_input: { text: string } }).tool_input.text, big);
  t.same(readdirSync(s.ws).filter((f) => f.startsWith('.pinclaw-hook-')), [], 'the input file is removed');
});

t.test("a physical action's veto holds for every retry of the turn", async (t) => {
  // Blocks the first time only: a flaky or time-dependent hook must not let a retry through.
  const s = setup(t, { PreToolUse: [{ matcher: 'relay_write|note', command: 'n=$(cat count 2>/dev/null || echo 0); echo $((n+1)) > count; [ "$n" -gt 0 ] && exit 0; echo "not now" >&2; exit 2' }] });
  const first = await s.registry.call({ name: 'relay_write', input: { pin: 2, on: true } }, ctxOf(s, { turnId: '41' }));
  t.equal(first.outcome, 'denied');
  t.match(first.result.content, /not now/);
  // The conductor's retry of the same turn (same turnId; a restart in between keeps it: it is in the store).
  const retry = await s.registry.call({ name: 'relay_write', input: { pin: 2, on: true } }, ctxOf(s, { turnId: '41' }));
  t.equal(retry.outcome, 'denied');
  t.match(retry.result.content, /vetoed earlier in this turn: not now/);
  t.equal(retry.rule, 'hooks.PreToolUse[0]');
  t.equal(readFileSync(join(s.ws, 'count'), 'utf8').trim(), '1', 'the hook was not asked again');
  t.same(s.calls, []);
  // Another turn asks the hook again (which now allows).
  const next = await s.registry.call({ name: 'relay_write', input: { pin: 2, on: true } }, ctxOf(s, { turnId: '42' }));
  t.equal(next.outcome, 'ok');
  t.equal(s.calls.length, 1);
  // Each block is two rows: the hook's decision, and the refused call.
  t.same(hookRows(s.db).filter((x) => x.detail?.startsWith('block: ')).map((x) => x.detail), ['block: not now', 'block: vetoed earlier in this turn: not now'], 'the veto and its repetition are audited');
  t.equal(hookRows(s.db).filter((x) => x.outcome === 'denied').length, 4);
});

t.test('a veto is kept while its turn can be retried, and removed once the turn is done or failed', async (t) => {
  const { enqueue, markDone, markAttemptFailed } = await import('../src/store/queue.js');
  const { pruneVetoes, VETO_MAX_AGE_MS } = await import('../src/hooks/vetoes.js');
  const s = setup(t, { PreToolUse: [{ matcher: 'relay_write', command: 'echo "not now" >&2; exit 2' }] });
  const vetoes = () => (s.db.prepare(`select key from state where key like 'hooks.veto:%' order by key`).all() as { key: string }[]).map((r) => r.key);
  const inbound = (text: string) => enqueue(s.db, { sessionKey: 'telegram:5', channel: 'cli', chatId: 'local', sender: 'owner', text }, 0);
  const [a, b, c] = [inbound('a'), inbound('b'), inbound('c')];
  const relay = (turn: number) => s.registry.call({ name: 'relay_write', input: { pin: 3, on: true } }, ctxOf(s, { turnId: String(turn) }));
  t.equal((await relay(a.id)).outcome, 'denied');
  t.equal((await relay(b.id)).outcome, 'denied');
  t.same(vetoes(), [`hooks.veto:telegram:5:${a.id}:relay_write`, `hooks.veto:telegram:5:${b.id}:relay_write`], 'both turns are under way: both vetoes are kept');
  markDone(s.db, [a.id]);
  t.equal(markAttemptFailed(s.db, [b.id], 'model down', 0, 1000), 'failed');
  t.equal((await relay(c.id)).outcome, 'denied');
  t.same(vetoes(), [`hooks.veto:telegram:5:${c.id}:relay_write`], 'the vetoes of the finished turns (done, failed) went when the next one was stored');
  const retry = await relay(c.id);
  t.match(retry.result.content, /vetoed earlier in this turn: not now/, 'the veto of the turn under way still holds');
  // A turn id the queue does not know (not a queued turn) keeps its veto for VETO_MAX_AGE_MS.
  t.equal((await relay(987654)).outcome, 'denied');
  t.equal(pruneVetoes(s.db, Date.now()), 0, 'nothing finished: nothing removed');
  t.equal(pruneVetoes(s.db, Date.now() + VETO_MAX_AGE_MS + 60_000), 1, 'the unknown turn\'s veto goes after its maximum age');
  t.same(vetoes(), [`hooks.veto:telegram:5:${c.id}:relay_write`], 'a turn under way keeps its veto at any age');
  t.ok(hookRows(s.db).filter((x) => x.outcome === 'denied').length >= 5, 'every veto is still in the audit table');
});

t.test('HardwareTrigger: a block means no turn, and is audited', async (t) => {
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  const ws = tempDir('pinclaw-hooks-ws-');
  const config = configWith({ HardwareTrigger: [{ command: 'grep -q \'"text":"the doorbell\' && { echo "away mode: the doorbell is ignored" >&2; exit 2; }; exit 0' }] });
  const hooks = loadHooks({ config, workspace: ws, audit: dbAudit(db), db });
  const queued: NewInbound[] = [];
  const submit = gatedSubmit((m) => queued.push(m), hooks);
  const msg = (text: string): NewInbound => ({ sessionKey: 'hardware:door', channel: 'hardware', chatId: 'door', sender: 'hardware', text, meta: { trigger: { kind: 'gpio', line: 'doorbell' } } });
  await submit(msg('the doorbell rang'));
  t.same(queued, [], 'blocked: nothing queued');
  await submit(msg('the window opened'));
  t.equal(queued.length, 1);
  const rows = hookRows(db);
  t.ok(rows.some((r) => r.rule === 'hooks.HardwareTrigger[0]' && r.outcome === 'denied' && r.tool === 'hooks.HardwareTrigger' && /away mode/.test(r.detail ?? '')));
  t.ok(rows.some((r) => r.rule === 'hooks.HardwareTrigger[0]' && r.outcome === 'ok'));
  // A hook that cannot finish fails closed here too.
  const slow = loadHooks({ config: configWith({ HardwareTrigger: [{ command: 'sleep 30', timeoutMs: 200 }] }), workspace: ws, db });
  const q2: NewInbound[] = [];
  await gatedSubmit((m) => q2.push(m), slow)(msg('motion'));
  t.same(q2, [], 'a hook that hangs is killed at its timeout, and the trigger queues nothing');
});

t.test('no hooks configured: nothing is loaded or wrapped', async (t) => {
  t.equal(loadHooks({ config: defaults(), workspace: tempDir() }), undefined);
  const submit = (m: NewInbound) => m;
  t.equal(gatedSubmit(submit, undefined), submit);
});
