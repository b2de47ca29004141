// The hostile-input benchmark proper (bundled and run by bench/hostile.mjs). For each case the
// event loop's delay is sampled every millisecond (monitorEventLoopDelay) while pinclaw handles the
// input; the maximum is the longest time the loop could not serve anything else. The baseline is
// JSON.parse of a string as long as the case's input, sampled the same way: a block any Node
// program pays to read that many bytes.
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { defaults } from '../../src/config/schema.js';
import { sseData } from '../../src/agent/providers/sse.js';
import { enableRegexFallback } from '../../src/regex-engine.js';
import { fileTools } from '../../src/tools/files/index.js';
import { compileGlob } from '../../src/tools/files/pattern.js';
import { createRegistry } from '../../src/tools/registry.js';
import { validateInput, type JsonSchema } from '../../src/tools/validate.js';
import { htmlToText } from '../../src/tools/web/html.js';

const { values } = parseArgs({ options: { json: { type: 'boolean', default: false }, rounds: { type: 'string', default: '3' }, only: { type: 'string' } } });
const rounds = Number(values.rounds);
const TARGET_MS = 100;
enableRegexFallback();

interface Case {
  name: string;
  /** the size of the hostile input, for the JSON.parse baseline */
  bytes: number;
  run(): Promise<unknown> | unknown;
}

const MB = 1024 * 1024;
const page = (unit: string) => unit.repeat(Math.ceil((1.6 * MB) / unit.length));

const ws = join(tmpdir(), `pinclaw-hostile-${process.pid}`);
mkdirSync(join(ws, 'd'), { recursive: true });
writeFileSync(join(ws, 'd', 'long.txt'), `${'a'.repeat(200_000)}b\n`);
const grep = createRegistry(fileTools({ workspace: ws, settings: defaults().files }));
const ctx = { sessionKey: 'bench', channel: 'cli', chatId: 'bench', caller: 'owner' };
const grepCall = (pattern: string) => grep.call({ name: 'grep', input: { pattern, path: 'd' } }, ctx);

/** glob's matcher, whatever its shape (a RegExp or a match function). */
function globMatches(pattern: string, path: string): boolean {
  const g = compileGlob(pattern) as unknown as { regex?: RegExp; match?: (p: string) => boolean };
  return g.match ? g.match(path) : g.regex!.test(path);
}

let deep: unknown = 1;
for (let i = 0; i < 100_000; i++) deep = { a: deep };
const openSchema: JsonSchema = { type: 'object', properties: { bytes: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 255 } } }, additionalProperties: false };

async function* chunks(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

const cases: Case[] = [
  { name: 'html: 1.6 MB of unclosed <a href', bytes: 1.6 * MB, run: () => htmlToText(page('<a href="x')) },
  { name: 'html: 1.6 MB of <script>', bytes: 1.6 * MB, run: () => htmlToText(page('<script>')) },
  { name: 'html: 1.6 MB of <!--', bytes: 1.6 * MB, run: () => htmlToText(page('<!--')) },
  { name: 'html: 1.6 MB of <div> (nesting)', bytes: 1.6 * MB, run: () => htmlToText(page('<div>')) },
  { name: 'html: 1.6 MB of <li>', bytes: 1.6 * MB, run: () => htmlToText(page('<li>')) },
  { name: 'html: 1.6 MB of <<<<', bytes: 1.6 * MB, run: () => htmlToText(page('<<<<')) },
  { name: 'html: 1.6 MB of <br>', bytes: 1.6 * MB, run: () => htmlToText(page('a<br>')) },
  { name: 'glob: *a x10 then *b on a 10k name', bytes: 10_000, run: () => globMatches(`${'*a'.repeat(10)}*b`, 'a'.repeat(10_000)) },
  { name: 'glob: **/ x50 on a 200-segment path', bytes: 1000, run: () => globMatches(`${'**/'.repeat(50)}x`, `${'d/'.repeat(200)}y`) },
  { name: 'grep: (a+)+$ on a 200k line (linear)', bytes: 200_000, run: () => grepCall('(a+)+$') },
  { name: 'grep: ^(a+)+\\1$ (contained, refused)', bytes: 200_000, run: () => grepCall('^(a+)+\\1$') },
  { name: 'validate: 10 MB string', bytes: 10 * MB, run: () => validateInput(openSchema, { bytes: 'x'.repeat(10 * MB) }) },
  { name: 'validate: 100k-deep nesting', bytes: 600_000, run: () => validateInput(openSchema, deep) },
  { name: 'validate: a million bad array items', bytes: 3 * MB, run: () => validateInput(openSchema, { bytes: new Array(1_000_000).fill(-1) }) },
  {
    name: 'sse: a 4 MB line in 1 KiB chunks',
    bytes: 4 * MB,
    run: async () => {
      for await (const d of sseData(chunks(`data: ${'x'.repeat(4 * MB)}\n\n`, 1024))) if (d.length !== 4 * MB) throw new Error('wrong event');
    },
  },
];

async function longestBlock(fn: () => unknown): Promise<number> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  // Let the monitor take a first sample before the work starts, and one after it ends.
  await new Promise((r) => setTimeout(r, 5));
  await fn();
  await new Promise((r) => setTimeout(r, 5));
  h.disable();
  return h.max / 1e6;
}

const results: { name: string; pinclawMs: number; jsonParseMs: number; ratio: number; ok: boolean }[] = [];
for (const c of cases.filter((c) => !values.only || c.name.includes(values.only))) {
  let worst = 0;
  let base = 0;
  for (let r = 0; r < rounds; r++) {
    const json = JSON.stringify('x'.repeat(Math.max(0, Math.round(c.bytes) - 2)));
    base = Math.max(base, await longestBlock(() => JSON.parse(json)));
    worst = Math.max(worst, await longestBlock(c.run));
  }
  results.push({ name: c.name, pinclawMs: worst, jsonParseMs: base, ratio: worst / base, ok: worst <= TARGET_MS });
  if (!values.json) process.stderr.write('.');
}
if (values.json) console.log(JSON.stringify({ targetMs: TARGET_MS, results }, null, 2));
else {
  console.log(`\nlongest event-loop block per hostile input (worst of ${rounds} rounds); target <= ${TARGET_MS} ms`);
  console.log(`${'case'.padEnd(44)} ${'pinclaw'.padStart(10)} ${'JSON.parse'.padStart(11)} ${'ratio'.padStart(7)}`);
  for (const r of results) console.log(`${r.name.padEnd(44)} ${`${r.pinclawMs.toFixed(1)} ms`.padStart(10)} ${`${r.jsonParseMs.toFixed(1)} ms`.padStart(11)} ${`${r.ratio.toFixed(1)}x`.padStart(7)} ${r.ok ? 'ok' : 'OVER TARGET'}`);
  const worst = results.reduce((a, b) => (b.pinclawMs > a.pinclawMs ? b : a));
  console.log(`worst: ${worst.name}, ${worst.pinclawMs.toFixed(1)} ms (${worst.ok ? 'meets' : 'misses'} the ${TARGET_MS} ms target)`);
}
