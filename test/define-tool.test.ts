// defineTool infers a tool's input from its schema literal: the @ts-expect-error lines make
// `tsc -p .` (test/types.test.ts) fail if the inference breaks; the runtime part checks that a
// defined tool still carries its schema to validateInput unchanged.
import t from 'tap';
import { defineTool, type InputOf } from '../src/tools/define.js';
import { validateInput } from '../src/tools/validate.js';

const schema = {
  type: 'object',
  properties: {
    path: { type: 'string', minLength: 1 },
    count: { type: 'integer', minimum: 1 },
    mode: { type: 'string', enum: ['a', 'b'] },
    flags: { type: 'array', items: { type: 'boolean' } },
    nested: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] },
    free: { type: 'object' },
  },
  required: ['path'],
  additionalProperties: false,
} as const;

type In = InputOf<typeof schema>;
const ok: In = { path: 'p', count: 2, mode: 'a', flags: [true], nested: { x: 1 }, free: { any: 1 } };
// @ts-expect-error path is required
const noPath: In = { count: 1 };
// @ts-expect-error count is a number
const badCount: In = { path: 'p', count: '1' };
// @ts-expect-error mode is 'a' | 'b'
const badMode: In = { path: 'p', mode: 'c' };
// @ts-expect-error nested.x is required
const badNested: In = { path: 'p', nested: {} };
void [ok, noPath, badCount, badMode, badNested];

const tool = defineTool({
  name: 'demo',
  description: 'demo',
  inputSchema: schema,
  async execute(input) {
    const n: number | undefined = input.count;
    // @ts-expect-error no such field in the schema
    void input.nope;
    // @ts-expect-error path is a string, not a number
    const p: number = input.path;
    void p;
    return { content: `${input.path}:${n ?? 0}:${input.mode ?? '-'}` };
  },
});

t.test('a defined tool keeps its schema and is validated by validateInput', async (t) => {
  t.same(validateInput(tool.inputSchema, { path: 'x', count: 2 }), []);
  t.match(validateInput(tool.inputSchema, { count: 0 }).join('; '), /input\.path: required.*input\.count: must be >= 1/);
  t.match(validateInput(tool.inputSchema, { path: 'x', mode: 'c' }).join('; '), /input\.mode: must be one of "a", "b"/);
  t.equal((await tool.execute({ path: 'x', count: 3, mode: 'b' }, { sessionKey: 's', channel: 'cli', chatId: 'c' })).content, 'x:3:b');
});

// Every tool of src/ is defined through defineTool, and no handler casts its input: a schema and the
// code that reads the input cannot drift apart unseen. (The three files allowed a cast of a value
// named input guard data from the wire or a hook, not a defined tool's input.)
t.test('every tool in src/ is defined with defineTool, and no tool input is cast', async (t) => {
  const { readFileSync, readdirSync, statSync } = await import('node:fs');
  const { dirname, join, relative } = await import('node:path');
  const { fileURLToPath } = await import('node:url');
  const src = join(dirname(fileURLToPath(import.meta.url)), '..', 'src');
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else if (n.endsWith('.ts')) files.push(p);
    }
  };
  walk(src);
  const wireGuards = new Set(['hooks/engine.ts', 'agent/providers/tool-input.ts', 'agent/providers/anthropic-wire.ts']);
  const casts: string[] = [];
  const undefinedTools: string[] = [];
  for (const f of files) {
    const rel = relative(src, f);
    const text = readFileSync(f, 'utf8');
    text.split('\n').forEach((line, i) => {
      if (/\binput\s+as\s/.test(line) && !wireGuards.has(rel)) casts.push(`src/${rel}:${i + 1}: ${line.trim()}`);
    });
    if (rel !== 'tools/types.ts' && rel !== 'tools/define.ts' && /^\s+(?:async )?execute(?:\(|: \()/m.test(text) && !text.includes('defineTool(')) undefinedTools.push(`src/${rel}`);
  }
  t.ok(files.length > 300, `the scan read the sources (${files.length})`);
  t.same(casts, [], 'no cast of a tool input');
  t.same(undefinedTools, [], 'every file that defines a tool does it with defineTool');
});
