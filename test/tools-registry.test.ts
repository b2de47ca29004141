// The registry: one path for every call (validation, policy, limits, redaction, audit), in-process.
import t from 'tap';
import { join } from 'node:path';
import { runAgentLoop } from '../src/agent/loop.js';
import type { Message, ToolUseBlock } from '../src/agent/types.js';
import { createRedactor } from '../src/config/redact.js';
import { defaults } from '../src/config/index.js';
import type { NewAudit } from '../src/store/audit.js';
import { insertAudit, queryAudit } from '../src/store/audit.js';
import { openDatabase } from '../src/store/db.js';
import { capOutput, limitsFor } from '../src/tools/limits.js';
import { createPolicy } from '../src/tools/policy.js';
import { createRegistry, type AuditSink } from '../src/tools/registry.js';
import { dbAudit } from '../src/setup/registry.js';
import { currentTimeTool } from '../src/tools/time.js';
import type { Tool, ToolContext } from '../src/tools/types.js';
import { reply, scriptedProvider } from './support/scripted-provider.js';
import { tempDir } from './support/proc.js';

const ctx: ToolContext = { sessionKey: 's1', channel: 'test', chatId: 'c1', caller: 'owner' };

function echo(extra: Partial<Tool> = {}): Tool {
  return {
    name: 'echo',
    description: 'says its text back',
    inputSchema: { type: 'object', properties: { text: { type: 'string' }, times: { type: 'integer', minimum: 1 } }, required: ['text'], additionalProperties: false },
    async execute(input) {
      const { text, times = 1 } = input as { text: string; times?: number };
      return { content: text.repeat(times) };
    },
    ...extra,
  };
}

/** Keeps the rows in memory, with the same shape the store gets. */
function memoryAudit() {
  const rows: (NewAudit & { id: number })[] = [];
  const sink: AuditSink = {
    record: (e) => rows.push({ ...e, id: rows.length + 1 }),
    finish: (id, f) => Object.assign(rows[id - 1]!, f),
  };
  return { rows, sink };
}

t.test('input is validated before the tool runs; the error names the field', async (t) => {
  let ran = 0;
  const tool = echo({ execute: async () => ((ran += 1), { content: 'ran' }) });
  const { rows, sink } = memoryAudit();
  const reg = createRegistry([tool], { audit: sink });
  const r1 = await reg.call({ name: 'echo', input: { text: 5 } }, ctx);
  t.same(r1.result, { content: 'invalid arguments for echo: input.text: expected string, got number', isError: true });
  const r2 = await reg.call({ name: 'echo', input: { text: 'a', times: 0, colour: 'red' } }, ctx);
  t.match(r2.result.content, /input\.times: must be >= 1/);
  t.match(r2.result.content, /input\.colour: unknown field/);
  const r3 = await reg.call({ name: 'echo', input: {} }, ctx);
  t.match(r3.result.content, /input\.text: required/);
  t.equal(ran, 0, 'the tool never ran');
  t.same(rows.map((r) => [r.outcome, r.rule]), [['error', 'inputSchema'], ['error', 'inputSchema'], ['error', 'inputSchema']]);
});

t.test('unknown tools answer with what is available', async (t) => {
  const { rows, sink } = memoryAudit();
  const reg = createRegistry([echo()], { audit: sink });
  const r = await reg.call({ name: 'ech', input: {} }, ctx);
  t.same(r.result, { content: "unknown tool 'ech'; available: echo", isError: true });
  t.match(rows, [{ tool: 'ech', outcome: 'error' }]);
});

t.test('duplicate or malformed names are refused when the registry is built', async (t) => {
  t.throws(() => createRegistry([echo(), echo()]), /two tools are named 'echo'/);
  t.throws(() => createRegistry([echo({ name: 'has space' })]), /tool name 'has space'/);
});

t.test('the time limit aborts the tool and answers with the rule that set it', async (t) => {
  let sawAbort: unknown;
  const stubborn = echo({ name: 'stubborn', execute: () => new Promise(() => undefined) });
  const polite = echo({
    name: 'polite',
    timeoutMs: 50,
    execute: (_input, c) => new Promise((_, reject) => c.signal!.addEventListener('abort', () => ((sawAbort = c.signal!.reason), reject(new Error('stopped'))))),
  });
  const { rows, sink } = memoryAudit();
  const reg = createRegistry([stubborn, polite], { audit: sink, limits: { timeoutMs: 100, maxOutputBytes: 1000, limits: [{ tool: 'stubborn', timeoutMs: 120 }] } });
  const a = await reg.call({ name: 'stubborn', input: { text: 'x' } }, ctx);
  t.same(a.result, { content: 'stubborn timed out after 120 ms (tools.limits[0].timeoutMs); it was told to stop', isError: true }, 'answered even though the tool never settles');
  t.equal(a.rule, 'tools.limits[0].timeoutMs');
  const b = await reg.call({ name: 'polite', input: { text: 'x' } }, ctx);
  t.match(b.result.content, /polite timed out after 50 ms \(polite\.timeoutMs\)/);
  t.match(sawAbort, { name: 'ToolTimeout' }, "the tool's signal was aborted with the timeout");
  t.match(rows, [{ tool: 'stubborn', outcome: 'error', detail: /timed out/ }, { tool: 'polite', outcome: 'error' }]);
});

t.test('the turn being aborted aborts the running tool', async (t) => {
  const ac = new AbortController();
  const waits = echo({ name: 'waits', execute: (_i, c) => new Promise((_, reject) => c.signal!.addEventListener('abort', () => reject(new Error('tool saw the abort')))) });
  const reg = createRegistry([waits]);
  const p = reg.call({ name: 'waits', input: { text: 'x' } }, { ...ctx, signal: ac.signal });
  ac.abort(new Error('shutdown'));
  const r = await p;
  t.equal(r.outcome, 'error');
  t.equal(r.result.content, 'waits failed: shutdown', 'the abort reason, not whatever the tool made of it');
});

t.test('a turn stopped while its tool waits for the owner stops waiting: refused, not run, and an http question is withdrawn', async (t) => {
  const { createPolicy: policyOf } = await import('../src/tools/policy.js');
  const { createConfirmations } = await import('../src/channels/http/confirmations.js');
  const { createBus } = await import('../src/conductor/bus.js');
  let ran = 0;
  const tool = echo({ execute: async () => ((ran += 1), { content: 'ran' }) });
  const bus = createBus();
  const answers: { allowed: boolean; by: string }[] = [];
  bus.on('confirm_answer', (e) => answers.push({ allowed: e.allowed, by: e.by }));
  const questions = createConfirmations(bus, 600_000);
  const reg = createRegistry([tool], { policy: policyOf({ ...defaults().tools, allow: ['echo'], confirm: ['echo'] }) });
  const ac = new AbortController();
  const p = reg.call({ name: 'echo', input: { text: 'x' } }, { ...ctx, channel: 'http', signal: ac.signal, confirm: (q) => questions.ask('c1', q) });
  await new Promise((r) => setImmediate(r));
  t.equal(questions.pending().length, 1, 'the owner is asked');
  ac.abort(new Error('stopped by the owner'));
  const r = await p;
  t.equal(r.outcome, 'denied');
  t.match(r.result.content, /the turn was stopped/);
  t.equal(ran, 0, 'the tool did not run');
  t.equal(questions.pending().length, 0, 'the question is gone from the page');
  t.same(answers, [{ allowed: false, by: 'timeout' }]);
  // A channel that cannot withdraw its question (a promise that never settles) does not hold the turn either.
  const ac2 = new AbortController();
  const p2 = reg.call({ name: 'echo', input: { text: 'x' } }, { ...ctx, signal: ac2.signal, confirm: () => new Promise<boolean>(() => {}) });
  ac2.abort(new Error('stopped'));
  t.equal((await p2).outcome, 'denied');
  t.equal(ran, 0);
});

t.test('limits: config per tool beats the tool, which beats the default', async (t) => {
  const s = { timeoutMs: 30_000, maxOutputBytes: 32_768, limits: [{ tool: 'exec', maxOutputBytes: 500 }] };
  t.same(limitsFor(echo({ name: 'exec', timeoutMs: 5000, maxOutputBytes: 9000 }), s), {
    timeoutMs: { value: 5000, source: 'exec.timeoutMs' },
    maxOutputBytes: { value: 500, source: 'tools.limits[0].maxOutputBytes' },
  });
  t.same(limitsFor(echo(), s), { timeoutMs: { value: 30_000, source: 'tools.timeoutMs' }, maxOutputBytes: { value: 32_768, source: 'tools.maxOutputBytes' } });
});

t.test('output is capped in bytes with a notice; the audit row has the full size', async (t) => {
  const { rows, sink } = memoryAudit();
  const reg = createRegistry([echo()], { audit: sink, limits: { timeoutMs: 1000, maxOutputBytes: 300, limits: [] } });
  const r = await reg.call({ name: 'echo', input: { text: 'ab', times: 1000 } }, ctx);
  t.equal(r.truncated, true);
  t.equal(r.outputBytes, 2000);
  t.equal(r.result.content, `${'ab'.repeat(150)}\n[output truncated: the first 300 of 2000 bytes are shown (tools.maxOutputBytes)]`);
  t.match(rows[0], { outcome: 'ok', outputBytes: 2000 });
  const small = await reg.call({ name: 'echo', input: { text: 'ab', times: 150 } }, ctx);
  t.equal(small.truncated, false, 'exactly at the cap is not cut');
  // A multi-byte character straddling the cap is dropped whole, never split.
  const cut = capOutput('€'.repeat(10), { value: 7, source: 'x' });
  t.equal(cut.text.split('\n')[0], '€€');
  t.equal(cut.bytes, 30);
});

t.test('secrets are redacted from tool output, error messages and audit inputs', async (t) => {
  const secret = 'hunter2-very-secret';
  const leaky = echo({ name: 'leaky', execute: async (input) => ({ content: `key=${secret} header=Bearer abcdefgh12345 ${JSON.stringify(input)}` }) });
  const thrower = echo({ name: 'thrower', execute: async () => { throw new Error(`cannot log in with ${secret}`); } });
  const { rows, sink } = memoryAudit();
  const reg = createRegistry([leaky, thrower], { audit: sink, redact: createRedactor([secret, 'quo"te-secret']) });
  const r = await reg.call({ name: 'leaky', input: { text: `use ${secret} and sk-ant-api03-abcdefghijkl and quo"te-secret` } }, ctx);
  t.notMatch(r.result.content, secret);
  t.notMatch(r.result.content, 'abcdefgh12345');
  t.match(r.result.content, 'key=[redacted] header=Bearer [redacted]');
  const e = await reg.call({ name: 'thrower', input: { text: 'x' } }, ctx);
  t.equal(e.result.content, 'thrower failed: cannot log in with [redacted]');
  t.equal(rows[0]!.input, '{"text":"use [redacted] and [redacted] and [redacted]"}', 'the JSON-escaped form is found too');
  for (const row of rows) t.notMatch(JSON.stringify(row), secret);
});

t.test('specs and get follow the policy of the context; a hidden tool called anyway is refused and audited', async (t) => {
  const settings = { ...defaults().tools, profile: 'minimal' as const };
  const { rows, sink } = memoryAudit();
  const reg = createRegistry([currentTimeTool(), echo()], { policy: createPolicy(settings), audit: sink });
  t.same(reg.specs(ctx).map((s) => s.name), ['current_time']);
  t.same(reg.specs().map((s) => s.name), ['current_time', 'echo'], 'without a context: every tool');
  t.ok(reg.get('current_time', ctx));
  t.equal(reg.get('echo', ctx), undefined);
  const r = await reg.call({ name: 'echo', input: { text: 'hi' } }, ctx);
  t.same(r.result, { content: 'echo refused: not in profile minimal; add it to tools.allow to allow it', isError: true });
  t.match(rows, [{ tool: 'echo', outcome: 'denied', rule: 'tools.profile minimal', sessionKey: 's1', channel: 'test', chatId: 'c1', caller: 'owner' }]);
});

t.test('a tool that cannot run here is listed with the reason, not offered, and a call answers the reason', async (t) => {
  let reason: string | undefined = 'no GPIO chip on this machine (no /dev/gpiochip*)';
  let ran = 0;
  const { rows, sink } = memoryAudit();
  const reg = createRegistry([currentTimeTool(), echo({ unavailable: () => reason, execute: async () => ((ran += 1), { content: 'ran' }) })], { audit: sink });
  t.same(reg.specs(ctx).map((s) => s.name), ['current_time'], 'not offered to the model');
  t.match(reg.list(ctx).find((l) => l.tool.name === 'echo'), { decision: { allowed: true }, unavailable: reason });
  t.equal(reg.list(ctx).find((l) => l.tool.name === 'current_time')!.unavailable, undefined);
  t.same(reg.unavailable(ctx), [{ name: 'echo', reason }]);
  // Checked before the arguments: the owner needs the device, not a schema complaint.
  const r = await reg.call({ name: 'echo', input: { text: 5 } }, ctx);
  t.same(r.result, { content: `echo cannot run on this machine: ${reason}`, isError: true });
  t.equal(r.outcome, 'denied');
  t.equal(ran, 0);
  t.match(rows, [{ tool: 'echo', outcome: 'denied', rule: 'unavailable', detail: `echo cannot run on this machine: ${reason}`, input: '{"text":5}' }]);

  // The policy still comes first: a denied tool says it is denied, whatever its device.
  const denying = createRegistry([echo({ unavailable: () => reason })], { policy: createPolicy({ ...defaults().tools, deny: ['echo'] }) });
  t.same((await denying.call({ name: 'echo', input: { text: 'x' } }, ctx)).result, { content: 'echo refused: denied by tools.deny', isError: true });
  t.same(denying.unavailable(ctx), [], 'a denied tool is not reported as unavailable to the model');

  // The device came back: offered and run again.
  reason = undefined;
  t.same(reg.specs(ctx).map((s) => s.name), ['current_time', 'echo']);
  t.same((await reg.call({ name: 'echo', input: { text: 'x' } }, ctx)).result, { content: 'ran' });
});

t.test('the agent loop: a call by name of an unavailable tool gets the reason as its result and the turn goes on', async (t) => {
  const reg = createRegistry([echo({ unavailable: () => 'permission denied on /dev/gpiochip0: add this user to the \'gpio\' group' })]);
  const provider = scriptedProvider([reply([{ type: 'tool_use', id: '1', name: 'echo', input: { text: 'x' } }]), reply('I cannot: pinclaw is not in the gpio group.')]);
  const r = await runAgentLoop({ provider, model: 'm', system: 's', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], tools: reg, toolContext: ctx, maxIterations: 5, maxTokens: 100 });
  t.same(provider.requests[0]!.tools, [], 'not offered');
  t.match(r.added[1]!.content, [{ type: 'tool_result', toolUseId: '1', content: /^echo cannot run on this machine: permission denied on \/dev\/gpiochip0: add this user to the 'gpio' group$/, isError: true }]);
  t.match(r.added.at(-1)!.content, [{ type: 'text', text: /gpio group/ }]);
});

t.test('the agent loop goes through the registry: policy, audit, results', async (t) => {
  const home = tempDir();
  const db = openDatabase(join(home, 'pinclaw.db'));
  t.teardown(() => db.close());
  const settings = { ...defaults().tools, deny: ['echo'] };
  const reg = createRegistry([currentTimeTool({ now: () => new Date('2026-01-31T12:00:00Z') }), echo()], { policy: createPolicy(settings), audit: dbAudit(db) });
  const call = (id: string, name: string, input: unknown): ToolUseBlock => ({ type: 'tool_use', id, name, input });
  const provider = scriptedProvider([reply([call('1', 'current_time', { timezone: 'UTC' }), call('2', 'echo', { text: 'x' })]), reply('done')]);
  const user: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }];
  const r = await runAgentLoop({ provider, model: 'm', system: 's', messages: user, tools: reg, toolContext: ctx, maxIterations: 5, maxTokens: 100 });
  t.same(provider.requests[0]!.tools.map((s) => s.name), ['current_time'], 'the denied tool is not offered');
  t.match(r.added[1]!.content, [
    { type: 'tool_result', toolUseId: '1', content: /ISO 8601 UTC: 2026-01-31T12:00:00\.000Z/ },
    { type: 'tool_result', toolUseId: '2', content: 'echo refused: denied by tools.deny', isError: true },
  ]);
  // current_time is read-only: its one row is written just after it ends, after the refusal's.
  await new Promise((r) => setImmediate(r));
  const rows = queryAudit(db);
  t.match(rows, [
    { tool: 'echo', outcome: 'denied', rule: 'tools.deny', detail: 'echo refused: denied by tools.deny', output_bytes: 0 },
    { tool: 'current_time', outcome: 'ok', rule: 'tools.profile standard', session_key: 's1', input: '{"timezone":"UTC"}' },
  ]);
  t.ok(rows[1]!.output_bytes! > 0);
});

t.test('a row is written as allowed before the tool runs, closed after', async (t) => {
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  let during: unknown;
  const spy = echo({ execute: async () => ((during = queryAudit(db).map((r) => r.outcome)), { content: 'ok' }) });
  const reg = createRegistry([spy], { audit: dbAudit(db) });
  await reg.call({ name: 'echo', input: { text: 'x' } }, ctx);
  t.same(during, ['allowed'], 'visible while the tool runs');
  t.same(queryAudit(db).map((r) => r.outcome), ['ok']);
});

t.test('a read-only tool gets one row when it ends (written just after, or at the close), also when it fails', async (t) => {
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  // What the file holds, read as another process would (queryAudit on `db` writes the held rows first).
  const observer = openDatabase(db.name);
  t.teardown(() => observer.close());
  const inFile = () => queryAudit(observer);
  let during: unknown;
  const reader = echo({ readOnly: true, execute: async (input) => ((during = inFile().length), (input as { text: string }).text === 'bad' ? { content: 'no such sensor', isError: true } : { content: 'ok' }) });
  const reg = createRegistry([reader], { audit: dbAudit(db) });
  await reg.call({ name: 'echo', input: { text: 'x' } }, ctx);
  t.equal(during, 0, 'no row while it runs');
  t.equal(inFile().length, 0, 'not yet when the answer is back');
  await new Promise((r) => setImmediate(r));
  t.match(inFile(), [{ tool: 'echo', outcome: 'ok', rule: 'no policy', input: '{"text":"x"}', output_bytes: 2 }]);
  await reg.call({ name: 'echo', input: { text: 'bad' } }, ctx);
  await reg.call({ name: 'echo', input: { text: 'y' } }, ctx);
  // Closed before the batch's turn: the close writes it.
  const file = db.name;
  db.close();
  const again = openDatabase(file);
  t.teardown(() => again.close());
  t.match(queryAudit(again).slice(1), [{ outcome: 'error', detail: 'no such sensor' }, { outcome: 'ok', input: '{"text":"y"}' }]);
  t.equal(queryAudit(again).length, 3, 'one row per call');
  // A sink without the batch: written at once, with its id in the report.
  const plain = createRegistry([reader], { audit: { record: (e) => insertAudit(again, e), finish: () => undefined } });
  const r = await plain.call({ name: 'echo', input: { text: 'z' } }, ctx);
  t.equal(r.auditId, queryAudit(again).at(-1)!.id);
  const broken = createRegistry([echo({ readOnly: true })], { audit: { record: () => { throw new Error('database is locked'); }, finish: () => undefined } });
  t.same((await broken.call({ name: 'echo', input: { text: 'x' } }, ctx)).result, { content: 'x' }, 'an audit that fails does not stop a read');
});

t.test('no audit row, no run', async (t) => {
  let ran = false;
  const reg = createRegistry([echo({ execute: async () => ((ran = true), { content: 'x' }) })], {
    audit: { record: () => { throw new Error('database is locked'); }, finish: () => undefined },
  });
  const r = await reg.call({ name: 'echo', input: { text: 'x' } }, ctx);
  t.equal(ran, false);
  t.same(r.result, { content: 'echo not run: the audit log cannot be written (database is locked)', isError: true });
});
