// bench:camera's body (bench/camera.mjs): see there.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runAgentLoop } from '../../src/agent/loop.js';
import { anthropicProvider } from '../../src/agent/providers/anthropic.js';
import { cameraTools } from '../../src/hardware/camera/tools.js';
import { toolSet } from '../../src/tools/types.js';
import { startAnthropicServer, textReply, toolUseReply } from '../../test/support/anthropic-server.js';
import { testsrcSource } from '../../test/support/camera-testsrc.js';

const fail = (msg: string): never => {
  process.stderr.write(`bench:camera: ${msg}\n`);
  process.exit(1);
};
const integer = (text: string, flag: string, min: number) => {
  const v = Number(text);
  return Number.isInteger(v) && v >= min ? v : fail(`${flag} wants an integer >= ${min}, got '${text}'`);
};
const { values } = parseArgs({ options: { n: { type: 'string', default: '15' }, width: { type: 'string', default: '1280' }, height: { type: 'string', default: '720' }, json: { type: 'boolean', default: false } } });
const n = integer(values.n, '--n', 3);
const width = integer(values.width, '--width', 16);
const height = integer(values.height, '--height', 16);

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
const timed = (f: () => void) => {
  const t0 = performance.now();
  f();
  return performance.now() - t0;
};

const source = testsrcSource();
const { command, args } = source.commands(width, height)[0]!;
const floorStart: number[] = [];
const floorStill: number[] = [];
for (let i = 0; i < n; i++) {
  floorStart.push(timed(() => spawnSync('ffmpeg', ['-hide_banner', '-version'])));
  floorStill.push(timed(() => spawnSync(command, args, { maxBuffer: 64 * 1024 * 1024 })));
}

const workspace = mkdtempSync(join(tmpdir(), 'pinclaw-bench-camera-'));
process.on('exit', () => rmSync(workspace, { recursive: true, force: true }));
mkdirSync(join(workspace, 'snapshots'));
const tools = toolSet(cameraTools({ cameras: [{ name: 'bench', device: '/dev/video0', width, height, source }], workspace, images: () => import('../../src/images/index.js') }));
const srv = await startAnthropicServer();
const toModel: number[] = [];
for (let i = 0; i < n; i++) {
  srv.enqueue(toolUseReply([{ name: 'camera_snapshot', input: {} }]), textReply('seen'));
  let called = 0;
  let arrived = 0;
  const before = srv.requests.length;
  // The picture's arrival: the stand-in received the request that carries it.
  const received = srv.received(before + 2).then(() => (arrived = performance.now()));
  await runAgentLoop({
    provider: anthropicProvider('bench', { apiKey: 'k', baseUrl: srv.url, timeoutMs: 30_000 }), model: 'bench', system: 's',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }] }], tools, toolContext: { sessionKey: 'b', channel: 'cli', chatId: 'b' },
    maxIterations: 3, maxTokens: 64, emit: (e) => void (e.type === 'tool_start' && (called = performance.now())),
  });
  await received;
  const image = (srv.requests[before + 1]!.body.messages.at(-1).content as { type: string }[]).some((b) => b.type === 'image');
  if (!image) fail('the stand-in got no image block');
  toModel.push(arrived - called);
}
await srv.close();

const row = (label: string, xs: number[]) => ({ label, median: quantile(xs, 0.5), p90: quantile(xs, 0.9) });
const rows = [row('ffmpeg start (-version)', floorStart), row(`ffmpeg still ${width}x${height} (testsrc)`, floorStill), row('camera_snapshot -> image at the model', toModel)];
if (values.json) console.log(JSON.stringify({ n, width, height, rows }));
else {
  console.log(`bench:camera, ${n} runs each, ${width}x${height}`);
  for (const r of rows) console.log(`  ${r.label.padEnd(42)} median ${r.median.toFixed(1)} ms   p90 ${r.p90.toFixed(1)} ms`);
  console.log(`  snapshot-to-model / bare still: ${(rows[2]!.median / rows[1]!.median).toFixed(2)}x`);
}
