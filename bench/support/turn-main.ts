// Orchestrator overhead per turn: the whole path (queue row, lane, session load, prompt, provider
// call, tool call, provider call, session save, reply row, delivery) against the same two provider
// calls made directly with the SDK in the same process: the same tool offered, a system prompt of
// the same size and the same conversation growing turn by turn, so that the difference is what
// pinclaw does and not what the provider is sent. (Until 2026-11-28 the baseline sent a one-message
// request with no system prompt while pinclaw sent up to 200 messages and was offered no tool; the
// old baseline is still printed, as the "minimal request" line.) Printed, never asserted.
import { join } from 'node:path';
import v8 from 'node:v8';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import Anthropic from '@anthropic-ai/sdk';
import { defaults } from '../../src/config/schema.js';
import { buildSystemPrompt } from '../../src/agent/prompt.js';
import { createRuntime } from '../../src/setup/runtime.js';
import { resolvePaths } from '../../src/paths.js';
import { openDatabase } from '../../src/store/db.js';
import type { Tool } from '../../src/tools/types.js';

const [url, turnsText] = process.argv.slice(2);
const TURNS = Number(turnsText ?? 1000);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
// Native memory held by collected objects is released by second-pass weak callbacks, which V8 runs
// as tasks after the collection; the conductor trims the C heap a second after it goes idle. Both
// happen before the figures are read, as they would in an idle gateway.
const settle = async () => {
  for (let i = 0; i < 5; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 1500));
};
const memory = () => {
  const m = process.memoryUsage();
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size / 1048576]));
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0) / 1024;
  return { anon: kb('RssAnon'), file: kb('RssFile'), rss: m.rss / 1048576, heap: m.heapUsed / 1048576, committed: m.heapTotal / 1048576, newSpace: spaces.new_space ?? 0, external: (m.external + m.arrayBuffers) / 1048576 };
};
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

const home = mkdtempSync(join(tmpdir(), 'pinclaw-bench-'));
const paths = resolvePaths({ home });
const config = defaults();
// The bench's tool is offered to the model, as a configured tool would be.
config.tools.allow = ['echo'];
const db = openDatabase(paths.database);
const echo: Tool = { name: 'echo', description: 'echoes', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, execute: async (i) => ({ content: String((i as { text: string }).text) }) };
const env = { ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: url };
const { conductor } = createRuntime({ db, config, paths, env, channels: [{ name: 'bench', debounceMs: 0, send: async () => {} }], tools: [echo] });
conductor.start();

// Baselines, straight through the SDK: the minimal one (one message, no system prompt), and the
// same two calls pinclaw makes: the same tool, a system prompt of the size of pinclaw's, and a
// conversation that grows by the same four messages per turn, in sessions of 50 turns.
const client = new Anthropic({ apiKey: 'bench', baseURL: url, maxRetries: 0 });
const user = { role: 'user' as const, content: 'hello' };
const tools = [{ name: echo.name, description: echo.description, input_schema: echo.inputSchema as { type: 'object' } }];
async function minimalTurn(): Promise<void> {
  const first = await client.messages.stream({ model: 'm', max_tokens: 256, messages: [user], tools }).finalMessage();
  const call = first.content.find((b) => b.type === 'tool_use')!;
  await client.messages.stream({
    model: 'm', max_tokens: 256, tools,
    messages: [user, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'ping' }] }],
  }).finalMessage();
}
let systemSize = 0;
type Param = Anthropic.MessageParam;
let history: Param[] = [];
async function directTurn(i: number): Promise<void> {
  if (i % 50 === 0) history = [];
  const system = 'x'.repeat(systemSize);
  const asked: Param = { role: 'user', content: `[12:00] message ${i}` };
  const first = await client.messages.stream({ model: 'm', max_tokens: 256, system, messages: [...history, asked], tools }).finalMessage();
  const call = first.content.find((b) => b.type === 'tool_use')!;
  const result: Param = { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'ping' }] };
  const answered: Param = { role: 'assistant', content: first.content };
  const last = await client.messages.stream({ model: 'm', max_tokens: 256, system, messages: [...history, asked, answered, result], tools }).finalMessage();
  history.push(asked, answered, result, { role: 'assistant', content: last.content });
}

async function pinclawTurn(i: number): Promise<void> {
  // One session per 50 turns: sessions grow as they would in use, without one session growing without end.
  const row = conductor.submit({ sessionKey: `bench-${Math.floor(i / 50)}`, channel: 'bench', chatId: 'c', sender: 'u', text: `message ${i}` });
  await conductor.delivered(row.id);
}

async function time(fn: (i: number) => Promise<void>, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out;
}

// The size of pinclaw's system prompt in this home (its workspace files written by the first start).
systemSize = buildSystemPrompt({ workspace: paths.workspace, now: new Date(), timezone: config.agent.timezone, runtime: { version: 'x.y.z', node: process.version, arch: process.arch, model: config.agent.model, channel: 'bench' } }).length;

const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
// Work a turn leaves to the event loop (the pump after a finished turn) is counted in that turn's CPU.
const drained = () => new Promise((r) => setImmediate(r));

/**
 * Each turn of pinclaw timed right after the same turn made directly: a busy machine slows both
 * alike. Also the CPU time of each (this process's, user + system): other processes on the machine
 * lengthen a turn's wall time but barely its CPU time, so on a shared machine the CPU difference
 * shows a change of pinclaw's own work that the wall-time figures bury in noise.
 */
async function timePairs(from: number, n: number): Promise<{ direct: number[]; pinclaw: number[]; directCpu: number[]; pinclawCpu: number[] }> {
  const out = { direct: [] as number[], pinclaw: [] as number[], directCpu: [] as number[], pinclawCpu: [] as number[] };
  for (let i = from; i < from + n; i++) {
    let c0 = cpuNow();
    let t0 = performance.now();
    await directTurn(i);
    out.direct.push(performance.now() - t0);
    await drained();
    out.directCpu.push(cpuNow() - c0);
    c0 = cpuNow();
    t0 = performance.now();
    await pinclawTurn(i);
    out.pinclaw.push(performance.now() - t0);
    await drained();
    out.pinclawCpu.push(cpuNow() - c0);
  }
  return out;
}

// Warm-up (JIT, SQLite page cache, allocator pools), then the timed block; then pinclaw alone for
// the memory figures, so that they are pinclaw's own growth and not the SDK's or caches filling up.
const WARM = 300;
const minimal = await time(minimalTurn, 50);
await timePairs(0, WARM);
minimal.push(...(await time(minimalTurn, 200)));
const started = performance.now();
const measured = await timePairs(WARM, TURNS);
const elapsed = performance.now() - started;
const direct = measured.direct;
const turns = measured.pinclaw;
await time((i) => pinclawTurn(WARM + TURNS + i), WARM);
await settle();
const idle = memory();
await time((i) => pinclawTurn(2 * WARM + TURNS + i), TURNS);
await settle();
const after = memory();
// A second block tells a one-off warm-up (caches, JIT) from growth per turn.
await time((i) => pinclawTurn(2 * WARM + 2 * TURNS + i), TURNS);
await settle();
const later = memory();
await conductor.stop(1000);
db.close();

const p50 = pct(turns, 50);
const p99 = pct(turns, 99);
const d50 = pct(direct, 50);
const d99 = pct(direct, 99);
const rows = [
  ['direct SDK, minimal request', pct(minimal, 50), pct(minimal, 99)],
  ['direct SDK, same requests', d50, d99],
  ['pinclaw turn (2 calls + tool)', p50, p99],
];
console.log(`turns: ${turns.length}, zero-latency stand-in provider in a separate process, one tool call per turn`);
console.log('');
console.log('                                  p50 ms    p99 ms');
for (const [name, a, b] of rows) console.log(`${String(name).padEnd(32)} ${(a as number).toFixed(2).padStart(7)}   ${(b as number).toFixed(2).padStart(7)}`);
console.log('');
const overhead = p50 - d50;
// The targets of the second performance round (issue 29): p50 <= 1 ms, p99 <= 3 ms (the first was p50 <= 5 ms).
console.log(`orchestrator overhead p50: ${overhead.toFixed(2)} ms per turn (target <= 1 ms: ${overhead <= 1 ? 'meets' : 'MISSES'})`);
console.log(`orchestrator overhead p99: ${(p99 - d99).toFixed(2)} ms per turn (target <= 3 ms: ${p99 - d99 <= 3 ? 'meets' : 'MISSES'})`);
// The same turns paired: each pinclaw turn minus the direct turn made just before it. A stall of the
// machine that falls in one turn shows here, where the difference of two p99s (above) can even be
// negative; printed for reading, the verdicts stay on the figures above.
const paired = turns.map((x, i) => x - direct[i]!);
console.log(`paired difference per turn (pinclaw minus the direct turn before it): p50 ${pct(paired, 50).toFixed(2)} ms, p90 ${pct(paired, 90).toFixed(2)} ms, p99 ${pct(paired, 99).toFixed(2)} ms`);
const cpuPaired = measured.pinclawCpu.map((x, i) => x - measured.directCpu[i]!);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(`CPU time per turn (this process): direct p50 ${pct(measured.directCpu, 50).toFixed(2)} ms, pinclaw p50 ${pct(measured.pinclawCpu, 50).toFixed(2)} ms; pinclaw minus direct: mean ${mean(cpuPaired).toFixed(3)} ms, p50 ${pct(cpuPaired, 50).toFixed(3)} ms`);
console.log(`turns per second (one lane, direct turns in between): ${(turns.length / (elapsed / 1000)).toFixed(0)}`);
const growth = after.rss - idle.rss;
console.log(`RSS idle ${idle.rss.toFixed(1)} MiB, after ${turns.length} turns ${after.rss.toFixed(1)} MiB: growth ${growth.toFixed(1)} MiB (target <= 5 MiB: ${growth <= 5 ? 'meets' : 'MISSES'})`);
console.log(`RSS after ${2 * turns.length} turns ${later.rss.toFixed(1)} MiB: growth over the second ${turns.length} turns ${(later.rss - after.rss).toFixed(1)} MiB`);
console.log(`RSS anonymous ${idle.anon.toFixed(1)} → ${after.anon.toFixed(1)} MiB, file-backed ${idle.file.toFixed(1)} → ${after.file.toFixed(1)} MiB`);
console.log(`V8 heap used after GC: idle ${idle.heap.toFixed(1)} MiB, after ${after.heap.toFixed(1)} MiB; committed ${idle.committed.toFixed(1)} → ${after.committed.toFixed(1)} MiB (new space ${idle.newSpace.toFixed(1)} → ${after.newSpace.toFixed(1)}); external ${idle.external.toFixed(1)} → ${after.external.toFixed(1)} MiB`);
